import { CTX, REC, type RingRecord } from './ring-records.ts';
import type { RunResult } from './sim-report.ts';

/** One host reset's trace_marker write (`stackmap reset N`, RESET_MARKER): its time and number. */
export interface ResetMark {
  ts: number;
  n: number;
}

/**
 * Where a run's `stackmap reset N` trace_marker writes go among the trace's records (text and
 * trace.dat alike): written from the host's shell on CPU 0 the moment before each reset, each
 * before CPU 0's first event at or after its time (never between an event and its stack record,
 * which is stamped later, when it is reserved, so the first event of any CPU will not do), and
 * only those at or after the oldest record CPU 0's ring still holds (older ones were overwritten
 * with it). Returns `items` with `make(mark)` put in place. `at(item).event`: an event a mark may
 * go before, one of a CPU's own path (outerEvent): an interrupt's, nested in an insert, sits
 * between its outer event and that event's stack record, where no other task's write can come.
 */
export function withResetMarks<T>(
  items: readonly T[],
  run: RunResult,
  at: (item: T) => { ts: number; cpu: number; event: boolean; lost: boolean },
  make: (m: ResetMark) => T,
): T[] {
  if (run.resets.length === 0) return items.slice();
  let oldest = Infinity;
  for (const it of items) {
    const a = at(it);
    if (a.cpu === 0 && !a.lost) {
      oldest = a.ts;
      break;
    }
  }
  const marks = run.resets.map((r, k) => ({ ts: r.ts, n: k + 1 })).filter((m) => m.ts >= oldest || oldest === Infinity);
  const out: T[] = [];
  let m = 0;
  // a mark is stamped no earlier than the CPU 0 record before it, so CPU 0's times never go back
  // (the trace.dat's per-CPU order is by time): a record is stamped when reserved, an event's
  // stack record after the event, and the mark's own time may fall between them
  let last0 = -Infinity;
  const place = (k: number) => out.push(make({ ...marks[k], ts: Math.max(marks[k].ts, last0) }));
  for (const it of items) {
    const a = at(it);
    while (m < marks.length && a.event && a.cpu === 0 && marks[m].ts <= a.ts) place(m++);
    out.push(it);
    if (a.cpu === 0 && !a.lost && Number.isFinite(a.ts)) last0 = a.ts;
  }
  while (m < marks.length) place(m++);
  return out;
}

/** An event of a CPU's own path, not an interrupt's nested inside one of its inserts (context unknown counts as its own). */
export const outerEvent = (rec: RingRecord): boolean => rec.type === REC.EVENT && rec.context <= CTX.PROCESS;
