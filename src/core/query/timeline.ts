import type { ExplorerData } from './explorer-data.ts';
import { busiestTasks, TOP_TASKS } from './overview.ts';
import { TIMELINE_STATUSES, type Selection, type TimelineRequest, type TimelineResult } from './api.ts';
import { SelectionFilter } from './selection.ts';
import { buildLod, countRange, lodShift, type CodeAt, type Lod } from './timeline-lod.ts';

/** the lane of tasks beyond the busiest TOP_TASKS, when there are more */
export const OTHER_TASKS = -1;

export interface Lanes {
  lanes: { key: number; label: string }[];
  /** the event column lanes are keyed by (evCpu or evTask) */
  column: 'cpu' | 'task';
  /** lane index by column value (-1: no lane); values at or beyond its length use `beyond` */
  table: Int32Array;
  beyond: number;
  /** column values the table cannot hold (negative or huge CPU numbers) */
  extra: Map<number, number> | null;
}

/** distinct CPUs of the events, sorted (computed once per data) */
const cpuCache = new WeakMap<ExplorerData, number[]>();
export function eventCpus(d: ExplorerData): number[] {
  let cpus = cpuCache.get(d);
  if (!cpus) {
    // CPUs below 4096 marked in a table, any other in a Set (a Set's add per event: 106 ms of a
    // 1 GiB trace's first timeline in Chromium, 4.8M events)
    const seen = new Uint8Array(4096);
    const set = new Set<number>();
    markCpus(d.ev.cpu, d.t.eventCount, seen, set);
    for (let c = 0; c < seen.length; c++) if (seen[c]) set.add(c);
    cpus = [...set].sort((a, b) => a - b);
    cpuCache.set(d, cpus);
  }
  return cpus;
}

/** Each of the first `n` CPUs of `cpu` marked in `seen` (below its length) or added to `other`. */
function markCpus(cpu: ArrayLike<number>, n: number, seen: Uint8Array, other: Set<number>): void {
  const m = seen.length;
  for (let e = 0; e < n; e++) {
    const c = cpu[e];
    if (c >= 0 && c < m) seen[c] = 1;
    else other.add(c);
  }
}

const taskCache = new WeakMap<ExplorerData, ReturnType<typeof busiestTasks>>();
const TABLE_LIMIT = 1 << 16;

/** lane index of an event under `l` */
export function laneOf(d: ExplorerData, l: Lanes, e: number): number {
  const v = l.column === 'cpu' ? d.ev.cpu[e] : d.ev.task[e];
  if (v >= 0 && v < l.table.length) return l.table[v];
  return l.extra?.get(v) ?? l.beyond;
}

/**
 * Lanes: one per CPU (those of the selection, else every CPU with events), or one per task
 * (comm) for the TOP_TASKS busiest and an "other tasks" lane (key OTHER_TASKS) when there are more.
 */
export function lanesFor(d: ExplorerData, kind: 'cpu' | 'task', sel: Selection): Lanes {
  const t = d.t;
  if (kind === 'cpu') {
    let cpus = eventCpus(d);
    if (sel.cpus) {
      const want = new Set(sel.cpus);
      cpus = cpus.filter((c) => want.has(c));
    }
    const lanes = cpus.map((c) => ({ key: c, label: `CPU ${c}` }));
    const small = cpus.filter((c) => c >= 0 && c < TABLE_LIMIT);
    const table = new Int32Array(small.length ? small[small.length - 1] + 1 : 0).fill(-1);
    let extra: Map<number, number> | null = null;
    cpus.forEach((c, i) => {
      if (c >= 0 && c < TABLE_LIMIT) table[c] = i;
      else (extra ??= new Map()).set(c, i);
    });
    return { lanes, column: 'cpu', table, beyond: -1, extra };
  }
  let top = taskCache.get(d);
  if (!top) taskCache.set(d, (top = busiestTasks(d, Infinity)));
  const lanes = top.slice(0, TOP_TASKS).map((x) => ({ key: x.task, label: x.name }));
  const other = top.length > TOP_TASKS ? lanes.length : -1;
  if (other >= 0) lanes.push({ key: OTHER_TASKS, label: `other tasks (${top.length - TOP_TASKS})` });
  const table = new Int32Array(t.tasks.strings.length).fill(other);
  lanes.forEach((l, i) => {
    if (l.key >= 0) table[l.key] = i;
  });
  return { lanes, column: 'task', table, beyond: other, extra: null };
}

