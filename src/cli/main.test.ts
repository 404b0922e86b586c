import { execFile } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { summarize } from '../core/capture/summary.ts';
import { realIt, realTracePath } from '../core/testing/real-traces.ts';
import { readFiles } from './read-files.ts';
import { cliArgv } from './test-io.ts';

const run = promisify(execFile);
const SAMPLES = new URL('../../public/samples/', import.meta.url).pathname;
const cli = (...args: string[]) =>
  run(...cliArgv(...args), { encoding: 'utf8' }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

describe('summary --json', () => {
  it('prints the DESIGN 5.1 object for the sample and exits 0', async () => {
    const files = ['trace', 'stack_map_bin.gen1', 'stack_map_bin.gen2', 'stack_map_bin.gen3', 'stack_map.gen3', 'stack_map_stat', 'kallsyms'];
    const r = await cli('summary', '--json', ...files.map((f) => SAMPLES + f));
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    for (const key of [
      'events',
      'cookies',
      'fullStacks',
      'resolved',
      'unresolved',
      'generations',
      'uniqueStacks',
      'top',
      'stat',
      'diagnostics',
      'status',
      'files',
    ]) {
      expect(s).toHaveProperty(key);
    }
    expect(s.events).toBe(4000);
    expect(s.resolved + s.unresolved).toBe(s.cookies);
    expect(s.generations).toEqual([1, 2, 3]);
    expect(s.top.length).toBe(10);
    expect(typeof s.top[0].frames[0]).toBe('string');
    expect(s.stat.capacity).toBe(16384);
    expect(s.diagnostics).toEqual([]);
    expect(s.files.map((f: { kind: string }) => f.kind).sort()).toEqual([
      'kallsyms',
      'stack_map_bin',
      'stack_map_bin',
      'stack_map_bin',
      'stack_map_stat',
      'stack_map_text',
      'trace_text',
    ]);
  }, 30_000);

  it('exits 0 with diagnostics when one file is good and another is missing or junk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smx-'));
    writeFileSync(join(dir, 'junk'), Buffer.from([0, 1, 2, 3, 4, 5, 250]));
    const r = await cli('summary', '--json', SAMPLES + 'stack_map_stat', join(dir, 'junk'), join(dir, 'missing'));
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.diagnostics.map((d: { file: string }) => d.file)).toEqual(['junk', join(dir, 'missing')]);
    expect(s.stat.generation).toBe(3);
  }, 30_000);

  it('with --generation and --cpus, also counts what the page shows for that selection', async () => {
    const files = ['trace', 'stack_map_bin.gen1', 'stack_map_bin.gen2'].map((f) => SAMPLES + f);
    const whole = JSON.parse((await cli('summary', '--json', ...files)).stdout);
    const r = await cli('summary', '--json', '--generation', '2', '--cpus', '1,2', ...files);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.events).toBe(whole.events); // the capture's own numbers are unchanged
    expect(s.selection).toMatchObject({ generation: 2, cpus: [1, 2], range: null });
    expect(s.selection.events).toBeGreaterThan(0);
    expect(s.selection.events).toBeLessThan(whole.events / 3);
    expect(s.selection.resolved + s.selection.unresolved).toBe(s.selection.cookies);
    expect(s.selection.top[0].count).toBeLessThanOrEqual(s.selection.resolved + s.selection.fullStacks);
    expect((await cli('summary', '--json', '--generation', 'x', ...files)).code).toBe(2);
    expect((await cli('summary', '--json', '--range', '5,4', ...files)).code).toBe(2);
  }, 30_000);

  it('the trace without its dumps: the gain and the bytes without the map are null, and why says so', async () => {
    const r = await cli('summary', '--json', SAMPLES + 'trace');
    expect(r.code).toBe(0);
    const rb = JSON.parse(r.stdout).derived.ringBuffer;
    // a second count of the cookies: the trace's <stack_id lines
    const cookies = readFileSync(SAMPLES + 'trace', 'utf8')
      .split('\n')
      .filter((l) => l.includes('<stack_id ')).length;
    expect(rb).toMatchObject({ basis: 'unknown', gain: null, bytesWithoutMap: null, assumedDepth: null });
    expect(rb.why).toContain(`${cookies.toLocaleString('en-US')} cookies have no stack: their depth is unknown`);
    expect(rb.bounds.gain[0]).toBeGreaterThan(1);
    const text = await cli('summary', SAMPLES + 'trace');
    expect(text.stdout).toMatch(
      /retention gain unknown \(between \d+\.\dx and \d+\.\dx the events kept; each event's own record taken as 56 B, assumed; the stack bytes alone between \d+\.\dx and \d+\.\dx\)/,
    );
  }, 30_000);

  realIt(
    'segments: the sample trace and a prose file of four runs, and --segments counts each',
    async () => {
      const tpoint = realTracePath('perf-tools-tpoint_example.txt');
      const r = await cli('summary', '--json', '--segments', SAMPLES + 'trace', tpoint);
      expect(r.code).toBe(0);
      const s = JSON.parse(r.stdout);
      expect(s.segments.map((g: { file: string }) => g.file)).toEqual(['trace', ...Array(4).fill('perf-tools-tpoint_example.txt')]);
      for (const g of s.segments) {
        expect(Object.keys(g)).toEqual(expect.arrayContaining(['file', 'firstTs', 'lastTs', 'events']));
        // a segment's range selected holds its events and no other's
        expect(g.counts.events).toBe(g.events);
      }
      expect(s.segments.reduce((n: number, g: { events: number }) => n + g.events, 0)).toBe(s.events);
      // without --segments there are no per-segment counts; the plain form lists them
      const plain = JSON.parse((await cli('summary', '--json', SAMPLES + 'trace', tpoint)).stdout);
      expect(plain.segments[0].counts).toBeUndefined();
      const text = (await cli('summary', SAMPLES + 'trace', tpoint)).stdout;
      expect(text).toContain('segments (5 unrelated time ranges');
      expect(text).toMatch(/ 4,000 events {2}trace\n/);
    },
    30_000,
  );

  it('the same trace twice: a diagnostic that says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smx-'));
    writeFileSync(join(dir, 'copy'), readFileSync(SAMPLES + 'trace'));
    const s = JSON.parse((await cli('summary', '--json', SAMPLES + 'trace', join(dir, 'copy'))).stdout);
    expect(s.segments.length).toBe(1);
    const d = s.diagnostics.filter((x: { file: string }) => x.file === 'copy');
    expect(d.length).toBe(1);
    expect(d[0].message).toMatch(/^overlaps trace in time on CPUs 0, 1, 2, 3 .*the same capture/);
  }, 30_000);

  it('exits 1 when no file could be read, 2 on a usage error', async () => {
    const missing = await cli('summary', '--json', '/nonexistent/trace');
    expect(missing.code).toBe(1);
    // said on stderr too, not only at the bottom of the summary on stdout
    expect(missing.stderr).toBe('/nonexistent/trace: cannot read: no such file\n');
    expect((await cli('summary', '--json')).code).toBe(2);
    expect((await cli('frobnicate')).code).toBe(2);
    expect((await cli('summary', '--bogus', SAMPLES + 'trace')).code).toBe(2);
  }, 30_000);
});

