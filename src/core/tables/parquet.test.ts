import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { ByteWriter, fileWriter, ParquetWriter, parquetWriteBuffer, type ColumnSource } from 'hyparquet-writer';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm/node';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cellAt, type ColumnType, type ColumnValues, type TableData } from './schema.ts';
import { emptyRowGroupsTyped, META_CAPTURE, META_TABLE, parquetSchema, writeParquet } from './parquet.ts';
import { parquetReadObjects } from 'hyparquet';
import { ingestFiles } from '../testing/test-helpers.ts';
import { Explorer } from '../query/explorer.ts';
import { buildTables } from './build.ts';
import { sampleCapture } from '../testing/explorer-fixtures.ts';
import { writeStackMapBin } from '../formats/stack-map-write.ts';

const TYPES: ColumnType[] = ['int32', 'int64', 'float64', 'utf8', 'bool'];

/** A random column of a type, of n rows, with or without nulls. */
const column = (type: ColumnType, n: number, nullable: boolean): fc.Arbitrary<ColumnValues> => {
  const valid = nullable ? fc.uint8Array({ min: 0, max: 1, minLength: n, maxLength: n }) : fc.constant(null);
  switch (type) {
    case 'int32':
      return fc
        .tuple(fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { minLength: n, maxLength: n }), valid)
        .map(([v, ok]) => ({ type, values: Int32Array.from(v), valid: ok }));
    case 'int64':
      return fc
        .tuple(fc.array(fc.maxSafeInteger(), { minLength: n, maxLength: n }), valid)
        .map(([v, ok]) => ({ type, values: Float64Array.from(v), valid: ok }));
    case 'float64':
      return fc
        .tuple(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: n, maxLength: n }), valid)
        .map(([v, ok]) => ({ type, values: Float64Array.from(v.map((x) => (Object.is(x, -0) ? 0 : x))), valid: ok }));
    case 'bool':
      return fc.tuple(fc.uint8Array({ min: 0, max: 1, minLength: n, maxLength: n }), valid).map(([v, ok]) => ({ type, values: v, valid: ok }));
    case 'utf8':
      return fc
        .array(fc.string({ unit: 'grapheme', maxLength: 12 }), { minLength: 1, maxLength: 6 })
        .chain((dict) => fc.tuple(fc.constant(dict), fc.array(fc.nat(dict.length - 1), { minLength: n, maxLength: n }), valid))
        .map(([dict, codes, ok]) => ({ type, codes: Int32Array.from(codes, (c, i) => (ok && !ok[i] ? -1 : c)), dict, valid: ok }));
  }
};

const table = fc
  .integer({ min: 0, max: 40 })
  .chain((n) =>
    fc
      .array(fc.tuple(fc.constantFrom(...TYPES), fc.boolean()), { minLength: 1, maxLength: 5 })
      .chain((cols) =>
        fc.tuple(fc.constant(n), fc.constant(cols), fc.tuple(...cols.map(([t, nullable]) => column(t, n, nullable))), fc.integer({ min: 1, max: 16 })),
      ),
  );

/** The file's rows as arrow-rs reads them (parquet-wasm), cells as DuckDB's rows above give them. */
function arrowRsRows(file: string): unknown[][] {
  const t = tableFromIPC(readParquet(new Uint8Array(readFileSync(file))).intoIPCStream());
  const cols = t.schema.fields.map((_, j) => t.getChildAt(j)!);
  return Array.from({ length: t.numRows }, (_, i) =>
    cols.map((c) => {
      const v = c.get(i);
      return typeof v === 'bigint' ? Number(v) : v;
    }),
  );
}

