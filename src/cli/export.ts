import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileWriter } from 'hyparquet-writer';
import { escapeControls, escapeLines, jsonForTerminal } from '../core/base/control-chars.ts';
import { Explorer } from '../core/query/explorer.ts';
import { understood } from '../core/capture/ingest.ts';
import { segmentsOf } from '../core/capture/segments.ts';
import { buildTables } from '../core/tables/build.ts';
import { CAPTURE_ID_HEAD_BYTES, captureIdOf, Fnv1a64, type CaptureFileId } from '../core/tables/id.ts';
import { TABLE_NAMES, type TableName } from '../core/tables/schema.ts';
import { readFooter } from '../core/tables/parquet-footer.ts';
import { META_CAPTURE, writeParquet } from '../core/tables/parquet.ts';
import { makeDir, prepareOutDir } from './out-dir.ts';
import { onInterrupt } from './interrupt.ts';
import { exportSelection } from '../core/export/exports.ts';
import { ALL, type FlameWeight, type Granularity } from '../core/query/api.ts';
import { readFiles } from './read-files.ts';
import { parseOrExit, UsageError } from './usage.ts';

export const EXPORT_USAGE = `usage: stackmap-explorer export --format folded|speedscope|chrome [--output FILE]
                                [--granularity function|site] [--weight occurrences|refcount|period]
                                [--stackcollapse] [--] FILE...
       stackmap-explorer export --format parquet --out DIR [--json] [--] FILE...
       stackmap-explorer export --parquet DIR [--json] [--] FILE...

  --format folded|speedscope|chrome
                  the capture's stacks as folded lines (root;...;leaf COUNT: flamegraph.pl,
                  inferno), a speedscope profile, or Chrome trace event JSON (Perfetto), on
                  stdout or into --output FILE
  --granularity function|site
                  frames by function (offsets dropped; the default for perf script input) or
                  by call site sym+0xoff (the default for ftrace stacks)
  --weight occurrences|refcount|period
                  what a stack weighs: its occurrences (default), the dumps' ref_count, or
                  perf's sample period (1 where perf printed none)
  --stackcollapse with --format folded: what FlameGraph's stackcollapse-perf.pl prints with its
                  default options, line for line (process name first, names tidied, periods,
                  the first event only)

  --format parquet writes the capture's tables (${TABLE_NAMES.join(', ')}) as Parquet, each
  row with the capture's capture_id: DIR/<table>.parquet into an empty or new DIR, or
  DIR/<table>/<capture_id>.parquet when DIR already holds captures (a DIR of one earlier
  capture's DIR/<table>.parquet is converted to that layout first, said on stderr). Exporting
  the same capture again replaces its files. Query the folder with DuckDB:
    duckdb -c "SELECT capture_id, count(*) FROM 'DIR/events/*.parquet' GROUP BY 1"
  or load it into Spark, Trino or BigQuery as it is (plain Parquet, snappy).

  --parquet DIR   the folder to write (made if missing)
  --json          print {captureId, layout, converted, tables: [{table, rows, bytes, file}]}
  --              ends the options

exit status: 0 when at least one file was read, 1 when none could be or DIR cannot take the
tables, 2 on a usage error`;


/** The capture_id of files on disk: their names (no folder), sizes, first 4 KiB and content digests. Unopenable paths are left out. */
export function captureIdOfPaths(paths: readonly string[]): string {
  const files: CaptureFileId[] = [];
  for (const p of paths) {
    try {
      const st = statSync(p);
      if (!st.isFile()) continue;
      const fd = openSync(p, 'r');
      try {
        const head = new Uint8Array(Math.min(CAPTURE_ID_HEAD_BYTES, st.size));
        let got = 0;
        while (got < head.length) {
          const n = readSync(fd, head, got, head.length - got, got);
          if (n === 0) break;
          got += n;
        }
        // every byte, 1 MiB at a time, for the content digest (as contentDigest reads a stream)
        const h = new Fnv1a64();
        const buf = new Uint8Array(1 << 20);
        for (let at = 0; ; ) {
          const n = readSync(fd, buf, 0, buf.length, at);
          if (n === 0) break;
          h.update(buf.subarray(0, n));
          at += n;
        }
        files.push({ name: basename(p), size: st.size, head: head.subarray(0, got), digest: h.hex() });
      } finally {
        closeSync(fd);
      }
    } catch {
      // missing or unreadable: readFiles reports it; the id is of the files that can be read
    }
  }
  return captureIdOf(files);
}