/**
 * Events of [t0, t1] ∩ the selection, counted per lane and pixel column by their stack record's
 * status (NO_STACK_RECORD without one); `highlight` counts those whose record's stack is
 * `highlightStack`. With `pieces` (segments laid side by side), each piece's time range has its
 * own columns, one after the other. A binary search finds each window; one pass over it does the rest.
 */
export function timeline(d: ExplorerData, req: TimelineRequest, opts: TimelineOptions = {}): TimelineResult {
  const pieces = req.pieces?.length
    ? req.pieces.map((p) => ({ t0: p.t0, t1: p.t1, buckets: Math.max(1, Math.floor(p.buckets) || 1) }))
    : [{ t0: req.t0, t1: req.t1, buckets: Math.max(1, Math.floor(req.buckets) || 1) }];
  const buckets = pieces.reduce((n, p) => n + p.buckets, 0);
  const L = lanesFor(d, req.lanes, req.selection);
  const lanes = L.lanes;
  const counts = new Uint32Array(lanes.length * buckets * TIMELINE_STATUSES);
  const highlight = new Uint32Array(lanes.length * buckets);
  const result = { lanes, buckets, counts, highlight };
  if (lanes.length === 0) return result;
  const f = new SelectionFilter(req.selection);
  const summaries = d.eventCount >= (opts.lodMinEvents ?? LOD_MIN_EVENTS) ? summariesFor(d, req, L, f, opts.lodShift) : null;
  let offset = 0;
  for (const p of pieces) {
    if (summaries) binWindowLod(d, summaries, L.lanes.length, f, p.t0, p.t1, offset, p.buckets, result);
    else binWindow(d, req, L, f, p.t0, p.t1, offset, p.buckets, result);
    offset += p.buckets;
  }
  return result;
}

/** The events of [t0, t1] that the filter's time range keeps, as sorted positions [p0, p1), and the scale from time to one of `n` columns; null when the filter keeps none of it. */
function windowSpan(
  d: ExplorerData,
  f: SelectionFilter,
  t0: number,
  t1: number,
  n: number,
): { v0: number; p0: number; p1: number; scale: number; last: number } | null {
  const v0 = Math.min(t0, t1);
  const v1 = Math.max(t0, t1);
  const lo = Math.max(v0, f.lo);
  const hi = Math.min(v1, f.hi);
  if (!(lo <= hi)) return null;
  const [p0, p1] = d.eventSpan(lo, hi);
  const span = v1 - v0;
  return { v0, p0, p1, scale: span > 0 ? n / span : 0, last: n - 1 };
}

