import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateSample } from '../sim/sample-capture.ts';
import { sampleFiles } from '../sim/sample-files.ts';
import { ExplorerData } from './explorer-data.ts';
import { handCapture, line, sampleCapture, stackOf } from '../testing/explorer-fixtures.ts';
import { ALL, NO_STACK_RECORD, TIMELINE_STATUSES, type Selection, type TimelineRequest, type TimelineResult } from './api.ts';
import { selectionSummary } from './selection-summary.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { eventNear } from './event-near.ts';
import { eventCpus, OTHER_TASKS, timeline } from './timeline.ts';
import { RecordStatus as R } from '../capture/trace-columns-data.ts';

const sum = (a: Uint32Array) => a.reduce((n, x) => n + x, 0);
/** counts of one lane and bucket, by status */
const cell = (r: TimelineResult, lane: number, b: number) =>
  Array.from(r.counts.subarray((lane * r.buckets + b) * TIMELINE_STATUSES, (lane * r.buckets + b + 1) * TIMELINE_STATUSES));
const vec = (entries: [number, number][]) => {
  const v = new Array(TIMELINE_STATUSES).fill(0);
  for (const [s, n] of entries) v[s] = n;
  return v;
};

describe('timeline', () => {
  const c = handCapture();
  const d = new ExplorerData(c);
  const S1 = stackOf(c, ['a+0x1', 'b+0x2']);

  it('counts every event by lane, bucket and its record status, and highlights a stack', () => {
    const r = timeline(d, { t0: 100, t1: 102, buckets: 2, lanes: 'cpu', selection: ALL, highlightStack: S1 });
    expect(r.lanes).toEqual([
      { key: 0, label: 'CPU 0' },
      { key: 1, label: 'CPU 1' },
    ]);
    expect(cell(r, 0, 0)).toEqual(
      vec([
        [R.Resolved, 1],
        [R.Full, 1],
      ]),
    );
    expect(cell(r, 0, 1)).toEqual(
      vec([
        [R.Resolved, 1],
        [R.NoSlot, 1],
      ]),
    );
    expect(cell(r, 1, 0)).toEqual(
      vec([
        [R.Resolved, 3],
        [NO_STACK_RECORD, 1],
      ]),
    );
    expect(cell(r, 1, 1)).toEqual(
      vec([
        [R.Resolved, 1],
        [R.NoDump, 1],
      ]),
    );
    // S1: e0, e2 on CPU 1 and the full stack e3 on CPU 0, all in the first second
    expect(Array.from(r.highlight)).toEqual([1, 0, 2, 0]);
    expect(sum(r.counts)).toBe(10);
  });

  it('honours range ∩ [t0, t1], generation and CPUs', () => {
    const r = timeline(d, {
      t0: 100,
      t1: 102,
      buckets: 4,
      lanes: 'cpu',
      selection: { range: [100.000002, 101.000001], generation: null, cpus: null },
      highlightStack: null,
    });
    expect(sum(r.counts)).toBe(7); // e1..e7
    expect(sum(r.highlight)).toBe(0);
    const g1 = timeline(d, { t0: 100, t1: 102, buckets: 4, lanes: 'cpu', selection: { range: null, generation: 1, cpus: [1] }, highlightStack: null });
    expect(g1.lanes.map((l) => l.key)).toEqual([1]);
    expect(sum(g1.counts)).toBe(4); // e0, e2, e4, e5
    // the view's window cuts too: only [100.5, 102] of the trace
    expect(sum(timeline(d, { t0: 100.5, t1: 102, buckets: 3, lanes: 'cpu', selection: ALL, highlightStack: null }).counts)).toBe(4);
    // an empty intersection
    expect(
      sum(
        timeline(d, { t0: 100, t1: 100.5, buckets: 3, lanes: 'cpu', selection: { range: [101, 102], generation: null, cpus: null }, highlightStack: null })
          .counts,
      ),
    ).toBe(0);
  });

  it('task lanes: busiest first; the last instant falls in the last bucket', () => {
    const r = timeline(d, { t0: 100.000001, t1: 101.000003, buckets: 10, lanes: 'task', selection: ALL, highlightStack: null });
    expect(r.lanes).toEqual([
      { key: 0, label: 'bash' },
      { key: 1, label: 'sh' },
    ]);
    expect(sum(r.counts.subarray(0, 10 * TIMELINE_STATUSES))).toBe(6);
    expect(cell(r, 0, 9)).toEqual(
      vec([
        [R.Resolved, 1],
        [R.NoDump, 1],
      ]),
    );
  });

  it('more than 32 tasks: the rest share an "other tasks" lane', () => {
    const lines = ['# tracer: nop'];
    for (let i = 0; i < 40; i++) for (let k = 0; k <= i; k++) lines.push(line(`t${i}-${i + 1}`, 0, (1 + i * 0.01 + k * 0.0001).toFixed(6), 'foo: x'));
    const big = new ExplorerData(ingestFiles([['trace', lines.join('\n') + '\n']]));
    const r = timeline(big, { t0: 0, t1: 2, buckets: 1, lanes: 'task', selection: ALL, highlightStack: null });
    expect(r.lanes.length).toBe(33);
    expect(r.lanes[0].label).toBe('t39');
    expect(r.lanes[32]).toEqual({ key: -1, label: 'other tasks (8)' });
    expect(sum(r.counts)).toBe((40 * 41) / 2);
    expect(sum(r.counts.subarray(32 * TIMELINE_STATUSES))).toBe((8 * 9) / 2);
    expect(eventNear(big, 1.0, -1, 'task', 0.001, ALL)?.task).toBe('t0');
  });

  it('unsorted input (two trace files) is ordered once and binary-searched', () => {
    const a = ['# tracer: nop', line('x-1', 0, '5.000000', 'foo: a'), line('x-1', 0, '6.000000', 'foo: a')].join('\n') + '\n';
    const b = ['# tracer: nop', line('y-2', 1, '1.000000', 'foo: b'), line('y-2', 1, '5.500000', 'foo: b')].join('\n') + '\n';
    const u = new ExplorerData(
      ingestFiles([
        ['a', a],
        ['b', b],
      ]),
    );
    expect(u.evOrder && Array.from(u.evOrder)).toEqual([2, 0, 3, 1]);
    const r = timeline(u, { t0: 4, t1: 6, buckets: 2, lanes: 'cpu', selection: ALL, highlightStack: null });
    expect(sum(r.counts)).toBe(3);
    expect(eventNear(u, 5.4, 1, 'cpu', 0.2, ALL)?.ts).toBe(5.5);
  });

  it('pieces: segments side by side, each with its own columns', () => {
    const a =
      ['# tracer: nop', line('x-1', 0, '10.000000', 'foo: a'), line('x-1', 0, '10.900000', 'foo: a'), line('x-1', 0, '11.000000', 'foo: a')].join('\n') + '\n';
    const b = ['# tracer: nop', line('y-2', 0, '5000.000000', 'foo: b'), line('y-2', 0, '5000.010000', 'foo: b')].join('\n') + '\n';
    const u = new ExplorerData(
      ingestFiles([
        ['a', a],
        ['b', b],
      ]),
    );
    const pieces = [
      { t0: 10, t1: 11, buckets: 2 },
      { t0: 5000, t1: 5000.01, buckets: 3 },
    ];
    const r = timeline(u, { t0: 10, t1: 5000.01, buckets: 5, pieces, lanes: 'cpu', selection: ALL, highlightStack: null });
    expect(r.buckets).toBe(5);
    const perBucket = [0, 1, 2, 3, 4].map((bk) => cell(r, 0, bk)[NO_STACK_RECORD]);
    // a: 10.0 in column 0, 10.9 and 11.0 in column 1; b: 5000.00 in its first column, 5000.01 in its last
    expect(perBucket).toEqual([1, 2, 1, 0, 1]);
    // what lies between the pieces is in no column
    const gap = new ExplorerData(
      ingestFiles([
        ['a', a],
        ['b', b],
        ['c', ['# tracer: nop', line('z-3', 0, '2000.000000', 'foo: c')].join('\n') + '\n'],
      ]),
    );
    expect(sum(timeline(gap, { t0: 10, t1: 5000.01, buckets: 5, pieces, lanes: 'cpu', selection: ALL, highlightStack: null }).counts)).toBe(5);
  });

  it("sample: counts sum to the selection's events for every generation and range", () => {
    const s = new ExplorerData(sampleCapture());
    const o = { t0: s.t.evTs.get(0), t1: s.t.evTs.get(s.t.eventCount - 1) };
    const sels: Selection[] = [ALL, { range: null, generation: 2, cpus: null }, { range: [o.t0 + 0.1, o.t0 + 0.3], generation: null, cpus: [0, 3] }];
    for (const selection of sels) {
      for (const lanes of ['cpu', 'task'] as const) {
        const r = timeline(s, { ...o, buckets: 97, lanes, selection, highlightStack: null });
        expect(sum(r.counts)).toBe(selectionSummary(s, selection).events);
      }
    }
  });
});

