import { tableFromIPC, Type, type Table } from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Capture } from '../capture/ingest.ts';
import { Explorer } from '../query/explorer.ts';
import { sampleCapture } from '../testing/explorer-fixtures.ts';
import { int64Words, tablesToIpc, validityBitmap } from './arrow.ts';
import { buildTables } from './build.ts';
import { dictAt, TABLES, type ColumnSpec, type ColumnType, type ColumnValues, type TableData, type TableSpec } from './schema.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';
import { ingestFiles } from '../testing/test-helpers.ts';

/** the plain reading of a TableData cell: what the Arrow stream must give back */
function expected(c: ColumnValues, i: number): number | bigint | string | boolean | null {
  if (c.valid !== null && c.valid[i] === 0) return null;
  if (c.type === 'utf8') return dictAt(c.dict, c.codes[i])!;
  if (c.type === 'bool') return c.values[i] === 1;
  if (c.type === 'int64') return BigInt(c.values[i]);
  return c.values[i];
}

/** a cell as apache-arrow's reader gives it, in the same plain terms (int64 comes as a bigint) */
function read(t: Table, col: number, i: number): number | bigint | string | boolean | null {
  const v: unknown = t.getChildAt(col)!.get(i);
  if (v === null || v === undefined) return null;
  return v as number | bigint | string | boolean;
}

function roundTrip(tables: TableData[]): void {
  const ipc = tablesToIpc(tables);
  expect(ipc.map((t) => t.name)).toEqual(tables.map((t) => t.spec.name));
  tables.forEach((t, n) => {
    const back = tableFromIPC(ipc[n].ipc);
    expect(ipc[n].rows).toBe(t.rows);
    expect(back.numRows).toBe(t.rows);
    expect(back.schema.fields.map((f) => [f.name, f.nullable])).toEqual(t.spec.columns.map((c) => [c.name, c.nullable]));
    t.spec.columns.forEach((c, k) => {
      const f = back.schema.fields[k];
      // strings travel as dictionaries, numbers as their own types
      const want = { int32: Type.Int, int64: Type.Int, float64: Type.Float, bool: Type.Bool, utf8: Type.Dictionary }[c.type];
      expect(f.typeId, `${t.spec.name}.${c.name}`).toBe(want);
      if (c.type === 'int64') expect((f.type as { bitWidth: number }).bitWidth).toBe(64);
      for (let i = 0; i < t.rows; i++) {
        const a = read(back, k, i);
        const b = expected(t.columns[k], i);
        if (a !== b && !(Number.isNaN(a) && Number.isNaN(b))) expect(a, `${t.spec.name}.${c.name} row ${i}`).toEqual(b);
      }
    });
  });
}

const TYPES: ColumnType[] = ['int32', 'int64', 'float64', 'utf8', 'bool'];
const SAFE = 2 ** 53 - 1;

/** a random table: any types, any nullability, nulls anywhere, dictionaries with unused and empty entries */
const arbTable = fc
  .record({
    rows: fc.integer({ min: 0, max: 70 }),
    cols: fc.array(fc.record({ type: fc.constantFrom(...TYPES), nullable: fc.boolean(), seed: fc.integer() }), { minLength: 1, maxLength: 6 }),
    dict: fc.array(fc.string({ unit: 'grapheme', maxLength: 6 }), { minLength: 0, maxLength: 8 }),
  })
  .chain(({ rows, cols, dict }) =>
    fc
      .tuple(
        ...cols.map((c) =>
          fc.record({
            valid: c.nullable ? fc.option(fc.uint8Array({ min: 0, max: 1, minLength: rows, maxLength: rows }), { nil: null }) : fc.constant(null),
            ints: fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { minLength: rows, maxLength: rows }),
            big: fc.array(fc.oneof(fc.integer({ min: -SAFE, max: SAFE }), fc.constantFrom(0, -1, 2 ** 32, -(2 ** 32), 2 ** 32 - 1, SAFE, -SAFE)), {
              minLength: rows,
              maxLength: rows,
            }),
            floats: fc.array(fc.double(), { minLength: rows, maxLength: rows }),
            codes: fc.array(fc.nat({ max: Math.max(0, dict.length - 1) }), { minLength: rows, maxLength: rows }),
          }),
        ),
      )
      .map((vals): TableData => {
        const columns: ColumnSpec[] = cols.map((c, k) => ({ name: `c${k}_${c.type}`, type: c.type, nullable: c.nullable, doc: '' }));
        const values: ColumnValues[] = cols.map((c, k) => {
          const v = vals[k];
          // a dictionary with no entry: every row must be null
          const valid = c.type === 'utf8' && dict.length === 0 && rows > 0 ? new Uint8Array(rows) : v.valid;
          switch (c.type) {
            case 'int32':
              return { type: 'int32', values: Int32Array.from(v.ints), valid };
            case 'int64':
              return { type: 'int64', values: Float64Array.from(v.big), valid };
            case 'float64':
              return { type: 'float64', values: Float64Array.from(v.floats), valid };
            case 'bool':
              return { type: 'bool', values: Uint8Array.from(v.ints, (x) => x & 1), valid };
            case 'utf8': {
              // a null row's code is -1, as schema.ts writes it
              const codes = Int32Array.from(v.codes, (x, i) => (valid && valid[i] === 0 ? -1 : dict.length ? x : -1));
              return { type: 'utf8', codes, dict, valid };
            }
          }
        });
        // a column that is not nullable has no mask
        const spec: TableSpec = { name: 'events', doc: '', columns: columns.map((c, k) => ({ ...c, nullable: c.nullable || values[k].valid !== null })) };
        return { spec, rows, columns: values };
      }),
  );

