import { hasStack } from './cookie-index.ts';
import type { Capture } from './ingest.ts';
import { RecordKind, RecordStatus } from './trace-columns.ts';

/** Ring-buffer record sizes as the v8 cover letter counts them. */
export const RECORD_BYTES = {
  /** trace_entry + size + 8 bytes per frame */
  full: (depth: number) => 12 + 8 * depth,
  v7Id: 12,
  v8Cookie: 16,
} as const;

export interface GenerationStats {
  /** null: v4..v7 ids and generation-less dumps */
  generation: number | null;
  /** time of the first and last stack record of this generation in the trace (NaN if none) */
  firstTs: number;
  lastTs: number;
  cookies: number;
  /** cookies that found a stack */
  resolved: number;
  /** resolved / cookies (NaN without cookies) */
  coverage: number;
  /** what dumps of this generation were loaded: their formats and slot count */
  dumpFormats: string[];
  dumpSlots: number;
}

export interface RingBufferStats {
  /** stack bytes as recorded (ids or cookies, and full stacks for fallbacks) */
  bytesWithMap: number;
  /** the same records had every one been a full stack */
  bytesWithoutMap: number;
  /** bytesWithoutMap / bytesWithMap: how many more stack records the same buffer holds */
  gain: number;
  /** depth assumed for cookies that did not resolve: the mean depth of those that did */
  assumedDepth: number;
}

/**
 * Counts ring-buffer stack bytes and the dedup rate over stack records fed one at a time, so the
 * whole capture (derive) and a selection (selectionSummary) count them the same way.
 */
export class RingBytes {
  private bytesWith = 0;
  private bytesWithout = 0;
  private knownDepth = 0;
  private knownCount = 0;
  private unknownDepth = 0;
  private cookies = 0;
  private readonly distinct = new Set<number>();

  /** A full kernel stack of `depth` frames. */
  full(depth: number): void {
    this.bytesWith += RECORD_BYTES.full(depth);
    this.bytesWithout += RECORD_BYTES.full(depth);
  }

  /** A cookie: v8 with its generation, v7 with null; depth -1 when it found no (single) stack. */
  cookie(generation: number | null, slot: number, depth: number): void {
    this.cookies++;
    this.distinct.add((generation ?? -1) * 4194304 + slot);
    this.bytesWith += generation === null ? RECORD_BYTES.v7Id : RECORD_BYTES.v8Cookie;
    if (depth >= 0) {
      this.bytesWithout += RECORD_BYTES.full(depth);
      this.knownDepth += depth;
      this.knownCount++;
    } else this.unknownDepth++;
  }

  get dedupRate(): number {
    return this.cookies ? 1 - this.distinct.size / this.cookies : NaN;
  }

  result(): RingBufferStats {
    const assumedDepth = this.knownCount ? this.knownDepth / this.knownCount : 0;
    const without = this.bytesWithout + this.unknownDepth * RECORD_BYTES.full(assumedDepth);
    return {
      bytesWithMap: this.bytesWith,
      bytesWithoutMap: Math.round(without),
      gain: this.bytesWith ? without / this.bytesWith : NaN,
      assumedDepth,
    };
  }
}

export interface Derived {
  generations: GenerationStats[];
  /** share of cookie records that reused a stack already in the map (1 - distinct slots / cookies) */
  dedupRate: number;
  ringBuffer: RingBufferStats;
}

export function derive(c: Capture): Derived {
  const t = c.trace;
  const gens = new Map<number | null, GenerationStats>();
  const gen = (g: number | null) => {
    let s = gens.get(g);
    if (!s) {
      s = { generation: g, firstTs: NaN, lastTs: NaN, cookies: 0, resolved: 0, coverage: NaN, dumpFormats: [], dumpSlots: 0 };
      gens.set(g, s);
    }
    return s;
  };
  for (const d of c.dumps.byGeneration.values()) {
    const s = gen(d.generation);
    s.dumpSlots = d.slots.size;
    s.dumpFormats = [...new Set(d.sources.map((i) => c.dumps.sources[i].format))].sort();
  }
  for (const d of c.dumps.generationless) {
    const s = gen(null);
    s.dumpSlots = Math.max(s.dumpSlots, d.slots.size);
    s.dumpFormats = [...new Set([...s.dumpFormats, c.dumps.sources[d.source].format])].sort();
  }
  const bytes = new RingBytes();
  for (let i = 0; i < t.recordCount; i++) {
    const kind = t.recKind.get(i);
    if (kind === RecordKind.User) continue;
    const stack = t.recStack.get(i);
    const depth = stack >= 0 ? c.stacks.depth(stack) : -1;
    if (kind === RecordKind.Full) {
      bytes.full(depth);
      continue;
    }
    const g = kind === RecordKind.CookieV8 ? t.recGen.get(i) : null;
    const st = t.recStatus.get(i);
    bytes.cookie(g, t.recSlot.get(i), st === RecordStatus.Ambiguous ? -1 : depth);
    const s = gen(g);
    const ts = t.recTs.get(i);
    if (!(s.firstTs <= ts)) s.firstTs = ts;
    if (!(s.lastTs >= ts)) s.lastTs = ts;
    s.cookies++;
    if (hasStack(st)) s.resolved++;
  }
  for (const s of gens.values()) s.coverage = s.cookies ? s.resolved / s.cookies : NaN;
  return {
    generations: [...gens.values()].sort((a, b) => (a.generation ?? -1) - (b.generation ?? -1)),
    dedupRate: bytes.dedupRate,
    ringBuffer: bytes.result(),
  };
}
