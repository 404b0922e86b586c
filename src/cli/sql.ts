import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escapeControls, escapeLines, jsonForTerminal } from '../core/base/control-chars.ts';
import { TABLE_NAMES, type TableName } from '../core/tables/schema.ts';
import { exportParquet } from './export.ts';
import { parseOrExit, UsageError } from './usage.ts';
import { onInterrupt } from './interrupt.ts';

/** rows the table shows unless --limit or --all says otherwise */
export const DEFAULT_LIMIT = 1000;

export const SQL_USAGE = `usage: stackmap-explorer sql "QUERY" [--json | --csv] [--limit N | --all] [--] FILE...
       stackmap-explorer sql --file QUERY.sql [--json | --csv] [--limit N | --all] [--] FILE...

  Runs QUERY with DuckDB (in memory) over the capture's tables: ${TABLE_NAMES.join(', ')}
  (export --help; the columns are documented in src/core/tables/schema.ts). FILE... is a
  capture (read as summary reads it), or one folder written by export --parquet, flat or
  with many captures (DIR/<table>/<capture_id>.parquet), queried as it is.
    sql "SELECT task, count(*) n FROM events GROUP BY task ORDER BY n DESC LIMIT 5" trace
    sql "SELECT capture_id, count(*) FROM events GROUP BY 1" fleet/

  The result streams from DuckDB a chunk at a time, so memory stays small however many rows
  it has. The table shows the first ${DEFAULT_LIMIT} rows and says how many more the result
  holds; control characters in names and values are escaped (\\x1b, \\t, \\n; a backslash
  as \\\\), as ls -b prints them.

  --json     print {columns: [{name, type}], rows: [[...]]} (a BIGINT beyond 2^53 as a string),
             every row unless --limit is given (with "total", the result's rows, when it cut some)
  --csv      print CSV (RFC 4180: a header line, then the rows; quotes doubled), every row
             unless --limit is given
  --file F   the query from file F (-f F)
  --limit N  print at most N rows (default ${DEFAULT_LIMIT} for the table, every row for --json and --csv)
  --all      print every row
  --         ends the options

  Several statements (SELECT 1; SELECT 2) run in turn, each result printed: tables headed
  "-- statement i of n", one JSON object a line with --json, CSVs apart by a blank line.

exit status: 0 when the query ran, 1 when it failed (DuckDB's message on stderr) or no file
could be read, 2 on a usage error`;

interface Parsed {
  query: string;
  json: boolean;
  csv: boolean;
  /** rows to print; null: the default (DEFAULT_LIMIT for the table, all for --json) */
  limit: number | null;
  files: string[];
}

