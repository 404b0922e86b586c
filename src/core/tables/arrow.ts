/**
 * The capture's tables (schema.ts) as Arrow IPC streams: what the ingest worker hands the SQL
 * pane's DuckDB (`insertArrowFromIPCStream`, one stream per table). Columnar from the tables'
 * typed arrays: numbers go in as their own buffers (int64 written from the Float64Array of safe
 * integers as two 32-bit words per value), strings as dictionaries over the capture's own string
 * tables (one Utf8 vector per dictionary, Int32 codes per row), nulls as Arrow validity bitmaps.
 * One record batch per table. No DOM, no Node: runs in the worker, in Node and in tests.
 */
import {
  Bool,
  Dictionary,
  Field,
  Float64,
  Int32,
  Int64,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
  Utf8,
  Vector,
  type Data,
  type DataType,
} from 'apache-arrow';
import { dictArray, type ColumnSpec, type ColumnValues, type TableData } from './schema.ts';

/** One table as Arrow IPC stream bytes. */
export interface TableIpc {
  name: string;
  rows: number;
  ipc: Uint8Array;
}

/** Arrow's validity bitmap (bit i of byte i>>3, 1 = valid) from one byte per row (0 = null), and the nulls counted. */
export function validityBitmap(valid: Uint8Array, rows: number): { bitmap: Uint8Array; nulls: number } {
  const bitmap = new Uint8Array((rows + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < rows; i++) {
    if (valid[i] !== 0) bitmap[i >> 3] |= 1 << (i & 7);
    else nulls++;
  }
  return { bitmap, nulls };
}

/** Little-endian int64 words from safe integers (a null row's meaningless value, NaN included, becomes 0). */
export function int64Words(values: Float64Array, rows: number): BigInt64Array {
  const words = new Uint32Array(rows * 2);
  for (let i = 0; i < rows; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) continue;
    const hi = Math.floor(v / 4294967296);
    words[2 * i] = v - hi * 4294967296;
    words[2 * i + 1] = hi >>> 0;
  }
  return new BigInt64Array(words.buffer);
}

/**
 * A Utf8 vector's data straight from the strings: offsets and UTF-8 bytes. (apache-arrow's
 * builders, vectorFromArray among them, compile their null test with `new Function`, which the
 * page's CSP refuses.)
 */
export function utf8Data(strings: readonly string[]): Data<Utf8> {
  const enc = new TextEncoder();
  const offsets = new Int32Array(strings.length + 1);
  let cap = 16;
  for (const s of strings) cap += s.length * 3;
  const bytes = new Uint8Array(cap);
  let at = 0;
  for (let i = 0; i < strings.length; i++) {
    at += enc.encodeInto(strings[i], bytes.subarray(at)).written;
    offsets[i + 1] = at;
  }
  return makeData({ type: new Utf8(), length: strings.length, nullCount: 0, valueOffsets: offsets, data: bytes.subarray(0, at) });
}

function packBools(values: Uint8Array, rows: number): Uint8Array {
  const out = new Uint8Array((rows + 7) >> 3);
  for (let i = 0; i < rows; i++) if (values[i] !== 0) out[i >> 3] |= 1 << (i & 7);
  return out;
}

/** Codes as Arrow may hold them: a null row's code (-1) becomes 0, copying only when there is one. */
function safeCodes(codes: Int32Array, rows: number, dictSize: number): Int32Array {
  let bad = false;
  for (let i = 0; i < rows && !bad; i++) bad = codes[i] < 0 || codes[i] >= dictSize;
  if (!bad) return codes.length === rows ? codes : codes.subarray(0, rows);
  const out = new Int32Array(rows);
  for (let i = 0; i < rows; i++) {
    const c = codes[i];
    out[i] = c >= 0 && c < dictSize ? c : 0;
  }
  return out;
}

function columnData(spec: ColumnSpec, v: ColumnValues, rows: number, dictId: number): { type: DataType; data: Data } {
  const nb = v.valid ? validityBitmap(v.valid, rows) : null;
  const nullProps = nb && nb.nulls > 0 ? { nullBitmap: nb.bitmap, nullCount: nb.nulls } : { nullCount: 0 };
  switch (v.type) {
    case 'int32': {
      const type = new Int32();
      return { type, data: makeData({ type, length: rows, data: v.values.subarray(0, rows), ...nullProps }) };
    }
    case 'int64': {
      const type = new Int64();
      const words = v.values instanceof BigInt64Array ? v.values.subarray(0, rows) : int64Words(v.values, rows);
      return { type, data: makeData({ type, length: rows, data: words, ...nullProps }) };
    }
    case 'float64': {
      const type = new Float64();
      return { type, data: makeData({ type, length: rows, data: v.values.subarray(0, rows), ...nullProps }) };
    }
    case 'bool': {
      const type = new Bool();
      return { type, data: makeData({ type, length: rows, data: packBools(v.values, rows), ...nullProps }) };
    }
    case 'utf8': {
      // an empty dictionary (every row null, or no rows) still needs an entry for the codes to point at
      const dict = v.dict.length > 0 ? dictArray(v.dict) : [''];
      const type = new Dictionary(new Utf8(), new Int32(), dictId, false);
      const dictionary = new Vector([utf8Data(dict)]);
      return { type, data: makeData({ type, length: rows, data: safeCodes(v.codes, rows, dict.length), dictionary, ...nullProps }) };
    }
  }
  throw new Error(`column ${spec.name}: no Arrow type for ${(v as { type: string }).type}`);
}

/** One table as an Arrow Table: its spec's columns, names and nullability, in order. */
export function tableToArrow(t: TableData): Table {
  const fields: Field[] = [];
  const children: Data[] = [];
  t.spec.columns.forEach((c, k) => {
    const v = t.columns[k];
    if (!v || v.type !== c.type) throw new Error(`table ${t.spec.name}: column ${c.name} is ${v?.type ?? 'missing'}, not ${c.type}`);
    const { type, data } = columnData(c, v, t.rows, k);
    fields.push(new Field(c.name, type, c.nullable));
    children.push(data);
  });
  const schema = new Schema(fields);
  const struct = makeData({ type: new Struct(fields), length: t.rows, nullCount: 0, children });
  return new Table(schema, [new RecordBatch(schema, struct)]);
}

/** Each table as Arrow IPC stream bytes (`insertArrowFromIPCStream`, `RecordBatchReader.from`). */
export function tablesToIpc(tables: readonly TableData[]): TableIpc[] {
  return tables.map((t) => ({ name: t.spec.name, rows: t.rows, ipc: tableToIPC(tableToArrow(t), 'stream') }));
}
