import { hasStack } from './cookie-index.ts';
import type { Capture } from './ingest.ts';
import { segmentAt, segmentsOf, type Segment } from './segments.ts';
import { RecordKind, RecordStatus } from './trace-columns.ts';

/** Ring-buffer record sizes as the cookie ABI mail counts them ("trace_entry + size + 8*20 = 172 B", "trace_entry + 4 = 12 B", "trace_entry + 8 = 16 B"). */
export const RECORD_BYTES = {
  /** trace_entry + size + 8 bytes per frame */
  full: (depth: number) => 12 + 8 * depth,
  v7Id: 12,
  v8Cookie: 16,
} as const;

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

/**
 * How the bytes without the map were counted. 'exact': every cookie has a stack, so its depth is
 * known. 'estimated': a few cookies (at most MAX_ESTIMATED_SHARE) have none, and their depth is
 * taken as the mean of the stack records with one. 'unknown': too many have none to say.
 * 'none': no kernel stack records at all.
 */
export type DepthBasis = 'exact' | 'estimated' | 'unknown' | 'none';

/**
 * The bytes of one event's own record in the ring buffer, which a text trace does not give: 56 B,
 * a kmem_cache_alloc record on a 64-bit 6.x kernel, the same assumption as the simulator's and the
 * what-if's (sim/ring.ts DEFAULT_EVENT_BYTES; the seeds give no event size). Only the retention
 * gain uses it: events kept depend on the events' bytes as well as the stacks'.
 */
export const EVENT_BYTES = 56;

/** Above this share of cookies without a stack, bytes without the map are unknown rather than estimated. */
export const MAX_ESTIMATED_SHARE = 0.1;
/** the kernel's bound on a stack in the map (DESIGN 1): what bounds an unknown depth */
export const MAX_DEPTH = 64;

export interface RingBufferStats {
  /** stack bytes as recorded (ids or cookies, and full stacks for fallbacks): always known */
  bytesWithMap: number;
  /** the same records had every one been a full stack; NaN (null in JSON) when unknown: see basis and why */
  bytesWithoutMap: number;
  /**
   * The retention gain: how many times the events the same ring buffer keeps with the map, as the
   * cookie ABI mail's "Retention on that workload drops from about 2.17x to about 2.0x" counts
   * (events kept, not bytes): ring bytes per event without the map / with it, an event being its
   * own record (`eventBytes`) and its stack records. NaN (null in JSON) when unknown.
   */
  gain: number;
  /** bytesWithoutMap / bytesWithMap: the stack records' bytes alone, not events kept (not the retention gain); NaN (null in JSON) when unknown */
  stackBytesRatio: number;
  /** the events counted (event lines, stack records not counted) */
  events: number;
  /** each event's own record, assumed (EVENT_BYTES): a text trace does not give it */
  eventBytes: number;
  /** (events x eventBytes + bytesWithMap) / events: ring bytes per event with the map (NaN without events) */
  bytesPerEventWithMap: number;
  /** the same without the map; NaN (null in JSON) when unknown or without events */
  bytesPerEventWithoutMap: number;
  basis: DepthBasis;
  /** the depth taken for each cookie without a stack ('estimated' only, else NaN) */
  assumedDepth: number;
  /** what the figures rest on */
  records: {
    v8Cookies: number;
    v7Ids: number;
    fullStacks: number;
    /** cookies whose depth is known (resolved or unverified) */
    cookiesWithStack: number;
    cookiesWithoutStack: number;
    /** distinct (generation, slot) pairs among the cookies: the dedup rate's numerator */
    distinctSlots: number;
  };
  /**
   * What bytes without the map could be whatever the unknown depths are (each cookie without a
   * stack between 1 and MAX_DEPTH frames); null when every depth is known.
   */
  bounds: { bytesWithoutMap: [number, number]; gain: [number, number]; stackBytesRatio: [number, number] } | null;
  /** in words: what the figures assumed, or why they are unknown (null without stack records) */
  why: string | null;
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const plural = (n: number, one: string, many = one + 's') => `${int(n)} ${n === 1 ? one : many}`;

/**
 * Counts ring-buffer stack bytes and the dedup rate over stack records fed one at a time, so the
 * whole capture (derive) and a selection (selectionSummary) count them the same way.
 */
export class RingBytes {
  private bytesWith = 0;
  private bytesKnown = 0;
  private knownDepth = 0;
  private knownCount = 0;
  private v8 = 0;
  private v7 = 0;
  private fulls = 0;
  private withStack = 0;
  private withoutStack = 0;
  private readonly distinct = new Set<number>();