function parse(args: string[]): Parsed | 'help' {
  let query: string | null = null;
  let queryFile: string | null = null;
  let json = false;
  let csv = false;
  let limit: number | null = null;
  let all = false;
  const files: string[] = [];
  // with --file, every argument that is no option is a file
  const positional = (a: string) => (query === null && queryFile === null ? (query = a) : files.push(a));
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      for (const f of args.slice(i + 1)) positional(f);
      break;
    } else if (a === '--help' || a === '-h') return 'help';
    else if (a === '--json') json = true;
    else if (a === '--csv') csv = true;
    else if (a === '--all') all = true;
    else if (a === '--file' || a === '-f') {
      const v = args[++i];
      if (v === undefined) throw new UsageError('--file needs the path of a file of SQL');
      queryFile = v;
    } else if (a === '--limit' || a.startsWith('--limit=')) {
      const v = a === '--limit' ? args[++i] : a.slice('--limit='.length);
      if (v === undefined) throw new UsageError('--limit needs a number of rows');
      if (!/^\d{1,15}$/.test(v)) throw new UsageError(`--limit takes a whole number of rows, not ${escapeControls(v)}`);
      limit = Number(v);
    } else if (a.startsWith('-')) throw new UsageError(`unknown option: ${escapeControls(a)} (a query that starts with - goes after --)`);
    else positional(a);
  }
  if (all && limit !== null) throw new UsageError('--limit and --all contradict each other: give one');
  if (json && csv) throw new UsageError('--json and --csv contradict each other: give one');
  if (queryFile !== null) {
    if (query !== null) files.unshift(query);
    try {
      query = readFileSync(queryFile, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read the query file ${escapeControls(queryFile)}: ${(e as Error).message}`);
    }
  }
  if (query === null || query.trim() === '') throw new UsageError('no query given');
  if (files.length === 0) throw new UsageError('no files given');
  return { query, json, csv, limit: all ? Infinity : limit, files };
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

const text = (c: Cell) => escapeControls(c === null ? 'NULL' : typeof c === 'object' ? JSON.stringify(c) : String(c));

const NUMERIC_TYPE = /^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|FLOAT|DOUBLE|REAL|DECIMAL(\(.*\))?|VARINT|BIGNUM)$/;
/** a column of numbers (right-aligned), by its type: a BIGINT beyond 2^53, a string cell, still is one */
export const isNumericType = (type: string) => NUMERIC_TYPE.test(type);

/** rows whose widths set the columns' (the first ones), and the widest a column is padded to */
export const WIDTH_SAMPLE = 1000;
export const MAX_WIDTH = 80;

/**
 * An aligned text table made as rows arrive: numbers to the right, the rest to the left, a rule
 * under the header, control characters escaped. The widths come from the header and the first
 * WIDTH_SAMPLE rows (held until then), at most MAX_WIDTH: a longer cell is printed whole and
 * pushes its row's later cells right, rather than padding every row to its length.
 */
export class TableWriter {
  private width: number[] = [];
  private readonly numeric: boolean[];
  private readonly names: string[];
  private held: string[][] | null = [];
  private written = 0;

  constructor(cols: Column[]) {
    this.names = cols.map((c) => escapeControls(c.name));
    this.numeric = cols.map((c) => isNumericType(c.type));
  }

  private line(row: string[]): string {
    const w = this.width;
    let s = '';
    for (let k = 0; k < row.length; k++) {
      if (k > 0) s += '  ';
      s += this.numeric[k] ? row[k].padStart(w[k]) : row[k].padEnd(w[k]);
    }
    return s.trimEnd();
  }

  /** the widths from what is held; the header and the held rows */
  private flush(): string {
    const held = this.held!;
    this.held = null;
    this.width = this.names.map((n) => Math.min(MAX_WIDTH, n.length));
    for (const row of held) for (let k = 0; k < row.length; k++) if (row[k].length > this.width[k]) this.width[k] = Math.min(MAX_WIDTH, row[k].length);
    let out = this.line(this.names) + '\n' + this.width.map((w) => '-'.repeat(w)).join('  ') + '\n';
    for (const row of held) out += this.line(row) + '\n';
    return out;
  }

  /** the text to print for these rows (nothing while the first WIDTH_SAMPLE are held) */
  rows(rows: Cell[][]): string {
    let out = '';
    for (const r of rows) {
      const cells = r.map(text);
      this.written++;
      if (this.held) {
        this.held.push(cells);
        if (this.held.length >= WIDTH_SAMPLE) out += this.flush();
      } else out += this.line(cells) + '\n';
    }
    return out;
  }

  /** the rest: what is held, and the footer with the rows of the result and how many were not printed */
  end(total: number): string {
    const shown = this.written;
    const head = this.held ? this.flush() : '';
    const rows = (n: number) => `${n} row${n === 1 ? '' : 's'}`;
    return head + (shown < total ? `(${shown} of ${rows(total)} shown, ${total - shown} cut: --limit N or --all prints more)` : `(${rows(total)})`) + '\n';
  }
}

/** One CSV line (RFC 4180): a field with a comma, a quote or a line break quoted, its quotes doubled; null empty. */
export function csvLine(cells: readonly Cell[]): string {
  return (
    cells
      .map((c) => {
        if (c === null) return '';
        const v = typeof c === 'string' ? c : typeof c === 'object' ? JSON.stringify(c) : String(c);
        return /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
      })
      .join(',') + '\r\n'
  );
}

/** An aligned text table of a whole result, every row. */
export function formatTable(r: QueryResult): string {
  const t = new TableWriter(r.columns);
  return t.rows(r.rows) + t.end(r.rows.length);
}

/**
 * stdout for a stream of writes: waits for 'drain' when the stream's buffer is full (a slow
 * pipe), and stops (closed) once the reader has gone (`| head`: EPIPE), which is no error.
 */
class Out {
  closed = false;
  private readonly onError = (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') this.closed = true;
    else throw e;
  };

  constructor(private readonly stream: NodeJS.WriteStream = process.stdout) {
    stream.on('error', this.onError);
  }

  write = async (s: string): Promise<void> => {
    if (this.closed) return;
    if (!this.stream.write(s) && !this.closed) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.stream.off('drain', done);
          this.stream.off('close', done);
          resolve();
        };
        this.stream.on('drain', done);
        this.stream.on('close', done);
      });
    }
  };

  end(): void {
    this.stream.off('error', this.onError);
  }
}

export async function sqlCommand(args: string[]): Promise<number> {
  const p = parseOrExit(parse, args, SQL_USAGE);
  if ('exit' in p) return p.exit;
  const folder = p.files.length === 1 ? tablesIn(p.files[0]) : new Map<TableName, string>();
  let tmp: string | null = null;
  let releaseTmp: (() => void) | null = null;
  const out = new Out();
  try {
    let tables = folder;
    if (tables.size === 0 && p.files.length === 1 && existsSync(p.files[0]) && statSync(p.files[0]).isDirectory()) {
      process.stderr.write(`${escapeControls(p.files[0])} holds no tables (export --parquet DIR FILE... writes them)\n`);
      return 1;
    }
    if (tables.size === 0) {
      // a capture: its tables as Parquet in a temp folder, then queried like an exported one
      tmp = mkdtempSync(join(tmpdir(), 'stackmap-sql-'));
      const dir = tmp;
      // Ctrl-C while the tables are made or queried: the scratch folder goes too
      releaseTmp = onInterrupt(() => rmSync(dir, { recursive: true, force: true }));
      const r = await exportParquet(p.files, dir, { log: () => {}, place: () => ({ layout: 'flat', converted: null, fileOf: (t) => join(dir, `${t}.parquet`) }), scratch: true });
      if ('error' in r) {
        process.stderr.write(escapeLines(r.error) + '\n');
        return 1;
      }
      tables = tablesIn(dir);
    }
    const limit = p.limit ?? (p.json || p.csv ? Infinity : DEFAULT_LIMIT);
    /** one statement's printing: its table (or JSON object, one a line), each statement's in turn */
    const printerFor = (index: number, count: number): QuerySink => {
      let shown = 0;
      let table: TableWriter | null = null;
      // --json: the object's head waits for the first rows, so a query that fails at its first chunk prints nothing
      let jsonHead: string | null = null;
      // several statements: each result headed by which it is (tables), or one JSON object a line
      const head = count > 1 && !p.json ? `${index > 0 ? '\n' : ''}-- statement ${index + 1} of ${count}\n` : '';
      const sink: QuerySink = {
        columns: async (cols) => {
          if (p.csv) await out.write((count > 1 && index > 0 ? '\r\n' : '') + csvLine(cols.map((c) => c.name)));
          else if (p.json) jsonHead = `{"columns":${jsonForTerminal(cols)},"rows":[`;
          else {
            table = new TableWriter(cols);
            if (head) await out.write(head);
          }
        },
        wanted: () => limit - shown,
        rows: async (rows) => {
          if (p.csv) {
            shown += rows.length;
            return out.write(rows.map(csvLine).join(''));
          }
          if (table) {
            shown += rows.length;
            return out.write(table.rows(rows));
          }
          let s = jsonHead ?? '';
          jsonHead = null;
          for (let i = 0; i < rows.length; i++) s += (shown + i > 0 ? ',' : '') + jsonForTerminal(rows[i]);
          shown += rows.length;
          await out.write(s);
        },
        stopped: () => out.closed,
      };
      sink.end = async (total) => {
        if (out.closed) return;
        if (p.csv) {
          if (shown < total) process.stderr.write(`${shown} of ${total} rows printed, ${total - shown} cut: --limit N or --all prints more\n`);
          return;
        }
        const t = table as TableWriter | null;
        if (t) await out.write(t.end(total));
        else await out.write((jsonHead ?? '') + (shown < total ? `],"total":${total}}\n` : ']}\n'));
        // the table's footer says it; the JSON's reader learns it from "total", the person from stderr
        if (!t && shown < total) process.stderr.write(`${shown} of ${total} rows printed, ${total - shown} cut: --limit N or --all prints more\n`);
      };
      return sink;
    };
    try {
      await streamQueries(tables, p.query, printerFor);
    } catch (e) {
      // what was printed stays (the table's first rows); the message says why the rest is not there
      process.stderr.write(`${escapeLines((e as Error).message)}\n`);
      return 1;
    }
    return 0;
  } finally {
    out.end();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    releaseTmp?.();
  }
}
