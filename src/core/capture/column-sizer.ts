import type { TraceColumns, TraceColumnsMark } from './trace-columns.ts';

/** Files smaller than this are not sized ahead (columnSizer): the doubling's copies are small there. */
const SIZE_AHEAD_MIN = 4 << 20;

/**
 * A large trace file's columns sized once from its size, as it is read: at 1/16 of its bytes (1
 * MB at least), once its rows say how many are to come, and at half, should the rest have read
 * denser (`reserveFor`). Returns the check to call with the bytes read so far.
 */
export function columnSizer(columns: TraceColumns, total: number): (done: number) => void {
  const m = columns.mark();
  let next = total < SIZE_AHEAD_MIN ? Infinity : Math.max(total / 16, 1 << 20);
  return (done) => {
    if (done < next) return;
    reserveFor(columns, m, done, total);
    next = next < total / 2 ? total / 2 : Infinity;
  };
}

type Sized = { length: number; capacity: number; reserve(n: number): void };

/**
 * Sizes the event, record and field-evidence columns for a file `done` bytes into its `total`
 * (`m`: where the columns stood when it began): each group's rows so far, scaled to the whole
 * file, and 1/32 more, unless they have room for the rows so scaled already (a second sizing
 * that would add a few rows copies nothing). A file read on two threads is sized here for both
 * halves (the other's rows are appended to these columns), so the doubling's copies and the
 * join's copy of this half do not happen; a guess that falls short grows by doubling as before.
 * Bounded by the file: a row took at least a byte of it. A snapshot's columns reserve nothing.
 */
export function reserveFor(columns: TraceColumns, m: TraceColumnsMark, done: number, total: number): void {
  if (done <= 0 || total <= done) return;
  const scale = total / done;
  const size = (cols: readonly Sized[], from: number) => {
    const rows = cols[0].length - from;
    if (rows <= 0) return;
    const need = from + Math.ceil(rows * scale);
    if (cols.every((c) => c.capacity >= need)) return;
    const want = need + Math.ceil((need - from) / 32) + 64;
    for (const c of cols) c.reserve(want);
  };
  size(columns.eventColumns(), m.events);
  size(columns.recordColumns(), m.records);
  size(columns.evidColumns(), m.evidence);
}
