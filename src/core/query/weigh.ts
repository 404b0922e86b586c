import { fieldInteger, payloadFields } from '../formats/payload-fields.ts';
import { int32 } from '../capture/trace-columns.ts';
import type { ExplorerData } from './explorer-data.ts';
import type { FlameWeight, Selection } from './api.ts';
import { isOccurrence, SelectionFilter } from './selection.ts';

/**
 * What a stack weighs (DESIGN 5.5): its occurrences, the dumps' ref_count, perf's period, or
 * `field:NAME`, the sum of a numeric field of its events' payloads (`bytes_alloc`, `len`, ...).
 */
export type WeightBy = FlameWeight | `field:${string}`;
/** A root frame per value: the task (comm), the process (TGID), the event's name, or a field's value. */
export type GroupBy = 'task' | 'process' | 'event' | `field:${string}`;

/** `occurrences`, `ref_count` (or `refcount`), `period`, `field:NAME`; null for anything else. */
export function parseWeightBy(s: string): WeightBy | null {
  if (s === 'occurrences' || s === 'period' || s === 'refcount') return s;
  if (s === 'ref_count') return 'refcount';
  const f = fieldOf(s);
  return f === null ? null : `field:${f}`;
}

/** `task`, `process`, `event`, `field:NAME`; null for anything else. */
export function parseGroupBy(s: string): GroupBy | null {
  if (s === 'task' || s === 'process' || s === 'event') return s;
  const f = fieldOf(s);
  return f === null ? null : `field:${f}`;
}

/** NAME of `field:NAME` when NAME is a payload key (payload-fields.ts: an identifier, dots allowed) */
export function fieldOf(s: string): string | null {
  const m = /^field:([A-Za-z_][A-Za-z0-9_.]*)$/.exec(s);
  return m ? m[1] : null;
}

/**
 * Per event, the value of its payload's field `name` as a number (decimal or 0x hex, fieldInteger),
 * NaN where the event has no such field or its value is not a number. Payloads are there only
 * when the load kept them (LoadOptions.details): without them every event is NaN.
 */
export function fieldValues(d: ExplorerData, name: string): Float64Array {
  return payloadFieldValues(d.t.details, d.ev.ts.length, name);
}

/** The same from the payloads a load kept (`details`) for `n` events, without the explorer's columns. */
export function payloadFieldValues(det: { length: number; payload: readonly string[] } | null | undefined, n: number, name: string): Float64Array {
  const out = new Float64Array(n).fill(NaN);
  if (!det) return out;
  const m = Math.min(n, det.length);
  for (let e = 0; e < m; e++) {
    const p = det.payload[e];
    // most payloads lack the key: skip the split for them
    if (!p.includes(name)) continue;
    payloadFields(p, (k, v) => {
      if (k === name && out[e] !== out[e]) out[e] = fieldInteger(v);
    });
  }
  return out;
}

/** Per event its group (an index into names; -1: none), with what the grouping had to say. */
export interface EventGroups {
  of: Int32Array;
  names: string[];
  /** e.g. that the trace has no TGID column and pids stood in */
  notes: string[];
}

/**
 * The groups of `by` per event. 'task': the comm; 'event': the event's name; 'process': the
 * TGID (`comm-TGID`, comm the leader's, pid = TGID, or else the first seen) where the line
 * printed one (details kept), else the event's pid (`comm-PID`), said in a note; 'field:NAME':
 * the field's text as printed, `[no NAME]` for events without it (counted in a note).
 */
export function eventGroups(d: ExplorerData, by: GroupBy): EventGroups {
  const n = d.ev.ts.length;
  if (by === 'task') return { of: int32(d.ev.task), names: d.t.tasks.strings, notes: [] };
  if (by === 'event') return { of: d.ev.name, names: d.t.names.strings, notes: [] };
  const of = new Int32Array(n).fill(-1);
  const names: string[] = [];
  const notes: string[] = [];
  const det = d.t.details;
  if (by === 'process') {
    const byId = new Map<number, number>();
    const leader = new Map<number, string>();
    const leaderSeen = new Set<number>();
    let noTgid = 0;
    for (let e = 0; e < n; e++) {
      const t = det && e < det.length ? det.tgid.get(e) : -1;
      const id = t >= 0 ? t : d.ev.pid[e];
      if (t < 0) noTgid++;
      let g = byId.get(id);
      const comm = d.t.tasks.strings[d.ev.task[e]];
      if (g === undefined) {
        byId.set(id, (g = names.length));
        names.push('');
        leader.set(id, comm);
      }
      if (d.ev.pid[e] === id && !leaderSeen.has(id)) {
        leaderSeen.add(id);
        leader.set(id, comm);
      }
      of[e] = g;
    }
    for (const [id, g] of byId) names[g] = `${leader.get(id)}-${id}`;
    if (n > 0 && noTgid === n) notes.push('the trace has no TGID column: processes are grouped by pid');
    else if (noTgid > 0) notes.push(`${noTgid} event${noTgid === 1 ? ' has' : 's have'} no TGID: grouped by ${noTgid === 1 ? 'its' : 'their'} pid`);
    return { of, names, notes };
  }
  // the field's text per event, read from the payloads
  const field = by.slice('field:'.length);
  const byValue = new Map<string, number>();
  for (let e = 0; e < n; e++) {
    let v: string | null = null;
    const p = det && e < det.length ? det.payload[e] : '';
    if (p.includes(field)) {
      payloadFields(p, (k, val) => {
        if (k === field && v === null) v = val;
      });
    }
    if (v === null) continue;
    let g = byValue.get(v);
    if (g === undefined) (byValue.set(v, (g = names.length)), names.push(v));
    of[e] = g;
  }
  return fieldGroups({ of, names }, field);
}

