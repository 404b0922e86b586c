import type { Capture } from './ingest.ts';
import { RecordKind } from './trace-columns.ts';

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
    perSlot.set(slots[i], (perSlot.get(slots[i]) ?? 0) + 1);
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