/** Counts the events of [t0, t1] into columns [offset, offset + n) of `out`. */
function binWindow(
  d: ExplorerData,
  req: TimelineRequest,
  L: Lanes,
  f: SelectionFilter,
  t0: number,
  t1: number,
  offset: number,
  n: number,
  out: TimelineResult,
) {
  const { counts, highlight, buckets } = out;
  const w = windowSpan(d, f, t0, t1, n);
  if (!w) return;
  const { v0, p0, p1, scale, last } = w;
  const gen = f.gen;
  const status = d.evStatus;
  const evGen = d.evGen;
  const order = d.evOrder;
  const hl = req.highlightStack;
  const cpuMask = cpuMaskOf(req.selection);
  const table = L.table;
  const tableLen = table.length;
  const keyCol = L.column === 'cpu' ? d.ev.cpu : d.ev.task;
  const evCpu = d.ev.cpu;
  const evTs = d.ev.ts;
  const evRecord = d.ev.record;
  const recStack = d.rec.stack;
  const stride = TIMELINE_STATUSES;
  for (let p = p0; p < p1; p++) {
    const e = order === null ? p : order[p];
    if (gen !== null && evGen[e] !== gen) continue;
    if (cpuMask !== null) {
      const cpu = evCpu[e];
      if (cpu < 0 || cpu >= cpuMask.length || cpuMask[cpu] === 0) {
        if (!(cpuMask.length === 0 && f.cpu(cpu))) continue;
      }
    }
    const k = keyCol[e];
    const lane = k >= 0 && k < tableLen ? table[k] : laneOf(d, L, e);
    if (lane < 0) continue;
    let b = Math.floor((evTs[e] - v0) * scale);
    if (b > last) b = last;
    else if (b < 0) b = 0;
    const cell = lane * buckets + offset + b;
    counts[cell * stride + status[e]]++;
    if (hl !== null) {
      const r = evRecord[e];
      if (r >= 0 && recStack[r] === hl) highlight[cell]++;
    }
  }
}

/** below this many events a window is counted event by event: summaries would not pay for themselves */
export const LOD_MIN_EVENTS = 1 << 16;

export interface TimelineOptions {
  /** summaries from this many events on (default LOD_MIN_EVENTS; 0: always, for the tests) */
  lodMinEvents?: number;
  /** level-0 block size as a power of two (default lodShift(counters)) */
  lodShift?: number;
}

interface Summary {
  code: CodeAt;
  lod: Lod;
}

/**
 * The level-of-detail summaries of a capture (timeline-lod.ts), built on the first request of
 * each lane kind, generation and CPUs (one pass over the events), the highlighted stack's
 * separately; the last few are kept, the least recently used dropped first.
 */
const summaryCache = new WeakMap<ExplorerData, Map<string, Summary>>();
const KEEP_SUMMARIES = 4;

function cachedSummary(d: ExplorerData, key: string, build: () => Summary): Summary {
  let m = summaryCache.get(d);
  if (!m) summaryCache.set(d, (m = new Map()));
  let s = m.get(key);
  if (s) m.delete(key);
  else s = build();
  m.set(key, s);
  for (const k of m.keys()) {
    if (m.size <= KEEP_SUMMARIES) break;
    m.delete(k);
  }
  return s;
}

/** The summaries a request reads: every event of its lanes by status, and its highlighted stack's events by lane. */
function summariesFor(d: ExplorerData, req: TimelineRequest, L: Lanes, f: SelectionFilter, shift?: number): { all: Summary; hl: Summary | null } {
  const cpus = req.selection.cpus;
  const key = `${L.column}|${f.gen}|${cpus ? cpus.join(',') : '*'}|${shift ?? ''}`;
  const n = d.eventCount;
  const lanes = L.lanes.length;
  const all = cachedSummary(d, key, () => {
    const code = eventCode(d, L, f, cpus !== null, null);
    const cells = lanes * TIMELINE_STATUSES;
    return { code, lod: buildLod(n, cells, code, shift ?? lodShift(cells)) };
  });
  const stack = req.highlightStack;
  const hl =
    stack === null
      ? null
      : cachedSummary(d, `${key}|stack ${stack}`, () => {
          const code = eventCode(d, L, f, cpus !== null, stack);
          return { code, lod: buildLod(n, lanes, code, shift ?? lodShift(lanes)) };
        });
  return { all, hl };
}

/**
 * The counter of the event at sorted position p: lane * TIMELINE_STATUSES + its status (with
 * `stack` null), else its lane when its record's stack is `stack`; -1 for events outside the
 * generation, the CPUs or the lanes (what binWindow skips).
 */
