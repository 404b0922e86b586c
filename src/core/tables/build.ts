/**
 * Fills the tables of schema.ts from an ExplorerData: each column one pass over the explorer's
 * typed arrays, strings as dictionaries over the capture's own string tables (tasks, event
 * names, frame keys, functions), so no table makes an object or a string per event.
 */
import type { Diagnostic } from '../formats/diagnostics.ts';
import type { ExplorerData } from '../query/explorer-data.ts';
import type { FileReport } from '../capture/ingest.ts';
import { segmentsOf } from '../capture/segments.ts';
import { isOccurrence, NO_GEN } from '../query/selection.ts';
import { stackHash } from '../query/stack-hash.ts';
import { TABLE_NAMES, tableSpec, type ColumnValues, type Dict, type TableData, type TableName, type TableSpec } from './schema.ts';
import type { Explorer } from '../query/explorer.ts';
import { RecordKind, STATUS_NAMES } from '../capture/trace-columns-data.ts';
import { int32 as widen } from '../capture/trace-columns.ts';
import { nanosecondsOf } from './ns-time.ts';
import { MAX_TS_NS_SECONDS } from '../formats/trace-text-shared.ts';
import { Growable } from '../base/growable.ts';
import type { SlotMap } from '../capture/slot-map.ts';
import { fieldInteger, payloadFields } from '../formats/payload-fields.ts';

/** The record kinds by RecordKind value (trace-columns.ts): the `kind` columns' values. */
export const KIND_NAMES = ['cookie-v7', 'cookie-v8', 'full', 'user'] as const;

type Columns = Record<string, ColumnValues>;

const int32 = (values: Int32Array, valid: Uint8Array | null = null): ColumnValues => ({ type: 'int32', values, valid });
const int64 = (values: Float64Array | Int32Array, valid: Uint8Array | null = null): ColumnValues => ({
  type: 'int64',
  // generations may be held as int32 (ExplorerData): the column's values are doubles
  values: values instanceof Float64Array ? values : new Float64Array(values),
  valid,
});
const utf8 = (codes: Int32Array, dict: Dict, valid: Uint8Array | null = null): ColumnValues => ({ type: 'utf8', codes, dict, valid });

/**
 * The frame keys as a dictionary whose strings are made when a row asks (FrameTable.name): a dump
 * of the largest map with random frames has 16.7M of them, which as strings held at once took
 * most of an export's memory (issue 34, 15); a writer asks one row group's worth at a time.
 */
function frameKeys(d: ExplorerData): Dict {
  const frames = d.stacks.frames;
  return { length: frames.size, at: (f: number) => frames.name(f) };
}

/** 0, 1, ..., n - 1 */
function iota(n: number): Int32Array {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

/** A utf8 column of plain strings (the small tables): a dictionary of the distinct ones. */
function strings(values: readonly string[]): ColumnValues {
  const index = new Map<string, number>();
  const dict: string[] = [];
  const codes = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    let k = index.get(values[i]);
    if (k === undefined) index.set(values[i], (k = dict.push(values[i]) - 1));
    codes[i] = k;
  }
  return utf8(codes, dict);
}

/** An int64 column of numbers or nulls (the small tables). */
function nullableInt64(values: readonly (number | null)[]): ColumnValues {
  const out = new Float64Array(values.length);
  const valid = new Uint8Array(values.length);
  let nulls = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null) nulls++;
    else ((out[i] = v), (valid[i] = 1));
  }
  return int64(out, nulls ? valid : null);
}

/** Null where the value is `none`. */
function maskOf(values: ArrayLike<number>, none: number): Uint8Array | null {
  let any = false;
  const valid = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) {
    if (values[i] === none) any = true;
    else valid[i] = 1;
  }
  return any ? valid : null;
}

interface Hashes {
  /** stack node -> code into dict, -1 for a node that is no row of `stacks` */
  codeOf: Int32Array;
  /** stack_hash per code */
  dict: Dict;
  /** stack node per code */
  stacks: Int32Array;
}

// per explorer: every table's stack_hash column shares one dictionary
const hashesOf = new WeakMap<ExplorerData, Hashes>();