describe('tables as Arrow IPC streams', () => {
  it('reads back row by row as the tables hold them: random tables of every type, nulls anywhere', () => {
    fc.assert(
      fc.property(fc.array(arbTable, { minLength: 1, maxLength: 3 }), (tables) => roundTrip(tables)),
      { numRuns: 100 },
    );
    // about 1 s alone; 5 s was not enough on the shared 2-core machine under a full run
  }, 30_000);

  it('the helpers agree with plain arithmetic: the validity bitmap bit by bit, int64 words as BigInt', () => {
    fc.assert(
      fc.property(fc.uint8Array({ min: 0, max: 1, maxLength: 40 }), (valid) => {
        const { bitmap, nulls } = validityBitmap(valid, valid.length);
        expect(nulls).toBe(valid.filter((v) => v === 0).length);
        for (let i = 0; i < valid.length; i++) expect((bitmap[Math.floor(i / 8)] >> (i % 8)) & 1).toBe(valid[i]);
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -SAFE, max: SAFE }), { maxLength: 20 }), (xs) => {
        expect([...int64Words(Float64Array.from(xs), xs.length)]).toEqual(xs.map((x) => BigInt(x)));
      }),
    );
  });

  /** every table of a capture, as built by build.ts, read back */
  const allTables = (c: Capture) => {
    const tables = buildTables(new Explorer(c), { captureId: '0123456789abcdef' });
    expect(tables.map((t) => t.spec.name).sort()).toEqual(TABLES.map((t) => t.name).sort());
    expect(tables.some((t) => t.rows > 0)).toBe(true);
    roundTrip(tables);
  };

  it('every table of the sample capture, as built by build.ts', () => allTables(sampleCapture()));

  realIt('every table of a real trace, as built by build.ts', () => {
    const real = 'perf-tools-tpoint_example.txt';
    allTables(ingestFiles([[real, realTrace(real)]]));
  });

  it("compiles no code (the page forbids eval: no `new Function`, which apache-arrow's builders use)", () => {
    const real = globalThis.Function;
    const refuse = new Proxy(real, {
      construct: () => {
        throw new EvalError('refused, as the CSP would');
      },
      apply: () => {
        throw new EvalError('refused, as the CSP would');
      },
    });
    globalThis.Function = refuse;
    try {
      const tables = buildTables(new Explorer(sampleCapture()), { captureId: '0123456789abcdef' });
      expect(tablesToIpc(tables).length).toBe(tables.length);
    } finally {
      globalThis.Function = real;
    }
  });

  it('says which column does not fit its spec', () => {
    const bad: TableData = {
      spec: { name: 'stat', doc: '', columns: [{ name: 'x', type: 'int32', nullable: false, doc: '' }] },
      rows: 1,
      columns: [{ type: 'float64', values: new Float64Array(1), valid: null }],
    };
    expect(() => tablesToIpc([bad])).toThrow(/column x is float64, not int32/);
  });
});
