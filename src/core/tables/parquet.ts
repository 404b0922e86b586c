/**
 * A table of schema.ts as Parquet, through hyparquet-writer's incremental ParquetWriter: row
 * groups of ROW_GROUP rows, each made from its slice of the columns (strings looked up in the
 * column's dictionary, as UTF-8 bytes where the group is ASCII; int64 as BigInt; nulls where the
 * validity mask says), a column when the writer comes to it, so what is held at once beyond the
 * columns themselves is one column of one row group, whatever the table's size.
 * Plain Parquet (no extension, snappy): DuckDB, Spark, Trino, BigQuery read it as it is.
 */
import { ByteWriter, ParquetWriter, type ColumnSource, type SchemaElement, type Writer } from 'hyparquet-writer';
import { dictAt, type ColumnType, type ColumnValues, type Dict, type TableData } from './schema.ts';

export const ROW_GROUP = 1 << 17;

const PHYSICAL: Record<ColumnType, Pick<SchemaElement, 'type' | 'converted_type'>> = {
  int32: { type: 'INT32' },
  int64: { type: 'INT64' },
  float64: { type: 'DOUBLE' },
  utf8: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  bool: { type: 'BOOLEAN' },
};

/** The Parquet schema of a table: every column OPTIONAL where it may be null, else REQUIRED. */
export function parquetSchema(t: TableData): SchemaElement[] {
  return [
    { name: 'root', num_children: t.spec.columns.length },
    ...t.spec.columns.map((c): SchemaElement => ({ name: c.name, ...PHYSICAL[c.type], repetition_type: c.nullable ? 'OPTIONAL' : 'REQUIRED' })),
  ];
}

function hasNull(valid: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!valid[i]) return true;
  return false;
}

