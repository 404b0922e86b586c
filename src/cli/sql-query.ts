import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TABLE_NAMES, type TableName } from '../core/tables/schema.ts';

/**
 * sql's queries: the tables of a folder written by export, and a query's statements run with
 * DuckDB in Node, each result streamed a chunk at a time into a sink. How a result is printed is
 * sql.ts's.
 */

/** The tables a folder written by export holds: table -> the glob or file DuckDB reads. Empty: none. */
export function tablesIn(dir: string): Map<TableName, string> {
  const out = new Map<TableName, string>();
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return out;
  const names = new Set(readdirSync(dir));
  for (const t of TABLE_NAMES) {
    if (names.has(t) && statSync(join(dir, t)).isDirectory() && readdirSync(join(dir, t)).some((f) => f.endsWith('.parquet'))) out.set(t, join(dir, t, '*.parquet'));
    else if (names.has(`${t}.parquet`)) out.set(t, join(dir, `${t}.parquet`));
  }
  return out;
}

/**
 * The captures of an export folder whose tables are not all in place: each table file's capture
 * (its name in DIR/<table>/<id>.parquet, its footer's id in a flat DIR/<table>.parquet) without
 * its `captures` file, which export writes last. Each with where it was seen.
 */
export function incompleteCaptures(dir: string, footerId: (file: string) => string | null): { id: string; seen: string }[] {
  const out = new Map<string, string>();
  const names = new Set(readdirSync(dir));
  const complete = new Set<string>();
  const capturesDir = join(dir, 'captures');
  if (names.has('captures') && statSync(capturesDir).isDirectory())
    for (const f of readdirSync(capturesDir)) if (f.endsWith('.parquet') && !f.startsWith('.')) complete.add(f.slice(0, -'.parquet'.length));
  if (names.has('captures.parquet')) {
    const id = footerId(join(dir, 'captures.parquet'));
    if (id !== null) complete.add(id);
  }
  for (const t of TABLE_NAMES) {
    if (t === 'captures') continue;
    const folder = join(dir, t);
    if (names.has(t) && statSync(folder).isDirectory()) {
      for (const f of readdirSync(folder)) {
        if (!f.endsWith('.parquet') || f.startsWith('.')) continue;
        const id = f.slice(0, -'.parquet'.length);
        if (!complete.has(id) && !out.has(id)) out.set(id, join(folder, f));
      }
    }
    if (names.has(`${t}.parquet`)) {
      const file = join(dir, `${t}.parquet`);
      const id = footerId(file) ?? '(unknown)';
      if (!complete.has(id) && !out.has(id)) out.set(id, file);
    }
  }
  return [...out].map(([id, seen]) => ({ id, seen }));
}

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;
const ident = (s: string) => `"${s.replaceAll('"', '""')}"`;

export type Cell = number | string | boolean | null | object;

export interface Column {
  name: string;
  /** DuckDB's type, as DuckDB writes it: BIGINT, VARCHAR, DECIMAL(18,3), INTEGER[] */
  type: string;
}

export interface QueryResult {
  columns: Column[];
  rows: Cell[][];
}

/** What a streamed query hands its result to, chunk by chunk. */
export interface QuerySink {
  columns(columns: Column[]): void | Promise<void>;
  /** rows still wanted as values; once 0, the rest are only counted */
  wanted(): number;
  rows(rows: Cell[][]): void | Promise<void>;
  /** true: stop reading (stdout is gone) */
  stopped(): boolean;
  /** the statement's result has ended: `total` rows in all */
  end?(total: number): void | Promise<void>;
}

/** a value of the JS converter as the output holds it; undefined: take the JSON converter's */
function cellOf(v: unknown): Cell | undefined {
  if (typeof v === 'bigint') return Number.MIN_SAFE_INTEGER <= v && v <= Number.MAX_SAFE_INTEGER ? Number(v) : v.toString();
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return v;
  return undefined;
}

/**
 * Runs `query` over the tables, streaming its result (DuckDB's chunks of 2,048 rows): each
 * chunk's rows, as many as the sink still wants, are converted and handed over, then dropped;
 * past that, chunks are only counted. Memory stays a chunk's whatever the result's size.
 * Returns the rows of the result (those counted before the sink stopped). DuckDB's error is
 * thrown as it is.
 */
export async function streamQuery(tables: Map<TableName, string>, query: string, sink: QuerySink): Promise<number> {
  // the last statement's result (a query of one statement: its result)
  const discard: QuerySink = { columns: () => {}, wanted: () => 0, rows: () => {}, stopped: () => false };
  const totals = await streamQueries(tables, query, (i, n) => (i === n - 1 ? sink : discard));
  return totals[totals.length - 1] ?? 0;
}

/**
 * `query`'s statements in turn (`SELECT 1; SELECT 2` is two), each streamed into the sink
 * `sinkFor(i, count)` gives it, as streamQuery does one. Returns each statement's rows.
 */
export async function streamQueries(tables: Map<TableName, string>, query: string, sinkFor: (index: number, count: number) => QuerySink): Promise<number[]> {
  // loaded here only: a native addon, outside the bundle, that --help and the other commands never load
  let duck: typeof import('@duckdb/node-api');
  try {
    duck = await import('@duckdb/node-api');
  } catch (e) {
    throw new Error(`sql needs DuckDB's Node package, which did not load (${(e as Error).message}): npm install @duckdb/node-api`);
  }
  const { DuckDBInstance, JSDuckDBValueConverter, JsonDuckDBValueConverter } = duck;
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    for (const [t, path] of tables) await con.run(`CREATE VIEW ${ident(t)} AS SELECT * FROM read_parquet(${quote(path)}, union_by_name = true)`);
    const statements = await con.extractStatements(query);
    const totals: number[] = [];
    for (let s = 0; s < statements.count; s++) {
      const sink = sinkFor(s, statements.count);
      const r = await (await statements.prepare(s)).stream();
      await sink.columns(r.columnNames().map((name, k) => ({ name, type: r.columnType(k).toString() })));
      let total = 0;
      while (!sink.stopped()) {
        const chunk = await r.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const n = chunk.rowCount;
        const take = Math.min(n, sink.wanted());
        if (take > 0) {
          const rows: Cell[][] = new Array(take);
          for (let i = 0; i < take; i++) {
            const js = chunk.convertRowValues(i, JSDuckDBValueConverter);
            let json: unknown[] | null = null;
            rows[i] = js.map((v, k) => cellOf(v) ?? ((json ??= chunk.convertRowValues(i, JsonDuckDBValueConverter))[k] as Cell));
          }
          await sink.rows(rows);
        }
        total += n;
      }
      totals.push(total);
      await sink.end?.(total);
      if (sink.stopped()) break;
    }
    return totals;
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

/** Runs `query` and keeps its whole result (tests; the command streams). */
export async function runQuery(tables: Map<TableName, string>, query: string): Promise<QueryResult> {
  const out: QueryResult = { columns: [], rows: [] };
  await streamQuery(tables, query, { columns: (c) => void (out.columns = c), wanted: () => Infinity, rows: (r) => void out.rows.push(...r), stopped: () => false });
  return out;
}