describe('each file fails alone (issue 10)', () => {
  const diag = (s: { diagnostics: { file: string; message: string }[] }, file: string) => s.diagnostics.filter((d) => d.file === file).map((d) => d.message);

  it('an empty folder and a missing file among the files are diagnostics: the JSON is printed, exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smx-'));
    const r = await cli('summary', '--json', dir, SAMPLES + 'trace', join(dir, 'missing'), SAMPLES + 'stack_map_stat');
    expect(r.stderr).not.toContain('internal error');
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.events).toBe(4000);
    expect(s.stat.generation).toBe(3);
    expect(diag(s, dir)).toEqual(['cannot read: an empty folder (no files in it)']);
    expect(diag(s, join(dir, 'missing'))).toEqual(['cannot read: no such file']);
    // an empty folder alone: nothing read (a folder with files is a capture: folder.test.ts)
    const alone = await cli('summary', '--json', dir);
    expect(alone.code).toBe(1);
    expect(diag(JSON.parse(alone.stdout), dir)).toEqual(['cannot read: an empty folder (no files in it)']);
  }, 30_000);

  it('a file of no known kind alone exits 1 (nothing was read), still with its JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smx-'));
    writeFileSync(
      join(dir, 'noise.bin'),
      Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256),
    );
    const r = await cli('summary', '--json', join(dir, 'noise.bin'));
    expect(r.code).toBe(1);
    const s = JSON.parse(r.stdout);
    expect(s.events).toBe(0);
    expect(diag(s, 'noise.bin').length).toBe(1);
  }, 30_000);

  realIt(
    'perf script is read (issue 12.4), and a trace.dat with a file it reads exits 0',
    async () => {
      const perf = await cli('summary', '--json', realTracePath('flamegraph-perf-dd-stacks-01.txt'));
      expect(perf.code).toBe(0);
      expect(JSON.parse(perf.stdout).events).toBeGreaterThan(0);
      // with a file it reads, 0
      expect((await cli('summary', '--json', realTracePath('trappy-trace.dat'), SAMPLES + 'stack_map_stat')).code).toBe(0);
    },
    30_000,
  );

  it('`--` ends the options: what follows is a file, even when it starts with a dash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smx-'));
    writeFileSync(join(dir, '--json'), readFileSync(SAMPLES + 'stack_map_stat'));
    const r = await run(...cliArgv('summary', '--json', '--', '--json', SAMPLES + 'trace'), {
      encoding: 'utf8',
      cwd: dir,
    });
    const s = JSON.parse(r.stdout);
    expect(s.files.map((f: { file: string }) => f.file)).toEqual(['--json', 'trace']);
    expect(s.stat.generation).toBe(3);
    // options before it still count, and an unknown option before it is still an error
    expect((await cli('summary', '--bogus', '--', SAMPLES + 'trace')).code).toBe(2);
    expect((await cli('summary', '--json', '--')).code).toBe(2);
  }, 30_000);

  it('a file truncated while it is read: a diagnostic naming it, what was read and the other files kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smx-'));
    const path = join(dir, 'trace');
    const body = readFileSync(SAMPLES + 'trace');
    writeFileSync(path, Buffer.concat([body, body, body]));
    let cut = false;
    const { capture } = await readFiles([path, SAMPLES + 'stack_map_stat'], {
      progressEveryMs: 0,
      // once 200 KB of it are read, the file is cut short under the reader
      onProgress: (p) => {
        if (!cut && p.file === 'trace' && p.bytesRead > 200_000) {
          truncateSync(path, 100_000);
          cut = true;
        }
      },
    });
    expect(cut).toBe(true);
    const s = summarize(capture);
    expect(s.stat?.generation).toBe(3);
    expect(s.events).toBeGreaterThan(0);
    // what was read before the cut is kept, and no more: fewer events than the three copies hold
    // (the reads are of 1 MiB, one ahead: a few MiB of the 8 may be read before the cut is seen)
    const one = summarize((await readFiles([SAMPLES + 'trace'])).capture).events;
    expect(s.events).toBeLessThan(2 * one);
    expect(diag(s, 'trace')).toContainEqual(
      expect.stringMatching(
        /^could not be read past byte \d+ of 2776344 \(NotReadableError: .*\): it was changed, cut short or became unreadable while being read/,
      ),
    );
    expect(diag(s, 'trace')).toContainEqual(expect.stringMatching(/^changed while being read \(size 2776344 -> 100000 bytes, modified at /));
  });

  it('a file changed after its last byte was read (unseen by the reader) is caught by the stat after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smx-'));
    const path = join(dir, 'stack_map_stat');
    writeFileSync(path, readFileSync(SAMPLES + 'stack_map_stat'));
    const size = readFileSync(path).length;
    let grown = false;
    const { capture } = await readFiles([path, SAMPLES + 'trace'], {
      progressEveryMs: 0,
      // the report of its whole size comes once it is read: a writer appends right then
      onProgress: (p) => {
        if (!grown && p.file === 'stack_map_stat' && p.bytesRead === size) {
          appendFileSync(path, 'entries: 1 / 2\n');
          grown = true;
        }
      },
    });
    expect(grown).toBe(true);
    const s = summarize(capture);
    expect(diag(s, 'stack_map_stat')).toEqual([
      expect.stringMatching(
        new RegExp(`^changed while being read \\(size ${size} -> ${size + 15} bytes, modified at .*\\): what was read may mix its old and new contents$`),
      ),
    ]);
    expect(diag(s, 'trace')).toEqual([]);
  });
});

