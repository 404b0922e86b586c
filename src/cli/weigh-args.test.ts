import type { TopRow } from './top.ts';
// `--weight`, `--group` and `--filter` on `top` and `export` (issue 35, DESIGN 5.5), on a text capture written
// here (testing/weighed-capture.ts): counts and weights against a regex reading of its lines with
// stacks resolved through the dump text, and the folded export drawn by FlameGraph's own
// flamegraph.pl (perl: an integration test), whose root must count the regex's total.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exportCommand } from './export.ts';
import { captureOutput } from './test-io.ts';
import { topCommand } from './top.ts';
import { readByRegex, sumBy, weighedCapture, type ReadEvent } from '../core/testing/weighed-capture.ts';

afterEach(() => vi.restoreAllMocks());

const FLAMEGRAPH = '/work/shared/peer-tools/flamegraph.pl';
const cap = weighedCapture();
const expected = readByRegex(cap.trace, cap.dump);
const dir = mkdtempSync(join(tmpdir(), 'smx-weigh-'));
const FILES = [join(dir, 'trace'), join(dir, 'stack_map')];
writeFileSync(FILES[0], cap.trace);
writeFileSync(FILES[1], cap.dump);
const totalBytes = expected.reduce((n, e) => n + (e.bytesAlloc ?? 0), 0);
const noBytes = expected.filter((e) => e.bytesAlloc === null).length;

async function run(cmd: (a: string[]) => Promise<number>, args: string[]) {
  const io = captureOutput();
  const code = await cmd(args);
  vi.restoreAllMocks();
  return { code, out: io.out.join(''), err: io.err.join('') };
}

type JsonRow = TopRow;