describe('tables-parquet', () => {
  it('a table without rows reads in arrow-rs (parquet-wasm) and in DuckDB: its row group list is typed (hyparquet-writer leaves it untyped)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smx-pq-empty-'));
    const file = join(dir, 'empty.parquet');
    const t: TableData = {
      spec: {
        name: 'stat',
        doc: '',
        columns: [
          { name: 'a', type: 'int64', nullable: true, doc: '' },
          { name: 'b', type: 'utf8', nullable: false, doc: '' },
        ],
      },
      rows: 0,
      columns: [
        { type: 'int64', values: new Float64Array(0), valid: null },
        { type: 'utf8', codes: new Int32Array(0), dict: [], valid: null },
      ],
    };
    await writeParquet(t, fileWriter(file), { captureId: 'x' });
    expect(arrowRsRows(file)).toEqual([]);
    const schema = tableFromIPC(readParquet(new Uint8Array(readFileSync(file))).intoIPCStream()).schema;
    expect(schema.fields.map((f) => f.name)).toEqual(['a', 'b']);
    const db = await DuckDBInstance.create(':memory:');
    const con = await db.connect();
    try {
      expect((await con.runAndReadAll(`SELECT count(*) FROM read_parquet('${file}')`)).getRowsJS()).toEqual([[0n]]);
    } finally {
      con.closeSync();
      db.closeSync();
    }
  });

  it('hyparquet-writer alone still writes a zero-row file arrow-rs refuses (else emptyRowGroupsTyped goes: upgrade and drop it)', () => {
    // the pinned version's own writer, without this project's patch: the row group list's element
    // type 0. When upstream types it, parquet-wasm reads the file and this test fails, saying the
    // patch in parquet.ts (and the exact pin in package.json) can go.
    const bytes = new Uint8Array(parquetWriteBuffer({ columnData: [{ name: 'a', data: [], type: 'INT32' }] }));
    // today: 'Parquet error: Expected list element type of Struct but got Byte' (the list's element type 0)
    expect(
      () => readParquet(bytes),
      "arrow-rs read hyparquet-writer's zero-row file, or failed another way: drop emptyRowGroupsTyped and unpin hyparquet-writer if it read",
    ).toThrow(/list element type/);
    // and the patch is what makes the difference: the same bytes with the list typed read as 0 rows
    expect(tableFromIPC(readParquet(emptyRowGroupsTyped(bytes)).intoIPCStream()).numRows).toBe(0);
  });

  it('any table reads back from its Parquet cell by cell as cellAt gives it (row groups of any size, nulls, every type)', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const con = await db.connect();
    const dir = mkdtempSync(join(tmpdir(), 'smx-pq-'));
    let k = 0;
    try {
      await fc.assert(
        fc.asyncProperty(table, async ([rows, cols, columns, rowGroup]) => {
          const t: TableData = {
            spec: { name: 'stat', doc: '', columns: cols.map(([type, nullable], i) => ({ name: `c${i}`, type, nullable, doc: '' })) },
            rows,
            columns,
          };
          const file = join(dir, `t${k++}.parquet`);
          await writeParquet(t, fileWriter(file), { captureId: 'x', rowGroup });
          const r = await con.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
          const back = r.getRowsJS().map((row) => row.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
          expect(back).toEqual(Array.from({ length: rows }, (_, i) => columns.map((c) => cellAt(c, i))));
          expect(r.columnTypes().map(String)).toEqual(
            cols.map(([type]) => ({ int32: 'INTEGER', int64: 'BIGINT', float64: 'DOUBLE', utf8: 'VARCHAR', bool: 'BOOLEAN' })[type]),
          );
          // and arrow-rs (Rust's Parquet, what DataFusion and Polars read with), through parquet-wasm: empty tables too
          expect(arrowRsRows(file)).toEqual(Array.from({ length: rows }, (_, i) => columns.map((c) => cellAt(c, i))));
        }),
        { numRuns: 60, seed: 3 },
      );
    } finally {
      con.closeSync();
      db.closeSync();
    }
  }, 30_000);

  it("writes the bytes hyparquet-writer makes of the table's cells as plain values, a row group at a time (text as UTF-8 views, a column made when written: issue 34, 15)", async () => {
    // the writer fed as it was before: each column of a group a typed slice without a validity
    // mask, else a JS array of cells (int64 as BigInt, text as strings), every column at once
    const plain = (c: ColumnValues, from: number, to: number): ColumnSource['data'] => {
      if (!c.valid && c.type !== 'utf8' && c.type !== 'bool')
        return c.type === 'int64' ? BigInt64Array.from({ length: to - from }, (_, i) => BigInt(c.values[from + i])) : c.values.slice(from, to);
      return Array.from({ length: to - from }, (_, i) => {
        const v = cellAt(c, from + i);
        return c.type === 'int64' && v !== null ? BigInt(v as number) : v;
      }) as ColumnSource['data'];
    };
    await fc.assert(
      fc.asyncProperty(table, fc.boolean(), async ([rows, cols, columns0, rowGroup], ascii) => {
        // ASCII dictionaries too (the arbitrary's graphemes are mostly not), duplicates and all
        const columns = columns0.map((c) =>
          c.type === 'utf8' && ascii ? { ...c, dict: (c.dict as string[]).map((x) => x.replace(/[^\x00-\x7f]/gu, '?')) } : c,
        );
        const t: TableData = {
          spec: { name: 'stat', doc: '', columns: cols.map(([type, nullable], i) => ({ name: `c${i}`, type, nullable, doc: '' })) },
          rows,
          columns,
        };
        if (rows === 0) return;
        const got = new ByteWriter();
        await writeParquet(t, got, { captureId: 'x', rowGroup });
        const want = new ByteWriter();
        const pq = new ParquetWriter({
          writer: want,
          schema: parquetSchema(t),
          createdBy: 'stackmap explorer',
          kvMetadata: [
            { key: META_TABLE, value: 'stat' },
            { key: META_CAPTURE, value: 'x' },
          ],
        });
        for (let from = 0; from < rows; from += rowGroup) {
          const to = Math.min(rows, from + rowGroup);
          await pq.write({ columnData: t.spec.columns.map((c, k) => ({ name: c.name, data: plain(columns[k], from, to) })), rowGroupSize: to - from });
        }
        await pq.finish();
        expect(Buffer.from(got.getBytes()).equals(Buffer.from(want.getBytes()))).toBe(true);
      }),
      { numRuns: 120, seed: 5 },
    );
  }, 30_000);
});

