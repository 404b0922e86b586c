import { hasStack } from '../capture/cookie-index.ts';
import { listedKeys, SpanCounter } from '../capture/derived.ts';
import type { ExplorerData } from './explorer-data.ts';
import { NO_STACK_RECORD, type GenerationInfo, type Overview } from './api.ts';
import { segmentsOf } from '../capture/segments.ts';
import { OwnRows } from '../capture/own-rows.ts';
import { genValue, NO_GEN } from './selection.ts';
import { RecordKind, STATUS_NAMES, type Ints } from '../capture/trace-columns-data.ts';

/** local copies: an imported binding can cost a getter call per access under module transforms (tsx, vitest) */
const { CookieV7: COOKIE_V7, CookieV8: COOKIE_V8 } = RecordKind;

export const TOP_TASKS = 32;
export const STATUS_NAMES_WITH_NONE: readonly string[] = [...STATUS_NAMES, 'no-stack-record'];
if (STATUS_NAMES_WITH_NONE.length !== NO_STACK_RECORD + 1) throw new Error('status codes out of step with query-types');

/** Events per task (comm string index), in one pass. */
export function taskEvents(d: ExplorerData): Float64Array {
  const t = d.t;
  const counts = new Float64Array(t.tasks.strings.length);
  const task = d.ev.task;
  for (let e = 0; e < task.length; e++) counts[task[e]]++;
  return counts;
}

/** Tasks by events, busiest first (ties: first interned first), at most `limit`. */
export function busiestTasks(d: ExplorerData, limit = TOP_TASKS): { task: number; name: string; events: number }[] {
  const counts = taskEvents(d);
  const ids: number[] = [];
  for (let i = 0; i < counts.length; i++) if (counts[i] > 0) ids.push(i);
  ids.sort((a, b) => counts[b] - counts[a] || a - b);
  return ids.slice(0, limit).map((task) => ({ task, name: d.t.tasks.strings[task], events: counts[task] }));
}

/**
 * Generations by their records in the trace and the dumps loaded for them, with their span in each
 * segment: at most the first GENERATIONS_HEAD keys in order and the last GENERATIONS_TAIL
 * (listedKeys), `cut` the number left out.
 */
export function generationInfos(d: ExplorerData): { list: GenerationInfo[]; cut: number } {
  let r = infosOf.get(d);
  if (!r) infosOf.set(d, (r = generationInfosOnce(d)));
  return r;
}

/** each capture's generations, made once: the overview and the warnings both ask on every load (1 GiB: 0.35 s each) */
const infosOf = new WeakMap<ExplorerData, { list: GenerationInfo[]; cut: number }>();

function generationInfosOnce(d: ExplorerData): { list: GenerationInfo[]; cut: number } {
  const t = d.t;
  const { segments } = segmentsOf(d.capture);
  const dumps = d.capture.dumps;
  // first pass: every key, so that only the listed generations get their stats
  const keys = new Set<number>();
  let lastKey = NaN;
  for (let r = 0, n = t.recordCount; r < n; r++) {
    const g = d.recGen[r];
    if (g !== lastKey) keys.add((lastKey = g));
  }
  for (const gd of dumps.byGeneration.values()) keys.add(gd.generation);
  if (dumps.generationless.length) keys.add(NO_GEN);
  const listed = listedKeys([...keys].sort((a, b) => a - b));
  const keep = new Set(listed.kept);
  const gens = new Map<number, GenerationInfo>();
  const spans = new Map<number, SpanCounter>();
  const get = (g: number): GenerationInfo => {
    let s = gens.get(g);
    if (!s) {
      s = {
        generation: genValue(g),
        firstTs: NaN,
        lastTs: NaN,
        records: 0,
        cookies: 0,
        resolved: 0,
        coverage: NaN,
        dumpKinds: [],
        dumpSlots: 0,
        segments: [],
        duration: 0,
      };
      gens.set(g, s);
      spans.set(g, new SpanCounter(segments));
    }
    return s;
  };
  // records come in runs of one generation: its entries are looked up and its counts stored once a run
  const recGen = d.recGen;
  const recKind = d.rec.kind;
  const recStatus = d.rec.status;
  // each record's time is its event's, or its own row's: read here without the records' time
  // column, which is made when a query by time range needs it
  const recEvent = t.recEvent.raw();
  const evTs = d.ev.ts;
  const own = new OwnRows(t.ownRec.raw());
  const ownTs = t.ownTs.raw();
  for (let r = 0, n = t.recordCount; r < n;) {
    const g = recGen[r];
    let end = r + 1;
    while (end < n && recGen[end] === g) end++;
    if (keep.has(g)) {
      const s = get(g);
      const span = spans.get(g)!;
      let lo = s.firstTs;
      let hi = s.lastTs;
      let cookies = 0;
      let resolved = 0;
      for (let i = r; i < end; i++) {
        const o = own.rowOf(i);
        const ts = o >= 0 ? ownTs[o] : evTs[recEvent[i]];
        if (!(lo <= ts)) lo = ts;
        if (!(hi >= ts)) hi = ts;
        const kind = recKind[i];
        span.add(ts, g === NO_GEN || kind === COOKIE_V8);
        if (kind === COOKIE_V7 || kind === COOKIE_V8) {
          cookies++;
          if (hasStack(recStatus[i])) resolved++;
        }
      }
      s.firstTs = lo;
      s.lastTs = hi;
      s.records += end - r;
      s.cookies += cookies;
      s.resolved += resolved;
    }
    r = end;
  }
  for (const gd of dumps.byGeneration.values()) {
    if (!keep.has(gd.generation)) continue;
    const s = get(gd.generation);
    s.dumpSlots = gd.slots.size;
    s.dumpKinds = d.dumpKinds.get(gd.generation) ?? [];
  }
  if (dumps.generationless.length) {
    const s = get(NO_GEN);
    // the largest of the generation-less dumps, as derived.ts counts it
    s.dumpSlots = Math.max(...dumps.generationless.map((g) => g.slots.size));
    s.dumpKinds = d.dumpKinds.get(NO_GEN) ?? [];
  }
  for (const [g, s] of gens) {
    s.coverage = s.cookies ? s.resolved / s.cookies : NaN;
    Object.assign(s, spans.get(g)!.result());
  }
  return { list: [...gens.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]), cut: listed.cut };
}

