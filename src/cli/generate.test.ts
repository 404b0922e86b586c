import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { captureOutput, cliArgv } from './test-io.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { summarize } from '../core/capture/summary.ts';
import { generate, parseGenerateArgs } from './generate.ts';
import { readFiles } from './read-files.ts';

const run = promisify(execFile);

afterEach(() => vi.restoreAllMocks());

async function gen(args: string[]): Promise<{ dir: string; code: number; report: Record<string, unknown> | null; err: string }> {
  const dir = join(mkdtempSync(join(tmpdir(), 'smx-gen-')), 'cap');
  const io = captureOutput();
  const code = await generate(['--out', dir, '--json', ...args]);
  vi.restoreAllMocks();
  return { dir, code, report: code === 0 ? JSON.parse(io.out.join('')) : null, err: io.err.join('') };
}

/** What the written files say, counted without the explorer's readers. */
function countIndependently(dir: string) {
  const trace = readFileSync(join(dir, 'trace'), 'utf8');
  const cookies = [...trace.matchAll(/: <stack_id (\d+)(?: gen (\d+))?>$/gm)];
  const fullStacks = (trace.match(/: <stack trace>$/gm) ?? []).length;
  const frameLines = (trace.match(/^ => /gm) ?? []).length;
  // event lines: the context columns, then a payload that is not a stack record
  const contextLines = (trace.match(/^ *\S.*-\d+ +\[\d{3}\] \S{5} +\d+\.\d{6}: /gm) ?? []).length;
  const perSlot = new Map<string, number>();
  for (const m of cookies) perSlot.set(m[1], (perSlot.get(m[1]) ?? 0) + 1);
  const bin = readFileSync(join(dir, 'stack_map_bin'));
  const dv = new DataView(bin.buffer, bin.byteOffset, bin.byteLength);
  expect(dv.getUint32(0, true)).toBe(0x46534d42);
  const nrStacks = dv.getUint32(8, true);
  // walk the records: each slot once, depths 1..64, the file ends with the last one
  const slots = new Set<number>();
  let off = 16;
  let refSum = 0;
  const depths: number[] = [];
  for (let i = 0; i < nrStacks; i++) {
    slots.add(dv.getUint32(off, true));
    const nr = dv.getUint32(off + 4, true);
    refSum += dv.getUint32(off + 8, true);
    depths.push(nr);
    off += 16 + 8 * nr;
  }
  expect(off).toBe(bin.length);
  return {
    events: contextLines - cookies.length - fullStacks,
    cookies: cookies.length,
    gens: [
      ...new Set(
        cookies
          .map((m) => m[2])
          .filter((g) => g !== undefined)
          .map(Number),
      ),
    ],
    fullStacks,
    frameLines,
    perSlot,
    version: dv.getUint32(4, true),
    headerGen: dv.getUint32(12, true),
    nrStacks,
    slots,
    refSum,
    depths,
    traceBytes: Buffer.byteLength(trace),
  };
}

