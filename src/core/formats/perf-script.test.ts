import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExplorerData } from '../query/explorer-data.ts';
import { exportSelection } from '../export/exports.ts';
import { ALL } from '../query/api.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { DiagnosticLog } from './diagnostics.ts';
import { MAX_LINE, TOO_LONG } from './lines.ts';
import { createPerfScriptParser, headerStepsForTests, parsePerfHeader, PERF_REASON, type PerfScriptResult } from './perf-script.ts';
import { sniffKind } from './sniff.ts';
import { feedChunks, feedCuts } from '../testing/formats.ts';
import { readEveryWay, readers } from '../testing/reader-kit.ts';
import { realDescribe, realTrace, realTracePath } from '../testing/real-traces.ts';
import type { TraceEvent, TraceSink, TraceStackRecord } from './types.ts';

const FILE = 'flamegraph-perf-dd-stacks-01.txt';

interface Read {
  result: PerfScriptResult;
  events: TraceEvent[];
  stacks: TraceStackRecord[];
  diagnostics: { where: string; message: string }[];
}

function read(input: Uint8Array, chunk: number, cuts?: number[]): Read {
  const events: TraceEvent[] = [];
  const stacks: TraceStackRecord[] = [];
  const sink: TraceSink = {
    event: (e) => events.push({ ...e }),
    stackRecord: (r) => stacks.push(r),
    lost: () => {
      throw new Error('perf script has no lost markers');
    },
  };
  const log = new DiagnosticLog('perf.txt');
  const p = createPerfScriptParser({ file: 'perf.txt', diagnostics: log }, sink);
  const result = cuts ? feedCuts(p, input, cuts) : feedChunks(p, input, chunk);
  return { result, events, stacks, diagnostics: log.list().map((d) => ({ where: d.where, message: d.message })) };
}

/** `read` by reader-kit.ts's readEveryWay at `sizes` (and renamed `unknown`, lines counted): the one-chunk reading. */
function readKit(input: Uint8Array, sizes: number[]): Read {
  const r = readEveryWay('perf.txt', input, { ...readers.perfScript, sizes });
  expect(r.got.lost, 'perf script has no lost markers').toEqual([]);
  return { result: r.result, events: r.got.events, stacks: r.got.stacks, diagnostics: r.diagnostics.map((d) => ({ where: d.where, message: d.message })) };
}

/** The second method for the folded stacks: FlameGraph's own stackcollapse-perf.pl (../shared/peer-tools/, run with perl) on `file`, or on `input` from stdin. */
const STACKCOLLAPSE = new URL('../../../../shared/peer-tools/stackcollapse-perf.pl', import.meta.url).pathname;
const stackcollapse = (file: string | null, input?: string) =>
  execFileSync('perl', file ? [STACKCOLLAPSE, file] : [STACKCOLLAPSE], { encoding: 'utf8', input });

/**
 * The script's folded lines `comm;root;...;leaf weight` as the default folded export prints them:
 * the process-name root left out, each weight (the samples' `period`, the same for all) a count.
 */
function perSample(folded: string, period: number): string {
  return folded.replace(/^[^;\n]*;(.*) (\d+)$/gm, (_, stack: string, w: string) => `${stack} ${+w / period}`);
}

/**
 * A plain reading of perf script in the manner of FlameGraph's stackcollapse-perf.pl (regexes,
 * split on blank lines), written here without the parser's code, for what the script's folded
 * output does not say: each sample's frames in file order (the stack records), the number of
 * samples and of distinct stacks, the most frequent one. It is held to the script's output below.
 * Each sample is [comm, frames leaf first], a frame named as stackcollapse-perf names it:
 * the symbol without `+0x..`, or for `[unknown]` the DSO's base name in brackets, or `[unknown]`.
 * Unlike stackcollapse-perf it keeps a last sample that no blank line follows.
 */