const hex8 = (x: number) => x.toString(16).padStart(8, '0');

/**
 * The stacks some source holds, in first-seen order: the records' (resolved and unverified
 * cookies, full stacks), then the dump slots' (by generation, then the generation-less dumps).
 * Their hashes are held as two 32-bit halves and printed when a row asks (stackHash's 16
 * lowercase hex digits, the same string): the largest dump's 262,144 hashes as strings (and
 * stackHashOf's memo of them) were a third of what an export held on its heap while writing, and
 * V8 lets the heap grow in proportion to what it holds (issue 34, 15).
 */
function hashes(d: ExplorerData): Hashes {
  let h = hashesOf.get(d);
  if (h) return h;
  const codeOf = new Int32Array(d.node.parent.length).fill(-1);
  const hi = new Growable(Uint32Array);
  const lo = new Growable(Uint32Array);
  const order = new Growable(Int32Array);
  const add = (s: number) => {
    if (s < 0 || codeOf[s] >= 0) return;
    codeOf[s] = order.length;
    const x = stackHash(d.stacks.framesOf(s));
    hi.push(parseInt(x.slice(0, 8), 16));
    lo.push(parseInt(x.slice(8), 16));
    order.push(s);
  };
  const { stack, status } = d.rec;
  for (let r = 0; r < stack.length; r++) if (isOccurrence(status[r])) add(stack[r]);
  eachSlot(d, (_g, _slot, m, i) => add(m.stackAt(i)));
  const his = hi.view();
  const los = lo.view();
  const dict: Dict = { length: his.length, at: (k: number) => hex8(his[k]) + hex8(los[k]) };
  h = { codeOf, dict, stacks: order.view() };
  hashesOf.set(d, h);
  return h;
}

/** A dump's entries in slot order: indices into its SlotMap (kept as they are when already in order). */
function slotOrder(m: SlotMap): Int32Array {
  const order = new Int32Array(m.size);
  let sorted = true;
  for (let i = 0; i < order.length; i++) {
    order[i] = i;
    if (i > 0 && m.slotAt(i) < m.slotAt(i - 1)) sorted = false;
  }
  if (!sorted) order.sort((a, b) => m.slotAt(a) - m.slotAt(b));
  return order;
}

/**
 * Every dump slot: generations ascending, each's slots ascending, then each generation-less
 * dump's; entry `i` of `m` (its stackAt, refCountAt). By entry, not as [slot, DumpSlot] pairs: the
 * largest map's 262,144 slots made a pair and a view each, the peak of an export (issue 34, 15).
 */
function eachSlot(d: ExplorerData, fn: (gen: number, slot: number, m: SlotMap, i: number) => void): void {
  const dumps = d.capture.dumps;
  const each = (gen: number, m: SlotMap) => {
    for (const i of slotOrder(m)) fn(gen, m.slotAt(i), m, i);
  };
  for (const gd of [...dumps.byGeneration.values()].sort((a, b) => a.generation - b.generation)) each(gd.generation, gd.slots);
  for (const gl of dumps.generationless) each(NO_GEN, gl.slots);
}

/** The record columns every per-record or per-event view needs, gathered through `recOf` (-1: no record). */
function recordColumns(d: ExplorerData, n: number, recOf: (i: number) => number): Columns {
  const h = hashes(d);
  const { kind, status, stack, slot } = d.rec;
  const kindCodes = new Int32Array(n);
  const statusCodes = new Int32Array(n);
  const hashCodes = new Int32Array(n);
  const slots = new Float64Array(n);
  const hasRecord = new Uint8Array(n);
  const hasHash = new Uint8Array(n);
  const hasSlot = new Uint8Array(n);
  let missing = 0;
  let unhashed = 0;
  let unslotted = 0;
  for (let i = 0; i < n; i++) {
    const r = recOf(i);
    if (r < 0) {
      kindCodes[i] = statusCodes[i] = hashCodes[i] = -1;
      (missing++, unhashed++, unslotted++);
      continue;
    }
    hasRecord[i] = 1;
    const k = kind[r];
    kindCodes[i] = k;
    statusCodes[i] = status[r];
    const code = isOccurrence(status[r]) && stack[r] >= 0 ? h.codeOf[stack[r]] : -1;
    hashCodes[i] = code;
    if (code >= 0) hasHash[i] = 1;
    else unhashed++;
    if (k === RecordKind.CookieV7 || k === RecordKind.CookieV8) ((slots[i] = slot[r]), (hasSlot[i] = 1));
    else unslotted++;
  }
  return {
    kind: utf8(kindCodes, KIND_NAMES, missing ? hasRecord : null),
    status: utf8(statusCodes, STATUS_NAMES, missing ? hasRecord : null),
    stack_hash: utf8(hashCodes, h.dict, unhashed ? hasHash : null),
    slot: int64(slots, unslotted ? hasSlot : null),
  };
}

