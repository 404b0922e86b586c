import { execFileSync } from 'node:child_process';
import { mkdtempSync, openAsBlob, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadFiles } from './load.ts';
import { breaksSnippet, segmentAt, segmentsOf } from './segments.ts';
import { summarize } from './summary.ts';
import { REAL_TRACES_DIR, realIt } from '../testing/real-traces.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { awkSegments } from '../testing/awk-segments.ts';
import { TIMED_APART_TRACE } from '../testing/explorer-fixtures.ts';

const REAL = REAL_TRACES_DIR;
const SAMPLE_TRACE = join(import.meta.dirname, '../../../public/samples/trace');

async function load(paths: string[]) {
  const files = await Promise.all(paths.map(async (p) => ({ name: basename(p), blob: await openAsBlob(p) })));
  return loadFiles(files);
}

const ours = (r: ReturnType<typeof segmentsOf>) =>
  r.segments.map((s) => [s.firstTs.toFixed(6), s.lastTs.toFixed(6), s.events, s.records] as [string, string, number, number]);

describe('segments of real traces, against awk over the same files', () => {
  const cases: [string, string[], number][] = [
    ['tpoint (prose, four runs quoted)', [REAL + 'perf-tools-tpoint_example.txt'], 4],
    ['kprobe (prose, thirteen runs)', [REAL + 'perf-tools-kprobe_example.txt'], 13],
    ['functrace (prose, 5 s periodic events stay together)', [REAL + 'perf-tools-functrace_example.txt'], 4],
    ['one atrace capture', [REAL + 'catapult-atrace_data.txt'], 1],
    ['one atrace capture with a TGID column', [REAL + 'catapult-decompressed_atrace_data.txt'], 1],
    ['the sample trace', [SAMPLE_TRACE], 1],
    ['the sample trace and tpoint, days apart', [SAMPLE_TRACE, REAL + 'perf-tools-tpoint_example.txt'], 5],
  ];
  for (const [label, paths, count] of cases) {
    // the sample alone runs without the folder; a case with a real trace is a real-trace test
    const declare = paths.some((p) => p.startsWith(REAL)) ? realIt : it;
    declare(label, async () => {
      const c = await load(paths);
      const r = segmentsOf(c);
      const want = awkSegments(paths);
      expect(want.length).toBe(count);
      expect(ours(r)).toEqual(want);
      // every event is in exactly one segment
      expect(r.segments.reduce((n, s) => n + s.events, 0)).toBe(c.trace.eventCount);
      expect(r.overlaps).toEqual([]);
      // and the summary carries them, as DESIGN 5.3 names the fields
      const s = summarize(c);
      expect(s.segments.map((g) => [g.file, g.firstTs, g.lastTs, g.events])).toEqual(r.segments.map((g) => [g.file, g.firstTs, g.lastTs, g.events]));
    });
  }

  it("records timed apart from their event, and an orphan before any event: each widens its snippet by its own time (records read without the records' time column)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smx-seg-'));
    const path = join(dir, 'trace');
    writeFileSync(path, TIMED_APART_TRACE);
    const c = await load([path]);
    const r = segmentsOf(c);
    // awk drops a record before the first event; the rule here gives an orphan to the nearest snippet, which it widens
    expect(awkSegments([path])).toEqual([
      ['100.000000', '101.750000', 2, 3],
      ['9000.000000', '9000.250000', 1, 1],
    ]);
    expect(ours(r)).toEqual([
      ['99.000000', '101.750000', 2, 4],
      ['9000.000000', '9000.250000', 1, 1],
    ]);
    // the CPUs are the records' too: the orphan's 1 and the late record's 2
    expect(r.segments[0].cpus).toEqual([0, 1, 2]);
  });

  realIt('names each segment by its file, in time order', async () => {
    const r = segmentsOf(await load([REAL + 'perf-tools-tpoint_example.txt', SAMPLE_TRACE]));
    expect(r.segments.map((s) => s.file)).toEqual(['trace', ...Array(4).fill('perf-tools-tpoint_example.txt')]);
    expect(r.segments.map((s) => s.index)).toEqual([0, 1, 2, 3, 4]);
    const sample = r.segments[0];
    expect(sample.cpus).toEqual([0, 1, 2, 3]);
    expect(sample.eventsPerSecond).toBeCloseTo(4000 / (sample.lastTs - sample.firstTs));
  });
});

