import { createWriteStream, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { escapeControls, escapeLines, jsonForTerminal } from '../core/base/control-chars.ts';
import { TABLE_NAMES, type TableName } from '../core/tables/schema.ts';
import { parquetCaptureId } from './export-folder.ts';
import { EXPORT_LOCK } from './export-lock.ts';
import { incompleteCaptures, streamQueries, tablesIn, type QuerySink } from './sql-query.ts';
import { csvLine, TableWriter } from './sql-format.ts';
import { Out, outputTarget } from './sql-output.ts';
import { exportParquet } from './export.ts';
import { ttyProgress } from './progress.ts';
import { folderFiles } from './read-files.ts';
import { parseOptions, parseOrExit, UsageError } from './usage.ts';
import { FILTER_OPTIONS, filterHelp, filterOf } from './filter-args.ts';
import type { EventFilter } from '../core/capture/event-filter.ts';
import { onInterrupt } from './interrupt.ts';
import { finished } from 'node:stream/promises';

/** rows the table shows unless --limit or --all says otherwise */
export const DEFAULT_LIMIT = 1000;

export const SQL_USAGE = `usage: stackmap-explorer sql "QUERY" [--format table|csv|json] [--output FILE] [--limit N | --all] [--filter EXPR]... [--] FILE...
       stackmap-explorer sql --file QUERY.sql [--format table|csv|json] [--output FILE] [--limit N | --all] [--] FILE...

  Runs QUERY with DuckDB (in memory) over the capture's tables: ${TABLE_NAMES.join(', ')}
  (export --help; the columns are documented in src/core/tables/schema.ts). FILE... is a
  capture (read as summary reads it: files, a folder of them, a bundle), or one folder written
  by export --parquet, flat or with many captures (DIR/<table>/<capture_id>.parquet), queried as
  it is (a folder holding tables is an export's, any other a capture's).
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
  --format table|csv|json
             the aligned table (default), CSV or JSON; --csv and --json say the same
  --output F write the result to file F (-o F) instead of stdout: to a temporary name beside
             it, renamed once the last row is written (Ctrl-C or an error leaves no F); a
             symlink's target is written (the link stays), a pipe or a character device
             (/dev/null, /dev/stdout) is written in place, a folder is refused
  --file F   the query from file F (-f F)
  --limit N  print at most N rows (default ${DEFAULT_LIMIT} for the table, every row for --json and --csv)
  --all      print every row
${filterHelp(13)}
             (a capture's files only: its tables hold only those events and their records)
  -q, --quiet
             no progress line on stderr while a capture's files are read (only on a terminal)
  --allow-external-access
             let the query read and write other files (read_text, read_csv, COPY ... TO,
             ATTACH): without it, the query reaches the capture's tables and nothing else
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
  /** --output FILE: the result there (written to a temporary name beside it, renamed at the end) */
  output: string | null;
  quiet: boolean;
  /** --allow-external-access: DuckDB's file access left on */
  externalAccess: boolean;
  files: string[];
  /** --filter: only the events it matches are read into the capture's tables */
  filter?: EventFilter;
}

function parse(args: string[]): Parsed | 'help' {
  const o = parseOptions(args, {
    json: { type: 'boolean' },
    csv: { type: 'boolean' },
    all: { type: 'boolean' },
    format: { type: 'string' },
    output: { type: 'string', short: 'o' },
    file: { type: 'string', short: 'f' },
    limit: { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
    'allow-external-access': { type: 'boolean' },
    ...FILTER_OPTIONS,
  });
  if (o.help) return 'help';
  const filtered = filterOf(o);
  if ('error' in filtered) throw new UsageError(filtered.error);
  let json = o.flag('json');
  let csv = o.flag('csv');
  const all = o.flag('all');
  const format = o.string('format') ?? null;
  if (format !== null && format !== 'table' && format !== 'csv' && format !== 'json')
    throw new UsageError(`--format takes table, csv or json, not ${escapeControls(format)}`);
  const output = o.string('output') ?? null;
  if (output === '') throw new UsageError('--output needs a file');
  const queryFile = o.string('file') ?? null;
  let limit: number | null = null;
  const l = o.string('limit');
  if (l !== undefined) {
    if (!/^\d{1,15}$/.test(l)) throw new UsageError(`--limit takes a whole number of rows, not ${escapeControls(l)}`);
    limit = Number(l);
  }
  // the first argument that is no option is the query, unless --file gives it: then every one is a file
  const files = [...o.positionals];
  let query: string | null = queryFile === null ? (files.shift() ?? null) : null;
  if (all && limit !== null) throw new UsageError('--limit and --all contradict each other: give one');
  if (format !== null) {
    if ((json && format !== 'json') || (csv && format !== 'csv')) throw new UsageError(`--format ${format} contradicts ${json ? '--json' : '--csv'}: give one`);
    json = format === 'json';
    csv = format === 'csv';
  }
  if (json && csv) throw new UsageError('--json and --csv contradict each other: give one');
  if (queryFile !== null) {
    try {
      query = readFileSync(queryFile, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read the query file ${escapeControls(queryFile)}: ${(e as Error).message}`);
    }
  }
  if (query === null || query.trim() === '') throw new UsageError('no query given');
  if (files.length === 0) throw new UsageError('no files given');
  return {
    query,
    json,
    csv,
    limit: all ? Infinity : limit,
    output,
    quiet: o.flag('quiet'),
    externalAccess: o.flag('allow-external-access'),
    files,
    filter: filtered.filter,
  };
}