/** Each file's rows as nanoseconds (ns-time.ts): microsecond files exact, the others to the nearest nanosecond. */
function nanoseconds(d: ExplorerData, ts: Float64Array, rows: 'events' | 'records'): BigInt64Array {
  const starts = d.t.fileStarts;
  const digits = new Map(d.capture.files.map((f) => [f.file, f.timeDigits]));
  return nanosecondsOf(
    ts,
    starts.map((f, k) => {
      const dg = digits.get(f.file ?? '');
      return { from: f[rows], to: k + 1 < starts.length ? starts[k + 1][rows] : ts.length, micro: dg !== undefined && dg <= 6 };
    }),
  );
}

/**
 * ts_ns where INT64 nanoseconds hold the time: null from 2^63 - 1 ns on (about 292 years), which
 * the trace reader reports line by line, instead of a wrapped number.
 */
function nsValid(ts: Float64Array): Uint8Array | null {
  let valid: Uint8Array | null = null;
  for (let i = 0; i < ts.length; i++) if (!(Math.abs(ts[i]) < MAX_TS_NS_SECONDS)) (valid ??= new Uint8Array(ts.length).fill(1))[i] = 0;
  return valid;
}

function events(d: ExplorerData): { rows: number; columns: Columns } {
  const n = d.eventCount;
  const record = d.ev.record;
  return {
    rows: n,
    columns: {
      event_id: int32(iota(n)),
      ts: { type: 'float64', values: d.ev.ts, valid: null },
      ts_ns: { type: 'int64', values: nanoseconds(d, d.ev.ts, 'events'), valid: nsValid(d.ev.ts) },
      cpu: int32(widen(d.ev.cpu)),
      pid: int32(d.ev.pid),
      tgid: tgids(d, n),
      task: utf8(widen(d.ev.task), d.t.tasks.strings),
      event: utf8(d.ev.name, d.t.names.strings),
      ...recordColumns(d, n, (e) => record[e]),
      generation: int64(d.evGen, maskOf(d.evGen, NO_GEN)),
      payload: payloads(d, n),
    },
  };
}

/** Each event's TGID where the load kept details and the line printed one; null otherwise. */
function tgids(d: ExplorerData, n: number): ColumnValues {
  const det = d.t.details;
  if (!det) return int32(new Int32Array(n), new Uint8Array(n));
  // one entry per event (TraceColumns keeps them in step): a mismatch fails buildTables' row check
  const values = Int32Array.from(det.tgid.raw());
  return int32(values, maskOf(values, -1));
}

function payloads(d: ExplorerData, n: number): ColumnValues {
  const det = d.t.details;
  if (!det) return utf8(new Int32Array(n), [''], new Uint8Array(n));
  return utf8(iota(det.length), det.payload);
}