function plainSamples(s: string): { comm: string; frames: string[] }[] {
  const out: { comm: string; frames: string[] }[] = [];
  for (const block of s.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
    if (lines.length === 0) continue;
    const head = /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/.exec(lines[0]);
    if (!head) throw new Error('plain reader: no header in ' + lines[0]);
    const frames: string[] = [];
    for (const l of lines.slice(1)) {
      const m = /^\s*(\w+)\s*(.+) \((.*)\)/.exec(l)!;
      let func = m[2].replace(/\+0x[\da-f]+$/, '');
      if (func === '[unknown]') func = m[3] !== '[unknown]' ? '[' + m[3].replace(/.*\//, '') + ']' : '[unknown]';
      frames.push(func);
    }
    out.push({ comm: head[1], frames });
  }
  return out;
}

/** stackcollapse-perf's folded lines (`root;...;leaf count`, sorted), with or without the process-name root. */
function plainFolded(samples: { comm: string; frames: string[] }[], withComm: boolean, weight = 1): string {
  const counts = new Map<string, number>();
  for (const s of samples) {
    if (s.frames.length === 0) continue;
    const key = [...(withComm ? [s.comm] : []), ...[...s.frames].reverse()].join(';');
    counts.set(key, (counts.get(key) ?? 0) + weight);
  }
  return [...counts.keys()]
    .sort()
    .map((k) => `${k} ${counts.get(k)}\n`)
    .join('');
}

// every sample of the file is weighted by this period (its header lines say so; checked below)
const PERIOD = 10101010;

// the body runs to collect the tests even without the folder: the file is read in beforeAll
realDescribe('perf script: the real file', () => {
  let bytes: Uint8Array = new Uint8Array(0);
  let text = '';
  let plain: ReturnType<typeof plainSamples> = [];
  // counted by the plain reader: the number of samples and the Set of their joined frames
  let samples = 0;
  let distinct = 0;
  // stackcollapse-perf.pl on the file: it records a sample only at a blank line, so it drops the
  // file's last one; and on the file closed by a blank line (on its stdin), every sample
  let folded = '';
  let foldedAll = '';
  beforeAll(() => {
    bytes = realTrace(FILE);
    text = new TextDecoder().decode(bytes);
    plain = plainSamples(text);
    samples = plain.length;
    distinct = new Set(plain.map((s) => s.frames.join('\n'))).size;
    folded = stackcollapse(realTracePath(FILE));
    foldedAll = stackcollapse(null, text + '\n');
  });

  it('the plain reader agrees with stackcollapse-perf.pl, on the samples the script keeps and on all', () => {
    expect(folded).not.toBe('');
    expect(plainFolded(plain.slice(0, -1), true, PERIOD)).toBe(folded);
    expect(plainFolded(plain, true, PERIOD)).toBe(foldedAll);
    // and the header count by a third way: lines that name the event, each with the one period
    expect(samples).toBe(text.split('\n').filter((l) => l.includes(` ${PERIOD} cpu-clock:`)).length);
    expect(samples).toBe(text.split('\n').filter((l) => l.includes(' cpu-clock:')).length);
  });

  it("every way (reader-kit.ts: chunks of 0, 1, 7 and 4096 bytes, renamed `unknown`, the file's lines): every sample an event and a full stack, every line used", () => {
    const r = readKit(bytes, [0, 1, 7, 4096]);
    expect(r.diagnostics).toEqual([]);
    expect(r.result.samples).toBe(samples);
    expect(r.events).toHaveLength(samples);
    expect(r.stacks.map((s) => s.frames)).toEqual(plain.map((s) => s.frames));
    expect(new Set(r.stacks.map((s) => s.frames!.join('\n'))).size).toBe(distinct);
    expect(r.stacks.every((s) => s.kind === 'full' && s.comm === 'dd' && s.pid === 29776)).toBe(true);
    expect(r.events[0]).toMatchObject({ comm: 'dd', pid: 29776, tgid: null, ts: 666709.771979, name: 'cpu-clock', payload: 'period=10101010' });
    const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
    expect(r.result.lines).toEqual({ total: lines, used: lines, unused: 0 });
    // kernel frames: those in vmlinux, by a count of the file's lines
    expect(r.result.kernelFrames).toBe(text.split('\n').filter((l) => l.endsWith('vmlinux)')).length);
    expect(r.result.kernelFrames + r.result.userFrames).toBe(plain.reduce((n, s) => n + s.frames.length, 0));
  });

  it('renamed `unknown`: sniffed from its bytes, loaded into the stack table, folded as stackcollapse-perf.pl folds it', () => {
    expect(sniffKind(bytes.subarray(0, 16384))).toBe('perf_script');
    const cap = ingestFiles([['unknown', bytes]], 7);
    expect(cap.files[0]).toMatchObject({ file: 'unknown', kind: 'perf_script', lines: { unused: 0 } });
    expect(cap.diagnostics).toEqual([]);
    expect(cap.trace.eventCount).toBe(samples);
    expect(cap.trace.recordCount).toBe(samples);
    const d = new ExplorerData(cap);
    // the compatible export: what the script prints on the file, byte for byte
    expect(exportSelection(d, 'folded', ALL, { stackcollapse: true })).toBe(folded);
    // the default one: every sample, counted, no process-name root
    expect(exportSelection(d, 'folded', ALL)).toBe(perSample(foldedAll, PERIOD));
  });

  it('`cli summary --json` gives the same counts and top stack', async () => {
    const run = promisify(execFile);
    const main = new URL('../../cli/main.ts', import.meta.url).pathname;
    const r = await run('npx', ['tsx', main, 'summary', '--json', realTracePath(FILE)], { encoding: 'utf8' });
    const s = JSON.parse(r.stdout);
    expect(s.events).toBe(samples);
    expect(s.fullStacks).toBe(samples);
    expect(s.cookies).toBe(0);
    expect(s.uniqueStacks).toBe(distinct);
    // the most frequent stack by the plain reader
    const counts = new Map<string, number>();
    for (const p of plain) counts.set(p.frames.join('\n'), (counts.get(p.frames.join('\n')) ?? 0) + 1);
    const [topKey, topCount] = [...counts].sort((a, b) => b[1] - a[1])[0];
    expect(s.top[0]).toEqual({ count: topCount, frames: topKey.split('\n') });
    expect(s.diagnostics).toEqual([]);
  }, 60_000);
});

describe('perf script: malformed input', () => {
  it('reads lines of many colon-ended tokens in one pass each (a search past each token was quadratic: fails by the timeout)', () => {
    // 64 lines just under MAX_LINE, each ~16k tokens `a:` ; a header test per token that scanned to the line's end took ~1e9 steps a line
    // (`dd 1 a: ...` is a header now, `COMM PID EVENT:` without a time; `x` is no PID)
    const line = 'dd x ' + 'a: '.repeat(Math.floor((MAX_LINE - 10) / 3));
    const input = new TextEncoder().encode((line + '\n').repeat(64));
    const r = read(input, 1 << 16);
    expect(r.result.lines).toEqual({ total: 64, used: 0, unused: 64 });
    expect(r.diagnostics).toEqual([{ where: expect.stringMatching(/^lines 1, 2, 3, 4, 5/), message: PERF_REASON.header }]);
  }, 20_000);

  it('a line of ~30k tokens: each character visited at most once (counted), and read as a split reads it (a token list per line was 7x slower past 8k tokens)', () => {
    const many = 'a '.repeat(Math.floor((MAX_LINE - 40) / 2)) + 'z';
    const cases = [
      ['fields', 'dd 1/2 [003] 6.5: 7 cycles: ' + many],
      ['comm', many + ' 1/2 [003] 6.5: 7 cycles: x'],
      ['no timestamp', 'dd 1/2 ' + many],
    ] as const;
    for (const [what, line] of cases) {
      const run = (lines: number) => {
        headerStepsForTests.n = 0;
        const r = read(new TextEncoder().encode((line + '\n').repeat(lines)), 1 << 16);
        expect(r.result.lines.total, what).toBe(lines);
        return headerStepsForTests.n;
      };
      const one = run(16);
      expect(one, what).toBeLessThanOrEqual(16 * line.length);
      // 4x the lines, 4x the work
      expect(run(64), what).toBe(4 * one);
    }
    // what was read, against a split of the line (the second method)
    const words = cases[0][1].split(' ');
    expect(parsePerfHeader(cases[0][1])).toEqual({
      comm: 'dd',
      pid: 2,
      tgid: 1,
      cpu: 3,
      ts: 6.5,
      period: 7,
      event: 'cycles',
      fields: words.slice(6).join(' '),
    });
    const comm = cases[1][1].split(' ');
    expect(parsePerfHeader(cases[1][1])).toMatchObject({ comm: comm.slice(0, -6).join(' '), pid: 2, cpu: 3, fields: 'x' });
    expect(parsePerfHeader(cases[2][1])).toBeNull();
  });

  const enc = (s: string) => new TextEncoder().encode(s);

  it('says which line and why, and counts every line', () => {
    const input = [
      '\t  ffff81 orphan (x)', // 1: before any header
      'dd 1 5.0: 1 cpu-clock:', // 2
      '\t  ffff81 a ([kernel.kallsyms])', // 3
      '\t  not-hex b (x)', // 4
      '', // 5
      'no timestamp here', // 6
      '\t  ffff82 c ([kernel.kallsyms])', // 7: orphan, the bad header closed nothing open
      '', // 8
      'x' + ' '.repeat(MAX_LINE + 5), // 9
      'dd 1/2 [003] 6.5: cycles:', // 10
      '\t  12 d (/bin/dd)', // 11
    ].join('\n');
    // every way: reader-kit.ts
    const r = readKit(enc(input), [0, 1, 7, 4096]);
    expect(r.diagnostics).toEqual([
      // grouped by reason, in the order each was first seen
      { where: 'lines 1, 7', message: PERF_REASON.orphan },
      { where: 'line 4', message: PERF_REASON.frame },
      { where: 'line 6', message: PERF_REASON.header },
      { where: 'line 9', message: TOO_LONG },
    ]);
    expect(r.result.lines).toEqual({ total: 11, used: 6, unused: 5 });
    expect(r.stacks.map((s) => s.frames)).toEqual([['a'], ['d']]);
    expect(r.events.map((e) => [e.pid, e.tgid, e.cpu, e.ts, e.name, e.payload])).toEqual([
      [1, null, 0, 5, 'cpu-clock', 'period=1'],
      [2, 1, 3, 6.5, 'cycles', ''],
    ]);
    expect(r.result.cpus).toBe(4);
    expect(r.result.userFrames).toBe(1);
  });

  it('older perf: callchain lines without leading blanks are frames of the open sample, an empty symbol is a blank (issue 34, 18)', () => {
    const input = [
      'ffffffff8103d0ca early (x)', // 1: a frame shape before any header: an orphan
      'java 19983 cycles: ', // 2
      'ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])', // 3
      '7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)', // 4: symbol printed empty
      '\t7f1e2215d059 (/lib/x86_64-linux-gnu/libc-2.15.so)', // 5: no symbol at all (one blank)
      'ffffffff8103d0cb no dso here', // 6: neither a header nor IP SYM (DSO)
      '', // (the newline ending line 6)
    ].join('\n');
    // the second method: each line's shape by the script's own regexes
    const lines = input.split('\n');
    const header = /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/;
    const frame = /^\s*(\w+)\s*(.+) \((.*)\)/;
    expect(lines.map((l) => (l === '' ? 'blank' : header.test(l) ? 'header' : frame.test(l) ? 'frame' : 'other'))).toEqual([
      'frame',
      'header',
      'frame',
      'frame',
      'frame',
      'other',
      'blank',
    ]);
    expect(frame.exec(lines[3])![2]).toBe(' ');
    // every way: reader-kit.ts
    const r = readKit(enc(input), [0, 1, 3, 4096]);
    expect(r.diagnostics).toEqual([
      { where: 'line 1', message: PERF_REASON.orphan },
      { where: 'line 2', message: PERF_REASON.untimed },
      { where: 'line 6', message: PERF_REASON.header },
    ]);
    expect(r.result.lines).toEqual({ total: 6, used: 4, unused: 2 });
    // line 6 is no header: it closes the sample before it, as an unreadable line does
    expect(r.stacks.map((s) => s.frames)).toEqual([['native_write_msr_safe', ' ', '[libc-2.15.so]']]);
    expect([r.result.kernelFrames, r.result.userFrames]).toEqual([1, 2]);
    // renamed `unknown`: sniffed from its bytes
    expect(sniffKind(enc(input))).toBe('perf_script');
  });
});

// ---------------------------------------------------------------- property: random perf script text

interface GenFrame {
  ip: string;
  sym: string | null; // null: `[unknown]`
  dso: string | null; // null: `[unknown]`
}
interface GenSample {
  comm: string;
  pid: number;
  tid: number | null;
  cpu: number | null;
  secs: number;
  usecs: number;
  period: number | null;
  event: string;
  frames: GenFrame[];
}

const word = fc.stringMatching(/^[a-z_][a-z0-9_.]{0,8}$/);
const genFrame: fc.Arbitrary<GenFrame> = fc.record({
  ip: fc.stringMatching(/^[0-9a-f]{1,16}$/),
  sym: fc.option(
    fc.oneof(
      word,
      fc.tuple(word, fc.integer({ min: 0, max: 4095 })).map(([w, o]) => `${w}+0x${o.toString(16)}`),
    ),
    { nil: null },
  ),
  dso: fc.option(
    fc.oneof(
      fc.constant('[kernel.kallsyms]'),
      word.map((w) => '/usr/lib/' + w + '.so'),
      word.map((w) => '/boot/' + w + 'vmlinux'),
    ),
    { nil: null },
  ),
});
const genSample: fc.Arbitrary<GenSample> = fc.record({
  comm: fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
  pid: fc.integer({ min: 0, max: 99999 }),
  tid: fc.option(fc.integer({ min: 0, max: 99999 }), { nil: null }),
  cpu: fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }),
  secs: fc.integer({ min: 0, max: 999999 }),
  usecs: fc.integer({ min: 0, max: 999999 }),
  period: fc.option(fc.integer({ min: 1, max: 1e9 }), { nil: null }),
  event: fc.oneof(fc.constant('cpu-clock'), fc.constant('cycles:ppp'), fc.constant('sched:sched_switch')),
  frames: fc.array(genFrame, { maxLength: 6 }),
});

