import { existsSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileWriter } from 'hyparquet-writer';
import { escapeControls, escapeLines, jsonForTerminal } from '../core/base/control-chars.ts';
import { Explorer } from '../core/query/explorer.ts';
import { understood } from '../core/capture/ingest.ts';
import { segmentsOf } from '../core/capture/segments.ts';
import { buildTables, type CaptureOrigin } from '../core/tables/build.ts';
import { TABLE_NAMES, type TableName } from '../core/tables/schema.ts';
import { writeParquet } from '../core/tables/parquet.ts';
import { place, type Layout, type Placement } from './export-folder.ts';
import { removeDeadTemps, withFolderLock, type LockOptions } from './export-lock.ts';
import { makeDir, prepareOutDir } from './out-dir.ts';
import { onInterrupt } from './interrupt.ts';
import { exportSelection } from '../core/export/exports.ts';
import { ALL, type Granularity } from '../core/query/api.ts';
import { captureIdOfSources, readFiles } from './read-files.ts';
import { version } from './version.ts';
import { ttyProgress } from './progress.ts';
import type { LoadOptions } from '../core/capture/load.ts';
import { parseOptions, parseOrExit, UsageError } from './usage.ts';
import { fieldOf, type GroupBy, type WeightBy } from '../core/query/weigh.ts';
import { groupArg, needsDetails, unweighedNote, weightArg, weighing } from './weigh-args.ts';
import { FILTER_OPTIONS, filterHelp, filterOf } from './filter-args.ts';
import type { EventFilter } from '../core/capture/event-filter.ts';