/** The payloads' fields (payload-fields.ts), one row each; none without kept payloads. */
function args(d: ExplorerData): { rows: number; columns: Columns } {
  const det = d.t.details;
  const ev = new Growable(Int32Array);
  const keyCodes = new Growable(Int32Array);
  const valueCodes = new Growable(Int32Array);
  const ints = new Growable(Float64Array);
  const keys = new Map<string, number>();
  const values = new Map<string, number>();
  const code = (m: Map<string, number>, s: string) => {
    let c = m.get(s);
    if (c === undefined) m.set(s, (c = m.size));
    return c;
  };
  if (det) {
    const list = det.payload;
    for (let e = 0; e < list.length; e++) {
      payloadFields(list[e], (k, v) => {
        ev.push(e);
        keyCodes.push(code(keys, k));
        valueCodes.push(code(values, v));
        ints.push(fieldInteger(v));
      });
    }
  }
  const intValues = ints.view();
  const valid = new Uint8Array(intValues.length);
  for (let i = 0; i < intValues.length; i++) valid[i] = intValues[i] === intValues[i] ? 1 : 0;
  return {
    rows: ev.length,
    columns: {
      event_id: int32(ev.view()),
      key: utf8(keyCodes.view(), [...keys.keys()]),
      value: utf8(valueCodes.view(), [...values.keys()]),
      int_value: int64(intValues, valid),
    },
  };
}

function records(d: ExplorerData): { rows: number; columns: Columns } {
  const n = d.recordCount;
  const recEvent = d.t.recEvent.raw();
  const cols = recordColumns(d, n, (r) => r);
  return {
    rows: n,
    columns: {
      event_id: int32(recEvent, maskOf(recEvent, -1)),
      ts: { type: 'float64', values: d.rec.ts, valid: null },
      ts_ns: { type: 'int64', values: nanoseconds(d, d.rec.ts, 'records'), valid: nsValid(d.rec.ts) },
      cpu: int32(d.rec.cpu),
      pid: int32(d.t.recPid.raw()),
      task: utf8(d.t.recTask.raw(), d.t.tasks.strings),
      ...cols,
      kind: { ...cols.kind, valid: null },
      status: { ...cols.status, valid: null },
      generation: int64(d.recGen, maskOf(d.recGen, NO_GEN)),
    },
  };
}

function stacks(d: ExplorerData): { rows: number; columns: Columns } {
  const h = hashes(d);
  const n = h.stacks.length;
  const depth = new Int32Array(n);
  const leaf = new Int32Array(n);
  const leafFrame = new Int32Array(n);
  // a stack of no frames (a bin record with nr 0, an empty <stack trace>, depth 0 in stack_map,
  // a dump JSON without ips) is the root node: a row of depth 0 whose leaf is null
  let valid: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    const s = h.stacks[i];
    depth[i] = d.node.depth[s];
    if (depth[i] === 0) {
      (valid ??= new Uint8Array(n).fill(1))[i] = 0;
      leafFrame[i] = leaf[i] = -1;
      continue;
    }
    leafFrame[i] = d.node.frame[s];
    leaf[i] = d.fnOfFrame[leafFrame[i]];
  }
  return {
    rows: n,
    columns: {
      stack_hash: utf8(iota(n), h.dict),
      depth: int32(depth),
      leaf: utf8(leaf, d.fnNames, valid),
      leaf_frame: utf8(leafFrame, frameKeys(d), valid),
    },
  };
}

/** Rows of `frames` before each stack of `hashes(d).stacks` (its depths summed), and the total after the last. */
function frameRowStarts(d: ExplorerData): Float64Array {
  const h = hashes(d);
  const starts = new Float64Array(h.stacks.length + 1);
  for (let i = 0; i < h.stacks.length; i++) starts[i + 1] = starts[i] + d.node.depth[h.stacks[i]];
  return starts;
}

function frames(d: ExplorerData): { rows: number; columns: Columns } {
  const starts = frameRowStarts(d);
  const rows = starts[starts.length - 1];
  return { rows, columns: frameRows(d, starts, 0, rows) };
}

/**
 * Rows [from, to) of `frames` alone: what a writer takes a row group at a time, so the 16.7M
 * rows of the largest map's frames are never all columns at once (issue 34, 15).
 */
