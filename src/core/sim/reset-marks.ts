import type { RunResult } from './sim-report.ts';

/** One host reset's trace_marker write (`stackmap reset N`, RESET_MARKER): its time and number. */
export interface ResetMark {
  ts: number;
  n: number;
}

/**
 * Where a run's `stackmap reset N` trace_marker writes go among the trace's records (text and
 * trace.dat alike): written from the host's shell on CPU 0 the moment before each reset, each
 * before the first event at or after its time (never between an event and its stack record), and
 * only those at or after the oldest record CPU 0's ring still holds (older ones were overwritten
 * with it). Returns `items` with `make(mark)` put in place.
 */
export function withResetMarks<T>(items: readonly T[], run: RunResult, at: (item: T) => { ts: number; cpu: number; event: boolean; lost: boolean }, make: (m: ResetMark) => T): T[] {
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
  for (const it of items) {
    const a = at(it);
    while (m < marks.length && a.event && marks[m].ts <= a.ts) out.push(make(marks[m++]));
    out.push(it);
  }
  while (m < marks.length) out.push(make(marks[m++]));
  return out;
}
