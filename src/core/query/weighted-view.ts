import type { ExplorerData } from './explorer-data.ts';
import type { FieldColumns } from './field-columns.ts';
import { isOccurrence } from './selection.ts';

/** A capture's data with each record weighing a numeric field of its event, and what could not be weighed. */
export interface WeightedView {
  data: ExplorerData;
  field: string;
  /** stack occurrences (the records the panes count) whose event has no such field, or a value that is not a number: they weigh 0 */
  unweighed: number;
  /** stack occurrences in all */
  records: number;
}

/**
 * The page keeps no per-event text (a tab's memory on large traces): to weigh by a field, the
 * capture's fields are kept as typed columns (`fields`: field-columns.ts, built from the files read
 * again with payloads, the same files in the same order, so the same events in the same order),
 * the field's numbers taken per event. The view is `d` with its record weights replaced (each
 * record its event's value, 0 where there is none), so every query that sums record weights
 * ('period': top stacks' weight column, the flame graph, the exports) sums the field. Throws when
 * the columns do not line up with the capture (another number of events or records).
 */
export function weightedView(d: ExplorerData, fields: FieldColumns, field: string): WeightedView {
  const n = d.ev.ts.length;
  if (fields.events !== n || fields.records !== d.recordCount)
    throw new Error(`the files read again hold ${fields.events} events and ${fields.records} records, not ${n} and ${d.recordCount}: not weighed by ${field}`);
  const values = fields.numbers(field);
  const recEvent = d.t.recEvent.raw();
  // 4 bytes a record where every value is a 32-bit integer (bytes_alloc, len, pid), else 8
  let int32 = true;
  for (let e = 0; e < values.length && int32; e++) {
    const v = values[e];
    if (v === v && (v | 0) !== v) int32 = false;
  }
  const weights = int32 ? new Int32Array(d.recordCount) : new Float64Array(d.recordCount);
  let unweighed = 0;
  let records = 0;
  const { status, stack } = d.rec;
  for (let r = 0; r < weights.length; r++) {
    const e = recEvent[r];
    const v = e >= 0 ? values[e] : NaN;
    if (v === v) weights[r] = v;
    if (!isOccurrence(status[r]) || stack[r] < 0) continue;
    records++;
    if (v !== v) unweighed++;
  }
  // d's columns and caches, with the record weights replaced (ExplorerData's queries read them through `this`)
  const data = Object.create(d, { recWeight: { value: weights }, hasWeights: { value: true } }) as ExplorerData;
  return { data, field, unweighed, records };
}