function frameRows(d: ExplorerData, starts: Float64Array, from: number, to: number): Columns {
  const h = hashes(d);
  const n = to - from;
  const hashCodes = new Int32Array(n);
  const depth = new Int32Array(n);
  const frame = new Int32Array(n);
  const symbol = new Int32Array(n);
  const offset = new Float64Array(n);
  const hasOffset = new Uint8Array(n);
  const frameTable = d.stacks.frames;
  // the stack whose rows hold `from`: the last start at or before it
  let lo = 0;
  let hi = h.stacks.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid] <= from) lo = mid;
    else hi = mid - 1;
  }
  let row = 0;
  for (let i = lo; i < h.stacks.length && row < n; i++) {
    let k = 0;
    for (let node = h.stacks[i]; node > 0; node = d.node.parent[node], k++) {
      const at = starts[i] + k;
      if (at < from) continue;
      if (at >= to) break;
      const f = d.node.frame[node];
      hashCodes[row] = i;
      depth[row] = k;
      frame[row] = f;
      symbol[row] = d.fnOfFrame[f];
      const o = frameTable.offsetOf(f);
      if (o === o) ((offset[row] = o), (hasOffset[row] = 1));
      row++;
    }
  }
  return {
    stack_hash: utf8(hashCodes, h.dict),
    depth: int32(depth),
    frame: utf8(frame, frameKeys(d)),
    symbol: utf8(symbol, d.fnNames),
    offset: int64(offset, hasOffset),
    module: modules(d, symbol),
  };
}

/** Each function's module as a code into `dict` (-1: none), made once per capture. */
const moduleCodes = new WeakMap<ExplorerData, { ofFn: Int32Array; dict: string[] }>();

/** Each frame row's kernel module, by its function (Capture.modules); null where none was named. */
function modules(d: ExplorerData, symbol: Int32Array): ColumnValues {
  const known = d.capture.modules;
  const rows = symbol.length;
  if (!known || known.size === 0) return utf8(new Int32Array(rows), [''], new Uint8Array(rows));
  let m = moduleCodes.get(d);
  if (!m) {
    const dict: string[] = [];
    const codeOf = new Map<string, number>();
    const ofFn = new Int32Array(d.fnNames.length).fill(-1);
    for (let f = 0; f < d.fnNames.length; f++) {
      const name = known.get(d.fnNames[f]);
      if (name === undefined) continue;
      let c = codeOf.get(name);
      if (c === undefined) codeOf.set(name, (c = dict.push(name) - 1));
      ofFn[f] = c;
    }
    moduleCodes.set(d, (m = { ofFn, dict }));
  }
  const { ofFn, dict } = m;
  const codes = new Int32Array(rows);
  const valid = new Uint8Array(rows);
  for (let i = 0; i < rows; i++) {
    const c = ofFn[symbol[i]];
    if (c >= 0) ((codes[i] = c), (valid[i] = 1));
  }
  return utf8(codes, dict.length ? dict : [''], valid);
}

function dumps(d: ExplorerData): { rows: number; columns: Columns } {
  const h = hashes(d);
  const src = d.capture.dumps.sources;
  let n = 0;
  eachSlot(d, () => n++);
  const gen = new Float64Array(n);
  const slots = new Float64Array(n);
  const codes = new Int32Array(n);
  const refs = new Float64Array(n);
  // file and format: dictionaries of the distinct strings in first-seen order (as strings() makes them)
  const file = textCodes(n);
  const format = textCodes(n);
  let r = 0;
  eachSlot(d, (g, slot, m, i) => {
    gen[r] = g;
    slots[r] = slot;
    codes[r] = h.codeOf[m.stackAt(i)];
    refs[r] = m.refCountAt(i);
    const s = src[m.get(slot)!.source];
    file.put(r, s.file);
    format.put(r, s.format);
    r++;
  });
  return {
    rows: n,
    columns: {
      generation: int64(gen, maskOf(gen, NO_GEN)),
      slot: int64(slots),
      stack_hash: utf8(codes, h.dict),
      ref_count: int64(refs),
      file: utf8(file.codes, file.dict),
      format: utf8(format.codes, format.dict),
    },
  };
}

/** A utf8 column filled row by row: `put(row, s)`; its dictionary the distinct strings in first-seen order (as strings()). */
function textCodes(n: number): { codes: Int32Array; dict: string[]; put: (row: number, s: string) => void } {
  const codes = new Int32Array(n);
  const dict: string[] = [];
  const index = new Map<string, number>();
  return {
    codes,
    dict,
    put(row, s) {
      let k = index.get(s);
      if (k === undefined) index.set(s, (k = dict.push(s) - 1));
      codes[row] = k;
    },
  };
}