describe('eventNear', () => {
  const c = handCapture();
  const d = new ExplorerData(c);
  it('finds the nearest event in a lane within the tolerance', () => {
    const e = eventNear(d, 100.0000045, 0, 'cpu', 0.001, ALL)!;
    expect(e).toMatchObject({ index: 3, cpu: 0, pid: 99, task: 'sh', name: 'kmem_cache_alloc', status: 'full', generation: 1, slot: null });
    expect(e.frames).toEqual(['a+0x1', 'b+0x2']);
    const e8 = eventNear(d, 101.000002, 1, 'cpu', 0.001, ALL)!;
    expect(e8).toMatchObject({ index: 8, status: 'no-dump', generation: 3, slot: 9, stack: -1, frames: [] });
    expect(eventNear(d, 100.0000061, 1, 'cpu', 0.001, ALL)).toMatchObject({ index: 5, status: 'no-stack-record' });
  });
  it('returns null outside the tolerance or the selection; task lanes by task key', () => {
    expect(eventNear(d, 100.5, 0, 'cpu', 0.1, ALL)).toBeNull();
    expect(eventNear(d, 100.000004, 0, 'cpu', 0.001, { range: null, generation: 2, cpus: null })).toBeNull();
    expect(eventNear(d, 101.000001, 1, 'task', 0.01, ALL)?.index).toBe(7);
  });
});