describe('generate', () => {
  it("says what each stack_map_bin version is by the seeds: v8's version 2 is the proposed follow-up series, v7's version 1 the v7 document's", async () => {
    for (const [mode, version, words] of [
      [
        'v8',
        2,
        /stack_map_bin version 2: the cookie ABI mail's proposal .*\("the binary export, its parser and the capacity boot parameter will follow as a separate series"\); v8 as posted writes no stack_map_bin/,
      ],
      ['v7', 1, /stack_map_bin version 1: the v7 document's format/],
    ] as const) {
      const dir = join(mkdtempSync(join(tmpdir(), 'smx-gen-')), 'cap');
      const io = captureOutput();
      const code = await generate(['--out', dir, '--events', '200', '--stacks', '50', '--mode', mode]);
      vi.restoreAllMocks();
      expect(code).toBe(0);
      // the header's version, read from the file's bytes
      const bin = readFileSync(join(dir, 'stack_map_bin'));
      expect(new DataView(bin.buffer, bin.byteOffset).getUint32(4, true)).toBe(version);
      const line = io.out
        .join('')
        .split('\n')
        .find((l) => l.trimStart().startsWith('stack_map_bin '))!;
      expect(line).toMatch(words);
    }
  });

  it('writes a v8 capture whose summary --json matches counts taken from the files themselves', async () => {
    const { dir, code, report, err } = await gen([
      '--events',
      '3000',
      '--mode',
      'v8',
      '--stacks',
      '700',
      '--depth',
      '4-64',
      '--seed',
      '7',
      '--symbols',
      '2000',
      '--text-dump',
    ]);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['kallsyms', 'stack_map', 'stack_map_bin', 'stack_map_stat', 'trace']);
    const n = countIndependently(dir);
    expect(n.events).toBe(3000);
    expect(n.cookies).toBe(3000);
    expect(n.fullStacks).toBe(0);
    expect(n.gens).toEqual([1]);
    expect([n.version, n.headerGen, n.nrStacks, n.slots.size]).toEqual([2, 1, 700, 700]);
    expect(Math.min(...n.depths)).toBeGreaterThanOrEqual(4);
    expect(Math.max(...n.depths)).toBeLessThanOrEqual(64);
    for (const slot of n.perSlot.keys()) expect(n.slots.has(Number(slot))).toBe(true);
    expect(report).toMatchObject({ events: 3000, cookies: 3000, stacks: 700, bits: 10, generation: 1 });

    // the command itself, as DESIGN 5.1 runs it
    const files = readdirSync(dir).map((f) => join(dir, f));
    const r = await run(...cliArgv('summary', '--json', ...files), { encoding: 'utf8' });
    const s = JSON.parse(r.stdout);
    expect(s.diagnostics).toEqual([]);
    expect(s.events).toBe(n.events);
    expect(s.cookies).toBe(n.cookies);
    expect(s.fullStacks).toBe(0);
    expect(s.resolved).toBe(n.cookies);
    expect(s.unresolved).toBe(0);
    expect(s.generations).toEqual([1]);
    expect(s.uniqueStacks).toBe(n.nrStacks);
    expect(s.top[0].count).toBe(Math.max(...n.perSlot.values()));
    expect(s.stat).toMatchObject({ entries: n.nrStacks, capacity: 1024, successes: n.refSum, drops: 0, generation: 1 });
    // kallsyms symbolized every frame of the binary dump: no raw address among the top frames
    for (const t of s.top) for (const f of t.frames) expect(f).not.toMatch(/^0x/);
  }, 60_000);

  it('--frames random draws millions-of-addresses stacks and --every-stack names each stack in the trace (counted from the files)', async () => {
    const distinctIps = (dir: string) => {
      const bin = readFileSync(join(dir, 'stack_map_bin'));
      const dv = new DataView(bin.buffer, bin.byteOffset, bin.byteLength);
      const ips = new Set<bigint>();
      let frames = 0;
      for (let off = 16; off < bin.length;) {
        const nr = dv.getUint32(off + 4, true);
        for (let i = 0; i < nr; i++) ips.add(dv.getBigUint64(off + 16 + 8 * i, true));
        frames += nr;
        off += 16 + 8 * nr;
      }
      return { distinct: ips.size, frames };
    };
    const args = ['--events', '2000', '--stacks', '2000', '--depth', '8-16', '--seed', '3', '--symbols', '4000', '--zipf', '1'];
    const graph = await gen(args);
    const random = await gen([...args, '--frames', 'random', '--every-stack']);
    expect([graph.code, random.code]).toEqual([0, 0]);
    const g = distinctIps(graph.dir);
    const r = distinctIps(random.dir);
    // call sites: a few per function, shared by many stacks; random frames: nearly every frame its own address
    expect(g.distinct).toBeLessThan(g.frames / 4);
    expect(r.distinct).toBeGreaterThan(0.9 * r.frames);
    // every stack of the dump named by the trace, by slot
    const slotsIn = (dir: string) => new Set([...readFileSync(join(dir, 'trace'), 'utf8').matchAll(/: <stack_id (\d+) gen 1>$/gm)].map((m) => m[1]));
    expect(slotsIn(random.dir).size).toBe(countIndependently(random.dir).nrStacks);
    expect(slotsIn(graph.dir).size).toBeLessThan(countIndependently(graph.dir).nrStacks);
    expect(random.report).toMatchObject({ stacks: 2000, stacksInTrace: 2000 });
    // the random frames are inside the symbols kallsyms lists: summary reads none as a raw address
    const files = readdirSync(random.dir).map((f) => join(random.dir, f));
    const sum = JSON.parse((await run(...cliArgv('summary', '--json', ...files), { encoding: 'utf8' })).stdout);
    expect(sum.diagnostics).toEqual([]);
    expect(sum.uniqueStacks).toBe(2000);
    for (const t of sum.top) for (const f of t.frames) expect(f).not.toMatch(/^0x/);
    expect((await gen(['--events', '10', '--stacks', '20', '--every-stack'])).code).toBe(2);
  }, 60_000);

  it('writes full stacks for --full-stacks, v7 ids and a version 1 dump for --mode v7', async () => {
    const { dir, code } = await gen(['--events', '1500', '--mode', 'v7', '--stacks', '200', '--depth', '1-64', '--full-stacks', '--symbols', '300']);
    expect(code).toBe(0);
    const n = countIndependently(dir);
    expect(n.fullStacks).toBe(1500);
    expect(n.cookies).toBe(0);
    expect([n.version, n.headerGen, n.nrStacks]).toEqual([1, 0, 200]);
    const s = summarize((await readFiles(readdirSync(dir).map((f) => join(dir, f)))).capture);
    expect(s.diagnostics).toEqual([]);
    expect([s.events, s.cookies, s.fullStacks, s.uniqueStacks]).toEqual([1500, 0, 1500, 200]);
    expect(s.generations).toEqual([]);
    expect(s.stat).toMatchObject({ entries: 200, successes: n.refSum, generation: null });
  }, 60_000);

  it('v7 cookies resolve as unverified against the generation-less dump', async () => {
    const { dir, code } = await gen(['--events', '800', '--mode', 'v7', '--stacks', '100', '--symbols', '0']);
    expect(code).toBe(0);
    const n = countIndependently(dir);
    expect(n.cookies).toBe(800);
    expect(n.gens).toEqual([]);
    const s = summarize((await readFiles(readdirSync(dir).map((f) => join(dir, f)))).capture);
    expect([s.cookies, s.resolved, s.unresolved, s.uniqueStacks]).toEqual([800, 800, 0, 100]);
    expect(s.status.unverified).toBe(800);
  }, 60_000);

  it('--mb stops within one chunk after the size, and the header counts every entry', async () => {
    const { dir, code, report } = await gen(['--mb', '0.5', '--stacks', '50']);
    expect(code).toBe(0);
    const n = countIndependently(dir);
    expect(statSync(join(dir, 'trace')).size).toBe(n.traceBytes);
    expect(n.traceBytes).toBeGreaterThanOrEqual(0.5 * 2 ** 20);
    expect(n.traceBytes).toBeLessThan(1.5 * 2 ** 20);
    expect(report!.events).toBe(n.events);
    const head = readFileSync(join(dir, 'trace'), 'utf8').split('\n', 4)[2];
    expect(head).toMatch(new RegExp(`^# entries-in-buffer/entries-written: ${2 * n.events}/${2 * n.events} +#P:4$`));
  }, 60_000);

  it('the same seed writes the same bytes', async () => {
    const a = await gen(['--events', '500', '--stacks', '64', '--seed', '11']);
    const b = await gen(['--events', '500', '--stacks', '64', '--seed', '11']);
    for (const f of ['trace', 'stack_map_bin', 'kallsyms']) expect(readFileSync(join(a.dir, f)).equals(readFileSync(join(b.dir, f)))).toBe(true);
  }, 60_000);

  it('rejects bad usage with exit status 2', async () => {
    expect(() => parseGenerateArgs(['--events', '10'])).toThrow(/--out/);
    expect(() => parseGenerateArgs(['--out', 'x', '--events', '10', '--mb', '1'])).toThrow(/exclude/);
    expect(() => parseGenerateArgs(['--out', 'x', '--stacks', '262145'])).toThrow(/--stacks/);
    expect(() => parseGenerateArgs(['--out', 'x', '--depth', '1-65'])).toThrow(/--depth/);
    expect(() => parseGenerateArgs(['--out', 'x', '--mode', 'v4'])).toThrow(/--mode/);
    expect(parseGenerateArgs(['--out', 'x'])).toMatchObject({ events: 100_000, mb: null, mode: 'v8', stacks: 4096 });
    const { code, err } = await gen(['--stacks', '5000', '--depth', '1-1', '--symbols', '0', '--events', '10']);
    expect(code).toBe(2);
    expect(err).toMatch(/cannot make 5000 distinct stacks/);
  }, 60_000);
});