function stat(d: ExplorerData): { rows: number; columns: Columns } {
  const rows = d.capture.stats.flatMap((s) => s.values.map(([key, value]) => ({ file: s.file, version: s.version, key, value })));
  return {
    rows: rows.length,
    columns: {
      file: strings(rows.map((r) => r.file)),
      version: strings(rows.map((r) => r.version)),
      key: strings(rows.map((r) => r.key)),
      value: strings(rows.map((r) => r.value)),
    },
  };
}

function files(list: readonly FileReport[]): { rows: number; columns: Columns } {
  return {
    rows: list.length,
    columns: {
      file: strings(list.map((f) => f.file)),
      kind: strings(list.map((f) => f.kind)),
      size: int64(Float64Array.from(list, (f) => f.size)),
      lines_used: nullableInt64(list.map((f) => f.lines?.used ?? null)),
      lines_unused: nullableInt64(list.map((f) => f.lines?.unused ?? null)),
      bytes_used: nullableInt64(list.map((f) => f.bytes?.used ?? null)),
      bytes_unused: nullableInt64(list.map((f) => f.bytes?.unused ?? null)),
    },
  };
}

function diagnostics(list: readonly Diagnostic[]): { rows: number; columns: Columns } {
  return {
    rows: list.length,
    columns: {
      file: strings(list.map((x) => x.file)),
      where: strings(list.map((x) => x.where)),
      message: strings(list.map((x) => x.message)),
      count: int64(Float64Array.from(list, (x) => x.count)),
    },
  };
}

/** A source file of a capture as the `captures` table names it. */
export interface CaptureSource {
  /** the path as given (the page: the file's name) */
  path: string;
  size: number;
  /** FNV-1a 64 of every byte (id.ts's contentDigest), 16 hex digits */
  digest: string;
}

/** What the `captures` row says beyond the capture itself: where it came from. */
export interface CaptureOrigin {
  sources: readonly CaptureSource[];
  label?: string | null;
  /** `stackmap-explorer 0.1.0`, or the page */
  exportedBy: string;
}

const nullableUtf8 = (v: string | null): ColumnValues => (v === null ? utf8(new Int32Array([-1]), [], new Uint8Array(1)) : utf8(new Int32Array(1), [v]));

function captures(d: ExplorerData, origin: CaptureOrigin): { rows: number; columns: Columns } {
  // capture.txt's facts: the first capture.txt read (a capture has one)
  const f = d.capture.files.find((r) => r.capture)?.capture ?? null;
  const one = (v: number | null): Float64Array => Float64Array.of(v ?? 0);
  const validIf = (v: unknown) => (v === null || v === undefined ? new Uint8Array(1) : null);
  return {
    rows: 1,
    columns: {
      label: nullableUtf8(origin.label ?? null),
      sources: utf8(new Int32Array(1), [JSON.stringify(origin.sources.map((s) => ({ path: s.path, size: s.size, digest: s.digest })))]),
      source_count: int64(Float64Array.of(origin.sources.length)),
      source_bytes: int64(Float64Array.of(origin.sources.reduce((a, s) => a + s.size, 0))),
      host: nullableUtf8(f?.host ?? null),
      machine: nullableUtf8(f?.machine ?? null),
      kernel_release: nullableUtf8(f?.kernelRelease ?? null),
      captured_at: nullableUtf8(f?.date || null),
      buffer_kb: int64(one(f?.bufferKb ?? null), validIf(f?.bufferKb)),
      cpus: int32(Int32Array.of(f?.cpus ?? 0), validIf(f?.cpus)),
      stack_map: nullableUtf8(f?.stackMap ?? null),
      interrupted: { type: 'bool', values: Uint8Array.of(f?.interrupted ? 1 : 0), valid: validIf(f) },
      events: int64(Float64Array.of(d.eventCount)),
      records: int64(Float64Array.of(d.recordCount)),
      exported_by: utf8(new Int32Array(1), [origin.exportedBy]),
    },
  };
}

