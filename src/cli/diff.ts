import { escapeControls as esc, escapeLines, jsonForTerminal } from '../core/base/control-chars.ts';
import { understood } from '../core/capture/ingest.ts';
import type { EventFilter } from '../core/capture/event-filter.ts';
import { ALL, type Granularity } from '../core/query/api.ts';
import { ExplorerData } from '../core/query/explorer-data.ts';
import type { GroupBy, WeightBy } from '../core/query/weigh.ts';
import { diffFolded, diffSide, diffSides, type DiffResult, type DiffSide } from '../core/export/diff.ts';
import { FILTER_OPTIONS, filterHelp, filterOf } from './filter-args.ts';
import { ttyProgress } from './progress.ts';
import { readFiles } from './read-files.ts';
import { parseOptions, parseOrExit, UsageError } from './usage.ts';
import { GROUP_HELP, groupArg, needsDetails, unweighedNote, WEIGHT_HELP, weightArg, weighing } from './weigh-args.ts';

/**
 * `diff BEFORE AFTER` (issue 37, DESIGN 5.5): two captures compared stack by stack through the
 * core's differential (core/export/diff.ts: each side its folded export, joined on the stack's
 * text), printed as a table of what changed, as difffolded.pl's lines for flamegraph.pl, or as JSON.
 */

/** rows the table shows unless --limit says otherwise */
export const DEFAULT_DIFF_LIMIT = 20;

export const DIFF_USAGE = `usage: stackmap-explorer diff [--format table|folded|json] [--json] [--normalize] [--limit N] [--weight W]
                             [--group G] [--granularity function|site] [--filter EXPR]... [--] BEFORE AFTER
       stackmap-explorer diff [options] --before FILE... --after FILE...

  Two captures compared stack by stack: one workload traced before and after a change, or on two
  devices. BEFORE and AFTER are each a capture: a folder (the files directly in it), a bundle
  (.tar, .tar.gz, .zip) or one file; a capture of several loose files is given with --before
  FILE... --after FILE.... Stacks meet by their frames, as export --format folded names them, so
  two boots (other KASLR offsets, other ids and slots) compare by what the stacks are.
  The table: per stack its weight before and after, the change, the change of its share of its
  side's weight, "new" or "gone" when one side lacks it, and its frames, leaf first; the largest
  changes first.
    stackmap-explorer diff before/ after.tar.gz
    stackmap-explorer diff --format folded before/ after/ | perl flamegraph.pl > diff.svg

  --format folded    difffolded.pl's lines, STACK COUNT_BEFORE COUNT_AFTER per stack of either
                     capture (frames root first, as the folded export's), sorted by stack:
                     flamegraph.pl draws them as a differential flame graph (widths AFTER's,
                     red grew, blue shrank)
  --json             {before: {total, totalWeight}, after: {total, totalWeight}, normalized,
                     granularity, rows: [{frames, before, after, delta, share}]}: every stack of
                     either capture, frames root first, largest |delta| first (ties by frames);
                     share is the change of the stack's share of its side's weight
                     (--format json says the same)
  --normalize        BEFORE scaled to AFTER's total weight first, as difffolded.pl -n: each count
                     times AFTER's total / BEFORE's total, truncated to an integer
  --limit N          rows in the table (default ${DEFAULT_DIFF_LIMIT}); --json and --format folded hold every stack
  --granularity function|site
                     frames by function (offsets dropped) or by call site (sym+0xoff); by
                     default each capture's own (call sites for ftrace stacks, functions for perf
                     script input), functions for both when they differ
  ${WEIGHT_HELP}
  ${GROUP_HELP}
${filterHelp(21)}
                     (weight, group, filter and granularity apply to both captures)
  --before FILE...   the arguments up to --after are BEFORE's files
  --after FILE...    the arguments after it are AFTER's files
  --quiet            no progress line on stderr (shown only when stderr is a terminal)
  --                 ends the options: every argument after it is a file

exit status: 0 when both captures were read, 1 when either could not be (none of its files
read), 2 on a usage error`;

export interface DiffArgs {
  format: 'table' | 'folded' | 'json';
  normalize: boolean;
  limit: number;
  granularity: Granularity | undefined;
  weight: WeightBy;
  group: GroupBy | null;
  filter?: EventFilter;
  quiet: boolean;
  before: string[];
  after: string[];
}

