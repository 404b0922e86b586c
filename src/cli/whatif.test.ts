import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { realIt, realTracePath } from '../core/testing/real-traces.ts';
import { whatIf } from '../core/whatif/whatif.ts';
import { readFiles } from './read-files.ts';
import { captureOutput } from './test-io.ts';
import { whatif } from './whatif.ts';

afterEach(() => vi.restoreAllMocks());

// the usage-error cases pass this path too, but stop before reading it: they run without the folder
const REAL = realTracePath('perf-tools-tpoint_example.txt');

function traceFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'smx-whatif-'));
  const lines = ['# tracer: nop', '#'];
  for (let i = 0; i < 40; i++) {
    const ts = (1 + i * 1e-4).toFixed(6);
    lines.push(`          task-1     [00${i % 2}] .... ${ts}: kmem_cache_alloc: bytes=8`, `          task-1     [00${i % 2}] .... ${ts}: <stack trace>`);
    for (let d = 0; d < 3 + (i % 5); d++) lines.push(` => f${i % 5}_${d}+0x10/0x100`);
  }
  const f = join(dir, 'trace');
  writeFileSync(f, lines.join('\n') + '\n');
  return f;
}

async function run(args: string[]) {
  const io = captureOutput();
  const code = await whatif(args);
  vi.restoreAllMocks();
  return { code, out: io.out.join(''), err: io.err.join('') };
}

