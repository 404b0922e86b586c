import { escapeControls as esc, jsonForTerminal } from '../core/base/control-chars.ts';
import { understood } from '../core/capture/ingest.ts';
import { Explorer } from '../core/query/explorer.ts';
import { SelectionFilter } from '../core/query/selection.ts';
import type { GroupBy, WeightBy } from '../core/query/weigh.ts';
import { readFiles } from './read-files.ts';
import { FILTER_OPTIONS, filterHelp, filterOf } from './filter-args.ts';
import type { EventFilter } from '../core/capture/event-filter.ts';
import { ttyProgress } from './progress.ts';
import { parseOptions, parseOrExit, UsageError } from './usage.ts';
import { weighStacks } from '../core/query/weigh.ts';
import { GROUP_HELP, groupArg, needsDetails, unweighedNote, WEIGHT_HELP, weightArg, weighing } from './weigh-args.ts';

export const TOP_USAGE = `usage: stackmap-explorer top [--limit N] [--weight W] [--group G] [--generation G|none] [--cpu C] [--pid P] [--event E] [--filter EXPR]... [--json] [--] FILE...

  The capture's heaviest kernel stacks as text, as perf report --stdio prints them: per stack its
  share of the weight, its count (resolved ids and cookies, and full stacks), its weight, and its
  frames, leaf first; with --group a row per group and stack, the group printed before the frames.

  --limit N          stacks shown (default 10)
  --generation G     only records of generation G ('none': v4/v7 ids without one)
  --cpu C            only records on CPU C (repeat or give 0,2 for several)
  --pid P            only records of events of pid P (repeatable)
  --event E          only records of events named E, e.g. kmem_cache_alloc (repeatable)
  ${WEIGHT_HELP}
  ${GROUP_HELP}
${filterHelp(21)}
  --json             {total, totalWeight, rows: [{count, weight, share, frames}]} (share: weight /
                     totalWeight; rows have group with --group; unweighed with --weight field:NAME)
  --quiet            no progress line on stderr (shown only when stderr is a terminal)
  --                 ends the options

exit status: 0 when at least one file was read, 1 when none could be, 2 on a usage error`;

interface Parsed {
  limit: number;
  generation: number | 'none' | null;
  cpus: number[] | null;
  pids: number[] | null;
  events: string[] | null;
  weight: WeightBy;
  group: GroupBy | null;
  json: boolean;
  quiet: boolean;
  files: string[];
  /** --filter: only the events it matches are read into the capture */
  filter?: EventFilter;
}

const whole = (flag: string, v: string | undefined, min = 0): number => {
  const n = Number(v);
  if (v === undefined || !/^\d{1,9}$/.test(v) || n < min)
    throw new UsageError(`${flag} takes a whole number${min > 0 ? ` of at least ${min}` : ''}: ${v ?? '(none)'}`);
  return n;
};