/**
 * Resets: between consecutive generation spans (in time order) of one segment that enter a
 * numbered generation, at the midpoint of the gap between the last record of one and the first
 * of the next. Between segments there is no reset to see: they are unrelated time ranges.
 */
export function resetsOf(gens: GenerationInfo[]): Overview['resets'] {
  const bySegment = new Map<number, { generation: number | 'none'; firstTs: number; lastTs: number }[]>();
  for (const g of gens) {
    for (const s of g.segments) {
      let list = bySegment.get(s.segment);
      if (!list) bySegment.set(s.segment, (list = []));
      list.push({ generation: g.generation, firstTs: s.firstTs, lastTs: s.lastTs });
    }
  }
  const out: Overview['resets'] = [];
  for (const k of [...bySegment.keys()].sort((a, b) => a - b)) {
    const spans = bySegment.get(k)!.sort((a, b) => a.firstTs - b.firstTs);
    for (let i = 1; i < spans.length; i++) {
      const a = spans[i - 1];
      const b = spans[i];
      if (b.generation === 'none' || a.generation === b.generation) continue;
      out.push({ ts: (a.lastTs + b.firstTs) / 2, from: a.generation, to: b.generation });
    }
  }
  return out;
}

/**
 * The resets a v4/v7 trace marks itself: with no generations to tell one map from the next, the
 * `stackmap reset N` markers written to trace_marker before each reset (scripts/capture.sh, the
 * simulator's export) are where the lines go. A trace whose generations already show its resets
 * keeps those (a marker sits in the gap they are drawn across).
 */
function withMarkers(resets: Overview['resets'], d: ExplorerData): Overview['resets'] {
  if (resets.length > 0) return resets;
  const t = d.capture.trace;
  const marks = t.resetMarks.raw();
  if (marks.length === 0) return resets;
  const evTs = t.evTs.raw();
  const out: Overview['resets'] = [];
  for (let k = 0; k < marks.length; k++) out.push({ ts: evTs[marks[k]], from: 'none', to: 'none', marker: true });
  return out.sort((a, b) => a.ts - b.ts);
}

/**
 * The first and last time of `ts` (NaN skipped) and the CPUs it is on. Its running values are
 * locals: in a closure over the caller's they were stored to its context at each step (1 GiB:
 * 114 ms against ~30).
 */
function span(ts: Float64Array, cpu: Ints, seenCpu: Uint8Array, cpus: Set<number>): { t0: number; t1: number } {
  let t0 = Infinity;
  let t1 = -Infinity;
  for (let i = 0, n = ts.length; i < n; i++) {
    const x = ts[i];
    if (x < t0) t0 = x;
    if (x > t1) t1 = x;
    const c = cpu[i];
    if (c >= 0 && c < 4096) seenCpu[c] = 1;
    else cpus.add(c);
  }
  return { t0, t1 };
}

export function overview(d: ExplorerData): Overview {
  const t = d.t;
  const cpus = new Set<number>();
  // CPUs below 4096 are marked in a table, others (never seen in practice) in the set
  const seenCpu = new Uint8Array(4096);
  const a = span(d.ev.ts, d.ev.cpu, seenCpu, cpus);
  // a record's time and CPU are its event's but where it keeps its own (an orphan's, say): those rows alone
  const b = span(t.ownTs.raw(), t.ownCpu.raw(), seenCpu, cpus);
  const t0 = Math.min(a.t0, b.t0);
  const t1 = Math.max(a.t1, b.t1);
  for (let c = 0; c < seenCpu.length; c++) if (seenCpu[c]) cpus.add(c);
  const { list: generations, cut: generationsCut } = generationInfos(d);
  const lost: Overview['lost'] = [];
  for (let i = 0; i < t.lostCpu.length; i++) {
    const count = t.lostCount.get(i);
    lost.push({ ts: t.lostTs.get(i), cpu: t.lostCpu.get(i), count: count < 0 ? null : count });
  }
  return {
    t0: t0 === Infinity ? NaN : t0,
    t1: t1 === -Infinity ? NaN : t1,
    cpus: [...cpus].sort((a, b) => a - b),
    tasks: busiestTasks(d),
    generations,
    generationsCut,
    // between the listed generations only: a million generations would draw a million lines
    resets: withMarkers(resetsOf(generations), d),
    lost,
    statusNames: STATUS_NAMES_WITH_NONE,
    segments: segmentsOf(d.capture).segments,
    overlaps: segmentsOf(d.capture).overlaps,
    granularity: d.granularity,
    hasWeights: d.hasWeights,
  };
}
