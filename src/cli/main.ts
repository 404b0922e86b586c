import { escapeControls as esc, escapeLines, jsonForTerminal } from '../core/base/control-chars.ts';
import { Explorer } from '../core/query/explorer.ts';
import { understood } from '../core/capture/ingest.ts';
import { summarize } from '../core/capture/summary.ts';
import type { Granularity } from '../core/capture/function-tree.ts';
import { SELECTION_OPTIONS, selectionOf } from './selection-args.ts';
import { parseOptions, UsageError, type ParsedOptions } from './usage.ts';
import { readFiles } from './read-files.ts';
import { formatSummary } from './format-summary.ts';
import { ttyProgress } from './progress.ts';
import { version } from './version.ts';
import { FILTER_OPTIONS, FILTER_USAGE, filterOf } from './filter-args.ts';

const USAGE = `usage: stackmap-explorer summary [--json] [--segments] [--filter EXPR]... [--granularity function|site] [--generation G|none] [--range T0,T1] [--cpus 0,2] [--] FILE...
       stackmap-explorer simulate --mode v4|v7|v8 --cpus N --bits B --events N --resets N
                                  [--race-window-us N] [--seed S] --out DIR [--json]
       stackmap-explorer generate --out DIR [--events N | --mb N] [--mode v7|v8] [--stacks N]
                                  [--depth MIN-MAX] [--full-stacks] [--seed S] [--json]
       stackmap-explorer whatif [--json] [--buffer-kb N] [--mode v7|v8] [--max-fallback-share X] FILE...
       stackmap-explorer export --parquet DIR [--json] FILE...
       stackmap-explorer sql "QUERY" [--json] [--limit N | --all] FILE...|DIR
       stackmap-explorer top [--limit N] [--generation G] [--cpu C] [--pid P] [--event E] FILE...
       stackmap-explorer diff [--format table|folded|json] [--normalize] [--weight W] BEFORE AFTER
       stackmap-explorer --version

  summary   read a capture and print what it holds: ftrace trace text (trace, trace_pipe,
            trace-cmd report, systrace HTML), trace-cmd trace.dat, perf script output,
            stack_map, stack_map_bin, stack_map_stat, stackmap_dump.py --json, kallsyms or
            System.map; plain, .gz, .tar, .tar.gz or .zip; in any order, each recognised by
            its content
  simulate  run the kernel's recording path on a SharedArrayBuffer from N worker threads,
            with resets and dumps, and write the run as a capture to DIR (simulate --help)
  generate  write a synthetic capture for benchmarks to DIR: trace, dumps, kallsyms, up to
            262,144 stacks and ~1 GB of trace, streamed to disk (generate --help)
  whatif    would the stack map help this capture, and at which bits: its full stacks replayed
            through the map at bits 10..18, v7 and v8 (whatif --help)
  export    write the capture's tables (events, records, stacks, frames, dumps, stat, files,
            diagnostics) as Parquet to DIR, many captures to one folder (export --help)
  sql       run a query with DuckDB over those tables, of a capture or of a folder written by
            export (sql --help)
  top       the busiest stacks as text, as perf report --stdio prints them (top --help)
  diff      two captures compared stack by stack: a table of what changed, difffolded.pl's
            lines for flamegraph.pl's differential flame graph, or JSON (diff --help)
  FILE      a file, a folder (the files directly in it, as one capture) or a bundle (.tar,
            .tar.gz, .zip); - (or /dev/stdin, or any pipe) reads standard input, recognised by
            its content
  --json    one JSON object on stdout (DESIGN 5.1)
  --quiet   no progress line on stderr (it shows only when stderr is a terminal)
  --generation, --range, --cpus
            also count what the page shows for that selection, under "selection"
  --granularity function|site
            what the top stacks merge by: functions (offsets dropped, as perf report and
            stackcollapse-perf.pl do; the default for perf script input) or call sites
            (sym+0xoff, the stack map's identity; the default for ftrace stacks)
  --segments
            also count each segment (a trace file, or a run quoted in a prose file, whose time
            range is apart from the others) as the page does with its range selected, under
            "segments[i].counts"
${FILTER_USAGE}
            (summary, top, export and sql take it)

  --        ends the options: every argument after it is a file

exit status: 0 when at least one file was read, 1 when none could be (missing, an empty
folder, or of no kind this tool reads), 2 on a usage error`;