describe('files that overlap in time', () => {
  const text = readFileSync(SAMPLE_TRACE, 'utf8');
  const lines = text.split('\n');
  const header = lines.filter((l) => l.startsWith('#'));
  const cpuOf = (l: string) => /\[(\d{3})\]/.exec(l)?.[1];

  it('the same capture twice: one segment, and a diagnostic naming both files and the CPUs', async () => {
    const c = ingestFiles([
      ['trace', text],
      ['copy/trace', text],
    ]);
    const r = segmentsOf(c);
    expect(r.segments.length).toBe(1);
    expect(r.segments[0].files).toEqual(['trace', 'copy/trace']);
    expect(r.segments[0].events).toBe(2 * awkSegments([SAMPLE_TRACE])[0][2]);
    expect(r.overlaps.map((o) => [o.files, o.cpus])).toEqual([
      [
        ['trace', 'copy/trace'],
        [0, 1, 2, 3],
      ],
    ]);
    // the overlap's range: each CPU's first and last time, the same in both files, so the
    // whole file's first and last (awk over the lines' timestamps)
    const [lo, hi] = execFileSync(
      'awk',
      [
        '!/^#/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1) + 0; if (n++ == 0 || t < lo) lo = t; if (t > hi) hi = t; break } } END { printf "%.6f %.6f", lo, hi }',
        SAMPLE_TRACE,
      ],
      { encoding: 'utf8' },
    ).split(' ');
    expect([r.overlaps[0].firstTs.toFixed(6), r.overlaps[0].lastTs.toFixed(6)]).toEqual([lo, hi]);
    const s = summarize(c);
    const d = s.diagnostics.filter((x) => x.file === 'copy/trace');
    expect(d.length).toBe(1);
    expect(d[0].message).toContain('overlaps trace in time on CPUs 0, 1, 2, 3');
    expect(d[0].message).toContain('the same capture');
  });

  it('per-CPU files of one capture: one segment, no warning', async () => {
    // every line of the trace goes to the file of its CPU (stack records carry their event's CPU)
    const part = (cpus: string[]) => [...header, ...lines.filter((l) => !l.startsWith('#') && cpus.includes(cpuOf(l) ?? ''))].join('\n') + '\n';
    const c = ingestFiles([
      ['cpu01', part(['000', '001'])],
      ['cpu23', part(['002', '003'])],
    ]);
    const r = segmentsOf(c);
    expect(r.segments.map((s) => [s.file, s.events])).toEqual([['cpu01, cpu23', c.trace.eventCount]]);
    expect(r.overlaps).toEqual([]);
  });

  it('two files with the same name are told apart', async () => {
    const c = ingestFiles([
      ['trace', text],
      ['trace', text],
    ]);
    expect(segmentsOf(c).overlaps[0].files).toEqual(['trace', 'trace #2']);
  });
});

describe('the snippet rule', () => {
  it('splits only past 100x the span so far, and never under 10 s', () => {
    // a snippet of one instant: 10 s is the least gap that splits
    expect(breaksSnippet(5, 5, 14.9)).toBe(false);
    expect(breaksSnippet(5, 5, 15.01)).toBe(true);
    // a 2 s snippet: 200 s
    expect(breaksSnippet(0, 2, 150)).toBe(false);
    expect(breaksSnippet(0, 2, 202.5)).toBe(true);
    // back in time: more than 10 s before the first timestamp, whatever the span
    expect(breaksSnippet(100, 1000, 95)).toBe(false);
    expect(breaksSnippet(100, 1000, 89)).toBe(true);
    // inside the range: never
    expect(breaksSnippet(100, 1000, 500)).toBe(false);
  });

  it('finds the segment of a timestamp, or none between segments', () => {
    const segs = [
      { firstTs: 1, lastTs: 2 },
      { firstTs: 10, lastTs: 10 },
      { firstTs: 20, lastTs: 30 },
    ];
    expect([0.5, 1, 1.5, 2, 5, 10, 25, 30, 31].map((t) => segmentAt(segs, t))).toEqual([-1, 0, 0, 0, -1, 1, 2, 2, -1]);
    expect(segmentAt([], 1)).toBe(-1);
  });
});