describe('as a Unix tool (DESIGN 5.4)', () => {
  const dumps = ['stack_map_bin.gen1', 'stack_map_bin.gen2', 'stack_map_bin.gen3', 'kallsyms'].map((f) => SAMPLES + f);
  const piped = (args: string[], input: Buffer) =>
    new Promise<{ code: number; stdout: string }>((resolve) => {
      const child = execFile(...cliArgv(...args), { encoding: 'utf8', maxBuffer: 1 << 26 }, (e, stdout) =>
        resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, stdout }),
      );
      child.stdin!.end(input);
    });

  it('- reads standard input, sniffed like a file: the numbers the file gives, under the name stdin', async () => {
    const fromFile = JSON.parse((await cli('summary', '--json', SAMPLES + 'trace', ...dumps)).stdout);
    const r = await piped(['summary', '--json', '-', ...dumps], readFileSync(SAMPLES + 'trace'));
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.files[0]).toMatchObject({ file: 'stdin', kind: 'trace_text', size: fromFile.files[0].size, lines: fromFile.files[0].lines });
    for (const k of ['events', 'cookies', 'resolved', 'unresolved', 'uniqueStacks', 'top', 'status']) expect([k, s[k]]).toEqual([k, fromFile[k]]);
  }, 60_000);

  it('--version on its own and after a command; --help and -h on summary too (exit 0)', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const args of [['--version'], ['summary', '--version'], ['top', '--version'], ['whatif', '--version']]) {
      const r = await cli(...args);
      expect([args.join(' '), r.code, r.stdout]).toEqual([args.join(' '), 0, `stackmap-explorer ${pkg.version}\n`]);
    }
    for (const h of ['--help', '-h']) {
      const r = await cli('summary', h);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^usage: stackmap-explorer summary/);
    }
  }, 60_000);
});

