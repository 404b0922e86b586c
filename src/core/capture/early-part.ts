import { splitPoint, type TracePart, type TracePartReader } from './split-trace.ts';

/** Most of a trace the other thread reads, however much this one reads before it. */
const MAX_SHARE = 0.9;

/**
 * The share of a trace of `size` bytes the other thread reads when this thread reads `before`
 * bytes of other files first, meanwhile: `share` (the part reader's, for a trace read first)
 * plus half of `before` over `size`, so that both threads read about as many bytes (this one
 * `before` and the rest of the trace from its start, the other its part), at most MAX_SHARE.
 */
export function partShare(share: number, before: number, size: number): number {
  return Math.min(MAX_SHARE, share + before / (2 * size));
}

/** A large trace's part started on the other thread when its load began, before the trace's turn. */
export interface EarlyPart {
  /** the load's index of the trace */
  index: number;
  split: number;
  tail: { part: Promise<TracePart>; cancel(): void };
  /** bytes the other thread has read so far (its last progress): 0 until it reads */
  bytes: number;
  /** told each progress from the trace's turn on (what the load counts then) */
  listener: ((n: number) => void) | null;
  /** the trace's turn came: its read owns the part */
  taken: boolean;
  /** the part is read, or failed */
  settled: boolean;
}

/**
 * The part of a load's first large trace that another thread reads (split-trace.ts), started at
 * once when files come before the trace in the load: the other thread reads it while this one
 * reads those files, where at the trace's turn it would start (a worker's start-up, tens of
 * milliseconds) and read beside this thread's half only. A dump of 75 MB before a 61 MB trace
 * read its second half meanwhile and so had a part that took more of the trace (`partShare`).
 * Null when the first trace that splits is the first file (its turn is now), or none splits,
 * or the part reader cannot read it.
 */
export async function startEarlyPart(files: readonly { name: string; blob: Blob }[], parts: TracePartReader): Promise<EarlyPart | null> {
  let before = 0;
  for (const [index, f] of files.entries()) {
    const size = f.blob.size;
    if (size >= parts.minBytes) {
      const split = await splitPoint(f.blob, parts, partShare(parts.share, before, size));
      if (split !== null) {
        if (index === 0) return null;
        const early: EarlyPart = { index, split, tail: null as never, bytes: 0, listener: null, taken: false, settled: false };
        const tail = parts.start(f.blob, split, f.name, (n) => {
          early.bytes = n;
          early.listener?.(n);
        });
        if (tail === null) return null;
        // a part given up (cancelled, or its read failed) is not waited for
        tail.part.then(
          () => void (early.settled = true),
          () => void (early.settled = true),
        );
        early.tail = tail;
        return early;
      }
    }
    before += size;
  }
  return null;
}
