import type { Capture } from '../capture/ingest.ts';
import type { ExplorerData } from './explorer-data.ts';
import { payloadFieldValues } from './weigh.ts';
import { isOccurrence } from './selection.ts';
import { fieldInteger, payloadFields } from '../formats/payload-fields.ts';
import { textInteger } from '../capture/event-filter.ts';

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
 * capture's files are read again with payloads kept (`detailed`, the same files in the same
 * order, so the same events in the same order), the field's numbers taken per event, and the
 * payloads dropped. The view is `d` with its record weights replaced (each record its event's
 * value, 0 where there is none), so every query that sums record weights ('period': top stacks'
 * weight column, the flame graph, the exports) sums the field. Throws when the second reading does
 * not line up with the first (another number of events).
 */
export function weightedView(d: ExplorerData, detailed: Capture, field: string): WeightedView {
  // the payloads of the second reading only: no explorer columns made for it
  const t = detailed.trace;
  const n = d.ev.ts.length;
  if (t.evTs.length !== n || t.recordCount !== d.recordCount)
    throw new Error(`the files read again hold ${t.evTs.length} events and ${t.recordCount} records, not ${n} and ${d.recordCount}: not weighed by ${field}`);
  const values = payloadFieldValues(t.details, n, field);
  const recEvent = d.t.recEvent.raw();
  const weights = new Float64Array(d.recordCount);
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

/**
 * The payload keys of a capture read with payloads kept whose value is a number in at least one
 * event (what a weight can be), the most common first, at most `limit` (a field list, not every
 * key a hostile payload invents).
 */
export function numericFields(detailed: Capture, limit = 200): { name: string; events: number }[] {
  const det = detailed.trace.details;
  const seen = new Map<string, number>();
  if (det) {
    for (let e = 0; e < det.length; e++) {
      payloadFields(det.payload[e], (k, v) => {
        if (seen.size >= 10_000 && !seen.has(k)) return;
        if (fieldInteger(v) === fieldInteger(v)) seen.set(k, (seen.get(k) ?? 0) + 1);
      });
    }
  }
  return [...seen]
    .map(([name, events]) => ({ name, events }))
    .sort((a, b) => b.events - a.events || (a.name < b.name ? -1 : 1))
    .slice(0, limit);
}

/** One event's payload fields, as a filter may name them: numeric where any of its events holds a number there (as the filter reads one: textInteger, 64 bits). */
export interface EventFields {
  event: string;
  fields: { name: string; numeric: boolean }[];
}

/**
 * The payload fields of each event name of a capture read with payloads kept, in the order its
 * events print them, for completing a filter (`kmem_cache_alloc: bytes_alloc > 512`): at most
 * `perEvent` fields an event and `events` event names (a list to choose from, not every key a
 * hostile payload invents).
 */
export function fieldsByEvent(detailed: Capture, perEvent = 100, events = 500): EventFields[] {
  const det = detailed.trace.details;
  const t = detailed.trace;
  const byName = new Map<number, Map<string, boolean>>();
  if (det) {
    for (let e = 0; e < det.length; e++) {
      const id = t.evName.get(e);
      let fields = byName.get(id);
      if (!fields) {
        if (byName.size >= events) continue;
        byName.set(id, (fields = new Map()));
      }
      const f = fields;
      payloadFields(det.payload[e], (k, v) => {
        const had = f.get(k);
        if (had === undefined && f.size >= perEvent) return;
        if (had !== true) f.set(k, textInteger(v) !== undefined);
      });
    }
  }
  return [...byName]
    .map(([id, fields]) => ({ event: t.names.strings[id], fields: [...fields].map(([name, numeric]) => ({ name, numeric })) }))
    .sort((a, b) => (a.event < b.event ? -1 : a.event > b.event ? 1 : 0));
}
