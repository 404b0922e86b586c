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
  const distinct = new Set<number>();
  let cookies = 0;
  let bytesWith = 0;
  let knownDepth = 0;
  let knownCount = 0;
  let unknownDepthRecords = 0;
  let bytesWithout = 0;
  for (let i = 0; i < t.recordCount; i++) {
    const kind = t.recKind.get(i);
    if (kind === RecordKind.User) continue;
    const stack = t.recStack.get(i);
    const depth = stack >= 0 ? c.stacks.depth(stack) : -1;
    if (kind === RecordKind.Full) {
      bytesWith += RECORD_BYTES.full(depth);
      bytesWithout += RECORD_BYTES.full(depth);
      continue;
    }
    cookies++;
    const g = kind === RecordKind.CookieV8 ? t.recGen.get(i) : null;
    distinct.add((g ?? -1) * 4194304 + t.recSlot.get(i));
    const s = gen(g);
    const ts = t.recTs.get(i);
    if (!(s.firstTs <= ts)) s.firstTs = ts;
    if (!(s.lastTs >= ts)) s.lastTs = ts;
    s.cookies++;
    const st = t.recStatus.get(i);
    if (hasStack(st)) s.resolved++;
    bytesWith += kind === RecordKind.CookieV8 ? RECORD_BYTES.v8Cookie : RECORD_BYTES.v7Id;
    if (depth >= 0 && st !== RecordStatus.Ambiguous) {
      bytesWithout += RECORD_BYTES.full(depth);
      knownDepth += depth;
      knownCount++;
    } else unknownDepthRecords++;
  }
  const assumedDepth = knownCount ? knownDepth / knownCount : 0;
  bytesWithout += unknownDepthRecords * RECORD_BYTES.full(assumedDepth);
  for (const s of gens.values()) s.coverage = s.cookies ? s.resolved / s.cookies : NaN;
  return {
    generations: [...gens.values()].sort((a, b) => (a.generation ?? -1) - (b.generation ?? -1)),
    dedupRate: cookies ? 1 - distinct.size / cookies : NaN,
    ringBuffer: {
      bytesWithMap: bytesWith,
      bytesWithoutMap: Math.round(bytesWithout),
      gain: bytesWith ? bytesWithout / bytesWith : NaN,
      assumedDepth,
    },
  };
}
