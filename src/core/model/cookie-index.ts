import type { DumpIndex } from './dumps.ts';
import { RecordKind, RecordStatus, type TraceColumns } from './trace-columns.ts';

/**
 * Gives every cookie record a status and, where it resolves, a stack (DESIGN 3):
 * a v8 cookie only against a dump of its own generation; a v7 id against generation-less
 * dumps, where the answer is at best "unverified" because a reset in between would have
 * made the slot hold an unrelated stack. Generation-less dumps are merged slot by slot
 * (DumpIndex.generationlessSlots) with the rule dumps of one generation follow: a raw-address
 * reading and a symbolized reading of the same stack agree; only different stacks make a
 * slot ambiguous.
 */
export function resolveCookies(trace: TraceColumns, dumps: DumpIndex): void {
  // every dump is in: intern the stacks the merges kept, before anything counts them
  dumps.seal();
  const n = trace.recordCount;
  const anyGenerationless = dumps.generationless.length > 0;
  const merged = dumps.generationlessSlots;
  for (let i = 0; i < n; i++) {
    const kind = trace.recKind.get(i);
    if (kind !== RecordKind.CookieV7 && kind !== RecordKind.CookieV8) continue;
    const slot = trace.recSlot.get(i);
    let status: number = RecordStatus.NoDump;
    let stack = -1;
    if (kind === RecordKind.CookieV8) {
      const gen = dumps.byGeneration.get(trace.recGen.get(i));
      if (gen) {
        const hit = gen.slots.get(slot);
        if (hit) {
          status = RecordStatus.Resolved;
          stack = hit.stack;
        } else status = RecordStatus.NoSlot;
      }
    } else if (anyGenerationless) {
      const hit = merged.get(slot);
      if (!hit) status = RecordStatus.NoSlot;
      else if (hit.ambiguous) status = RecordStatus.Ambiguous;
      else {
        status = RecordStatus.Unverified;
        stack = hit.best.stack;
      }
    }
    trace.recStatus.set(i, status);
    trace.recStack.set(i, stack);
  }
}

/** Resolved for counting: a stack was found (resolved or unverified). */
export function hasStack(status: number): boolean {
  return status === RecordStatus.Resolved || status === RecordStatus.Unverified;
}