function parse(args: string[]): DiffArgs | 'help' {
  const o = parseOptions(args, {
    json: { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
    normalize: { type: 'boolean', short: 'n' },
    format: { type: 'string' },
    limit: { type: 'string' },
    granularity: { type: 'string' },
    weight: { type: 'string' },
    group: { type: 'string' },
    before: { type: 'boolean' },
    after: { type: 'boolean' },
    ...FILTER_OPTIONS,
  });
  if (o.help) return 'help';
  const filtered = filterOf(o);
  if ('error' in filtered) throw new UsageError(filtered.error);
  const format = o.string('format');
  if (format !== undefined && format !== 'table' && format !== 'folded' && format !== 'json')
    throw new UsageError(`--format takes table, folded or json, not ${format}`);
  if (o.flag('json') && format !== undefined && format !== 'json') throw new UsageError(`--json and --format ${format} are two outputs: give one`);
  const limitText = o.string('limit');
  let limit = DEFAULT_DIFF_LIMIT;
  if (limitText !== undefined) {
    if (!/^\d{1,9}$/.test(limitText) || Number(limitText) < 1) throw new UsageError(`--limit takes a whole number of at least 1: ${limitText}`);
    limit = Number(limitText);
  }
  const g = o.string('granularity');
  if (g !== undefined && g !== 'function' && g !== 'site') throw new UsageError(`--granularity takes function or site, not ${g}`);
  const weight = weightArg(o.string('weight'));
  const group = groupArg(o.string('group'), weight);
  // the files: BEFORE AFTER, or each after its --before / --after, in the order given
  const before: string[] = [];
  const after: string[] = [];
  const loose: string[] = [];
  let side: string[] | null = null;
  for (const x of o.sequence) {
    if ('flag' in x) {
      if (x.flag === '--before') side = before;
      else if (x.flag === '--after') side = after;
    } else (side ?? loose).push(x.positional);
  }
  const marked = o.flag('before') || o.flag('after');
  if (marked) {
    if (loose.length) throw new UsageError(`${loose[0]}: a file before --before or --after belongs to neither capture`);
    if (before.length === 0 || after.length === 0)
      throw new UsageError(`--before FILE... --after FILE...: ${before.length === 0 ? 'BEFORE' : 'AFTER'} has no files`);
  } else {
    if (loose.length !== 2)
      throw new UsageError(
        loose.length < 2
          ? 'diff compares two captures: BEFORE AFTER (folders, bundles or files), or --before FILE... --after FILE...'
          : `diff takes two captures, BEFORE and AFTER, not ${loose.length}: several loose files make a capture with --before FILE... --after FILE..., or put each capture's in a folder`,
      );
    before.push(loose[0]);
    after.push(loose[1]);
  }
  return {
    format: o.flag('json') ? 'json' : (format ?? 'table'),
    normalize: o.flag('normalize'),
    limit,
    granularity: g,
    weight,
    group,
    filter: filtered.filter,
    quiet: o.flag('quiet'),
    before,
    after,
  };
}

/** A signed number: `+12`, `-3`, `0`. */
const signed = (n: number, digits?: number): string => {
  const s = digits === undefined ? String(n) : n.toFixed(digits);
  return n > 0 ? `+${s}` : Number(s) === 0 ? s.replace(/^-/, '') : s;
};

/**
 * The differential as `top` prints its stacks: a header with both sides' totals, then per row
 * before, after, the change, the change of its share (percentage points), whether one side lacks
 * it, and its frames leaf first (the group, with --group, in its own column).
 */
export function formatDiff(r: DiffResult, sides: { before: DiffSide; after: DiffSide }, o: { limit: number; weightName: string; grouped: boolean }): string {
  const fmt = (n: number) => n.toLocaleString('en-US');
  const rows = r.rows.slice(0, o.limit);
  const key = (frames: string[]) => frames.join(';');
  const mark = (frames: string[]) => (!sides.before.stacks.has(key(frames)) ? 'new' : !sides.after.stacks.has(key(frames)) ? 'gone' : '');
  let grew = 0;
  let shrank = 0;
  let onlyBefore = 0;
  let onlyAfter = 0;
  for (const x of r.rows) {
    if (x.delta > 0) grew++;
    else if (x.delta < 0) shrank++;
    const m = mark(x.frames);
    if (m === 'new') onlyAfter++;
    else if (m === 'gone') onlyBefore++;
  }
  const side = (name: string, s: { total: number; totalWeight: number }) => `${name} ${fmt(s.total)} stack records, weighing ${fmt(s.totalWeight)}`;
  const cells = rows.map((x) => ({
    before: String(x.before),
    after: String(x.after),
    delta: signed(x.delta),
    share: `${signed(x.share * 100, 2)}%`,
    mark: mark(x.frames),
    group: o.grouped ? (x.frames[0] ?? '') : null,
    leafFirst: (o.grouped ? x.frames.slice(1) : x.frames).slice().reverse(),
  }));
  const w = (name: string, k: 'before' | 'after' | 'delta' | 'share') => Math.max(name.length, 8, ...cells.map((c) => c[k].length));
  const wb = w('Before', 'before');
  const wa = w('After', 'after');
  const wd = w('Delta', 'delta');
  const ws = w('Share', 'share');
  const wg = o.grouped ? Math.max(5, ...cells.map((c) => esc(c.group ?? '').length)) : 0;
  const out = [
    `# ${side('before:', r.before)}; ${side('after:', r.after)} (${esc(o.weightName)})`,
    ...(r.normalized ? [`# before scaled to after's total (--normalize: x ${fmt(r.after.totalWeight)} / ${fmt(r.before.totalWeight)}, truncated)`] : []),
    `# ${fmt(r.rows.length)} stacks: ${fmt(grew)} grew, ${fmt(shrank)} shrank, ${fmt(r.rows.length - grew - shrank)} unchanged; ${fmt(onlyBefore)} only before, ${fmt(onlyAfter)} only after; the ${rows.length} largest changes`,
    '#',
    `# ${'Before'.padStart(wb - 2)}  ${'After'.padStart(wa)}  ${'Delta'.padStart(wd)}  ${'Share'.padStart(ws)}  Side  ${o.grouped ? 'Group'.padEnd(wg) + '  ' : ''}Stack (leaf first)`,
    '#',
  ];
  for (const c of cells) {
    const head = `${c.before.padStart(wb)}  ${c.after.padStart(wa)}  ${c.delta.padStart(wd)}  ${c.share.padStart(ws)}  ${c.mark.padEnd(4)}  ${o.grouped ? esc(c.group ?? '').padEnd(wg) + '  ' : ''}`;
    out.push(head + esc(c.leafFirst[0] ?? '(empty stack)'));
    for (const fr of c.leafFirst.slice(1)) out.push(' '.repeat(head.length) + esc(fr));
    out.push('');
  }
  return out.join('\n') + '\n';
}

/** `diff`: returns the exit status. */
export async function diffCommand(args: string[]): Promise<number> {
  const p = parseOrExit(parse, args, DIFF_USAGE);
  if ('exit' in p) return p.exit;
  // both captures read first (an unreadable AFTER is said before BEFORE's stacks are weighed)
  const data: ExplorerData[] = [];
  for (const [name, files] of [
    ['before', p.before],
    ['after', p.after],
  ] as const) {
    const progress = ttyProgress(p.quiet);
    // a field's weights and a process's TGID are in the payloads and TGIDs, kept only when asked
    const { capture, failed } = await readFiles(files, { ...progress, details: needsDetails(p.weight, p.group), filter: p.filter });
    progress.done();
    for (const f of failed) process.stderr.write(`${esc(f.file)}: cannot read: ${esc(f.reason)}\n`);
    if (!capture.files.some(understood)) {
      process.stderr.write(`${name}: no file could be read (${files.map(esc).join(' ')})\n`);
      return 1;
    }
    data.push(new ExplorerData(capture));
  }
  // one granularity for both, or their stacks would never meet
  let granularity = p.granularity;
  if (granularity === undefined) {
    const [gb, ga] = data.map((d) => d.granularityOf(undefined));
    granularity = gb === ga ? gb : 'function';
    if (gb !== ga)
      process.stderr.write(
        `before is read by ${gb === 'site' ? 'call site' : 'function'} and after by ${ga === 'site' ? 'call site' : 'function'} (their stacks' own kinds): both compared by function\n`,
      );
  }
  const [before, after] = data.map((d, i) => {
    const w = weighing(d, p.weight, p.group);
    const name = i === 0 ? 'before' : 'after';
    for (const note of w.groups?.notes ?? []) process.stderr.write(`${name}: ${escapeLines(note)}\n`);
    const onWeighed = ({ unweighed }: { unweighed: number }) => {
      if (w.field !== null && unweighed) process.stderr.write(`${name}: ${escapeLines(unweighedNote(unweighed, w.field))}\n`);
    };
    return diffSide(d, ALL, w.weight, granularity, { eventWeights: w.eventWeights, groups: w.groups, onWeighed });
  });
  const r = diffSides(before, after, { normalize: p.normalize });
  if (p.format === 'folded') process.stdout.write(diffFolded(r));
  else if (p.format === 'json') process.stdout.write(jsonForTerminal({ ...r, granularity }, 2) + '\n');
  else
    process.stdout.write(
      formatDiff(r, { before, after }, { limit: p.limit, weightName: p.weight === 'refcount' ? 'ref_count' : p.weight, grouped: p.group !== null }),
    );
  return 0;
}