describe('tables-parquet: a stack of no frames (issue 34, 14)', () => {
  // each source of a stack, listing no frame; the trace's event before it is what the record belongs to
  const trace = [
    '# tracer: nop',
    '#',
    '            bash-1234    [002] ...1.   812.106512: kmem_cache_alloc: call_site=x',
    '            bash-1234    [002] ...1.   812.106530: <stack trace>',
    '            bash-1234    [002] ...1.   812.106540: kmem_cache_alloc: call_site=y',
    '',
  ].join('\n');
  const cases: [string, string, string | Uint8Array][] = [
    ['an empty <stack trace>', 'trace', trace],
    ['[ref 1, depth 0] in stack_map text', 'stack_map', 'stack_id 3 [ref 1, depth 0]\n\n'],
    ['a dump JSON with no ips', 'dump.json', '[{"stack_id": 3, "ref_count": 1, "ips": []}]'],
    [
      'a stack_map_bin record with nr 0',
      'stack_map_bin',
      writeStackMapBin({ version: 1, generation: null, littleEndian: true, records: [{ slot: 3, refCount: 1, ips: [] }] }),
    ],
  ];
  const arrayBufferOf = (file: string): ArrayBuffer => {
    const b = readFileSync(file);
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  };
  // FNV-1a 64 of no bytes is its offset basis (the joined frame keys of no frame are the empty string)
  const EMPTY_HASH = 0xcbf29ce484222325n.toString(16);
  for (const [what, name, content] of cases) {
    for (const [chunk, as] of [
      [0, name],
      [1, name],
      [3, 'unknown'],
    ] as const) {
      it(`${what} (${as}, chunks of ${chunk || 'all'}): a stacks row of depth 0, leaf null, no frames rows; every table writes Parquet`, async () => {
        const c = ingestFiles([[as, content]], chunk);
        expect(c.files.map((f) => f.kind)).toEqual([
          { trace: 'trace_text', stack_map: 'stack_map_text', 'dump.json': 'dump_json', stack_map_bin: 'stack_map_bin' }[name],
        ]);
        expect(c.diagnostics).toEqual([]);
        const dir = mkdtempSync(join(tmpdir(), 'smx-pq-zero-'));
        const tables = buildTables(new Explorer(c), { captureId: 'x' });
        for (const t of tables) await writeParquet(t, fileWriter(join(dir, `${t.spec.name}.parquet`)), { captureId: 'x' });
        const stacksFile = join(dir, 'stacks.parquet');
        // arrow-rs (parquet-wasm) and hyparquet read the row back
        expect(arrowRsRows(stacksFile)).toEqual([['x', EMPTY_HASH, 0, null, null]]);
        const rows = await parquetReadObjects({ file: arrayBufferOf(stacksFile) });
        expect(rows).toEqual([{ capture_id: 'x', stack_hash: EMPTY_HASH, depth: 0, leaf: null, leaf_frame: null }]);
        expect(arrowRsRows(join(dir, 'frames.parquet'))).toEqual([]);
        if (name !== 'trace') {
          const dumps = await parquetReadObjects({ file: arrayBufferOf(join(dir, 'dumps.parquet')), columns: ['slot', 'stack_hash'] });
          expect(dumps).toEqual([{ slot: 3n, stack_hash: EMPTY_HASH }]);
        } else {
          const recs = arrowRsRows(join(dir, 'records.parquet'));
          expect(recs.map((r) => r.slice(7, 10))).toEqual([['full', 'full', EMPTY_HASH]]);
        }
      });
    }
  }
});

