// What the ingest worker's queries answer about (ingest.worker.ts, the Comlink API, imports this;
// nothing here imports it): the captures loaded, the last one or its filtered form, and the
// views of it made by reading its files again with payloads (field columns, weighted views,
// groupings), each made once per capture.
import { Explorer } from '../core/query/explorer.ts';
import { CaptureLoads } from '../core/capture/capture-loads.ts';
import { summarize, type Summary } from '../core/capture/summary.ts';
import type { Capture } from '../core/capture/ingest.ts';
import { NO_CAPTURE, type NamedBlob } from './ingest-api.ts';
import { loadFiles } from '../core/capture/load.ts';
import type { ExplorerData } from '../core/query/explorer-data.ts';
import type { FlameWeight } from '../core/query/api.ts';
import { weightedView, type WeightedView } from '../core/query/weighted-view.ts';
import { FieldColumns } from '../core/query/field-columns.ts';
import { eventGroups, fieldGroups, parseGroupBy, type EventGroups } from '../core/query/weigh.ts';
import { ExplorerData as Data } from '../core/query/explorer-data.ts';
import type { EventFilter } from '../core/capture/event-filter.ts';

/**
 * A capture's explorer and summary, its records counted by stack once: the explorer's occurrences
 * of the whole capture (which its first queries read again from its cache) are the summary's
 * stack counts, not a second pass of its own.
 */
export function explore(capture: Capture): { explorer: Explorer; summary: Summary } {
  const explorer = new Explorer(capture);
  const whole = explorer.data.occurrences({ range: null, generation: null, cpus: null });
  return { explorer, summary: summarize(capture, undefined, undefined, whole) };
}

/** the captures loaded, one load at a time; the last one's Explorer answers the queries */
export const loads = new CaptureLoads(explore);

/**
 * The capture loaded last filtered by an event filter (applyFilter): its own explorer and
 * summary, made from the base capture's files read again keeping only the events it selects.
 * Held only while `base` is the capture loaded last.
 */
type Filtered = { base: object; text: string; filter: EventFilter; built: { explorer: Explorer; summary: ReturnType<typeof summarize> } };
let filtered: Filtered | null = null;

/** Sets (null: drops) the filtered form of the capture loaded last. */
export function setFiltered(f: Filtered | null): void {
  filtered = f;
}

/** The filtered form of `base`, while `base` is the capture it was made from. */
export function filteredOf(base: object): Filtered | null {
  return filtered && filtered.base === base ? filtered : null;
}

/** What the queries answer about: the capture loaded last, or its filtered form. */
export function active(): { key: object; explorer: Explorer; files: NamedBlob[]; filter: EventFilter | null } {
  const base = loads.current;
  if (!base) throw new Error(NO_CAPTURE);
  const files = captureFiles.get(base) ?? [];
  const f = filteredOf(base);
  if (f) return { key: f.built, explorer: f.built.explorer, files, filter: f.filter };
  return { key: base, explorer: base.explorer, files, filter: null };
}

export const ex = (): Explorer => active().explorer;

/** each capture's files (an Add's are the capture's before it plus its own), for the tables' capture_id */
export const captureFiles = new WeakMap<object, NamedBlob[]>();

/** per capture, its views weighed by a field (weighted-view.ts), each made once: its files read again with payloads */
const weighted = new WeakMap<object, Map<string, Promise<WeightedView>>>();

/** per capture (or its filtered form), its payload fields as typed columns (field-columns.ts): its files read again with payloads once, the payloads then dropped */
const fieldColumns = new WeakMap<object, Promise<FieldColumns>>();

function columnsOf(a: { key: object; files: NamedBlob[]; filter: EventFilter | null }): Promise<FieldColumns> {
  let p = fieldColumns.get(a.key);
  if (!p) {
    p = loadFiles(a.files, { details: true, ...(a.filter ? { filter: a.filter } : {}) }).then((detailed) => FieldColumns.build(detailed.trace));
    fieldColumns.set(a.key, p);
    p.catch(() => fieldColumns.delete(a.key));
  }
  return p;
}

/** the fields of the whole capture loaded last, filtered or not: what a filter or a weight may name */
export function fieldsOf(): Promise<FieldColumns> {
  const built = loads.current;
  if (!built) throw new Error(NO_CAPTURE);
  return columnsOf({ key: built, files: captureFiles.get(built) ?? [], filter: null });
}

/** per capture, its events' groups by each grouping asked (weigh.ts eventGroups) */
const grouped = new WeakMap<object, Map<string, Promise<EventGroups>>>();

/** Each event's group: task and event from the capture itself, field:NAME from its field columns, process from its files read again with TGIDs kept. */
export async function groupsFor(by: string): Promise<EventGroups> {
  const a = active();
  const g = parseGroupBy(by);
  if (g === null) throw new Error(`not a grouping: ${by} (task, process, event or field:NAME)`);
  let m = grouped.get(a.key);
  if (!m) grouped.set(a.key, (m = new Map()));
  let p = m.get(g);
  if (!p) {
    const d = a.explorer.data;
    p =
      g === 'task' || g === 'event'
        ? Promise.resolve(eventGroups(d, g))
        : g.startsWith('field:')
          ? columnsOf(a).then((cols) => fieldGroups(cols.texts(g.slice('field:'.length)), g.slice('field:'.length)))
          : loadFiles(a.files, { details: true, ...(a.filter ? { filter: a.filter } : {}) }).then((detailed) => {
              const again = new Data(detailed);
              if (again.ev.ts.length !== d.ev.ts.length)
                throw new Error(`the files read again hold ${again.ev.ts.length} events, not ${d.ev.ts.length}: not grouped`);
              return eventGroups(again, g);
            });
    m.set(g, p);
    p.catch(() => m.delete(g));
  }
  return p;
}

/** The data a query weighed `weight` reads: the capture's, or its view weighed by a field. */
export async function dataFor(weight: FlameWeight | undefined): Promise<ExplorerData> {
  return (await viewFor(weight))?.data ?? ex().data;
}

/** The view weighed by a field, null for the other weights. */
export async function viewFor(weight: FlameWeight | undefined): Promise<WeightedView | null> {
  const a = active();
  if (!weight?.startsWith('field:')) return null;
  const field = weight.slice('field:'.length);
  let views = weighted.get(a.key);
  if (!views) weighted.set(a.key, (views = new Map()));
  let v = views.get(field);
  if (!v) {
    v = columnsOf(a).then((cols) => weightedView(a.explorer.data, cols, field));
    views.set(field, v);
    v.catch(() => views.delete(field));
  }
  return v;
}
