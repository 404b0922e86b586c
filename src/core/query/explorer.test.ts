import { describe, expect, it } from 'vitest';
import { Explorer } from './explorer.ts';
import { layoutFlame, searchFlame } from './flame-layout.ts';
import { exportSelection } from '../export/exports.ts';
import { sampleCapture } from '../testing/explorer-fixtures.ts';
import type { Capture } from '../capture/ingest.ts';
import { DumpIndex } from '../capture/dumps.ts';
import { ALL, type Selection } from './api.ts';
import { StackTable } from '../capture/stack-table.ts';
import { summarize } from '../capture/summary.ts';
import { TraceColumns } from '../capture/trace-columns.ts';

const sum = (a: ArrayLike<number>) => {
  let n = 0;
  for (let i = 0; i < a.length; i++) n += a[i];
  return n;
};

describe('Explorer over the generated sample', () => {
  const c = sampleCapture();
  const x = new Explorer(c);
  const o = x.overview();

  it('answers every pane consistently for a brushed, per-generation selection', () => {
    const mid = (o.t0 + o.t1) / 2;
    const sels: Selection[] = [ALL, { range: [o.t0, mid], generation: null, cpus: null }, { range: [o.t0, o.t1], generation: 2, cpus: [1, 3] }];
    for (const selection of sels) {
      const s = x.selectionSummary(selection);
      const occ = s.resolved + s.fullStacks;
      const tl = x.timeline({ t0: o.t0, t1: o.t1, buckets: 300, lanes: 'cpu', selection, highlightStack: null });
      expect(sum(tl.counts)).toBe(s.events);
      const top = x.topStacks({ selection, filter: '', limit: 5 });
      expect(top.total).toBe(occ);
      const hl = top.rows[0].stack;
      const tl2 = x.timeline({ t0: o.t0, t1: o.t1, buckets: 50, lanes: 'task', selection, highlightStack: hl });
      // the sample has one stack record per event: highlights = the top stack's occurrences
      expect(sum(tl2.highlight)).toBe(top.rows[0].count);
      expect(x.stackOccurrences(hl, selection).length).toBe(top.rows[0].count);
      const f = x.flame({ selection, mode: 'top-down', weight: 'occurrences', focus: null, highlightStack: hl });
      expect(f.tree.total).toBe(occ);
      expect(f.tree.highlight.length).toBe(x.stackFrames(hl).length + 1);
      const lay = layoutFlame(f.tree);
      expect(lay.x1[f.tree.highlight[f.tree.highlight.length - 1]]).toBeLessThanOrEqual(1);
      expect(searchFlame(f.tree, '/./').share).toBeCloseTo(1);
    }
    // the brushed half has fewer occurrences of the top stack than the whole
    expect(x.topStacks({ selection: { range: [o.t0, mid], generation: null, cpus: null }, filter: '', limit: 1 }).total).toBeLessThan(
      x.topStacks({ selection: ALL, filter: '', limit: 1 }).total,
    );
  });

  it('selectionSummary(ALL) is summarize(); eventNear finds events; exports parse', () => {
    const s = summarize(c);
    expect(x.selectionSummary(ALL)).toMatchObject({
      events: s.events,
      cookies: s.cookies,
      fullStacks: s.fullStacks,
      resolved: s.resolved,
      unresolved: s.unresolved,
      uniqueStacks: s.uniqueStacks,
    });
    const e = x.eventNear(c.trace.evTs.get(100), c.trace.evCpu.get(100), 'cpu', 1e-9, ALL)!;
    expect(e.index).toBe(100);
    expect(e.frames.length).toBeLessThanOrEqual(12);
    expect(() => JSON.parse(exportSelection(x.data, 'speedscope', ALL))).not.toThrow();
    expect(() => JSON.parse(exportSelection(x.data, 'chrome-trace', ALL, { title: 't' }))).not.toThrow();
    expect(
      exportSelection(x.data, 'svg', ALL, {
        mode: 'sandwich',
        focus: x.flame({ selection: ALL, mode: 'bottom-up', weight: 'occurrences', focus: null, highlightStack: null }).tree.names[1],
      }),
    ).toContain('</svg>');
    expect(x.stackFrames(-5)).toEqual([]);
    expect(x.generationDiff(1, 3).a).toBe(1);
  });
});

/** A capture built straight into the columns (no parsing): n events on 8 CPUs, every other one with a full stack. */
function syntheticCapture(n: number, shuffle: boolean): Capture {
  const stacks = new StackTable();
  const trace = new TraceColumns(stacks);
  const sink = trace.sink();
  const pool = Array.from({ length: 50 }, (_, i) => [`leaf${i % 7}+0x1`, `mid${i % 5}+0x2`, `root${i % 3}+0x3`]);
  for (let i = 0; i < n; i++) {
    const ts = shuffle ? 1000 + ((i * 7919) % n) * 1e-6 : 1000 + i * 1e-6;
    const cpu = i % 8;
    sink.event({ lineNo: 0, comm: `t${i % 40}`, pid: i % 40, tgid: null, cpu, ts, flags: '', name: 'ev', payload: '' });
    if (i % 2 === 0) sink.stackRecord({ lineNo: 0, kind: 'full', comm: `t${i % 40}`, pid: i % 40, cpu, ts, slot: 0, generation: null, frames: pool[i % 50] });
  }
  return { stacks, trace, dumps: new DumpIndex(stacks), stats: [], files: [], diagnostics: [], tracer: null, ledger: null };
}

describe('Explorer on a large synthetic capture', () => {
  it.each([false, true])('timeline and flame stay exact (unsorted: %s)', (shuffle) => {
    const n = 200_000;
    const x = new Explorer(syntheticCapture(n, shuffle));
    expect(x.data.evOrder === null).toBe(!shuffle);
    const o = x.overview();
    const tl = x.timeline({ t0: o.t0, t1: o.t1, buckets: 1000, lanes: 'cpu', selection: ALL, highlightStack: null });
    expect(sum(tl.counts)).toBe(n);
    const half = x.timeline({
      t0: o.t0,
      t1: o.t1,
      buckets: 10,
      lanes: 'task',
      selection: { range: [o.t0, o.t0 + (n / 2 - 1) * 1e-6], generation: null, cpus: [0, 1] },
      highlightStack: null,
    });
    expect(sum(half.counts)).toBe(x.selectionSummary({ range: [o.t0, o.t0 + (n / 2 - 1) * 1e-6], generation: null, cpus: [0, 1] }).events);
    expect(x.flame({ selection: ALL, mode: 'bottom-up', weight: 'occurrences', focus: null, highlightStack: null }).tree.total).toBe(n / 2);
    expect(o.tasks.length).toBe(32);
  });
});