describe('tables-parquet: frames made a row group at a time (issue 34, 15)', () => {
  it('writes the same bytes as the whole columns, at row groups that cut stacks anywhere; offsets read from the keys', async () => {
    const x = new Explorer(sampleCapture());
    const [whole] = buildTables(x, { captureId: 'x', only: ['frames'] });
    const [parts] = buildTables(x, { captureId: 'x', only: ['frames'], rowGroups: true });
    expect(whole.rowsIn).toBeUndefined();
    expect(parts.rowsIn).toBeDefined();
    expect(parts.rows).toBe(whole.rows);
    const dir = mkdtempSync(join(tmpdir(), 'smx-pq-frames-'));
    for (const rowGroup of [97, 1000, 1 << 17]) {
      const a = join(dir, `whole-${rowGroup}.parquet`);
      const b = join(dir, `parts-${rowGroup}.parquet`);
      await writeParquet(whole, fileWriter(a), { captureId: 'x', rowGroup });
      await writeParquet(parts, fileWriter(b), { captureId: 'x', rowGroup });
      expect(readFileSync(b).equals(readFileSync(a))).toBe(true);
    }
    // read back: every row's offset is the one its frame key prints, rows as many as the stacks' depths
    const rows = await parquetReadObjects({ file: new Uint8Array(readFileSync(join(dir, 'parts-97.parquet'))).buffer, columns: ['frame', 'offset'] });
    expect(rows.length).toBe(whole.rows);
    for (const r of rows) {
      const m = /\+0x([0-9a-f]+)$/.exec(r.frame as string);
      expect(r.offset).toBe(m ? BigInt('0x' + m[1]) : null);
    }
    const stackDepths = buildTables(x, { captureId: 'x', only: ['stacks'] })[0];
    const depthCol = stackDepths.columns[stackDepths.spec.columns.findIndex((c) => c.name === 'depth')];
    expect(depthCol.type === 'int32' && depthCol.values.reduce((s, v) => s + v, 0)).toBe(rows.length);
    // the lazy table's columns, if read, are the whole ones
    expect(parts.columns.map((c) => Array.from({ length: Math.min(50, parts.rows) }, (_, i) => cellAt(c, i)))).toEqual(
      whole.columns.map((c) => Array.from({ length: Math.min(50, whole.rows) }, (_, i) => cellAt(c, i))),
    );
  });
});
