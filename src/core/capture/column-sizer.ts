import type { TraceColumns } from './trace-columns.ts';

/** Files smaller than this are not sized ahead (columnSizer): the doubling's copies are small there. */
const SIZE_AHEAD_MIN = 4 << 20;

/**
 * When a file's columns are sized (TraceColumns.reserveFor) as it is read: at 1/16 of its bytes
 * (1 MB at least), once its rows say how many are to come, and at half, should the rest have
 * read denser. Returns the check to call with the bytes read so far.
 */
export function columnSizer(columns: TraceColumns, total: number): (done: number) => void {
  const m = columns.mark();
  let next = total < SIZE_AHEAD_MIN ? Infinity : Math.max(total / 16, 1 << 20);
  return (done) => {
    if (done < next) return;
    columns.reserveFor(m, done, total);
    next = next < total / 2 ? total / 2 : Infinity;
  };
}