async function main(argv: string[]): Promise<number> {
  // every command reads its arguments with parseOptions (usage.ts: node:util's parseArgs)
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  // --version, before a command or after it (every command takes it)
  if (
    command === '--version' ||
    command === '-V' ||
    (command !== 'sql' && rest.slice(0, rest.indexOf('--') < 0 ? rest.length : rest.indexOf('--')).includes('--version'))
  ) {
    process.stdout.write(`stackmap-explorer ${version()}\n`);
    return 0;
  }
  if (command === 'top') return (await import('./top.ts')).topCommand(rest);
  if (command === 'simulate') return (await import('./simulate.ts')).simulate(rest);
  if (command === 'generate') return (await import('./generate.ts')).generate(rest);
  if (command === 'whatif') return (await import('./whatif.ts')).whatif(rest);
  if (command === 'export') return (await import('./export.ts')).exportCommand(rest);
  if (command === 'sql') return (await import('./sql.ts')).sqlCommand(rest);
  if (command === 'diff') return (await import('./diff.ts')).diffCommand(rest);
  if (command !== 'summary') {
    process.stderr.write((command ? `unknown command: ${esc(command)}\n` : '') + USAGE + '\n');
    return 2;
  }
  let o: ParsedOptions;
  try {
    o = parseOptions(rest, {
      ...SELECTION_OPTIONS,
      json: { type: 'boolean' },
      quiet: { type: 'boolean', short: 'q' },
      segments: { type: 'boolean' },
      granularity: { type: 'string' },
      ...FILTER_OPTIONS,
    });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${esc(e.message)}\n${USAGE}\n`);
    return 2;
  }
  if (o.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const parsed = selectionOf({ generation: o.string('generation'), range: o.string('range'), cpus: o.string('cpus') });
  if ('error' in parsed) {
    process.stderr.write(`${esc(parsed.error)}\n${USAGE}\n`);
    return 2;
  }
  // a filter that does not parse is said before any file is read
  const filtered = filterOf(o);
  if ('error' in filtered) {
    process.stderr.write(`${esc(filtered.error)}\n`);
    return 2;
  }
  const json = o.flag('json');
  const quiet = o.flag('quiet');
  const perSegment = o.flag('segments');
  const g = o.string('granularity');
  if (g !== undefined && g !== 'function' && g !== 'site') {
    process.stderr.write(`--granularity takes function or site, not ${esc(g)}\n${USAGE}\n`);
    return 2;
  }
  const granularity: Granularity | undefined = g;
  const files = o.positionals;
  if (files.length === 0) {
    process.stderr.write('no files given\n' + USAGE + '\n');
    return 2;
  }
  const progress = ttyProgress(quiet);
  const { capture, failed } = await readFiles(files, { ...progress, filter: filtered.filter });
  progress.done();
  const summary: ReturnType<typeof summarize> & { selection?: object } = summarize(capture, 10, granularity);
  const ex = parsed.selection || perSegment ? new Explorer(capture) : null;
  if (ex && perSegment) {
    // a segment's range holds its events and no other segment's (segments are disjoint)
    summary.segments = summary.segments.map((s) => ({ ...s, counts: ex.selectionSummary({ range: [s.firstTs, s.lastTs], generation: null, cpus: null }) }));
  }
  if (ex && parsed.selection) {
    // the numbers the page shows with this selection: its summary cells and its top stacks
    const top = ex.topStacks({ selection: parsed.selection, filter: '', limit: 10, granularity: summary.granularity });
    summary.selection = {
      ...parsed.selection,
      ...ex.selectionSummary(parsed.selection),
      top: top.rows.map((r) => ({ count: r.count, frames: summary.granularity === 'function' ? ex.stackFunctions(r.stack) : ex.stackFrames(r.stack) })),
    };
  }
  for (const f of failed) {
    summary.diagnostics.push({ file: f.file, where: 'file', message: `cannot read: ${f.reason}`, count: 1 });
    // said where a person sees it too, not only at the bottom of the summary
    process.stderr.write(`${esc(f.file)}: cannot read: ${esc(f.reason)}\n`);
  }
  process.stdout.write(json ? jsonForTerminal(summary, 2) + '\n' : formatSummary(summary));
  // DESIGN 5.1: 1 when no file could be read
  return capture.files.some(understood) ? 0 : 1;
}

// `| head`: the reader has gone, which ends the output, not in an error (DESIGN 5.4); a command
// that streams (sql) watches for it too and stops reading its result. Any other write error (a
// full disk, /dev/full: ENOSPC) is said in one line, and the exit status is 1 whatever the command returned.
let stdoutFailed = false;
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') return;
  if (!stdoutFailed) process.stderr.write(`cannot write standard output: ${escapeLines(e.message)}\n`);
  stdoutFailed = true;
  process.exitCode = 1;
});

/** An error of the system (a file that cannot be written, a folder that is a dangling link): its message names the call and the path, a stack would say nothing more. */
const systemError = (e: unknown): e is NodeJS.ErrnoException =>
  e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string' && typeof (e as NodeJS.ErrnoException).syscall === 'string';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = stdoutFailed ? Math.max(code, 1) : code;
  },
  (e) => {
    process.stderr.write(systemError(e) ? `${escapeLines(e.message)}\n` : `internal error: ${escapeLines(String((e as Error).stack ?? e))}\n`);
    process.exitCode = 1;
  },
);
