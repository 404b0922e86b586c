import type { DumpIndex } from './dumps.ts';
import type { SlotMap } from './slot-map.ts';
import { type TraceColumns } from './trace-columns.ts';
import { RecordKind, RecordStatus } from './trace-columns-data.ts';

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
  const kinds = trace.recKind.raw();
  const slots = trace.recSlot.raw();
  const gens = trace.recGen.raw();
  const statusOut = trace.recStatus.writable();
  const stackOut = trace.recStack.writable();
  // the generation of the last v8 cookie and its dump's slots (cookies come in runs of one generation)
  let lastGen = NaN;
  let lastDump = dumps.byGeneration.get(lastGen);
  let lastTable: Int32Array | null = null;
  const tables = new Map<number, Int32Array | null>();
  for (let i = 0; i < n; i++) {
    const kind = kinds[i];
    if (kind !== RecordKind.CookieV7 && kind !== RecordKind.CookieV8) continue;
    // u32s stored as their 32 bits (trace-columns.ts)
    const slot = slots[i] >>> 0;
    let status: number = RecordStatus.NoDump;
    let stack = -1;
    if (kind === RecordKind.CookieV8) {
      const g = gens[i] >>> 0;
      if (g !== lastGen) {
        lastGen = g;
        lastDump = dumps.byGeneration.get(g);
        if (!tables.has(g)) tables.set(g, lastDump ? slotTable(lastDump.slots) : null);
        lastTable = tables.get(g)!;
      }
      if (lastTable !== null) {
        const s = slot >= 0 && slot < lastTable.length ? lastTable[slot] : NO_SLOT;
        if (s !== NO_SLOT) {
          status = RecordStatus.Resolved;
          stack = s;
        } else status = RecordStatus.NoSlot;
      } else if (lastDump) {
        const row = lastDump.slots.rowOf(slot);
        if (row >= 0) {
          status = RecordStatus.Resolved;
          stack = dumps.stackOfRow(row);
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
    statusOut[i] = status;
    stackOut[i] = stack;
  }
}

/**
 * A generation's slots as an array, slot -> stack (NO_SLOT: none), when their numbers are dense
 * enough (the largest at most 4 x their count + 1024, so no untrusted slot number sizes it);
 * null to look them up in the map instead.
 */
const NO_SLOT = -2;

function slotTable(slots: SlotMap): Int32Array | null {
  let max = -1;
  for (let i = 0; i < slots.size; i++) {
    const k = slots.slotAt(i);
    if (!Number.isInteger(k) || k < 0) return null;
    if (k > max) max = k;
  }
  if (max < 0 || max > 4 * slots.size + 1024) return null;
  const t = new Int32Array(max + 1).fill(NO_SLOT);
  for (let i = 0; i < slots.size; i++) t[slots.slotAt(i)] = slots.stackAt(i);
  return t;
}

/** Resolved for counting: a stack was found (resolved or unverified). */
export function hasStack(status: number): boolean {
  return status === RecordStatus.Resolved || status === RecordStatus.Unverified;
}
