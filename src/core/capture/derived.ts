import { hasStack } from './cookie-index.ts';
import type { Capture } from './ingest.ts';
import { RingBytes, type RingBufferStats } from './ring-bytes.ts';
import { OwnRows } from './own-rows.ts';
import { segmentAt, segmentsOf, type Segment } from './segments.ts';
import { RecordKind, RecordStatus } from './trace-columns-data.ts';

/** A generation's stack records within one segment (segments.ts): spans never reach across unrelated files. */
export interface GenerationSpan {
  segment: number;
  firstTs: number;
  lastTs: number;
  records: number;
  /** records / (lastTs - firstTs); null for a span of one instant */
  recordsPerSecond: number | null;
}

export interface GenerationStats {
  /** null: v4..v7 ids and generation-less dumps */
  generation: number | null;
  /** time of the first and last stack record of this generation in the trace (NaN if none) */
  firstTs: number;
  lastTs: number;
  /** its records in each segment it appears in, in segment (time) order */
  segments: GenerationSpan[];
  /** the sum of its per-segment spans: the time it was in force in the trace */
  duration: number;
  cookies: number;
  /** cookies that found a stack */
  resolved: number;
  /** resolved / cookies (NaN without cookies) */
  coverage: number;
  /** what dumps of this generation were loaded: their formats and slot count */
  dumpFormats: string[];
  dumpSlots: number;
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * A per-generation list (the summary's `generations`, `derived.generations`, the overview's) names
 * at most the first GENERATIONS_HEAD generations in order and the last GENERATIONS_TAIL: a trace
 * whose cookies name a million generations printed 475 MB of JSON (issue 34, 15). The totals
 * (events, cookies, statuses, ring-buffer bytes) still count every record; the list says how many
 * it left out (`generationsCut`) and the summary says it in one diagnostic.
 */
export const GENERATIONS_HEAD = 1000;
export const GENERATIONS_TAIL = 10;

/** Of ascending keys, those a per-generation list names (the first GENERATIONS_HEAD and the last GENERATIONS_TAIL), and how many it leaves out. */
export function listedKeys(sorted: readonly number[]): { kept: number[]; cut: number } {
  if (sorted.length <= GENERATIONS_HEAD + GENERATIONS_TAIL) return { kept: sorted.slice(), cut: 0 };
  return {
    kept: [...sorted.slice(0, GENERATIONS_HEAD), ...sorted.slice(sorted.length - GENERATIONS_TAIL)],
    cut: sorted.length - GENERATIONS_HEAD - GENERATIONS_TAIL,
  };
}

/** The generations a list leaves out, in words: one line for the summary's diagnostics. */
export function generationsCutMessage(cut: number, total: number): string {
  return (
    `${int(cut)} of ${int(total)} generations are left out of the per-generation lists (the first ${int(GENERATIONS_HEAD)} and the last ${int(GENERATIONS_TAIL)} are listed); ` +
    'the totals (events, cookies, statuses, bytes) still count their records'
  );
}

export interface Derived {
  /** at most GENERATIONS_HEAD + GENERATIONS_TAIL of them (listedKeys), ascending, null first */
  generations: GenerationStats[];
  /** generations with records or dumps that `generations` leaves out */
  generationsCut: number;
  /** share of cookie records that reused a stack already in the map (1 - distinct slots / cookies) */
  dedupRate: number;
  ringBuffer: RingBufferStats;
}

/** Per-segment spans of a generation from its records' timestamps, in segment order. */
export class SpanCounter {
  private readonly spans = new Map<number, GenerationSpan>();
  constructor(private readonly segments: readonly Pick<Segment, 'firstTs' | 'lastTs'>[]) {}
  /** segments where a record of the generation's own (a v8 cookie, or any record of 'none') was seen */
  private readonly own = new Set<number>();
  /** the segment the last record was in, its span, and whether it is in `own` yet (records come in runs of one segment) */
  private lastK = -1;
  private lastSpan: GenerationSpan | null = null;
  private lastOwn = false;
  add(ts: number, own = true): void {
    let k = this.lastK;
    let s = this.lastSpan;
    // segments are disjoint: the last one holds `ts` or segmentAt says which does
    if (!(k >= 0 && this.segments[k].firstTs <= ts && ts <= this.segments[k].lastTs)) {
      k = segmentAt(this.segments, ts);
      if (k < 0) return;
      s = this.spans.get(k) ?? null;
      if (!s) this.spans.set(k, (s = { segment: k, firstTs: ts, lastTs: ts, records: 0, recordsPerSecond: null }));
      this.lastK = k;
      this.lastSpan = s;
      this.lastOwn = this.own.has(k);
    }
    if (own && !this.lastOwn) {
      this.own.add(k);
      this.lastOwn = true;
    }
    s = s!;
    if (ts < s.firstTs) s.firstTs = ts;
    if (ts > s.lastTs) s.lastTs = ts;
    s.records++;
  }
  /**
   * The spans, in segment order. A segment where the generation only shows through records that
   * inherit it (a full stack after the last cookie of an earlier file) has no span of it: the
   * generation was never seen in force there.
   */
  result(): { segments: GenerationSpan[]; duration: number } {
    const segments = [...this.spans.values()].filter((s) => this.own.has(s.segment)).sort((a, b) => a.segment - b.segment);
    let duration = 0;
    for (const s of segments) {
      const span = s.lastTs - s.firstTs;
      duration += span;
      s.recordsPerSecond = span > 0 ? s.records / span : null;
    }
    return { segments, duration };
  }
}

/** Every cookie's generation key (-1 for a v4/v7 id) into `keys` (a loop of its own: see countRecords). */
function cookieKeys(kinds: Uint8Array, recGen: ArrayLike<number>, keys: Set<number>): void {
  let lastKey = NaN;
  for (let i = 0; i < kinds.length; i++) {
    const kind = kinds[i];
    if (kind === RecordKind.User || kind === RecordKind.Full) continue;
    const k = kind === RecordKind.CookieV8 ? recGen[i] >>> 0 : -1;
    if (k !== lastKey) keys.add((lastKey = k));
  }
}

/**
 * derive's pass over the records, a function of its own (a summary runs it once: a small
 * function is optimized within the loop, a large one later): each record's ring-buffer bytes, and
 * each cookie of a listed generation (`statsOf` null for others) in its generation's stats and
 * spans.
 */
function countRecords(
  c: Capture,
  kinds: Uint8Array,
  recGen: ArrayLike<number>,
  bytes: RingBytes,
  statsOf: (g: number | null) => GenerationStats | null,
  spansOf: (g: number | null) => SpanCounter,
): void {
  const t = c.trace;
  const n = t.recordCount;
  const recStack = t.recStack.raw();
  const recStatus = t.recStatus.raw();
  const recSlot = t.recSlot.raw();
  // a record's time: its own where ownRec lists it (ascending), else its event's (no records' time column made)
  const recEvent = t.recEvent.raw();
  const evTs = t.evTs.raw();
  const own = new OwnRows(t.ownRec.raw());
  const ownTs = t.ownTs.raw();
  const stacks = c.stacks;
  stacks.expectDepths(n);
  // the last cookie's generation, its stats (null: not listed) and spans: generations come in runs
  let lastG: number | null | undefined;
  let s: GenerationStats | null = null;
  let span: SpanCounter | null = null;
  for (let i = 0; i < n; i++) {
    const kind = kinds[i];
    if (kind === RecordKind.User) continue;
    const stack = recStack[i];
    const depth = stack >= 0 ? stacks.depth(stack) : -1;
    if (kind === RecordKind.Full) {
      bytes.full(depth);
      continue;
    }
    const g = kind === RecordKind.CookieV8 ? recGen[i] >>> 0 : null;
    const st = recStatus[i];
    bytes.cookie(g, recSlot[i] >>> 0, st === RecordStatus.Ambiguous ? -1 : depth);
    if (g !== lastG) {
      lastG = g;
      s = statsOf(g);
      span = s === null ? null : spansOf(g);
    }
    if (s === null) continue;
    const o = own.rowOf(i);
    const ts = o >= 0 ? ownTs[o] : evTs[recEvent[i]];
    if (!(s.firstTs <= ts)) s.firstTs = ts;
    if (!(s.lastTs >= ts)) s.lastTs = ts;
    span!.add(ts);
    s.cookies++;
    if (hasStack(st)) s.resolved++;
  }
}

export function derive(c: Capture): Derived {
  const t = c.trace;
  const { segments } = segmentsOf(c);
  const kinds = t.recKind.raw();
  const recGen = t.recGen.raw();
  // first pass: every generation's key (null as -1), so that only the listed ones get their stats
  const keys = new Set<number>();
  for (const d of c.dumps.byGeneration.values()) keys.add(d.generation);
  if (c.dumps.generationless.length) keys.add(-1);
  cookieKeys(kinds, recGen, keys);
  const listed = listedKeys([...keys].sort((a, b) => a - b));
  const keep = new Set(listed.kept);
  const gens = new Map<number | null, GenerationStats>();
  const spans = new Map<number | null, SpanCounter>();
  const gen = (g: number | null) => {
    let s = gens.get(g);
    if (!s) {
      s = { generation: g, firstTs: NaN, lastTs: NaN, segments: [], duration: 0, cookies: 0, resolved: 0, coverage: NaN, dumpFormats: [], dumpSlots: 0 };
      gens.set(g, s);
      spans.set(g, new SpanCounter(segments));
    }
    return s;
  };
  for (const d of c.dumps.byGeneration.values()) {
    if (!keep.has(d.generation)) continue;
    const s = gen(d.generation);
    s.dumpSlots = d.slots.size;
    s.dumpFormats = [...new Set(d.sources.map((i) => c.dumps.sources[i].format))].sort();
  }
  for (const d of c.dumps.generationless) {
    if (!keep.has(-1)) break;
    const s = gen(null);
    s.dumpSlots = Math.max(s.dumpSlots, d.slots.size);
    s.dumpFormats = [...new Set([...s.dumpFormats, c.dumps.sources[d.source].format])].sort();
  }
  const bytes = new RingBytes();
  countRecords(
    c,
    kinds,
    recGen,
    bytes,
    (g) => (keep.has(g ?? -1) ? gen(g) : null),
    (g) => spans.get(g)!,
  );
  for (const s of gens.values()) {
    s.coverage = s.cookies ? s.resolved / s.cookies : NaN;
    Object.assign(s, spans.get(s.generation)!.result());
  }
  return {
    generations: [...gens.values()].sort((a, b) => (a.generation ?? -1) - (b.generation ?? -1)),
    generationsCut: listed.cut,
    dedupRate: bytes.dedupRate,
    ringBuffer: bytes.result(t.eventCount),
  };
}