/**
 * The plain timeline: every event looked at, its column and lane worked out on its own (lanes are
 * the answer's, matched by key), no sorted order, no summaries.
 */
function plainTimeline(d: ExplorerData, req: TimelineRequest, lanes: TimelineResult['lanes']) {
  const pieces = req.pieces?.length ? req.pieces : [{ t0: req.t0, t1: req.t1, buckets: req.buckets }];
  const B = pieces.reduce((n, p) => n + p.buckets, 0);
  const counts = new Uint32Array(lanes.length * B * TIMELINE_STATUSES);
  const highlight = new Uint32Array(lanes.length * B);
  const sel = req.selection;
  const laneKeys = lanes.map((l) => l.key);
  let offset = 0;
  for (const p of pieces) {
    const [v0, v1] = [Math.min(p.t0, p.t1), Math.max(p.t0, p.t1)];
    for (let e = 0; e < d.eventCount; e++) {
      const ts = d.ev.ts[e];
      if (ts < v0 || ts > v1) continue;
      if (sel.range && (ts < Math.min(...sel.range) || ts > Math.max(...sel.range))) continue;
      if (sel.generation !== null && d.evGen[e] !== (sel.generation === 'none' ? -1 : sel.generation)) continue;
      if (sel.cpus && !sel.cpus.includes(d.ev.cpu[e])) continue;
      let lane = laneKeys.indexOf(req.lanes === 'cpu' ? d.ev.cpu[e] : d.ev.task[e]);
      if (lane < 0 && req.lanes === 'task') lane = laneKeys.indexOf(OTHER_TASKS);
      if (lane < 0) continue;
      const col = Math.min(p.buckets - 1, Math.max(0, v1 > v0 ? Math.floor((ts - v0) * (p.buckets / (v1 - v0))) : 0));
      const cellIndex = lane * B + offset + col;
      counts[cellIndex * TIMELINE_STATUSES + d.evStatus[e]]++;
      const r = d.ev.record[e];
      if (req.highlightStack !== null && r >= 0 && d.rec.stack[r] === req.highlightStack) highlight[cellIndex]++;
    }
    offset += p.buckets;
  }
  return { counts, highlight };
}

/** the first index where two arrays differ (-1: same length and values): cheap to compare, clear when it fails */
function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

