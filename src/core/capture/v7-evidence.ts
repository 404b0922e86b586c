import type { Capture } from './ingest.ts';
import { RecordKind } from './trace-columns-data.ts';

/**
 * What a v4/v7 capture's own files say about stale ids, where no truth exists: a slot that the
 * trace's ids name more often than the dump's ref_count counts the stack recorded there. A
 * ref_count counts the records of the slot's stack since it took the slot (its first insert and
 * every hit); the trace can hold fewer ids than that (the ring buffer overwrote some), never
 * more, unless some of its ids were written before a reset, for whatever held the slot then. So
 * at least `excess` of those ids may name another stack than the one they resolve to. (It
 * assumes the dump was read after the trace stopped: ids written after the read are not in its
 * counts either.)
 */
export interface StaleIdEvidence {
  /** slots whose ids outnumber their ref_count */
  slots: number;
  /** ids naming those slots */
  ids: number;
  /** ids beyond the ref_counts: at least this many were written before a reset */
  excess: number;
}

/** The evidence, or null when the capture has no v4/v7 id or no generation-less dump to count against. */
export function staleIdEvidence(c: Capture): StaleIdEvidence | null {
  const dumps = c.dumps.generationlessSlots;
  if (dumps.size === 0) return null;
  const t = c.trace;
  const kinds = t.recKind.raw();
  const slots = t.recSlot.raw();
  const perSlot = new Map<number, number>();
  for (let i = 0; i < kinds.length; i++) {
    if (kinds[i] !== RecordKind.CookieV7) continue;
    const slot = slots[i] >>> 0; // a u32 stored as its 32 bits
    perSlot.set(slot, (perSlot.get(slot) ?? 0) + 1);
  }
  if (perSlot.size === 0) return null;
  const out: StaleIdEvidence = { slots: 0, ids: 0, excess: 0 };
  for (const [slot, n] of perSlot) {
    const d = dumps.get(slot);
    if (!d) continue;
    // the largest count any dump gives the slot: the latest reading counts the most hits
    const ref = Math.max(...d.readings.map((r) => r.refCount));
    if (n <= ref) continue;
    out.slots++;
    out.ids += n;
    out.excess += n - ref;
  }
  return out;
}

/**
 * The resets the trace itself shows: scripts/capture.sh (and the simulator's export) writes
 * `stackmap reset N` to trace_marker just before each `echo 0 > stack_map` (RESET_MARKER; the
 * kernel traces no reset). A v4/v7 id recorded before the last of them was written for the map of
 * an earlier generation; a dump read after that reset may hold another stack in its slot.
 */
export interface ResetMarkEvidence {
  /** the trace's reset markers */
  resets: number;
  /** the last marker's time, seconds */
  lastTs: number;
  /** v4/v7 ids recorded before it */
  ids: number;
  /** of the trace's v4/v7 ids, all of them */
  of: number;
}

/** The evidence, or null when the trace shows no reset or holds no v4/v7 id. */
export function resetMarkEvidence(c: Capture): ResetMarkEvidence | null {
  const t = c.trace;
  const marks = t.resetMarks.raw();
  if (marks.length === 0) return null;
  const evTs = t.evTs.raw();
  let lastTs = -Infinity;
  for (let k = 0; k < marks.length; k++) lastTs = Math.max(lastTs, evTs[marks[k]]);
  const kinds = t.recKind.raw();
  const ts = t.recTs.raw();
  let ids = 0;
  let of = 0;
  for (let i = 0; i < kinds.length; i++) {
    if (kinds[i] !== RecordKind.CookieV7) continue;
    of++;
    if (ts[i] < lastTs) ids++;
  }
  return of === 0 ? null : { resets: marks.length, lastTs, ids, of };
}