export async function sqlCommand(args: string[]): Promise<number> {
  const p = parseOrExit(parse, args, SQL_USAGE);
  if ('exit' in p) return p.exit;
  const folder = p.files.length === 1 ? tablesIn(p.files[0]) : new Map<TableName, string[]>();
  /** the scratch folder of a capture's tables (sql over capture files), gone at the end */
  const scratch: { dir: string | null; release: (() => void) | null } = { dir: null, release: null };
  /** the file written: `tmp` renamed over `file` at the end, or `file` itself (a pipe, a device) when tmp is null */
  let outFile: { tmp: string | null; file: string; stream: WriteStream } | null = null;
  let releaseOut: (() => void) | null = null;
  if (p.output !== null) {
    const target = outputTarget(p.output);
    if ('error' in target) {
      process.stderr.write(escapeLines(target.error) + '\n');
      return 1;
    }
    const file = 'replace' in target ? target.replace : target.inPlace;
    const tmp = 'replace' in target ? join(dirname(file), `.${basename(file)}.tmp-${process.pid}`) : null;
    try {
      const stream = createWriteStream(tmp ?? file, { flags: tmp ? 'wx' : 'w' });
      outFile = { tmp, file, stream };
      await new Promise<void>((resolve, reject) => stream.once('open', () => resolve()).once('error', reject));
    } catch (e) {
      process.stderr.write(escapeLines(`cannot write ${p.output}: ${(e as Error).message}`) + '\n');
      return 1;
    }
    if (tmp !== null) releaseOut = onInterrupt(() => rmSync(tmp, { force: true }));
  }
  const out = new Out(outFile?.stream ?? process.stdout);
  const run = async (): Promise<number> => {
    let tables = folder;
    // a folder without tables is a capture's files (read-files.ts), unless it has none either
    const lone = tables.size === 0 && p.files.length === 1 && existsSync(p.files[0]) && statSync(p.files[0]).isDirectory() ? folderFiles(p.files[0]) : null;
    if (lone && 'error' in lone) {
      process.stderr.write(
        `${escapeControls(p.files[0])} holds no tables (export --parquet DIR FILE... writes them) and no capture: ${escapeControls(lone.error)}\n`,
      );
      return 1;
    }
    if (tables.size > 0 && p.filter) {
      process.stderr.write(
        `--filter reads a capture's files: the tables in ${escapeControls(p.files[0])} are made already (export --parquet DIR --filter EXPR FILE... makes filtered ones)\n`,
      );
      return 2;
    }
    if (tables.size > 0) {
      // a capture whose export has not finished (interrupted, still running, or written before
      // the captures table was) is refused, not queried as if it were whole
      const dir = p.files[0];
      const missing = incompleteCaptures(dir, parquetCaptureId);
      if (missing.length > 0) {
        const running = existsSync(join(dir, EXPORT_LOCK));
        for (const m of missing)
          process.stderr.write(escapeLines(`${m.seen}: capture ${m.id} is not complete: it has no row in ${dir}/captures, which export writes last`) + '\n');
        process.stderr.write(
          escapeLines(
            running
              ? `an export into ${dir} is running (${EXPORT_LOCK}): query again once it has ended`
              : `its export was interrupted, or was written before the captures table existed: export the capture again (export --parquet ${dir} FILE...)`,
          ) + '\n',
        );
        return 1;
      }
    }
    if (tables.size === 0) {
      // a capture: its tables as Parquet in a temp folder, then queried like an exported one
      const dir = (scratch.dir = mkdtempSync(join(tmpdir(), 'stackmap-sql-')));
      // Ctrl-C while the tables are made or queried: the scratch folder goes too
      scratch.release = onInterrupt(() => rmSync(dir, { recursive: true, force: true }));
      const progress = ttyProgress(p.quiet);
      const r = await exportParquet(p.files, dir, {
        log: () => {},
        place: () => ({ layout: 'flat', converted: null, fileOf: (t) => join(dir, `${t}.parquet`) }),
        scratch: true,
        progress,
        onTable: progress.step,
        filter: p.filter,
      });
      progress.done();
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
      await streamQueries(tables, p.query, printerFor, { externalAccess: p.externalAccess });
    } catch (e) {
      // what was printed stays (the table's first rows); the message says why the rest is not there
      process.stderr.write(`${escapeLines((e as Error).message)}\n`);
      return 1;
    }
    return 0;
  };
  let ok = false;
  let code = 1;
  try {
    code = await run();
    ok = code === 0;
  } finally {
    if (outFile) {
      const f = outFile;
      f.stream.end();
      await finished(f.stream).catch((e: Error) => void (out.error ??= e));
    }
    out.end();
    // a write that failed (ENOSPC, EIO): said in one line; the result is not where it was asked for
    // (standard output's failure is said by main.ts, which watches stdout for every command)
    if (out.error && outFile) process.stderr.write(escapeLines(`cannot write ${p.output}: ${out.error.message}`) + '\n');
    if (out.error) ok = false;
    if (outFile?.tmp) {
      if (ok) renameSync(outFile.tmp, outFile.file);
      else rmSync(outFile.tmp, { force: true });
    }
    releaseOut?.();
    if (scratch.dir) rmSync(scratch.dir, { recursive: true, force: true });
    scratch.release?.();
  }
  return out.error ? 1 : code;
}