describe('timeline from the level-of-detail summaries', () => {
  /** generated captures: several generations, CPUs, tasks, statuses; two files make the event order unsorted */
  const captures = new Map<string, ExplorerData>();
  const dataOf = (seed: number, cpus: number, events: number, twoFiles: boolean) => {
    const key = `${seed}|${cpus}|${events}|${twoFiles}`;
    let d = captures.get(key);
    if (!d) {
      const files = [...sampleFiles(generateSample({ seed, cpus, events, resets: seed % 3, bits: 10, tail: 20 }))];
      if (twoFiles) {
        const other = [...sampleFiles(generateSample({ seed: seed + 1, cpus, events: events >> 1, resets: 0, bits: 10, tail: 5 }))].find(
          ([n]) => n === 'trace',
        )!;
        files.push(['trace-2', other[1]]);
      }
      captures.set(key, (d = new ExplorerData(ingestFiles(files))));
    }
    return d;
  };
  const arb = fc.record({
    seed: fc.integer({ min: 1, max: 6 }),
    cpus: fc.integer({ min: 1, max: 5 }),
    events: fc.constantFrom(300, 900),
    twoFiles: fc.boolean(),
    lanes: fc.constantFrom('cpu' as const, 'task' as const),
    shift: fc.integer({ min: 0, max: 5 }),
    // the window as fractions of the capture's span, and the columns
    a: fc.double({ min: -0.1, max: 1.1, noNaN: true }),
    b: fc.double({ min: -0.1, max: 1.1, noNaN: true }),
    buckets: fc.integer({ min: 1, max: 400 }),
    split: fc.option(fc.double({ min: 0.05, max: 0.95, noNaN: true })),
    range: fc.option(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }))),
    generation: fc.option(fc.integer({ min: 0, max: 3 })),
    cpuPick: fc.option(fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 3 })),
    highlight: fc.option(fc.integer({ min: 0, max: 40 })),
  });

  it('equals the plain count, column by column, for random captures, windows, selections and highlights', () => {
    fc.assert(
      fc.property(arb, (c) => {
        const d = dataOf(c.seed, c.cpus, c.events, c.twoFiles);
        const lo = Math.min(...d.ev.ts);
        const span = Math.max(...d.ev.ts) - lo;
        const at = (x: number) => lo + x * span;
        const [t0, t1] = [at(c.a), at(c.b)];
        const pieces =
          c.split === null
            ? undefined
            : [
                { t0: Math.min(t0, t1), t1: at(c.split), buckets: Math.max(1, c.buckets >> 1) },
                { t0: at(c.split), t1: Math.max(t0, t1), buckets: c.buckets },
              ];
        // a stack that occurs: the n-th record's
        const hlRecord = c.highlight === null ? -1 : c.highlight % d.recordCount;
        const req: TimelineRequest = {
          t0,
          t1,
          buckets: pieces ? pieces[0].buckets + pieces[1].buckets : c.buckets,
          pieces,
          lanes: c.lanes,
          selection: { range: c.range && [at(c.range[0]), at(c.range[1])], generation: c.generation, cpus: c.cpuPick },
          highlightStack: hlRecord < 0 ? null : d.rec.stack[hlRecord],
        };
        const fast = timeline(d, req, { lodMinEvents: 0, lodShift: c.shift });
        const direct = timeline(d, req, { lodMinEvents: Infinity });
        const plain = plainTimeline(d, req, fast.lanes);
        expect(fast.lanes).toEqual(direct.lanes);
        expect(fast.buckets).toBe(req.buckets);
        expect(firstDifference(fast.counts, plain.counts)).toBe(-1);
        expect(firstDifference(fast.highlight, plain.highlight)).toBe(-1);
        expect(firstDifference(direct.counts, plain.counts)).toBe(-1);
        expect(firstDifference(direct.highlight, plain.highlight)).toBe(-1);
      }),
      { numRuns: 120 },
    );
  }, 120_000);

  it('a capture past LOD_MIN_EVENTS is answered from summaries by default, with the same numbers', () => {
    const d = dataOf(7, 4, 70000, false);
    expect(d.eventCount).toBeGreaterThan(1 << 16);
    const [lo, hi] = [d.ev.ts[0], d.ev.ts[d.eventCount - 1]];
    for (const buckets of [1, 333, 1504]) {
      for (const [t0, t1] of [
        [lo, hi],
        [lo + (hi - lo) * 0.3, lo + (hi - lo) * 0.3001],
      ]) {
        const req: TimelineRequest = { t0, t1, buckets, lanes: 'cpu', selection: ALL, highlightStack: d.rec.stack[0] };
        const plain = plainTimeline(d, req, timeline(d, req).lanes);
        const r = timeline(d, req);
        expect(firstDifference(r.counts, plain.counts)).toBe(-1);
        expect(firstDifference(r.highlight, plain.highlight)).toBe(-1);
        expect(sum(r.counts)).toBe(req.t1 - req.t0 === hi - lo ? d.eventCount : sum(plain.counts));
      }
    }
  }, 60_000);
});

describe('eventCpus', () => {
  it('lists the distinct CPUs of the events, sorted, below 4096 or not (a Set of them the second method)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: -3, max: 9000 }), fc.integer()), { maxLength: 300 }), (cpus) => {
        const d = { ev: { cpu: Int32Array.from(cpus) }, t: { eventCount: cpus.length } } as unknown as ExplorerData;
        const want = [...new Set(Int32Array.from(cpus))].sort((a, b) => a - b);
        expect(eventCpus(d)).toEqual(want);
      }),
    );
  });
});