describe('--weight and --group', () => {
  it('top --json --weight field:bytes_alloc: {total, totalWeight, rows: [{count, weight, share, frames}]} as the regex sums them; the events without it said on stderr', async () => {
    const r = await run(topCommand, ['--json', '--limit', '1000', '--weight', 'field:bytes_alloc', ...FILES]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { total: number; totalWeight: number; unweighed: number; rows: JsonRow[] };
    expect([j.total, j.totalWeight, j.unweighed]).toEqual([expected.length, totalBytes, noBytes]);
    expect(r.err).toContain(`${noBytes} events have no bytes_alloc`);
    const want = sumBy(expected, (e) => e.frames.join(';'));
    expect(new Map(j.rows.map((x) => [x.frames.join(';'), { count: x.count, bytes: x.weight, unweighed: x.unweighed }]))).toEqual(want);
    for (const x of j.rows) expect(x.share).toBeCloseTo(x.weight / totalBytes, 12);
    // heaviest first
    expect(j.rows.map((x) => x.weight)).toEqual(j.rows.map((x) => x.weight).sort((a, b) => b - a));
  });

  it("top --group task|event: rows per group and stack, each the regex's records and bytes; the text prints a weight column and the group", async () => {
    for (const [by, key] of [
      ['task', (e: ReadEvent) => e.comm],
      ['event', (e: ReadEvent) => e.event],
    ] as const) {
      const r = await run(topCommand, ['--json', '--limit', '1000', '--weight', 'field:bytes_alloc', '--group', by, ...FILES]);
      const j = JSON.parse(r.out) as { total: number; totalWeight: number; rows: JsonRow[] };
      expect(j.total).toBe(expected.length);
      const want = sumBy(expected, (e) => `${key(e)} ${e.frames.join(';')}`);
      expect(new Map(j.rows.map((x) => [`${x.group} ${x.frames.join(';')}`, { count: x.count, bytes: x.weight, unweighed: x.unweighed }]))).toEqual(want);
    }
    const t = await run(topCommand, ['--limit', '3', '--weight', 'field:bytes_alloc', '--group', 'task', ...FILES]);
    const j = JSON.parse((await run(topCommand, ['--json', '--limit', '3', '--weight', 'field:bytes_alloc', '--group', 'task', ...FILES])).out) as {
      rows: JsonRow[];
    };
    const lines = t.out.split('\n');
    expect(lines[0]).toBe(
      `# ${expected.length} stack records counted, weighing ${totalBytes.toLocaleString('en-US')} (field:bytes_alloc), the 3 heaviest stacks`,
    );
    expect(lines[2]).toMatch(/^# Overhead +Count +Weight +Group +Stack \(leaf first\)$/);
    const w = j.rows[0];
    expect(lines[4].split(/\s+/).filter(Boolean)).toEqual([`${(w.share * 100).toFixed(2)}%`, String(w.count), String(w.weight), w.group, w.frames[0]]);
  });

  it("top --json --filter F --weight field:bytes_alloc: each row's count and weight as the regex reading filtered the same way here", async () => {
    // each filter beside its reading over the regex's events: trace-cmd's rules (a field the event
    // lacks, or a value that is not a number, makes its comparison false; =~ unanchored, case-insensitive)
    const cases: [string[], (e: ReadEvent) => boolean][] = [
      [['kmem_cache_alloc: bytes_alloc > 512'], (e) => e.event === 'kmem_cache_alloc' && e.bytesAlloc !== null && e.bytesAlloc > 512],
      [['kmem_cache_alloc: COMM =~ "^BINDER" || common_pid == 88'], (e) => e.event === 'kmem_cache_alloc' && (/^binder/i.test(e.comm) || e.pid === 88)],
      // two filters, ORed: sched_wakeup's events have no bytes_alloc (counted, weighing 0)
      [
        ['sched_wakeup: COMM == "sh" || TGID == 1403', 'kmem_cache_alloc: bytes_alloc <= 64 && !(common_pid == 612)'],
        (e) =>
          (e.event === 'sched_wakeup' && (e.comm === 'sh' || e.tgid === 1403)) ||
          (e.event === 'kmem_cache_alloc' && e.bytesAlloc !== null && e.bytesAlloc <= 64 && e.pid !== 612),
      ],
    ];
    for (const [filters, keep] of cases) {
      const what = filters.join(' --filter ');
      const kept = expected.filter(keep);
      // the filter keeps some of the events, not all or none
      expect(kept.length, what).toBeGreaterThan(10);
      expect(kept.length, what).toBeLessThan(expected.length / 2);
      const r = await run(topCommand, ['--json', '--limit', '1000', '--weight', 'field:bytes_alloc', ...filters.flatMap((f) => ['--filter', f]), ...FILES]);
      expect(r.code, r.err).toBe(0);
      const j = JSON.parse(r.out) as { total: number; totalWeight: number; unweighed: number; rows: JsonRow[] };
      const bytes = kept.reduce((n, e) => n + (e.bytesAlloc ?? 0), 0);
      const unweighed = kept.filter((e) => e.bytesAlloc === null).length;
      expect([j.total, j.totalWeight, j.unweighed], what).toEqual([kept.length, bytes, unweighed]);
      const want = sumBy(kept, (e) => e.frames.join(';'));
      expect(new Map(j.rows.map((x) => [x.frames.join(';'), { count: x.count, bytes: x.weight, unweighed: x.unweighed }])), what).toEqual(want);
      for (const x of j.rows) expect(x.share, what).toBeCloseTo(bytes ? x.weight / bytes : 0, 12);
    }
  });

  it('top --group process: the TGID column, the pid where it says (-------), said on stderr', async () => {
    const r = await run(topCommand, ['--json', '--limit', '1000', '--group', 'process', ...FILES]);
    const j = JSON.parse(r.out) as { total: number; totalWeight: number; rows: JsonRow[] };
    expect(j.totalWeight).toBe(expected.length);
    const got = new Map<string, number>();
    for (const x of j.rows) {
      const id = /-(\d+)$/.exec(x.group!)![1];
      got.set(id, (got.get(id) ?? 0) + x.count);
    }
    expect(got).toEqual(new Map([...sumBy(expected, (e) => String(e.tgid ?? e.pid))].map(([k, v]) => [k, v.count])));
    expect(r.err).toMatch(/events have no TGID: grouped by their pid/);
  });

  it('usage errors: an unknown weight or group, ref_count split by group, a group where the format has no frames', async () => {
    for (const [cmd, args, msg] of [
      [topCommand, ['--weight', 'bytes'], /--weight takes occurrences, ref_count, period or field:NAME/],
      [topCommand, ['--group', 'cpu'], /--group takes task, process, event or field:NAME/],
      [topCommand, ['--weight', 'ref_count', '--group', 'task'], /cannot be split by --group/],
      [exportCommand, ['--format', 'chrome', '--group', 'task'], /--group is for --format folded or speedscope/],
      [exportCommand, ['--format', 'folded', '--stackcollapse', '--weight', 'field:len'], /not --stackcollapse/],
    ] as const) {
      const r = await run(cmd, [...args, ...FILES]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(msg);
    }
    // ref_count by its DESIGN name, as refcount
    expect((await run(topCommand, ['--weight', 'ref_count', '--json', ...FILES])).code).toBe(0);
  });

  it("export --format folded --weight field:bytes_alloc --group task: `comm;root;...;leaf BYTES` per the regex, and flamegraph.pl's root counts its total", async () => {
    const r = await run(exportCommand, ['--format', 'folded', '--granularity', 'site', '--weight', 'field:bytes_alloc', '--group', 'task', ...FILES]);
    expect(r.code).toBe(0);
    expect(r.err).toContain(`${noBytes} events have no bytes_alloc`);
    const want = new Map(
      [...sumBy(expected, (e) => [e.comm, ...[...e.frames].reverse()].join(';'))].filter(([, v]) => v.bytes > 0).map(([k, v]) => [k, v.bytes]),
    );
    const lines = r.out.trimEnd().split('\n');
    expect(new Map(lines.map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]))).toEqual(want);
    if (!existsSync(FLAMEGRAPH)) throw new Error(`${FLAMEGRAPH} is missing`);
    const folded = join(dir, 'folded.txt');
    writeFileSync(folded, r.out);
    const svg = execFileSync('perl', [FLAMEGRAPH, folded], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const root = /<title>all \(([\d,]+) samples, 100%\)<\/title>/.exec(svg);
    expect(root).not.toBeNull();
    expect(Number(root![1].replace(/,/g, ''))).toBe(totalBytes);
    // a frame per task right under the root: flamegraph.pl draws each with the regex's bytes for it
    for (const [comm, v] of sumBy(expected, (e) => e.comm)) {
      const esc = comm.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const m = new RegExp(`<title>${esc} \\(([\\d,]+) samples`).exec(svg);
      expect(Number(m![1].replace(/,/g, '')), comm).toBe(v.bytes);
    }
  });

  it("export --format speedscope --weight field:bytes_alloc --group event: the weights sum to the regex's total, each sample rooted at its event", async () => {
    const r = await run(exportCommand, ['--format', 'speedscope', '--weight', 'field:bytes_alloc', '--group', 'event', ...FILES]);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.out) as { shared: { frames: { name: string }[] }; profiles: { endValue: number; samples: number[][]; weights: number[] }[] };
    const p = s.profiles[0];
    expect(p.endValue).toBe(totalBytes);
    const perEvent = new Map<string, number>();
    p.samples.forEach((smp, i) => perEvent.set(s.shared.frames[smp[0]].name, (perEvent.get(s.shared.frames[smp[0]].name) ?? 0) + p.weights[i]));
    // sched_wakeup has no bytes_alloc: it weighs nothing and draws nothing
    expect(perEvent).toEqual(new Map([...sumBy(expected, (e) => e.event)].filter(([, v]) => v.bytes > 0).map(([k, v]) => [k, v.bytes])));
  });
});
