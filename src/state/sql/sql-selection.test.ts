import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Selection } from '../../core/query/api.ts';
import { genKey, NO_GEN, SelectionFilter } from '../../core/query/selection.ts';
import { selectionViewSql } from './sql-selection.ts';

// The SQL pane's selection view keeps exactly the rows the panes' SelectionFilter keeps: checked
// in DuckDB (the node build of the engine the page runs) over random rows and selections.

let con: DuckDBConnection;
beforeAll(async () => {
  con = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(() => con?.closeSync());

interface Row {
  ts: number;
  cpu: number;
  gen: number | null;
}

const arbRows = fc.array(
  fc.record({
    ts: fc.oneof(
      fc.double({ min: 0, max: 1e5, noNaN: true }),
      fc.integer({ min: 0, max: 20 }).map((i) => i / 10),
      fc.constantFrom(0.1, 0.2, 0.30000000000000004, 1e-7, 12345.678901234567),
    ),
    cpu: fc.integer({ min: 0, max: 5 }),
    gen: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
  }),
  { minLength: 1, maxLength: 40 },
);

const arbSelection = (rows: Row[]) =>
  fc.record<Selection>({
    // endpoints are often row timestamps themselves: [t0, t1] is inclusive
    range: fc.option(
      fc.tuple(
        fc.oneof(fc.constantFrom(...rows.map((r) => r.ts)), fc.double({ min: 0, max: 1e5, noNaN: true })),
        fc.oneof(fc.constantFrom(...rows.map((r) => r.ts)), fc.double({ min: 0, max: 1e5, noNaN: true })),
      ),
      { nil: null },
    ),
    generation: fc.oneof(fc.constant(null), fc.constant('none' as const), fc.integer({ min: 0, max: 4 }), fc.constant(1.5)),
    cpus: fc.option(fc.array(fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constant(2.5)), { maxLength: 4 }), { nil: null }),
  });

it('the selection view keeps what SelectionFilter keeps (range inclusive, exact doubles, generation none as NULL, CPUs)', async () => {
  await fc.assert(
    fc.asyncProperty(
      arbRows.chain((rows) => fc.tuple(fc.constant(rows), fc.array(arbSelection(rows), { minLength: 1, maxLength: 4 }))),
      async ([rows, selections]) => {
        // the doubles go in as their shortest decimal text, which DuckDB reads back exactly
        const values = rows.map((r, i) => `(${i}, '${r.ts}'::DOUBLE, ${r.cpu}, ${r.gen ?? 'NULL'})`).join(', ');
        await con.run(`CREATE OR REPLACE TABLE events AS SELECT * FROM (VALUES ${values}) v(id, ts, cpu, generation)`);
        const stored = (await con.runAndReadAll('SELECT ts FROM events ORDER BY id')).getRowsJS().map((r) => r[0]);
        expect(stored).toEqual(rows.map((r) => r.ts));
        for (const sel of selections) {
          await con.run(selectionViewSql(sel));
          const got = (await con.runAndReadAll('SELECT id FROM selection ORDER BY id')).getRowsJS().map((r) => Number(r[0]));
          const f = new SelectionFilter(sel);
          const want = rows.flatMap((r, i) => (f.test(r.ts, r.cpu, r.gen === null ? NO_GEN : genKey(r.gen)) ? [i] : []));
          expect(got, JSON.stringify(sel)).toEqual(want);
        }
      },
    ),
    { numRuns: 60 },
  );
});

it('names its view and table', () => {
  expect(selectionViewSql({ range: null, generation: null, cpus: null }, 'selection_records', 'records')).toBe(
    'CREATE OR REPLACE VIEW selection_records AS SELECT * FROM records',
  );
});
