// What stack records cost in the ring buffer: the record sizes, and RingBytes, the counter that
// turns records fed one at a time into bytes with and without the map and the retention gain.

/** Ring-buffer record sizes as the cookie ABI mail counts them ("trace_entry + size + 8*20 = 172 B", "trace_entry + 4 = 12 B", "trace_entry + 8 = 16 B"). */
export const RECORD_BYTES = {
  /** trace_entry + size + 8 bytes per frame */
  full: (depth: number) => 12 + 8 * depth,
  v7Id: 12,
  v8Cookie: 16,
} as const;

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

/** slots below this get a bit each (the kernel's map has at most 2^18 slots); words of bits at most, over every generation (16 MB) */
const BIT_SLOTS = 1 << 22;
const BIT_WORDS = 1 << 22;

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
  /** distinct (generation, slot) pairs: a bit per slot below BIT_SLOTS per generation while their words stay within BIT_WORDS, the rest in a set */
  private readonly distinct = new Map<number, Set<number>>();
  private distinctSet = 0;
  private readonly bits = new Map<number, Uint32Array>();
  private bitWords = 0;
  private distinctBits = 0;
  /** the last cookie's generation key and its bits: cookies come in runs of one generation */
  private lastKey = NaN;
  private lastBits: Uint32Array | undefined;

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
    this.see(generation ?? -1, slot);
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

  /**
   * Notes the pair (key, slot). A Set of 4.8M numbers cost 122 ms at 1 GiB (each a key made and
   * hashed); a bit per slot, in a map's slot range, costs a load and a store.
   */
  private see(key: number, slot: number): void {
    if (slot < BIT_SLOTS) {
      let bits = key === this.lastKey ? this.lastBits : this.bits.get(key);
      const w = slot >>> 5;
      if (bits === undefined || w >= bits.length) bits = this.grow(key, bits, w);
      if (bits !== undefined) {
        this.lastKey = key;
        this.lastBits = bits;
        const m = 1 << (slot & 31);
        if ((bits[w] & m) === 0) {
          bits[w] |= m;
          this.distinctBits++;
        }
        return;
      }
    }
    let set = this.distinct.get(key);
    if (!set) this.distinct.set(key, (set = new Set()));
    if (!set.has(slot)) {
      set.add(slot);
      this.distinctSet++;
    }
  }

  /** `key`'s bits made (or made longer) to hold word `w`; undefined past the budget (the set takes the pair) */
  private grow(key: number, bits: Uint32Array | undefined, w: number): Uint32Array | undefined {
    let n = Math.max(64, bits?.length ?? 0);
    while (n <= w) n *= 2;
    if (this.bitWords - (bits?.length ?? 0) + n > BIT_WORDS) return undefined;
    const next = new Uint32Array(n);
    if (bits) next.set(bits);
    this.bitWords += n - (bits?.length ?? 0);
    this.bits.set(key, next);
    return next;
  }

  get dedupRate(): number {
    const cookies = this.v7 + this.v8;
    return cookies ? 1 - (this.distinctSet + this.distinctBits) / cookies : NaN;
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
      distinctSlots: this.distinctSet + this.distinctBits,
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
