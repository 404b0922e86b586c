import { firstK } from '../base/first-k.ts';
import { zeroed } from '../base/zeroed.ts';
import type { Diagnostic } from '../formats/diagnostics.ts';
import { hasStack } from './cookie-index.ts';
import { countOccurrences, type Occurrences } from './stack-occurrences.ts';
import { derive, generationsCutMessage, listedKeys, type Derived } from './derived.ts';
import { defaultGranularity, functionPath, functionTree, type Granularity } from './function-tree.ts';
import type { Capture, FileReport } from './ingest.ts';
import { segmentsOf, type Segment } from './segments.ts';
import { resetMarkEvidence, staleIdEvidence, type ResetMarkEvidence, type StaleIdEvidence } from './v7-evidence.ts';
import { simTruth, type SimTruth } from './sim-truth.ts';
import { RecordKind, STATUS_NAMES, type StatusName } from './trace-columns-data.ts';

export interface TopStack {
  count: number;
  /** frame keys, leaf first (at 'function' granularity: the functions, offsets dropped) */
  frames: string[];
}

export interface StatSummary {
  /** 'v7' (drops, table_size, success_rate) or 'v8' (generation, capacity, fallbacks) */
  version: 'v7' | 'v8';
  /** the file it came from, and every key as read, unknown keys included */
  file: string;
  values: [string, string][];
  tableSize: number | null;
  successRate: number | null;
  entries: number | null;
  capacity: number | null;
  successes: number | null;
  /** v7 `drops` or v8 `fallbacks` (DESIGN 2.3: they share this key) */
  drops: number | null;
  /** v8 only: `fallbacks` as read, the same number as `drops` (DESIGN 2.3); null for v7, which prints `drops` */
  fallbacks: number | null;
  generation: number | null;
}

/** The command line's JSON (DESIGN 5.1); the page shows the same numbers. */
export interface Summary {
  events: number;
  cookies: number;
  fullStacks: number;
  resolved: number;
  unresolved: number;
  /** sorted generation numbers seen in the trace or in dumps: at most the first GENERATIONS_HEAD and the last GENERATIONS_TAIL (derived.ts) */
  generations: number[];
  /** generations left out of `generations` (and said in one diagnostic); 0 when it lists them all */
  generationsCut: number;
  uniqueStacks: number;
  /** what `top` merges by: 'site' (frame keys) or 'function' (the default for perf script input) */
  granularity: Granularity;
  top: TopStack[];
  stat: StatSummary | null;
  status: Record<StatusName, number>;
  userStacks: number;
  lost: { markers: number; events: number };
  /** per-generation spans and coverage, dedup rate, ring-buffer bytes with and without the map */
  derived: Derived;
  /** the capture's disjoint time ranges (segments.ts), in time order */
  segments: Segment[];
  /** v4/v7: ids that outnumber their slot's ref_count, so some were written before a reset (v7-evidence.ts); null without v7 ids and a generation-less dump */
  staleIds: StaleIdEvidence | null;
  /** v4/v7 ids recorded before the last reset the trace's markers show (v7-evidence.ts) */
  beforeReset: ResetMarkEvidence | null;
  /** a simulated run's ledger.json read with it: each unverified id's truth (sim-truth.ts); null without one */
  simTruth: SimTruth | null;
  files: FileReport[];
  diagnostics: Diagnostic[];
}

/** The files whose generations a list cut: the trace files, else (dumps alone) the dumps. */
function cutFiles(c: Capture, segments: Segment[]): string {
  const files = new Set(segments.flatMap((s) => s.files));
  if (files.size === 0) for (const d of c.dumps.sources) files.add(d.file);
  return [...files].join(', ');
}

/** A capture's records counted by status: what the summary and the explorer's warnings both read. */
export interface StatusTally {
  /** every record, by status (RecordStatus) */
  byStatus: Float64Array;
  /** the cookies (v4-v7 ids and v8 cookies) alone, by status */
  cookieStatus: Float64Array;
  cookies: number;
  /** cookies that found a stack (resolved or unverified) */
  resolved: number;
  /** the v8 cookies' generations */
  cookieGens: Set<number>;
}

const tallies = new WeakMap<Capture, StatusTally>();

/**
 * The capture's records by status, counted once per capture: a pass over every record (4.8M
 * records of a 1 GiB trace) that the summary and the warnings each made. A capture's statuses
 * are final once loaded (the cookie index and the field evidence ran in its load).
 */
export function statusTally(c: Capture): StatusTally {
  let tally = tallies.get(c);
  if (!tally) {
    const t = c.trace;
    tally = {
      byStatus: new Float64Array(STATUS_NAMES.length),
      cookieStatus: new Float64Array(STATUS_NAMES.length),
      cookies: 0,
      resolved: 0,
      cookieGens: new Set(),
    };
    countStatuses(t.recKind.raw(), t.recStatus.raw(), t.recGen.raw(), tally);
    tallies.set(c, tally);
  }
  return tally;
}

const { CookieV7: COOKIE_V7, CookieV8: COOKIE_V8 } = RecordKind;

/**
 * Each record's status into `into` (a loop of its own), and each cookie's, with the v8 cookies'
 * generations. Records come in long runs of one status: a run is counted in locals and added at
 * its end, where a count in memory at each record made a chain of loads and stores (1 GiB's 4.8M
 * records in Node: 51-54 -> 28-32 ms).
 */