/** The footer's capture_id of a table file this tool wrote, or null. */
export function parquetCaptureId(path: string): string | null {
  const r = footerCaptureId(path);
  return 'id' in r ? r.id : null;
}

/** The footer's capture_id of a table file this tool wrote, or why there is none: the byte it is at, and the reason. */
export function footerCaptureId(path: string): { id: string } | { why: string } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    return { why: `cannot be opened: ${(e as Error).message}` };
  }
  try {
    const read = (offset: number, length: number) => {
      const b = new Uint8Array(length);
      let got = 0;
      while (got < length) {
        const n = readSync(fd, b, got, length - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      return b.subarray(0, got);
    };
    const r = readFooter(fstatSync(fd).size, read);
    if ('problem' in r) return { why: `byte ${r.problem.offset}: ${r.problem.reason}` };
    const id = r.keyValues.get(META_CAPTURE);
    return id === undefined ? { why: `no ${META_CAPTURE} in its footer's key-value metadata` } : { id };
  } catch (e) {
    return { why: `cannot be read: ${(e as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

export type Layout = 'flat' | 'folders';

/** What DIR holds: its flat table files, its table folders. */
function survey(dir: string): { flat: TableName[]; folders: TableName[] } {
  const flat: TableName[] = [];
  const folders: TableName[] = [];
  if (!existsSync(dir)) return { flat, folders };
  const names = new Set(readdirSync(dir));
  for (const t of TABLE_NAMES) {
    if (names.has(`${t}.parquet`) && statSync(join(dir, `${t}.parquet`)).isFile()) flat.push(t);
    if (names.has(t) && statSync(join(dir, t)).isDirectory()) folders.push(t);
  }
  return { flat, folders };
}

export interface Placement {
  layout: Layout;
  /** the capture whose flat files were moved into DIR/<table>/<id>.parquet, or null */
  converted: string | null;
  /** where each table of this capture goes */
  fileOf: (t: TableName) => string;
}

/**
 * Where a capture's tables go in DIR: flat into an empty DIR (or one holding this capture's
 * flat files), else by capture. One earlier capture's flat files are moved into the folder
 * layout first; flat files of no known capture are refused rather than moved or overwritten.
 */
export function place(dir: string, captureId: string, log: (s: string) => void): Placement | { error: string } {
  if (existsSync(dir) && !statSync(dir).isDirectory()) return { error: `${dir} is not a folder` };
  const { flat, folders } = survey(dir);
  const flatIds = new Set<string>();
  for (const t of flat) {
    const file = join(dir, `${t}.parquet`);
    const r = footerCaptureId(file);
    if ('why' in r) return { error: `${file} is no table file of this tool (${r.why}): move it away, or export to another folder` };
    flatIds.add(r.id);
  }
  const flatFile = (t: TableName) => join(dir, `${t}.parquet`);
  const folderFile = (t: TableName, id: string) => join(dir, t, `${id}.parquet`);
  if (folders.length === 0 && (flat.length === 0 || (flatIds.size === 1 && flatIds.has(captureId)))) {
    return { layout: 'flat', converted: null, fileOf: flatFile };
  }
  let converted: string | null = null;
  if (flat.length) {
    if (flatIds.size > 1) return { error: `${dir} holds flat table files of ${flatIds.size} captures (${[...flatIds].join(', ')}): sort them into ${dir}/<table>/<capture_id>.parquet first` };
    converted = [...flatIds][0]!;
    for (const t of flat) {
      makeDir(join(dir, t));
      renameSync(flatFile(t), folderFile(t, converted));
    }
    log(`${dir} held capture ${converted} as ${dir}/<table>.parquet: moved to ${dir}/<table>/${converted}.parquet to add capture ${captureId} beside it\n`);
  }
  return { layout: 'folders', converted, fileOf: (t) => folderFile(t, captureId) };
}

export interface Written {
  table: TableName;
  rows: number;
  bytes: number;
  file: string;
}

export interface ExportResult {
  captureId: string;
  /** whether any file was read (the exit status) */
  readAny: boolean;
  layout: Layout;
  converted: string | null;
  tables: Written[];
}

/**
 * Reads the capture from `paths` and writes its tables to DIR, one table built and written at a
 * time (each file written beside its place and renamed into it, so a reader never sees half a file).
 */
export async function exportParquet(
  paths: string[],
  dir: string,
  opts: { log: (s: string) => void; place?: (id: string) => Placement | { error: string }; scratch?: boolean },
): Promise<ExportResult | { error: string; readAny: boolean }> {
  const place_ = opts.place ?? ((id: string) => place(dir, id, opts.log));
  const captureId = captureIdOfPaths(paths);
  const { capture, failed } = await readFiles(paths);
  const readAny = capture.files.some(understood);
  if (!readAny) return { error: 'no file could be read: nothing to export', readAny };
  // one export at a time places and writes into a folder (two started together chose the flat
  // layout both, and the second silently replaced the first): a lock file, taken exclusively
  return withFolderLock(opts.place ? null : dir, async () => {
    const p = place_(captureId);
    if ('error' in p) return { error: p.error, readAny };
    const explorer = new Explorer(capture);
    const diagnostics = [...capture.diagnostics, ...segmentsOf(capture).diagnostics, ...failed.map((f) => ({ file: f.file, where: 'file', message: `cannot read: ${f.reason}`, count: 1 }))];
    // every table to a temporary name first, renamed once all are written: an export that fails or
    // is interrupted (Ctrl-C removes the temporary files, exit 130) leaves no table of this capture
    // behind, never some of them, which sql would query as a whole capture
    const pending: { tmp: string; file: string; name: TableName; rows: number }[] = [];
    const removeTemps = () => {
      for (const w of pending) rmSync(w.tmp, { force: true });
    };
    const release = onInterrupt(removeTemps);
    try {
      for (const name of TABLE_NAMES) {
        // a turn of the event loop between tables: a Ctrl-C is handled here, not once all is written
        await new Promise((r) => setImmediate(r));
        const [t] = buildTables(explorer, { captureId, diagnostics, only: [name] });
        const file = p.fileOf(name);
        makeDir(join(file, '..'));
        const tmp = join(file, '..', `.${basename(file)}.tmp-${process.pid}`);
        pending.push({ tmp, file, name, rows: t.rows });
        await writeParquet(t, fileWriter(tmp), { captureId, scratch: opts.scratch });
      }
      for (const w of pending) renameSync(w.tmp, w.file);
    } catch (e) {
      removeTemps();
      throw e;
    } finally {
      release();
    }
    const tables: Written[] = pending.map((w) => ({ table: w.name, rows: w.rows, bytes: statSync(w.file).size, file: w.file }));
    return { captureId, readAny, layout: p.layout, converted: p.converted, tables };
  });
}

/** The lock a folder's export holds while it places and writes its tables. */
export const EXPORT_LOCK = '.stackmap-export.lock';

/**
 * Runs `fn` holding `dir`'s export lock (null: no lock): a file made with O_EXCL holding the
 * holder's pid. Held by a live process, it is waited for; left by one that is gone (killed), taken.
 */
async function withFolderLock<T>(dir: string | null, fn: () => Promise<T>): Promise<T> {
  if (dir === null) return fn();
  makeDir(dir);
  const lock = join(dir, EXPORT_LOCK);
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let holder = NaN;
      try {
        holder = Number(readFileSync(lock, 'utf8'));
      } catch {
        continue; // released meanwhile
      }
      if (!alive(holder)) {
        rmSync(lock, { force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const release = onInterrupt(() => rmSync(lock, { force: true }));
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
    release();
  }
}

/** Whether a process of this pid runs (a lock's holder); an unreadable pid counts as alive until it is written. */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

type TextFormat = 'folded' | 'speedscope' | 'chrome';
interface ExportArgs {
  format: TextFormat | 'parquet';
  dir: string | null;
  output: string | null;
  json: boolean;
  stackcollapse: boolean;
  granularity: Granularity | undefined;
  weight: FlameWeight;
  files: string[];
}

function parse(args: string[]): ExportArgs | 'help' {
  const p: ExportArgs = { format: 'parquet', dir: null, output: null, json: false, stackcollapse: false, granularity: undefined, weight: 'occurrences', files: [] };
  let format: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const raw = args[i];
    if (raw === '--') {
      p.files.push(...args.slice(i + 1));
      break;
    }
    // `--opt=value` is `--opt value`
    const eq = raw.startsWith('--') ? raw.indexOf('=') : -1;
    const a = eq > 0 ? raw.slice(0, eq) : raw;
    const value = (what: string) => {
      const v = eq > 0 ? raw.slice(eq + 1) : args[++i];
      if (v === undefined || v === '') throw new UsageError(`${a} needs ${what}`);
      return v;
    };
    if (a === '--help' || a === '-h') return 'help';
    else if (a === '--json') p.json = true;
    else if (a === '--stackcollapse') p.stackcollapse = true;
    else if (a === '--parquet' || a === '--out') {
      p.dir = value('a folder');
      if (a === '--parquet') format ??= 'parquet';
    } else if (a === '--output') p.output = value('a file');
    else if (a === '--format') format = value('a format');
    else if (a === '--granularity') {
      const v = value('function or site');
      if (v !== 'function' && v !== 'site') throw new UsageError(`--granularity takes function or site, not ${v}`);
      p.granularity = v;
    } else if (a === '--weight') {
      const v = value('a weight');
      if (v !== 'occurrences' && v !== 'refcount' && v !== 'period') throw new UsageError(`--weight takes occurrences, refcount or period, not ${v}`);
      p.weight = v;
    } else if (a.startsWith('-') && a !== '-') throw new UsageError(`unknown option: ${a}`);
    else p.files.push(raw);
  }
  if (format === null) throw new UsageError('--format folded|speedscope|chrome (to stdout) or --format parquet --out DIR is required');
  if (format !== 'folded' && format !== 'speedscope' && format !== 'chrome' && format !== 'parquet') throw new UsageError(`--format takes folded, speedscope, chrome or parquet, not ${format}`);
  p.format = format;
  if (p.format === 'parquet' && p.dir === null) throw new UsageError('--format parquet needs --out DIR');
  if (p.stackcollapse && p.format !== 'folded') throw new UsageError('--stackcollapse is a form of --format folded');
  if (p.files.length === 0) throw new UsageError('no files given');
  return p;
}

/** folded, speedscope or Chrome trace JSON of the whole capture, to stdout or --output FILE */
async function exportText(p: ExportArgs): Promise<number> {
  const { capture, failed } = await readFiles(p.files);
  for (const f of failed) process.stderr.write(`${escapeControls(f.file)}: cannot read: ${escapeControls(f.reason)}\n`);
  for (const d of capture.diagnostics) process.stderr.write(escapeLines(`${d.file}: ${d.where}: ${d.message}`) + '\n');
  if (!capture.files.some(understood)) return 1;
  const ex = new Explorer(capture);
  const kind = p.format === 'chrome' ? 'chrome-trace' : (p.format as 'folded' | 'speedscope');
  const text = exportSelection(ex.data, kind, ALL, { weight: p.weight, granularity: p.granularity, stackcollapse: p.stackcollapse, title: basename(p.files[0]) });
  if (p.output) writeFileSync(p.output, text);
  else process.stdout.write(text);
  return 0;
}

const kib = (b: number) => (b < 1024 ? `${b} B` : `${(b / 1024).toFixed(1)} KiB`);

export async function exportCommand(args: string[]): Promise<number> {
  const p = parseOrExit(parse, args, EXPORT_USAGE);
  if ('exit' in p) return p.exit;
  if (p.format !== 'parquet') return exportText(p);
  const dir = p.dir!;
  // a folder that cannot be made or written is said at once, before the capture is read
  const unwritable = prepareOutDir(dir);
  if (unwritable) {
    process.stderr.write(escapeLines(unwritable) + '\n');
    return 1;
  }
  const r = await exportParquet(p.files, dir, { log: (s) => process.stderr.write(escapeLines(s)) });
  if ('error' in r) {
    process.stderr.write(escapeLines(r.error) + '\n');
    return 1;
  }
  if (p.json) {
    const { readAny: _r, ...out } = r;
    process.stdout.write(jsonForTerminal(out, 2) + '\n');
  } else {
    const where = r.layout === 'flat' ? `${dir}/<table>.parquet` : `${dir}/<table>/${r.captureId}.parquet`;
    process.stdout.write(`capture ${r.captureId}: ${r.tables.length} tables written to ${escapeControls(where)}\n`);
    for (const t of r.tables) process.stdout.write(`  ${t.table.padEnd(12)} ${String(t.rows).padStart(10)} rows ${kib(t.bytes).padStart(12)}\n`);
  }
  return 0;
}