function render(s: GenSample): string {
  const pid = s.tid === null ? `${s.pid}` : `${s.pid}/${s.tid}`;
  const cpu = s.cpu === null ? '' : ` [${String(s.cpu).padStart(3, '0')}]`;
  const period = s.period === null ? '' : ` ${String(s.period).padStart(10)}`;
  let out = `${s.comm} ${pid.padStart(6)}${cpu} ${s.secs}.${String(s.usecs).padStart(6, '0')}:${period} ${s.event}: \n`;
  for (const f of s.frames) out += `\t${f.ip.padStart(16)} ${f.sym ?? '[unknown]'} (${f.dso ?? '[unknown]'})\n`;
  return out + '\n';
}

/** The frame key by the rules written out plainly: the symbol as printed (offset kept), else the bracketed DSO name. */
function expectedKey(f: GenFrame): string {
  if (f.sym !== null) return f.sym;
  if (f.dso !== null) return '[' + f.dso.split('/').pop() + ']';
  return '[unknown]';
}

describe('perf script: property', () => {
  it('any samples, cut anywhere, read back as generated', () => {
    fc.assert(
      fc.property(fc.array(genSample, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), (samples, cuts) => {
        const input = new TextEncoder().encode(samples.map(render).join(''));
        const r = read(input, 0, cuts);
        expect(r.diagnostics).toEqual([]);
        expect(r.events.map((e) => [e.comm, e.pid, e.tgid, e.cpu, e.name, e.payload])).toEqual(
          samples.map((s) => [s.comm, s.tid ?? s.pid, s.tid === null ? null : s.pid, s.cpu ?? 0, s.event, s.period === null ? '' : `period=${s.period}`]),
        );
        expect(r.events.map((e) => e.ts)).toEqual(samples.map((s) => Number(`${s.secs}.${String(s.usecs).padStart(6, '0')}`)));
        const withFrames = samples.filter((s) => s.frames.length > 0);
        expect(r.stacks.map((s) => s.frames)).toEqual(withFrames.map((s) => s.frames.map(expectedKey)));
        const kernel = samples.flatMap((s) => s.frames).filter((f) => f.dso === '[kernel.kallsyms]' || (f.dso ?? '').endsWith('vmlinux')).length;
        expect(r.result.kernelFrames).toBe(kernel);
        const lines = samples.reduce((n, s) => n + 2 + s.frames.length, 0);
        expect(r.result.lines).toEqual({ total: lines, used: lines, unused: 0 });
      }),
      { numRuns: 300 },
    );
  });
});