function eventCode(d: ExplorerData, L: Lanes, f: SelectionFilter, byCpu: boolean, stack: number | null): CodeAt {
  const order = d.evOrder;
  const gen = f.gen;
  const evGen = d.evGen;
  const status = d.evStatus;
  const evCpu = d.ev.cpu;
  const keyCol = L.column === 'cpu' ? d.ev.cpu : d.ev.task;
  const table = L.table;
  const tableLen = table.length;
  const stride = TIMELINE_STATUSES;
  const laneAt = (e: number): number => {
    if (gen !== null && evGen[e] !== gen) return -1;
    if (byCpu && !f.cpu(evCpu[e])) return -1;
    const k = keyCol[e];
    return k >= 0 && k < tableLen ? table[k] : laneOf(d, L, e);
  };
  if (stack === null) {
    return (p) => {
      const e = order === null ? p : order[p];
      const lane = laneAt(e);
      return lane < 0 ? -1 : lane * stride + status[e];
    };
  }
  const evRecord = d.ev.record;
  const recStack = d.rec.stack;
  return (p) => {
    const e = order === null ? p : order[p];
    const r = evRecord[e];
    if (r < 0 || recStack[r] !== stack) return -1;
    return laneAt(e);
  };
}

/**
 * binWindow from the summaries: the events of [t0, t1] are a run of sorted positions, each pixel
 * column a sub-run found by a galloping search on its timestamps (the same column arithmetic as
 * binWindow, so every event lands in the same column), counted by countRange: a few blocks per
 * column, whatever the zoom.
 */
function binWindowLod(
  d: ExplorerData,
  s: { all: Summary; hl: Summary | null },
  laneCount: number,
  f: SelectionFilter,
  t0: number,
  t1: number,
  offset: number,
  n: number,
  out: TimelineResult,
) {
  const { counts, highlight, buckets } = out;
  const w = windowSpan(d, f, t0, t1, n);
  if (!w) return;
  const { v0, p0, p1, scale, last } = w;
  const ts = d.ev.ts;
  const order = d.evOrder;
  const column = (p: number) => {
    let b = Math.floor((ts[order === null ? p : order[p]] - v0) * scale);
    if (b > last) b = last;
    else if (b < 0) b = 0;
    return b;
  };
  const stride = TIMELINE_STATUSES;
  const acc = new Uint32Array(laneCount * stride);
  const hacc = s.hl ? new Uint32Array(laneCount) : null;
  for (let start = p0; start < p1;) {
    const j = column(start);
    // the first position past column j: gallop, then bisect
    let step = 1;
    while (start + step < p1 && column(start + step) <= j) step *= 2;
    let a = start + (step >> 1) + 1;
    let b = Math.min(p1, start + step);
    while (a < b) {
      const m = (a + b) >>> 1;
      if (column(m) > j) b = m;
      else a = m + 1;
    }
    countRange(s.all.lod, start, a, s.all.code, acc);
    for (let lane = 0; lane < laneCount; lane++) {
      const o = (lane * buckets + offset + j) * stride;
      const c0 = lane * stride;
      for (let st = 0; st < stride; st++) {
        const v = acc[c0 + st];
        if (v !== 0) {
          counts[o + st] += v;
          acc[c0 + st] = 0;
        }
      }
    }
    if (hacc) {
      countRange(s.hl!.lod, start, a, s.hl!.code, hacc);
      for (let lane = 0; lane < laneCount; lane++) {
        if (hacc[lane] !== 0) {
          highlight[lane * buckets + offset + j] += hacc[lane];
          hacc[lane] = 0;
        }
      }
    }
    start = a;
  }
}

/**
 * The selection's CPUs as a mask indexed by CPU (null: every CPU). CPU numbers the mask cannot
 * hold (negative or huge) give an empty mask, and the loop asks the filter instead.
 */
function cpuMaskOf(sel: Selection): Uint8Array | null {
  if (!sel.cpus) return null;
  if (!sel.cpus.every((c) => Number.isInteger(c) && c >= 0 && c < TABLE_LIMIT)) return new Uint8Array(0);
  const mask = new Uint8Array(sel.cpus.reduce((m, c) => Math.max(m, c + 1), 0));
  for (const c of sel.cpus) mask[c] = 1;
  return mask;
}