export const EXPORT_USAGE = `usage: stackmap-explorer export --format folded|speedscope|chrome [--output FILE]
                                [--granularity function|site] [--weight occurrences|ref_count|period|field:NAME]
                                [--group task|process|event|field:NAME] [--stackcollapse] [--filter EXPR]... [--] FILE...
       stackmap-explorer export --format parquet --out DIR [--label TEXT] [--filter EXPR]... [--json] [--] FILE...
       stackmap-explorer export --parquet DIR [--label TEXT] [--json] [--] FILE...

  --format folded|speedscope|chrome
                  the capture's stacks as folded lines (root;...;leaf COUNT: flamegraph.pl,
                  inferno), a speedscope profile, or Chrome trace event JSON (Perfetto), on
                  stdout or into --output FILE
  --granularity function|site
                  frames by function (offsets dropped; the default for perf script input) or
                  by call site sym+0xoff (the default for ftrace stacks)
  --weight occurrences|ref_count|period|field:NAME
                  what a stack weighs: its occurrences (default), the dumps' ref_count
                  (refcount too), perf's sample period (1 where perf printed none), or the sum
                  of a numeric field of its events (field:bytes_alloc; folded and speedscope:
                  an event without it weighs 0, and how many is said on stderr)
  --group task|process|event|field:NAME
                  folded and speedscope: a root frame per task (comm), process (comm-TGID where
                  the trace prints a TGID, else comm-pid), event (its name) or field:NAME (its
                  value), as stackcollapse-perf.pl's comm root
  --stackcollapse with --format folded: what FlameGraph's stackcollapse-perf.pl prints with its
                  default options, line for line (process name first, names tidied, periods,
                  the first event only)
${filterHelp(18)}
                  (the tables of --format parquet hold only those events and their records)

  --format parquet writes the capture's tables (${TABLE_NAMES.join(', ')}) as Parquet, each
  row with the capture's capture_id: DIR/<table>.parquet into an empty or new DIR, or
  DIR/<table>/<capture_id>.parquet when DIR already holds captures (a DIR of one earlier
  capture's DIR/<table>.parquet is converted to that layout first, said on stderr). Exporting
  the same capture again replaces its files. The \`captures\` table, written last, says where the
  capture came from (paths, sizes, digests, --label, capture.txt's host and kernel); sql refuses a
  capture whose export did not finish. Query the folder with DuckDB:
    duckdb -c "SELECT capture_id, count(*) FROM 'DIR/events/*.parquet' GROUP BY 1"
  or load it into Spark, Trino or BigQuery as it is (plain Parquet, snappy).

  --parquet DIR   the folder to write (made if missing)
  --label TEXT    the capture's name in the captures table (a device, a build, a run)
  --quiet         no progress line on stderr (shown only when stderr is a terminal)
  --json          print {captureId, layout, converted, tables: [{table, rows, bytes, file}]}
  --              ends the options

  One export at a time writes into a DIR: another waits for its lock (DIR/.stackmap-export.lock,
  naming the holder's pid), saying so on stderr, for at most 60 s (STACKMAP_EXPORT_LOCK_WAIT=
  SECONDS); a lock whose export has ended is taken over, as are the temporary files it left.

exit status: 0 when at least one file was read, 1 when none could be or DIR cannot take the
tables (a write failed, the lock was not had), 2 on a usage error`;

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
  opts: {
    log: (s: string) => void;
    place?: (id: string) => Placement | { error: string };
    scratch?: boolean;
    label?: string | null;
    progress?: Pick<LoadOptions, 'onProgress' | 'progressEveryMs'>;
    onTable?: (table: TableName, k: number, of: number) => void;
    /** the folder lock's wait and grace (tests); its messages go to `log` */
    lock?: Omit<LockOptions, 'log'>;
    /** only the events it matches, and their stack records, in the tables */
    filter?: EventFilter;
  },
): Promise<ExportResult | { error: string; readAny: boolean }> {
  const place_ = opts.place ?? ((id: string) => place(dir, id, opts.log));
  const { capture, failed, sources } = await readFiles(paths, { digests: true, details: true, ...opts.progress, filter: opts.filter });
  const captureId = captureIdOfSources(sources);
  const origin: CaptureOrigin = {
    sources: sources.map(({ path, size, digest }) => ({ path, size, digest })),
    label: opts.label ?? null,
    exportedBy: `stackmap-explorer ${version()}`,
  };
  const readAny = capture.files.some(understood);
  if (!readAny) return { error: 'no file could be read: nothing to export', readAny };
  // one export at a time places and writes into a folder (two started together chose the flat
  // layout both, and the second silently replaced the first): a lock file, taken exclusively
  const r = await withFolderLock(
    opts.place ? null : dir,
    async (): Promise<ExportResult | { error: string; readAny: boolean }> => {
      // what an export killed (SIGKILL) left: no process removes its temporary files but the next export
      if (!opts.place) {
        const gone = removeDeadTemps(dir);
        if (gone.length)
          opts.log(`removed ${gone.length} temporary file${gone.length === 1 ? '' : 's'} left by an export that did not finish: ${gone.join(', ')}\n`);
      }
      const p = place_(captureId);
      if ('error' in p) return { error: p.error, readAny };
      const explorer = new Explorer(capture);
      const diagnostics = [
        ...capture.diagnostics,
        ...segmentsOf(capture).diagnostics,
        ...failed.map((f) => ({ file: f.file, where: 'file', message: `cannot read: ${f.reason}`, count: 1 })),
      ];
      // every table to a temporary name first, renamed once all are written: an export that fails or
      // is interrupted (Ctrl-C removes the temporary files, exit 130) leaves no table of this capture
      // behind, never some of them, which sql would query as a whole capture
      const pending: { tmp: string; file: string; name: TableName; rows: number }[] = [];
      const removeTemps = () => {
        for (const w of pending) rmSync(w.tmp, { force: true });
        // a folder's conversion to the layout by capture is put back, and the folders made for this capture's files go
        for (const d of madeDirs.reverse()) rmdirIfEmpty(d);
        p.undo?.();
      };
      const madeDirs: string[] = [];
      const release = onInterrupt(removeTemps);
      try {
        for (const name of TABLE_NAMES) {
          opts.onTable?.(name, pending.length, TABLE_NAMES.length);
          // a turn of the event loop between tables: a Ctrl-C is handled here, not once all is written
          await new Promise((r) => setImmediate(r));
          // a row group at a time where a table can be (frames: 16.7M rows for the largest map)
          const [t] = buildTables(explorer, { captureId, diagnostics, origin, only: [name], rowGroups: true });
          const file = p.fileOf(name);
          if (!existsSync(join(file, '..'))) madeDirs.push(join(file, '..'));
          makeDir(join(file, '..'));
          const tmp = join(file, '..', `.${basename(file)}.tmp-${process.pid}`);
          pending.push({ tmp, file, name, rows: t.rows });
          try {
            await writeParquet(t, fileWriter(tmp), { captureId, scratch: opts.scratch });
          } catch (e) {
            // a full disk (ENOSPC), a quota, an I/O error: the file it happened to, in one line
            throw systemError(e) ? new ExportWriteError(`cannot write ${tmp}: ${(e as Error).message}`) : e;
          }
        }
        // captures last (TABLE_NAMES ends with it): the mark that the capture is whole. An earlier
        // export's mark goes first, so a reader never takes old and new tables for one capture.
        rmSync(p.fileOf('captures'), { force: true });
        for (const w of pending) renameSync(w.tmp, w.file);
      } catch (e) {
        removeTemps();
        throw e;
      } finally {
        release();
      }
      const tables: Written[] = pending.map((w) => ({ table: w.name, rows: w.rows, bytes: statSync(w.file).size, file: w.file }));
      return { captureId, readAny, layout: p.layout, converted: p.converted, tables };
    },
    { ...opts.lock, log: opts.log },
  );
  return 'lockError' in r ? { error: r.lockError, readAny } : r;
}