function parse(args: string[]): Parsed | 'help' {
  const o = parseOptions(args, {
    json: { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
    limit: { type: 'string' },
    generation: { type: 'string' },
    cpu: { type: 'string', multiple: true },
    pid: { type: 'string', multiple: true },
    event: { type: 'string', multiple: true },
    weight: { type: 'string' },
    group: { type: 'string' },
    ...FILTER_OPTIONS,
  });
  if (o.help) return 'help';
  const filtered = filterOf(o);
  if ('error' in filtered) throw new UsageError(filtered.error);
  const weight = weightArg(o.string('weight'));
  const p: Parsed = {
    limit: 10,
    generation: null,
    cpus: null,
    pids: null,
    events: null,
    weight,
    group: groupArg(o.string('group'), weight),
    json: o.flag('json'),
    quiet: o.flag('quiet'),
    files: o.positionals,
    filter: filtered.filter,
  };
  const limit = o.string('limit');
  if (limit !== undefined) p.limit = whole('--limit', limit, 1);
  const g = o.string('generation');
  if (g !== undefined) p.generation = g === 'none' ? 'none' : whole('--generation', g);
  for (const c of o.strings('cpu')) (p.cpus ??= []).push(...c.split(',').map((x) => whole('--cpu', x)));
  for (const pid of o.strings('pid')) (p.pids ??= []).push(whole('--pid', pid));
  for (const e of o.strings('event')) {
    if (!e) throw new UsageError('--event takes an event name');
    (p.events ??= []).push(e);
  }
  if (p.files.length === 0) throw new UsageError('no files given');
  return p;
}

export interface TopRow {
  count: number;
  /** the row's records' summed weight (= count by occurrences) */
  weight: number;
  /** weight / totalWeight */
  share: number;
  /** leaf first */
  frames: string[];
  /** with --group: the group's value (task, comm-TGID, event name, field value) */
  group?: string;
  /** with --weight field:NAME: of count, events without a numeric NAME (weighed 0) */
  unweighed?: number;
}

export interface TopResult {
  /** records counted */
  total: number;
  totalWeight: number;
  /** with --weight field:NAME: events counted without a numeric NAME (weighed 0) */
  unweighed?: number;
  rows: TopRow[];
}

/**
 * The stacks of the records that pass the filters, heaviest first (ties: more records, then the
 * stack seen first), counted as the page's top stacks count them (isOccurrence), at the
 * capture's frame keys; weighed and grouped by --weight and --group (weigh.ts).
 */
export function topRows(
  ex: Explorer,
  p: Pick<Parsed, 'limit' | 'generation' | 'cpus' | 'pids' | 'events'> & Partial<Pick<Parsed, 'weight' | 'group'>>,
  w = weighing(ex.data, p.weight ?? 'occurrences', p.group ?? null),
): TopResult {
  const d = ex.data;
  const t = d.t;
  const f = new SelectionFilter({ range: null, generation: p.generation, cpus: p.cpus });
  const names = p.events ? new Set(p.events.map((e) => t.names.lookup(e)).filter((x): x is number => x !== undefined)) : null;
  const pids = p.pids ? new Set(p.pids) : null;
  const recEvent = t.recEvent.raw();
  const accept = (r: number) => {
    const e = recEvent[r];
    if (pids && !(e >= 0 ? pids.has(d.ev.pid[e]) : false)) return false;
    if (names && !(e >= 0 ? names.has(d.ev.name[e]) : false)) return false;
    return true;
  };
  const r = weighStacks(d, { selection: f, weight: w.weight, eventWeights: w.eventWeights, groups: w.groups, accept: pids || names ? accept : undefined });
  const rows = r.rows.slice(0, p.limit).map((x): TopRow => {
    const row: TopRow = { count: x.count, weight: x.weight, share: r.totalWeight ? x.weight / r.totalWeight : 0, frames: d.stacks.framesOf(x.stack) };
    if (w.groups) row.group = x.group >= 0 ? w.groups.names[x.group] : '[no event]';
    if (w.field !== null) row.unweighed = x.unweighed;
    return row;
  });
  return { total: r.total, totalWeight: r.totalWeight, ...(w.field !== null ? { unweighed: r.unweighed } : {}), rows };
}

/** The rows as perf report --stdio prints a callchain: overhead, count, weight, the group, then the frames. */
export function formatTop(total: number, rows: TopRow[], totalWeight?: number, weightName = 'occurrences'): string {
  const grouped = rows.some((r) => r.group !== undefined);
  const groupWidth = grouped ? Math.max(5, ...rows.map((r) => esc(r.group ?? '').length)) : 0;
  const weightWidth = Math.max(8, ...rows.map((r) => String(r.weight).length));
  const weighed = totalWeight === undefined ? '' : `, weighing ${totalWeight.toLocaleString('en-US')} (${esc(weightName)})`;
  const out = [
    `# ${total.toLocaleString('en-US')} stack records counted${weighed}, the ${rows.length} heaviest stacks`,
    '#',
    `# Overhead     Count  ${'Weight'.padStart(weightWidth)}  ${grouped ? 'Group'.padEnd(groupWidth) + '  ' : ''}Stack (leaf first)`,
    '#',
  ];
  for (const r of rows) {
    const head = `${(r.share * 100).toFixed(2).padStart(8)}%  ${String(r.count).padStart(8)}  ${String(r.weight).padStart(weightWidth)}  ${grouped ? esc(r.group ?? '').padEnd(groupWidth) + '  ' : ''}`;
    out.push(head + esc(r.frames[0] ?? '(empty stack)'));
    for (const fr of r.frames.slice(1)) out.push(' '.repeat(head.length) + esc(fr));
    out.push('');
  }
  return out.join('\n') + '\n';
}

/** `top`: returns the exit status. */
export async function topCommand(args: string[]): Promise<number> {
  const p = parseOrExit(parse, args, TOP_USAGE);
  if ('exit' in p) return p.exit;
  const progress = ttyProgress(p.quiet);
  // a field's weights and a process's TGID are in the payloads and TGIDs, kept only when asked
  const { capture, failed } = await readFiles(p.files, { ...progress, details: needsDetails(p.weight, p.group), filter: p.filter });
  progress.done();
  for (const f of failed) process.stderr.write(`${esc(f.file)}: cannot read: ${esc(f.reason)}\n`);
  if (!capture.files.some(understood)) {
    process.stderr.write('no file could be read\n');
    return 1;
  }
  const ex = new Explorer(capture);
  const w = weighing(ex.data, p.weight, p.group);
  for (const note of w.groups?.notes ?? []) process.stderr.write(esc(note) + '\n');
  const r = topRows(ex, p, w);
  if (w.field !== null && r.unweighed) process.stderr.write(esc(unweighedNote(r.unweighed, w.field)) + '\n');
  process.stdout.write(p.json ? jsonForTerminal(r, 2) + '\n' : formatTop(r.total, r.rows, r.totalWeight, p.weight === 'refcount' ? 'ref_count' : p.weight));
  return 0;
}