/**
 * Groups by a field's text as printed, given per event (`texts.of`, -1 where the event lacks it:
 * the payloads read here, or field-columns.ts texts): `[no NAME]` for events without it (counted
 * in a note), the groups in the order their first events come.
 */
export function fieldGroups(texts: { of: Int32Array; names: readonly string[] }, field: string): EventGroups {
  const n = texts.of.length;
  const of = new Int32Array(n);
  const names: string[] = [];
  // per text (and, last, the missing), its group
  const groupOf = new Int32Array(texts.names.length + 1).fill(-1);
  let missing = 0;
  for (let e = 0; e < n; e++) {
    const t = texts.of[e];
    if (t < 0) missing++;
    const k = t < 0 ? texts.names.length : t;
    let g = groupOf[k];
    if (g < 0) ((groupOf[k] = g = names.length), names.push(t < 0 ? `[no ${field}]` : texts.names[t]));
    of[e] = g;
  }
  const notes = missing ? [`${missing} event${missing === 1 ? ' has' : 's have'} no ${field}: grouped as [no ${field}]`] : [];
  return { of, names, notes };
}

/** How records are weighed and grouped. */
export interface WeighOptions {
  /** the records taken: the selection's occurrences (resolved and unverified cookies, full stacks) */
  selection: Selection | SelectionFilter;
  /** occurrences, ref_count or period when eventWeights is absent */
  weight: FlameWeight;
  /**
   * per event its weight (fieldValues), or a function of the event: NaN (or a record without
   * an event) weighs 0 and is counted in `unweighed`. Given, it replaces `weight`.
   */
  eventWeights?: Float64Array | ((e: number) => number) | null;
  /** a row per group and stack (the group by each record's event; -1 where it has none) */
  groups?: EventGroups | null;
  /** records to leave out beyond the selection (the command line's --pid, --event) */
  accept?: (r: number) => boolean;
}

export interface WeighedRow {
  /** index into the groups' names; -1 without groups (or for a record without an event) */
  group: number;
  stack: number;
  count: number;
  weight: number;
  /** of count, records whose event weighed 0 for want of a numeric field */
  unweighed: number;
}

export interface Weighed {
  /** heaviest first (ties: more records, then the row seen first) */
  rows: WeighedRow[];
  /** records counted */
  total: number;
  totalWeight: number;
  unweighed: number;
}

/**
 * The selection's stack occurrences, a row per (group, stack), each with its records and their
 * summed weight. 'refcount' is a stack's, not an event's: a row weighs its stack's ref_count
 * summed over the dumps of the generations the counted records fall in (as flame.ts's
 * stackWeights), and cannot be split by group (an error).
 */
export function weighStacks(d: ExplorerData, o: WeighOptions): Weighed {
  const f = o.selection instanceof SelectionFilter ? o.selection : new SelectionFilter(o.selection);
  const ew = o.eventWeights ?? null;
  const byArray = ew instanceof Float64Array ? ew : null;
  const byFn = typeof ew === 'function' ? ew : null;
  // a field's weight without its per-event numbers: the record weights of a view weighed by it (weighted-view.ts)
  const kind = ew ? 'event' : o.weight.startsWith('field:') ? 'period' : o.weight;
  if (kind === 'refcount' && o.groups) throw new Error('ref_count weighs a stack, not an event: it cannot be split by group');
  const groupOf = o.groups?.of ?? null;
  // a row's key: stack and group in one number (exact: nodes times groups stays far below 2^53)
  const groupKeys = (o.groups?.names.length ?? 0) + 1;
  const recEvent = d.t.recEvent.raw();
  const { status, stack } = d.rec;
  // read only to weigh by period: a capture without weights makes no column of them otherwise
  const recWeight = kind === 'period' ? d.recWeight : null;
  const rows: WeighedRow[] = [];
  const at = new Map<number, number>();
  const gens = new Set<number>();
  let total = 0;
  let totalWeight = 0;
  let unweighed = 0;
  d.eachRecord(f, (r) => {
    if (!isOccurrence(status[r])) return;
    const s = stack[r];
    if (s < 0) return;
    if (o.accept && !o.accept(r)) return;
    const e = recEvent[r];
    const g = groupOf && e >= 0 ? groupOf[e] : -1;
    const key = s * groupKeys + g + 1;
    let i = at.get(key);
    if (i === undefined) {
      at.set(key, (i = rows.length));
      rows.push({ group: g, stack: s, count: 0, weight: 0, unweighed: 0 });
    }
    const row = rows[i];
    row.count++;
    total++;
    let w = 0;
    if (kind === 'occurrences') w = 1;
    else if (kind === 'period') w = recWeight![r];
    else if (kind === 'refcount') gens.add(d.recGen[r]);
    else {
      w = e < 0 ? NaN : byArray ? byArray[e] : byFn!(e);
      if (w !== w) {
        w = 0;
        row.unweighed++;
        unweighed++;
      }
    }
    row.weight += w;
    totalWeight += w;
  });
  if (kind === 'refcount') {
    for (const row of rows) {
      row.weight = d.refs.count(row.stack, gens) ?? 0;
      totalWeight += row.weight;
    }
  }
  const order = rows.map((_, i) => i);
  order.sort((a, b) => rows[b].weight - rows[a].weight || rows[b].count - rows[a].count || a - b);
  return { rows: order.map((i) => rows[i]), total, totalWeight, unweighed };
}