/** A table file that could not be written: its message names the file and the reason, said as it is (no stack). */
export class ExportWriteError extends Error {}

/** An error of the system (ENOSPC, EACCES, ENOENT of a dangling link), whose message names the call and, mostly, the path. */
const systemError = (e: unknown): boolean =>
  e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string' && typeof (e as NodeJS.ErrnoException).syscall === 'string';

function rmdirIfEmpty(d: string): void {
  try {
    rmdirSync(d);
  } catch {
    // not empty (other captures' files): it stays
  }
}

type TextFormat = 'folded' | 'speedscope' | 'chrome';
interface ExportArgs {
  format: TextFormat | 'parquet';
  dir: string | null;
  output: string | null;
  json: boolean;
  quiet: boolean;
  label: string | null;
  stackcollapse: boolean;
  granularity: Granularity | undefined;
  weight: WeightBy;
  group: GroupBy | null;
  files: string[];
  /** --filter: only the events it matches are read into the capture */
  filter?: EventFilter;
}

function parse(args: string[]): ExportArgs | 'help' {
  const o = parseOptions(args, {
    json: { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
    label: { type: 'string' },
    stackcollapse: { type: 'boolean' },
    parquet: { type: 'string' },
    out: { type: 'string' },
    output: { type: 'string', short: 'o' },
    format: { type: 'string' },
    granularity: { type: 'string' },
    weight: { type: 'string' },
    group: { type: 'string' },
    ...FILTER_OPTIONS,
  });
  if (o.help) return 'help';
  const filtered = filterOf(o);
  if ('error' in filtered) throw new UsageError(filtered.error);
  const p: ExportArgs = {
    format: 'parquet',
    dir: null,
    output: null,
    json: o.flag('json'),
    quiet: o.flag('quiet'),
    label: null,
    stackcollapse: o.flag('stackcollapse'),
    granularity: undefined,
    weight: 'occurrences',
    group: null,
    files: o.positionals,
    filter: filtered.filter,
  };
  const nonEmpty = (name: string, what: string) => {
    const v = o.string(name);
    if (v === '') throw new UsageError(`--${name} needs ${what}`);
    return v ?? null;
  };
  p.label = nonEmpty('label', 'a label');
  p.dir = nonEmpty('out', 'a folder') ?? nonEmpty('parquet', 'a folder');
  p.output = nonEmpty('output', 'a file');
  const format = nonEmpty('format', 'a format') ?? (o.string('parquet') !== undefined ? 'parquet' : null);
  const granularity = nonEmpty('granularity', 'function or site');
  if (granularity !== null) {
    if (granularity !== 'function' && granularity !== 'site') throw new UsageError(`--granularity takes function or site, not ${granularity}`);
    p.granularity = granularity;
  }
  p.weight = weightArg(nonEmpty('weight', 'a weight'));
  p.group = groupArg(nonEmpty('group', 'a group'), p.weight);
  if (format === null) throw new UsageError('--format folded|speedscope|chrome (to stdout) or --format parquet --out DIR is required');
  if (format !== 'folded' && format !== 'speedscope' && format !== 'chrome' && format !== 'parquet')
    throw new UsageError(`--format takes folded, speedscope, chrome or parquet, not ${format}`);
  p.format = format;
  if (p.format === 'parquet' && p.dir === null) throw new UsageError('--format parquet needs --out DIR');
  if (p.label !== null && p.format !== 'parquet') throw new UsageError('--label names a capture in a Parquet export (--format parquet)');
  if (p.stackcollapse && p.format !== 'folded') throw new UsageError('--stackcollapse is a form of --format folded');
  if ((p.group !== null || fieldOf(p.weight) !== null) && (p.stackcollapse || (p.format !== 'folded' && p.format !== 'speedscope'))) {
    throw new UsageError(
      `${p.group !== null ? '--group' : '--weight field:NAME'} is for --format folded or speedscope${p.stackcollapse ? ', not --stackcollapse (its own comm root and periods)' : ''}`,
    );
  }
  if (p.files.length === 0) throw new UsageError('no files given');
  return p;
}

/** folded, speedscope or Chrome trace JSON of the whole capture, to stdout or --output FILE */
async function exportText(p: ExportArgs): Promise<number> {
  const progress = ttyProgress(p.quiet);
  // a field's weights and a process's TGID are in the payloads and TGIDs, kept only when asked
  const { capture, failed } = await readFiles(p.files, { ...progress, details: needsDetails(p.weight, p.group), filter: p.filter });
  progress.done();
  for (const f of failed) process.stderr.write(`${escapeControls(f.file)}: cannot read: ${escapeControls(f.reason)}\n`);
  for (const d of capture.diagnostics) process.stderr.write(escapeLines(`${d.file}: ${d.where}: ${d.message}`) + '\n');
  if (!capture.files.some(understood)) return 1;
  const ex = new Explorer(capture);
  const kind = p.format === 'chrome' ? 'chrome-trace' : (p.format as 'folded' | 'speedscope');
  const w = weighing(ex.data, p.weight, p.group);
  for (const note of w.groups?.notes ?? []) process.stderr.write(escapeLines(note) + '\n');
  const onWeighed = ({ unweighed }: { unweighed: number }) => {
    if (w.field !== null && unweighed) process.stderr.write(escapeLines(unweighedNote(unweighed, w.field)) + '\n');
  };
  const text = exportSelection(ex.data, kind, ALL, {
    weight: w.weight,
    eventWeights: w.eventWeights,
    groups: w.groups,
    onWeighed,
    granularity: p.granularity,
    stackcollapse: p.stackcollapse,
    title: basename(p.files[0]),
  });
  if (p.output) {
    try {
      writeFileSync(p.output, text);
    } catch (e) {
      process.stderr.write(escapeLines(`cannot write ${p.output}: ${(e as Error).message}`) + '\n');
      return 1;
    }
  } else process.stdout.write(text);
  return 0;
}

const kib = (b: number) => (b < 1024 ? `${b} B` : `${(b / 1024).toFixed(1)} KiB`);

export async function exportCommand(args: string[]): Promise<number> {
  const p = parseOrExit(parse, args, EXPORT_USAGE);
  if ('exit' in p) return p.exit;
  if (p.format !== 'parquet') return exportText(p);
  const dir = p.dir!;
  const existed = existsSync(dir);
  // a folder that cannot be made or written is said at once, before the capture is read
  const unwritable = prepareOutDir(dir);
  if (unwritable) {
    process.stderr.write(escapeLines(unwritable) + '\n');
    return 1;
  }
  // Ctrl-C at any point, the read included: exit 130, and the folder made for this export goes
  // again when nothing else was put in it (the tables' own cleanups run first, see exportParquet)
  const release = onInterrupt(() => {
    if (!existed) rmdirSync(dir);
  });
  const progress = ttyProgress(p.quiet);
  let r: Awaited<ReturnType<typeof exportParquet>>;
  try {
    r = await exportParquet(p.files, dir, {
      log: (s) => process.stderr.write(escapeLines(s)),
      label: p.label,
      progress,
      onTable: progress.step,
      filter: p.filter,
    });
  } catch (e) {
    // a write that failed (a full disk), a folder in the way (a dangling link where a table's
    // folder goes): one line, the lock released and the temporary files gone (exportParquet's cleanups)
    if (!(e instanceof ExportWriteError) && !systemError(e)) throw e;
    progress.done();
    process.stderr.write(escapeLines(`export to ${dir} failed: ${(e as Error).message}`) + '\n');
    return 1;
  } finally {
    release();
  }
  progress.done();
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