/** Rows [from, to) of a column as the writer takes them (`base`: the table's row of the column's first, for a fault's message). */
function slice(c: ColumnValues, from: number, to: number, where: string, base = 0): ColumnSource['data'] {
  const n = to - from;
  // a group without a null goes as a typed array (what the writer takes for a column without
  // nulls, the same bytes), not as a JS array of numbers, or of a BigInt per row
  const valid = c.valid && hasNull(c.valid, from, to) ? c.valid : null;
  if (c.type === 'int32' || c.type === 'float64') {
    if (!valid) return c.values.slice(from, to);
    const out: (number | null)[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = valid[from + i] ? c.values[from + i] : null;
    return out;
  }
  if (c.type === 'int64') {
    const vs = c.values;
    if (vs instanceof BigInt64Array) {
      if (!valid) return vs.slice(from, to);
      const out: (bigint | null)[] = new Array(n);
      for (let i = 0; i < n; i++) out[i] = valid[from + i] ? vs[from + i] : null;
      return out;
    }
    if (!valid) {
      const out = new BigInt64Array(n);
      for (let i = 0; i < n; i++) out[i] = BigInt(vs[from + i]);
      return out;
    }
    const out: (bigint | null)[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = valid[from + i] ? BigInt(vs[from + i]) : null;
    return out;
  }
  if (c.type === 'bool') {
    const out: (boolean | null)[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = valid && !valid[from + i] ? null : c.values[from + i] !== 0;
    return out;
  }
  const bytes = utf8Rows(c, from, to, where, base);
  if (bytes) return bytes;
  const out: (string | null)[] = new Array(n);
  for (let i = 0; i < n; i++) {
    if (valid && !valid[from + i]) {
      out[i] = null;
      continue;
    }
    const v = dictAt(c.dict, c.codes[from + i]);
    if (v === undefined) throw outsideDict(c, where, base + from + i, c.codes[from + i]);
    out[i] = v;
  }
  return out;
}

/** A code outside the column's dictionary on a row that is not null: a fault of the table's builder, said with its row (not left to the writer's 'expected Uint8Array value'). */
const outsideDict = (c: { codes: Int32Array; dict: Dict }, where: string, row: number, code: number) =>
  new Error(`${where} row ${row}: code ${code} is outside the column's dictionary of ${c.dict.length} and the row is not null`);

/**
 * Rows [from, to) of a utf8 column as UTF-8 bytes, for a row group whose values are all ASCII
 * (else null: the group goes as strings). Each distinct value of the group is made once, a view
 * into one buffer, and every row of it is that view; the writer then neither encodes each value
 * of its dictionary into an ArrayBuffer of its own (TextEncoder) nor keeps a string per row alive
 * for the whole group (a frame key is made, copied and dropped), which with 131,072 distinct
 * frames a group was most of what an export of the largest dump held past summary's (issue 34,
 * 15). The file is the same byte for byte: for ASCII a string's length (what the writer sizes
 * pages and dictionaries by) is its byte count, and its order (min/max) is its bytes' order.
 */
function utf8Rows(
  c: { codes: Int32Array; dict: Dict; valid: Uint8Array | null },
  from: number,
  to: number,
  where: string,
  base: number,
): (Uint8Array | null)[] | null {
  const n = to - from;
  const { codes, valid } = c;
  const slotOf = new Map<number, number>();
  const ends: number[] = [];
  const rowSlot = new Int32Array(n);
  let buf = new Uint8Array(1 << 16);
  let len = 0;
  for (let i = 0; i < n; i++) {
    if (valid && !valid[from + i]) {
      rowSlot[i] = -1;
      continue;
    }
    const code = codes[from + i];
    let k = slotOf.get(code);
    if (k === undefined) {
      const v = dictAt(c.dict, code);
      if (v === undefined) throw outsideDict(c, where, base + from + i, code);
      if (len + v.length > buf.length) {
        const grown = new Uint8Array(Math.max(buf.length * 2, len + v.length));
        grown.set(buf.subarray(0, len));
        buf = grown;
      }
      for (let j = 0; j < v.length; j++) {
        const ch = v.charCodeAt(j);
        if (ch > 0x7f) return null;
        buf[len++] = ch;
      }
      k = ends.push(len) - 1;
      slotOf.set(code, k);
    }
    rowSlot[i] = k;
  }
  const views: Uint8Array[] = new Array(ends.length);
  for (let k = 0, at = 0; k < ends.length; at = ends[k++]) views[k] = buf.subarray(at, ends[k]);
  const out: (Uint8Array | null)[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = rowSlot[i] < 0 ? null : views[rowSlot[i]];
  return out;
}

/**
 * The writer keeps each column chunk's min and max until the footer: as views of utf8Rows' buffer
 * they would keep every group's buffer alive, so they become copies of their bytes once the group is written.
 */
function ownBounds(pq: ParquetWriter): void {
  for (const chunk of pq.row_groups.at(-1)?.columns ?? []) {
    const st = chunk.meta_data?.statistics;
    if (!st) continue;
    if (st.min_value instanceof Uint8Array) st.min_value = st.min_value.slice();
    if (st.max_value instanceof Uint8Array) st.max_value = st.max_value.slice();
  }
}

/** Key-value metadata in each file's footer: which table, which capture (parquet-footer.ts reads it back). */
export const META_TABLE = 'stackmap_explorer.table';
export const META_CAPTURE = 'stackmap_explorer.capture_id';

/**
 * Writes the table to `writer` (finished at the end) as one Parquet file, with the table's name
 * and `captureId` in the footer's key-value metadata.
 */
export async function writeParquet(t: TableData, writer: Writer, opts: { captureId: string; rowGroup?: number; scratch?: boolean }): Promise<void> {
  const rowGroup = opts.rowGroup ?? ROW_GROUP;
  // a table without rows: written in memory (it is only its footer) and its empty row group list typed (emptyRowGroupsTyped)
  const empty = t.rows === 0;
  const target: Writer = empty ? new ByteWriter() : writer;
  const pq = new ParquetWriter({
    writer: target,
    // scratch: a file read once and deleted (cli sql's temp folder), so no min/max statistics and no compression
    ...(opts.scratch ? { codec: 'UNCOMPRESSED', statistics: false } : {}),
    schema: parquetSchema(t),
    createdBy: 'stackmap explorer',
    kvMetadata: [
      { key: META_TABLE, value: t.spec.name },
      { key: META_CAPTURE, value: opts.captureId },
    ],
  });
  // a table without rows is a file with the schema and no row group
  for (let from = 0; from < t.rows; from += rowGroup) {
    const to = Math.min(t.rows, from + rowGroup);
    // a table made a row group at a time (build.ts: frames) gives this group's rows alone
    const part = t.rowsIn ? t.rowsIn(from, to) : null;
    const columnData = t.spec.columns.map((c, k): ColumnSource => ({
      name: c.name,
      // made when the writer comes to the column (it writes them one after another) and not kept:
      // one column's values of the group alive at once, not every column's (issue 34, 15)
      get data() {
        return part ? slice(part[k], 0, to - from, `${t.spec.name}.${c.name}`, from) : slice(t.columns[k], from, to, `${t.spec.name}.${c.name}`);
      },
      ...(c.distinct && { encoding: 'PLAIN' as const, statistics: false }),
    }));
    await pq.write({ columnData, rowGroupSize: to - from });
    ownBounds(pq);
    // a macrotask between row groups: the host's events (a Ctrl-C, a cancel) are not held up until the whole table is written
    if (to < t.rows) await new Promise((r) => setTimeout(r, 0));
  }
  await pq.finish();
  if (empty) {
    writer.appendBytes(emptyRowGroupsTyped(target.getBytes()));
    await writer.finish();
  }
}

/**
 * hyparquet-writer 0.17 writes an empty Thrift list with element type 0, so a file without rows
 * has `row_groups` as an empty list of no type, which arrow-rs (parquet-wasm, DataFusion, Polars)
 * refuses ("Expected list element type of Struct but got Byte"; DuckDB and pyarrow accept it).
 * In the footer's compact protocol, num_rows 0 then row_groups is `16 00 19 00` (field 3, i64 0;
 * field 4, a list of 0 elements, type 0): the list header becomes 0x0C, 0 structs. The bytes are
 * control characters, never in a column name or the key-value metadata; anything else is left as it is.
 * package.json pins hyparquet-writer to exactly 0.17.0: a new version could write the footer
 * otherwise; upgrade by hand, with this file's tests (parquet-wasm reads the empty table).
 */
export function emptyRowGroupsTyped(file: Uint8Array): Uint8Array {
  const n = file.length;
  if (n < 12) return file;
  const len = new DataView(file.buffer, file.byteOffset, n).getUint32(n - 8, true);
  const start = n - 8 - len;
  if (start < 4) return file;
  const at: number[] = [];
  for (let i = start; i + 3 < n - 8; i++) if (file[i] === 0x16 && file[i + 1] === 0x00 && file[i + 2] === 0x19 && file[i + 3] === 0x00) at.push(i + 3);
  if (at.length !== 1) return file;
  const out = file.slice();
  out[at[0]] = 0x0c;
  return out;
}