/** The capture's own files as sources, where nothing more is known of them (no digest: ''). */
const sourcesOfFiles = (list: readonly FileReport[]): CaptureSource[] =>
  list.filter((f) => !f.file.includes('/')).map((f) => ({ path: f.file, size: f.size, digest: '' }));

/** One table's columns by name (capture_id apart: schema.ts adds it). */
export function buildColumns(
  d: ExplorerData,
  name: TableName,
  opts: { files?: FileReport[]; diagnostics?: Diagnostic[]; origin?: CaptureOrigin },
): { rows: number; columns: Columns } {
  switch (name) {
    case 'events':
      return events(d);
    case 'records':
      return records(d);
    case 'stacks':
      return stacks(d);
    case 'frames':
      return frames(d);
    case 'dumps':
      return dumps(d);
    case 'stat':
      return stat(d);
    case 'files':
      return files(opts.files ?? d.capture.files);
    case 'diagnostics':
      return diagnostics(opts.diagnostics ?? [...d.capture.diagnostics, ...segmentsOf(d.capture).diagnostics]);
    case 'args':
      return args(d);
    case 'captures':
      return captures(d, opts.origin ?? { sources: sourcesOfFiles(opts.files ?? d.capture.files), exportedBy: 'stackmap-explorer' });
  }
}

export interface BuildOptions {
  captureId: string;
  /** the capture's file reports (default: the capture's own; the CLI adds files it could not open) */
  files?: FileReport[];
  /** default: the capture's diagnostics and its segments' (as summary has them) */
  diagnostics?: Diagnostic[];
  /** the `captures` row's sources, label and writer (default: the capture's files by name, no digests) */
  origin?: CaptureOrigin;
  /** only these tables (default: all, in TABLE_NAMES order) */
  only?: readonly TableName[];
}

/**
 * The capture's tables, in TABLE_NAMES order (or `only`'s). With `rowGroups`, a table that can
 * (frames) is made a row group at a time when written (`TableData.rowsIn`): its columns are
 * built whole only if something reads `columns`.
 */
export function buildTables(x: Explorer, opts: BuildOptions & { rowGroups?: boolean }): TableData[] {
  const names = opts.only ?? TABLE_NAMES;
  return names.map((name) => {
    const spec = tableSpec(name);
    if (opts.rowGroups && name === 'frames') {
      const d = x.data;
      const starts = frameRowStarts(d);
      const rows = starts[starts.length - 1];
      let whole: ColumnValues[] | null = null;
      return {
        spec,
        rows,
        get columns(): ColumnValues[] {
          return (whole ??= inSpecOrder(spec, name, rows, frameRows(d, starts, 0, rows), opts.captureId));
        },
        rowsIn: (from: number, to: number) => inSpecOrder(spec, name, to - from, frameRows(d, starts, from, to), opts.captureId),
      };
    }
    const { rows, columns } = buildColumns(x.data, name, opts);
    return { spec, rows, columns: inSpecOrder(spec, name, rows, columns, opts.captureId) };
  });
}

/** A builder's columns in the table's order, capture_id added, each checked against the schema. */
function inSpecOrder(spec: TableSpec, name: TableName, rows: number, columns: Columns, captureId: string): ColumnValues[] {
  return spec.columns.map((c) => {
    const v = c.name === 'capture_id' ? constantUtf8(captureId, rows) : columns[c.name];
    if (!v) throw new Error(`table ${name}: no column ${c.name}`);
    if (v.type !== c.type) throw new Error(`table ${name}: column ${c.name} is ${v.type}, not ${c.type}`);
    const n = v.type === 'utf8' ? v.codes.length : v.values.length;
    if (n !== rows || (v.valid && v.valid.length !== rows)) throw new Error(`table ${name}: column ${c.name} has ${n} rows, not ${rows}`);
    if (v.valid && !c.nullable) throw new Error(`table ${name}: column ${c.name} is not nullable`);
    return v;
  });
}

const constantUtf8 = (s: string, rows: number): ColumnValues => ({ type: 'utf8', codes: new Int32Array(rows), dict: [s], valid: null });