describe('cli whatif', () => {
  it('prints the DESIGN 5.3 JSON for bits 10..18, the same figures as whatIf on the same files', async () => {
    const f = traceFile();
    const r = await run(['--json', '--buffer-kb', '64', f]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    // v7 by bits; v8 as posted, one row of its fixed 16,384 (DESIGN 5.4); then v8 with the proposed bits
    expect(j.bits.map((b: { bits: number; mode: string; v8Variant?: string }) => `${b.mode}${b.v8Variant ? '-' + b.v8Variant : ''}:${b.bits}`)).toEqual([
      ...[10, 11, 12, 13, 14, 15, 16, 17, 18].map((b) => `v7:${b}`),
      'v8-posted:14',
      ...[10, 11, 12, 13, 14, 15, 16, 17, 18].map((b) => `v8-bin:${b}`),
    ]);
    expect(j.bits.find((b: { v8Variant?: string }) => b.v8Variant === 'posted').capacity).toBe(16384);
    expect(j.recommended.v8Variant).toBe('posted');
    for (const k of ['bits', 'stored', 'fallbacks', 'gravestones', 'dedupRate', 'bytesWithMap', 'bytesWithoutMap', 'gain', 'mapBytes', 'mode'])
      expect(j.bits[0]).toHaveProperty(k);
    expect(j.recommended).toHaveProperty('bits');
    expect(typeof j.recommended.why).toBe('string');
    expect(j.bufferKb).toBe(64);
    expect(j.bufferSource).toBe('option');
    // 40 records of 5 distinct stacks: 5 stored, the other 35 are hits, a dedup rate of 35 / 40 (not successes / records, 1)
    expect(j.bits[0].stored).toBe(5);
    expect(j.bits[0].reused).toBe(35);
    expect(j.bits[0].dedupRate).toBe(35 / 40);
    const direct = whatIf((await readFiles([f])).capture, { bufferKb: 64 });
    expect(j).toEqual(JSON.parse(JSON.stringify(direct)));
  });

  it('labels the byte columns kB and divides by 1,000, as the page prints sizes', async () => {
    const r = await run([traceFile()]);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    const header = lines.find((l) => l.startsWith('mode bits'))!;
    expect(header).toContain('withMap kB');
    expect(header).toContain('without kB');
    expect(header).not.toMatch(/KB|KiB/);
    // by hand: 40 records of depth 3 + (i % 5), 12 + 8 x depth B each in full = 2,080 B (2.1 kB; in KiB it would be 2.0);
    // with the map every one is a 12 B v7 id: 480 B (0.5 kB)
    const v7 = lines
      .find((l) => /^v7\s+10\s/.test(l))!
      .trim()
      .split(/\s+/);
    expect([v7[6], v7[7]]).toEqual(['0.5', '2.1']);
    // the words say the same sizes in the same unit
    expect(r.out).toContain('from 2.1 kB to 480 B');
    expect(r.out).toContain('buffer 1408 KiB per CPU');
  });

  it("puts the v7 document's figures beside the recommended row's, labelled as the document's", async () => {
    const f = traceFile();
    const r = await run([f]);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    const at = lines.findIndex((l) => l.startsWith('the v7 document, Performance: "Typical results on an aarch64 SMP system (function tracer, 2 seconds)"'));
    expect(at).toBeGreaterThan(0);
    // the recommendation is v8 as posted: its row beside the document's
    expect(lines[at]).toContain('v8 as posted (fixed 16384 stacks)');
    expect(lines[at + 1]).toMatch(/the v7 document's\s+this capture$/);
    // by hand: 40 <stack trace> records of 5 stacks (35 reused); 2,080 B in full, 40 x 16 B as cookies
    const text = (await import('node:fs')).readFileSync(f, 'utf8');
    const records = text.split('\n').filter((l) => l.endsWith('<stack trace>')).length;
    expect(records).toBe(40);
    const cell = (what: string) => lines.slice(at + 2, at + 5).find((l) => l.trimStart().startsWith(what))!;
    expect(cell('stack records')).toMatch(new RegExp(`~3000\\s+${records}$`));
    expect(cell('dedup rate')).toMatch(/84-98% \(depends on workload diversity\)\s+87\.5%, within the document's range$/);
    expect(cell('ring buffer savings')).toMatch(new RegExp(`~80% for stack data\\s+${(100 * (1 - 640 / 2080)).toFixed(1)}% of the stack records' bytes$`));
  });

  realIt('--mode and --max-fallback-share, and a real trace with stacks', async () => {
    const r = await run(['--json', '--mode', 'v7', '--max-fallback-share', '0', REAL]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(new Set(j.bits.map((b: { mode: string }) => b.mode))).toEqual(new Set(['v7']));
    expect(j.records).toBe(5); // grep -c '<stack trace>' on the file
    expect(j.recommended.bits).toBe(10);
    expect(j.bufferSource).toBe('default');
  });

  it('exit status: 2 on usage errors, 1 when no file could be read, help on --help', async () => {
    expect((await run([])).code).toBe(2);
    expect((await run(['--buffer-kb', 'x', REAL])).code).toBe(2);
    expect((await run(['--mode', 'v4', REAL])).code).toBe(2);
    expect((await run(['--max-fallback-share', '2', REAL])).code).toBe(2);
    expect((await run(['--bogus', REAL])).code).toBe(2);
    const missing = await run(['/nonexistent/trace']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/no such file/);
    const h = await run(['--help']);
    expect(h.code).toBe(0);
    expect(h.out).toMatch(/usage: stackmap-explorer whatif/);
  });

  realIt('says why when the capture has no full stacks', async () => {
    const r = await run([realTracePath('catapult-atrace_data.txt')]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/no recommendation: the capture has no full stack records/);
  });
});

describe('cli whatif and capture.txt', () => {
  it("uses the buffer size a capture.sh bundle's capture.txt recorded (bufferSource 'capture'); --buffer-kb overrides", async () => {
    const f = traceFile();
    const txt = join(f, '..', 'capture.txt');
    writeFileSync(
      txt,
      '# stackmap explorer capture, by capture.sh, 2026-12-01T10:00:00Z\n# buffer_size_kb: 96 (per CPU, read from tracefs before the restore)\n',
    );
    const j = JSON.parse((await run(['--json', f, txt])).out);
    expect([j.bufferKb, j.bufferSource]).toEqual([96, 'capture']);
    expect(j.notes[0]).toContain('as the capture recorded it');
    const o = JSON.parse((await run(['--json', '--buffer-kb', '32', f, txt])).out);
    expect([o.bufferKb, o.bufferSource]).toEqual([32, 'option']);
  });
});