function countStatuses(kinds: Uint8Array, statuses: Uint8Array, recGen: ArrayLike<number>, into: StatusTally): void {
  const { byStatus, cookieStatus, cookieGens } = into;
  let resolved = 0;
  let lastGen = NaN;
  let runStatus = -1;
  let runRecords = 0;
  let runCookies = 0;
  const n = kinds.length;
  // one step past the last record: its status (-2) ends the last run
  for (let i = 0; i <= n; i++) {
    const st = i < n ? statuses[i] : -2;
    if (st !== runStatus) {
      if (runStatus >= 0) {
        byStatus[runStatus] += runRecords;
        cookieStatus[runStatus] += runCookies;
        if (hasStack(runStatus)) resolved += runCookies;
      }
      if (i === n) break;
      runStatus = st;
      runRecords = 0;
      runCookies = 0;
    }
    runRecords++;
    const kind = kinds[i];
    if (kind === COOKIE_V7 || kind === COOKIE_V8) {
      runCookies++;
      if (kind === COOKIE_V8 && recGen[i] >>> 0 !== lastGen) cookieGens.add((lastGen = recGen[i] >>> 0));
    }
  }
  let cookies = 0;
  for (let s = 0; s < cookieStatus.length; s++) cookies += cookieStatus[s];
  into.cookies = cookies;
  into.resolved = resolved;
}

/**
 * The capture's summary. `counted`: the occurrences of every record made already (the explorer's
 * of the whole capture, which a load makes for its first queries: workers/ingest-views.ts), so the
 * records are not counted by stack a second time; without it summarize counts them
 * (countOccurrences, the same count).
 */
export function summarize(c: Capture, topN = 10, granularity: Granularity = defaultGranularity(c.files), counted?: Occurrences): Summary {
  const t = c.trace;
  const status = Object.fromEntries(STATUS_NAMES.map((s) => [s, 0])) as Record<StatusName, number>;
  const tally = statusTally(c);
  const { byStatus, cookies, resolved } = tally;
  const gens = new Set<number>(c.dumps.generations());
  for (const g of tally.cookieGens) gens.add(g);
  // each stack's records in the order first seen, the index by node zeroed.ts's (a record each at
  // scattered nodes: filled first where they are many)
  const occ =
    counted ??
    countOccurrences(
      { status: t.recStatus.raw(), stack: t.recStack.raw(), kind: t.recKind.raw(), weight: t.hasWeights ? t.recWeight.raw() : null },
      { p0: 0, p1: t.recordCount, order: null, keep: null },
      zeroed(Int32Array, c.stacks.nodeCount, t.recordCount),
    );
  const order = occ.stacks;
  const counts = occ.counts;
  const firstSeen = occ.first;
  const distinct = order.length;
  for (const [k, name] of STATUS_NAMES.entries()) status[name] = byStatus[k];
  let top: TopStack[];
  if (granularity === 'function') {
    // stacks that differ only in offsets are one: by function-path node, first seen first on ties
    const ft = functionTree(c.stacks);
    const count = new Float64Array(ft.parent.length);
    const first = new Int32Array(ft.parent.length);
    const fnOrder: number[] = [];
    for (let k = 0; k < distinct; k++) {
      const n = ft.ofNode[order[k]];
      if (count[n] === 0) {
        fnOrder.push(n);
        first[n] = firstSeen[k];
      } else if (firstSeen[k] < first[n]) first[n] = firstSeen[k];
      count[n] += counts[k];
    }
    top = fnOrder
      .sort((a, b) => count[b] - count[a] || first[a] - first[b])
      .slice(0, topN)
      .map((n) => ({ count: count[n], frames: functionPath(ft, n) }));
  } else {
    // by count, first seen first on ties (k is the order first seen: a total order)
    top = firstK(
      Array.from({ length: distinct }, (_, k) => k),
      topN,
      (a, b) => counts[b] - counts[a] || a - b,
    ).map((k) => ({ count: counts[k], frames: c.stacks.framesOf(order[k]) }));
  }
  const stat = c.stats.length ? c.stats[c.stats.length - 1] : null;
  const listed = listedKeys([...gens].sort((a, b) => a - b));
  const { segments, diagnostics: overlaps } = segmentsOf(c);
  const cutDiagnostics: Diagnostic[] = listed.cut
    ? [{ file: cutFiles(c, segments), where: 'file', message: generationsCutMessage(listed.cut, gens.size), count: 1 }]
    : [];
  let lostEvents = 0;
  for (let i = 0; i < t.lostCount.length; i++) lostEvents += Math.max(0, t.lostCount.get(i));
  return {
    events: t.eventCount,
    cookies,
    fullStacks: status.full,
    resolved,
    unresolved: cookies - resolved,
    generations: listed.kept,
    generationsCut: listed.cut,
    uniqueStacks: c.stacks.size,
    granularity,
    top,
    stat: stat && {
      version: stat.version,
      file: stat.file,
      values: stat.values,
      tableSize: stat.tableSize,
      successRate: stat.successRate,
      entries: stat.entries,
      capacity: stat.capacity,
      successes: stat.successes,
      drops: stat.drops,
      fallbacks: stat.version === 'v8' ? stat.drops : null,
      generation: stat.generation,
    },
    status,
    userStacks: status.user,
    lost: { markers: t.lostCount.length, events: lostEvents },
    derived: derive(c),
    segments,
    staleIds: staleIdEvidence(c),
    beforeReset: resetMarkEvidence(c),
    simTruth: simTruth(c),
    files: c.files,
    // trace files that overlap on a CPU are reported here (segments.ts), like any reader's diagnostic
    diagnostics: [...c.diagnostics, ...overlaps, ...cutDiagnostics],
  };
}
