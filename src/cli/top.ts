import { escapeControls as esc, jsonForTerminal } from '../core/base/control-chars.ts';
import { understood } from '../core/capture/ingest.ts';
import { Explorer } from '../core/query/explorer.ts';
import { isOccurrence, SelectionFilter } from '../core/query/selection.ts';
import { readFiles } from './read-files.ts';
import { ttyProgress } from './progress.ts';
import { parseOptions, parseOrExit, UsageError } from './usage.ts';

export const TOP_USAGE = `usage: stackmap-explorer top [--limit N] [--generation G|none] [--cpu C] [--pid P] [--event E] [--json] [--] FILE...

  The capture's busiest kernel stacks as text, as perf report --stdio prints them: per stack its
  count (resolved ids and cookies, and full stacks), its share of all counted, and its frames,
  leaf first.

  --limit N          stacks shown (default 10)
  --generation G     only records of generation G ('none': v4/v7 ids without one)
  --cpu C            only records on CPU C (repeat or give 0,2 for several)
  --pid P            only records of events of pid P (repeatable)
  --event E          only records of events named E, e.g. kmem_cache_alloc (repeatable)
  --json             {total, rows: [{count, share, frames}]}
  --quiet            no progress line on stderr (shown only when stderr is a terminal)
  --                 ends the options

exit status: 0 when at least one file was read, 1 when none could be, 2 on a usage error`;

interface Parsed {
  limit: number;
  generation: number | 'none' | null;
  cpus: number[] | null;
  pids: number[] | null;
  events: string[] | null;
  json: boolean;
  quiet: boolean;
  files: string[];
}

const whole = (flag: string, v: string | undefined, min = 0): number => {
  const n = Number(v);
  if (v === undefined || !/^\d{1,9}$/.test(v) || n < min) throw new UsageError(`${flag} takes a whole number${min > 0 ? ` of at least ${min}` : ''}: ${v ?? '(none)'}`);
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
  });
  if (o.help) return 'help';
  const p: Parsed = { limit: 10, generation: null, cpus: null, pids: null, events: null, json: o.flag('json'), quiet: o.flag('quiet'), files: o.positionals };
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
  share: number;
  /** leaf first */
  frames: string[];
}

/**
 * The stacks of the records that pass the filters, busiest first (ties: the stack seen first),
 * counted as the page's top stacks count them (isOccurrence), at the capture's frame keys.
 */
export function topRows(ex: Explorer, p: Pick<Parsed, 'limit' | 'generation' | 'cpus' | 'pids' | 'events'>): { total: number; rows: TopRow[] } {
  const d = ex.data;
  const t = d.t;
  const f = new SelectionFilter({ range: null, generation: p.generation, cpus: p.cpus });
  const names = p.events ? new Set(p.events.map((e) => t.names.lookup(e)).filter((x): x is number => x !== undefined)) : null;
  const pids = p.pids ? new Set(p.pids) : null;
  const recEvent = t.recEvent.raw();
  const counts = new Map<number, number>();
  let total = 0;
  for (let r = 0; r < d.recordCount; r++) {
    if (!isOccurrence(d.rec.status[r])) continue;
    const g = d.recGen[r];
    if (!f.test(d.rec.ts[r], d.rec.cpu[r], g)) continue;
    const e = recEvent[r];
    if (pids && !(e >= 0 ? pids.has(d.ev.pid[e]) : false)) continue;
    if (names && !(e >= 0 ? names.has(d.ev.name[e]) : false)) continue;
    const s = d.rec.stack[r];
    counts.set(s, (counts.get(s) ?? 0) + 1);
    total++;
  }
  const rows = [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, p.limit)
    .map(([s, count]) => ({ count, share: total ? count / total : 0, frames: d.stacks.framesOf(s) }));
  return { total, rows };
}

/** The rows as perf report --stdio prints a callchain: overhead, count, then the frames. */
export function formatTop(total: number, rows: TopRow[]): string {
  const out = [`# ${total.toLocaleString('en-US')} stack records counted, the ${rows.length} busiest stacks`, '#', '# Overhead     Count  Stack (leaf first)', '#'];
  for (const r of rows) {
    const head = `${(r.share * 100).toFixed(2).padStart(8)}%  ${String(r.count).padStart(8)}  `;
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
  const { capture, failed } = await readFiles(p.files, progress);
  progress.done();
  for (const f of failed) process.stderr.write(`${esc(f.file)}: cannot read: ${esc(f.reason)}\n`);
  if (!capture.files.some(understood)) {
    process.stderr.write('no file could be read\n');
    return 1;
  }
  const r = topRows(new Explorer(capture), p);
  process.stdout.write(p.json ? jsonForTerminal(r, 2) + '\n' : formatTop(r.total, r.rows));
  return 0;
}
