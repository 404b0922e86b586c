import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TABLE_NAMES, type TableName } from '../core/model/tables.ts';
import { exportParquet } from './export.ts';
import { parseOrExit, UsageError } from './usage.ts';

export const SQL_USAGE = `usage: stackmap-explorer sql "QUERY" [--json] [--] FILE...

  Runs QUERY with DuckDB (in memory) over the capture's tables: ${TABLE_NAMES.join(', ')}
  (export --help; the columns are documented in src/core/model/tables.ts). FILE... is a
  capture (read as summary reads it), or one folder written by export --parquet, flat or
  with many captures (DIR/<table>/<capture_id>.parquet), queried as it is.
    sql "SELECT task, count(*) n FROM events GROUP BY task ORDER BY n DESC LIMIT 5" trace
    sql "SELECT capture_id, count(*) FROM events GROUP BY 1" fleet/

  --json   print {columns: [{name, type}], rows: [[...]]} (a BIGINT beyond 2^53 as a string)
  --       ends the options

exit status: 0 when the query ran, 1 when it failed (DuckDB's message on stderr) or no file
could be read, 2 on a usage error`;


function parse(args: string[]): { query: string; json: boolean; files: string[] } | 'help' {
  let query: string | null = null;
  let json = false;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      for (const f of args.slice(i + 1)) query === null ? (query = f) : files.push(f);
      break;
    } else if (a === '--help' || a === '-h') return 'help';
    else if (a === '--json') json = true;
    else if (a.startsWith('-')) throw new UsageError(`unknown option: ${a} (a query that starts with - goes after --)`);
    else if (query === null) query = a;
    else files.push(a);
  }
  if (query === null || query.trim() === '') throw new UsageError('no query given');
  if (files.length === 0) throw new UsageError('no files given');
  return { query, json, files };
}

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

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;
const ident = (s: string) => `"${s.replaceAll('"', '""')}"`;

export type Cell = number | string | boolean | null | object;
export interface QueryResult {
  columns: { name: string; type: string }[];
  rows: Cell[][];
}

/** Runs `query` over the tables; DuckDB's error is thrown as it is. */
export async function runQuery(tables: Map<TableName, string>, query: string): Promise<QueryResult> {
  // loaded here only: a native addon, outside the bundle, that --help and the other commands never load
  let DuckDBInstance: typeof import('@duckdb/node-api').DuckDBInstance;
  try {
    ({ DuckDBInstance } = await import('@duckdb/node-api'));
  } catch (e) {
    throw new Error(`sql needs DuckDB's Node package, which did not load (${(e as Error).message}): npm install @duckdb/node-api`);
  }
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    for (const [t, path] of tables) await con.run(`CREATE VIEW ${ident(t)} AS SELECT * FROM read_parquet(${quote(path)}, union_by_name = true)`);
    const r = await con.runAndReadAll(query);
    const js = r.getRowsJS();
    const json = r.getRowsJson();
    const rows = js.map((row, i) =>
      row.map((v, k): Cell => {
        if (typeof v === 'bigint') return Number.MIN_SAFE_INTEGER <= v && v <= Number.MAX_SAFE_INTEGER ? Number(v) : v.toString();
        if (v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return v;
        return json[i][k] as Cell;
      }),
    );
    return { columns: r.columnNames().map((name, k) => ({ name, type: r.columnType(k).toString() })), rows };
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

const text = (c: Cell) => (c === null ? 'NULL' : typeof c === 'object' ? JSON.stringify(c) : String(c));

/** An aligned text table: numbers to the right, the rest to the left, a rule under the header. */
export function formatTable(r: QueryResult): string {
  const cells = r.rows.map((row) => row.map(text));
  const width = r.columns.map((c, k) => Math.max(c.name.length, ...cells.map((row) => row[k].length)));
  const numeric = r.columns.map((_, k) => r.rows.length > 0 && r.rows.every((row) => row[k] === null || typeof row[k] === 'number'));
  const pad = (s: string, k: number) => (numeric[k] ? s.padStart(width[k]) : s.padEnd(width[k]));
  const line = (row: string[]) => row.map(pad).join('  ').trimEnd();
  const out = [line(r.columns.map((c) => c.name)), width.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)];
  out.push(`(${r.rows.length} row${r.rows.length === 1 ? '' : 's'})`);
  return out.join('\n') + '\n';
}

export async function sqlCommand(args: string[]): Promise<number> {
  const p = parseOrExit(parse, args, SQL_USAGE);
  if ('exit' in p) return p.exit;
  const folder = p.files.length === 1 ? tablesIn(p.files[0]) : new Map<TableName, string>();
  let tmp: string | null = null;
  try {
    let tables = folder;
    if (tables.size === 0 && p.files.length === 1 && existsSync(p.files[0]) && statSync(p.files[0]).isDirectory()) {
      process.stderr.write(`${p.files[0]} holds no tables (export --parquet ${p.files[0]} FILE... writes them)\n`);
      return 1;
    }
    if (tables.size === 0) {
      // a capture: its tables as Parquet in a temp folder, then queried like an exported one
      tmp = mkdtempSync(join(tmpdir(), 'stackmap-sql-'));
      const dir = tmp;
      const r = await exportParquet(p.files, dir, { log: () => {}, place: () => ({ layout: 'flat', converted: null, fileOf: (t) => join(dir, `${t}.parquet`) }), scratch: true });
      if ('error' in r) {
        process.stderr.write(r.error + '\n');
        return 1;
      }
      tables = tablesIn(dir);
    }
    let result: QueryResult;
    try {
      result = await runQuery(tables, p.query);
    } catch (e) {
      process.stderr.write(`${(e as Error).message}\n`);
      return 1;
    }
    process.stdout.write(p.json ? JSON.stringify(result) + '\n' : formatTable(result));
    return 0;
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}