describe('--name=value (issue 23)', () => {
  it('every command takes a long option as --name=value, the same as --name value', async () => {
    const f = SAMPLES + 'trace';
    const eq = await cli('whatif', '--json', '--buffer-kb=64', '--mode=v7', f);
    const sp = await cli('whatif', '--json', '--buffer-kb', '64', '--mode', 'v7', f);
    expect(eq.code).toBe(0);
    expect(eq.stdout).toBe(sp.stdout);
    const out = mkdtempSync(join(tmpdir(), 'smx-eq-'));
    const g = await cli('generate', `--out=${out}`, '--events=300', '--stacks=20', '--json');
    expect(g.code).toBe(0);
    expect(JSON.parse(g.stdout)).toMatchObject({ events: 300, stacks: 20 });
    const top = await cli('top', '--limit=1', '--json', f, SAMPLES + 'stack_map_bin.gen1');
    expect(JSON.parse(top.stdout).rows.length).toBe(1);
    // after --, a file named like an option stays a file
    expect((await cli('summary', '--json', '--', '--x=1')).stdout).toContain('"file": "--x=1"');
    // a value that starts with a dash goes after `=`; the bare form is said to be ambiguous
    const neg = await cli('summary', '--json', '--range=-1,99999', f);
    expect([neg.code, JSON.parse(neg.stdout).selection.events]).toEqual([0, 4000]);
    const bare = await cli('summary', '--json', '--range', '-1,99999', f);
    expect([bare.code, bare.stderr.split('\n')[0]]).toEqual([2, '--range takes a value that starts with -: write it as --range=VALUE']);
  }, 90_000);

  it('one parser for every command: an unknown option is named (exit 2), a missing value said, -h prints the usage (exit 0)', async () => {
    const commands = ['summary', 'top', 'whatif', 'export', 'sql', 'generate', 'simulate', 'diff'];
    const results = await Promise.all(commands.map(async (c) => ({ c, bogus: await cli(c, '--bogus=1', SAMPLES + 'trace'), help: await cli(c, '-h') })));
    for (const { c, bogus, help } of results) {
      expect([c, bogus.code, bogus.stderr.split('\n')[0]]).toEqual([c, 2, 'unknown option: --bogus (a file whose name starts with - goes after --)']);
      expect([c, help.code, help.stdout.length > 100]).toEqual([c, 0, true]);
    }
    const missing = await cli('top', SAMPLES + 'trace', '--limit');
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([2, '--limit needs a value']);
  }, 120_000);
});