  /** A full kernel stack of `depth` frames. */
  full(depth: number): void {
    const d = Math.max(0, depth);
    this.fulls++;
    this.bytesWith += RECORD_BYTES.full(d);
    this.bytesKnown += RECORD_BYTES.full(d);
    this.knownDepth += d;
    this.knownCount++;
  }

  /** A cookie: v8 with its generation, v7 with null; depth -1 when it found no (single) stack. */
  cookie(generation: number | null, slot: number, depth: number): void {
    this.distinct.add((generation ?? -1) * 4194304 + slot);
    if (generation === null) {
      this.v7++;
      this.bytesWith += RECORD_BYTES.v7Id;
    } else {
      this.v8++;
      this.bytesWith += RECORD_BYTES.v8Cookie;
    }
    if (depth >= 0) {
      this.withStack++;
      this.bytesKnown += RECORD_BYTES.full(depth);
      this.knownDepth += depth;
      this.knownCount++;
    } else this.withoutStack++;
  }

  get dedupRate(): number {
    const cookies = this.v7 + this.v8;
    return cookies ? 1 - this.distinct.size / cookies : NaN;
  }

  /**
   * The figures, for `events` events each of `eventBytes` (their own records): the retention gain
   * counts the events a buffer keeps, so their bytes count beside the stacks'.
   */
  result(events: number, eventBytes: number = EVENT_BYTES): RingBufferStats {
    const cookies = this.v7 + this.v8;
    const ev = events * eventBytes;
    const perEvent = (stackBytes: number) => (events > 0 ? (ev + stackBytes) / events : NaN);
    const figures = (without: number) => ({
      bytesWithoutMap: without,
      gain: Number.isFinite(without) && ev + this.bytesWith > 0 ? (ev + without) / (ev + this.bytesWith) : NaN,
      stackBytesRatio: Number.isFinite(without) && this.bytesWith ? without / this.bytesWith : NaN,
      bytesPerEventWithoutMap: Number.isFinite(without) ? perEvent(without) : NaN,
    });
    const unknown = this.withoutStack;
    const records = {
      v8Cookies: this.v8,
      v7Ids: this.v7,
      fullStacks: this.fulls,
      cookiesWithStack: this.withStack,
      cookiesWithoutStack: unknown,
      distinctSlots: this.distinct.size,
    };
    const base = { bytesWithMap: this.bytesWith, records, events, eventBytes, bytesPerEventWithMap: perEvent(this.bytesWith) };
    if (cookies + this.fulls === 0) return { ...base, ...figures(NaN), basis: 'none', assumedDepth: NaN, bounds: null, why: null };
    const known = `${plural(this.withStack, 'cookie')} with a stack and ${plural(this.fulls, 'full stack')}`;
    if (unknown === 0) {
      return {
        ...base,
        ...figures(this.bytesKnown),
        basis: 'exact',
        assumedDepth: NaN,
        bounds: null,
        why: `every record's depth is known: ${known}.`,
      };
    }
    const lo = this.bytesKnown + unknown * RECORD_BYTES.full(1);
    const hi = this.bytesKnown + unknown * RECORD_BYTES.full(MAX_DEPTH);
    const bounds = {
      bytesWithoutMap: [lo, hi] as [number, number],
      gain: [figures(lo).gain, figures(hi).gain] as [number, number],
      stackBytesRatio: [lo / this.bytesWith, hi / this.bytesWith] as [number, number],
    };
    const missing = `${plural(unknown, 'cookie')} ${unknown === 1 ? 'has' : 'have'} no stack`;
    const their = unknown === 1 ? 'its' : 'their';
    if (unknown > MAX_ESTIMATED_SHARE * cookies || this.knownCount === 0) {
      return {
        ...base,
        ...figures(NaN),
        basis: 'unknown',
        assumedDepth: NaN,
        bounds,
        why:
          `${missing}${unknown < cookies ? ` (of ${plural(cookies, 'cookie')})` : ''}: ${their} depth is unknown, so are the bytes without the map and the gain. ` +
          `Load the dumps taken with this trace to resolve ${unknown === 1 ? 'it' : 'them'}.`,
      };
    }
    const assumedDepth = this.knownDepth / this.knownCount;
    const without = Math.round(this.bytesKnown + unknown * RECORD_BYTES.full(assumedDepth));
    return {
      ...base,
      ...figures(without),
      basis: 'estimated',
      assumedDepth,
      bounds,
      why: `${missing}: ${their} depth is taken as ${assumedDepth.toFixed(1)} frames, the mean of the ${known}.`,
    };
  }
}

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
  const recTs = t.recTs.raw();
  const stacks = c.stacks;
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
    const ts = recTs[i];
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
