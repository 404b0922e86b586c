import { readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { TABLE_NAMES, type TableName } from '../core/tables/schema.ts';

/**
 * sql's queries: the tables of a folder written by export, and a query's statements run with
 * DuckDB in Node, each result streamed a chunk at a time into a sink. How a result is printed is
 * sql.ts's.
 */

/** Whether `p` is a folder (false for a missing path or a dangling symlink, rather than a throw). */
const statOf = (p: string): Stats | undefined => {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
};
const isDir = (p: string) => statOf(p)?.isDirectory() === true;
const isFile = (p: string) => statOf(p)?.isFile() === true;

/**
 * The tables a folder written by export holds: table -> its files, each named as node:fs lists
 * it (never a glob: a folder named `cap[12]` is no pattern for `cap1`). Empty: none. A table
 * folder's hidden files (an export's temporary files) are no table files.
 */
export function tablesIn(dir: string): Map<TableName, string[]> {
  const out = new Map<TableName, string[]>();
  if (!isDir(dir)) return out;
  const names = new Set(readdirSync(dir));
  for (const t of TABLE_NAMES) {
    const folder = join(dir, t);
    const files =
      names.has(t) && isDir(folder)
        ? readdirSync(folder)
            .filter((f) => f.endsWith('.parquet') && !f.startsWith('.') && isFile(join(folder, f)))
            .sort()
            .map((f) => join(folder, f))
        : [];
    if (files.length > 0) out.set(t, files);
    else if (names.has(`${t}.parquet`) && isFile(join(dir, `${t}.parquet`))) out.set(t, [join(dir, `${t}.parquet`)]);
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
  if (names.has('captures') && isDir(capturesDir))
    for (const f of readdirSync(capturesDir)) if (f.endsWith('.parquet') && !f.startsWith('.')) complete.add(f.slice(0, -'.parquet'.length));
  if (names.has('captures.parquet')) {
    const id = footerId(join(dir, 'captures.parquet'));
    if (id !== null) complete.add(id);
  }
  for (const t of TABLE_NAMES) {
    if (t === 'captures') continue;
    const folder = join(dir, t);
    if (names.has(t) && isDir(folder)) {
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

/**
 * A file's path as a DuckDB file pattern that matches it alone: DuckDB globs every path it reads
 * (a list's entries too) and has no escape character, so each of `[`, `*`, `?` goes in a
 * bracket class of its own (`cap[[]12]` is the folder `cap[12]`).
 */
export const literalPattern = (path: string) => path.replace(/[[*?]/g, (c) => `[${c}]`);

/** What a query may reach: the capture's tables only (the default), or every file DuckDB can (--allow-external-access). */
export interface QueryAccess {
  externalAccess?: boolean;
}
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
export async function streamQuery(tables: Map<TableName, string[]>, query: string, sink: QuerySink, access: QueryAccess = {}): Promise<number> {
  // the last statement's result (a query of one statement: its result)
  const discard: QuerySink = { columns: () => {}, wanted: () => 0, rows: () => {}, stopped: () => false };
  const totals = await streamQueries(tables, query, (i, n) => (i === n - 1 ? sink : discard), access);
  return totals[totals.length - 1] ?? 0;
}

/**
 * `query`'s statements in turn (`SELECT 1; SELECT 2` is two), each streamed into the sink
 * `sinkFor(i, count)` gives it, as streamQuery does one. Returns each statement's rows.
 *
 * Unless `access.externalAccess`, the query reaches the tables' own files and nothing else: once
 * the views are made, DuckDB's external access is off with only those files allowed (each as
 * its pattern and as its path: DuckDB checks both), the configuration locked, and a statement
 * that writes files (COPY, EXPORT DATABASE: the allowed files could be overwritten) refused.
 */
export async function streamQueries(
  tables: Map<TableName, string[]>,
  query: string,
  sinkFor: (index: number, count: number) => QuerySink,
  access: QueryAccess = {},
): Promise<number[]> {
  // loaded here only: a native addon, outside the bundle, that --help and the other commands never load
  let duck: typeof import('@duckdb/node-api');
  try {
    duck = await import('@duckdb/node-api');
  } catch (e) {
    throw new Error(`sql needs DuckDB's Node package, which did not load (${(e as Error).message}): npm install @duckdb/node-api`);
  }
  const { DuckDBInstance, JSDuckDBValueConverter, JsonDuckDBValueConverter, StatementType } = duck;
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    const list = (paths: readonly string[]) => `[${paths.map(quote).join(', ')}]`;
    for (const [t, paths] of tables)
      await con.run(`CREATE VIEW ${ident(t)} AS SELECT * FROM read_parquet(${list(paths.map(literalPattern))}, union_by_name = true)`);
    if (!access.externalAccess) {
      const files = [...tables.values()].flat();
      await con.run(`SET allowed_paths = ${list([...new Set([...files, ...files.map(literalPattern)])])}`);
      await con.run('SET enable_external_access = false');
      await con.run('SET lock_configuration = true');
    }
    const statements = await con.extractStatements(query);
    const totals: number[] = [];
    for (let s = 0; s < statements.count; s++) {
      const sink = sinkFor(s, statements.count);
      const prepared = await statements.prepare(s);
      if (!access.externalAccess && (prepared.statementType === StatementType.COPY || prepared.statementType === StatementType.EXPORT))
        throw new Error(
          `statement ${s + 1}: ${StatementType[prepared.statementType]} writes files, and sql reaches only the capture's tables (--allow-external-access lifts that)`,
        );
      const r = await prepared.stream();
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
export async function runQuery(tables: Map<TableName, string[]>, query: string, access: QueryAccess = {}): Promise<QueryResult> {
  const out: QueryResult = { columns: [], rows: [] };
  await streamQuery(
    tables,
    query,
    { columns: (c) => void (out.columns = c), wanted: () => Infinity, rows: (r) => void out.rows.push(...r), stopped: () => false },
    access,
  );
  return out;
}
