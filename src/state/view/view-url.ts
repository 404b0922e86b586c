import type { FlameMode, FlameWeight, Granularity, Overview } from '../../core/query/api.ts';
import { filterLines } from '../../core/capture/filter-lines.ts';
import { isStackHash } from '../../core/query/stack-hash.ts';
import { formatTransforms, parseTransforms, type FlameTransform } from '../../core/query/flame-transforms.ts';
import { parseGroupBy } from '../../core/query/weigh.ts';

/** What the URL carries: a link reproduces what the sender saw. */
export interface UrlView {
  /** brushed time range (filters every pane) */
  range: [number, number] | null;
  generation: number | 'none' | null;
  cpus: number[] | null;
  /** the selected stack's stack_hash (`?stack=`): the same stack in any capture, never this capture's index */
  selectedStackHash: string | null;
  flameMode: FlameMode;
  flameWeight: FlameWeight;
  /** the flame graph's nodes: functions (their call sites listed in each), or call sites `sym+0xoff`; null: the capture's default */
  flameFrames: Granularity | null;
  /** sandwich: the function in the middle */
  flameFocus: string | null;
  /** flame graph zoomed to this path of functions, root first */
  flameZoom: string[];
  flameSearch: string;
  /** a root frame per group in the flame graph (`?group=`: task, process, event, field:NAME); null: none */
  flameGroup: string | null;
  /** the flame graph's transforms, in the order applied (`?tf=`; flame-transforms.ts) */
  flameTransforms: FlameTransform[];
  /** top stacks filter: a function name or /regex/ (`?find=`) */
  filter: string;
  /** the event filter every pane answers for (`?filter=`): trace-cmd's -F syntax, '' for none */
  eventFilter: string;
  lanes: 'cpu' | 'task';
  theme: 'system' | 'light' | 'dark';
  /** the timeline's visible window; null: the whole trace */
  window: [number, number] | null;
  diff: [number | 'none', number | 'none'] | null;
  /** comparing with a baseline capture (`?compare=`: its name, the baseline kept in the browser); null: not */
  compare: string | null;
  /** the baseline scaled to this capture's total (`?cmpnorm=1`, difffolded.pl -n) */
  compareNormalize: boolean;
  /** the differential flame graph's widths: this capture's ('after') or the baseline's (`?cmpwidths=before`) */
  compareWidths: 'after' | 'before';
}

export const DEFAULT_VIEW: UrlView = {
  range: null,
  generation: null,
  cpus: null,
  selectedStackHash: null,
  flameMode: 'top-down',
  flameWeight: 'occurrences',
  flameFrames: null,
  flameFocus: null,
  flameZoom: [],
  flameSearch: '',
  flameTransforms: [],
  flameGroup: null,
  filter: '',
  eventFilter: '',
  lanes: 'cpu',
  theme: 'system',
  window: null,
  diff: null,
  compare: null,
  compareNormalize: false,
  compareWidths: 'after',
};

const MODES: readonly FlameMode[] = ['top-down', 'bottom-up', 'sandwich'];
/** `occurrences`, `refcount` (or `ref_count`), `period`, `field:NAME` (a payload key); else the default */
function weightOf(s: string | null): FlameWeight {
  if (s === 'refcount' || s === 'ref_count') return 'refcount';
  if (s === 'period') return 'period';
  const m = s === null ? null : /^field:([A-Za-z_][A-Za-z0-9_.]{0,63})$/.exec(s);
  return m ? `field:${m[1]}` : 'occurrences';
}
const num = (s: string) => (s.trim() === '' ? NaN : Number(s));
// microsecond-and-finer trace times survive the round trip; nine decimals is what ftrace prints at most
const fmt = (n: number) => String(+n.toFixed(9));

function pair(s: string | null): [number, number] | null {
  if (!s) return null;
  const [a, b] = s.split(',').map(num);
  return Number.isFinite(a) && Number.isFinite(b) && a < b ? [a, b] : null;
}
function gen(s: string | null): number | 'none' | null {
  if (s === null || s === '' || s === 'all') return null;
  if (s === 'none') return 'none';
  const n = num(s);
  return Number.isInteger(n) ? n : null;
}

/**
 * A part of a link's view that was dropped, and why: it does not fit the capture (a stack, a
 * generation, CPUs, a range it lacks), or it is an old link's stack (an internal index, which names
 * an unrelated stack in any other capture). The notice words it (ui/common/Notice.tsx).
 */
export type Dropped =
  | { what: 'stack'; hash: string }
  /** `?stack=` that is no stack_hash; `index`: all digits, an old link's internal index */
  | { what: 'stack-index'; value: string; index: boolean }
  | { what: 'generation'; generation: number | 'none' }
  | { what: 'cpus'; cpus: number[] }
  | { what: 'range'; range: [number, number] }
  | { what: 'window'; window: [number, number] }
  | { what: 'diff'; generations: (number | 'none')[] };

/** The view a query string carries, and what it carried that cannot be a view (an old `?stack=40`). */
export function parseViewReport(search: string): { view: UrlView; dropped: Dropped[] } {
  const view = parseView(search);
  const stack = new URLSearchParams(search).get('stack');
  // the value is shown in the notice: keep it short, whatever the link held
  const dropped: Dropped[] = [];
  if (stack !== null && view.selectedStackHash === null) {
    let digits = stack.length > 0;
    for (let i = 0; i < stack.length && digits; i++) digits = stack.charCodeAt(i) >= 48 && stack.charCodeAt(i) <= 57;
    dropped.push({ what: 'stack-index', value: stack.length > 24 ? stack.slice(0, 23) + '…' : stack, index: digits });
  }
  return { view, dropped };
}

export function parseView(search: string): UrlView {
  const q = new URLSearchParams(search);
  const cpus = q.get('cpus');
  const cpuList = cpus ? cpus.split(',').map(num).filter(Number.isInteger) : [];
  const stack = q.get('stack');
  const mode = q.get('flame') as FlameMode | null;
  const theme = q.get('theme');
  const diff = q.get('diff')?.split(',') ?? [];
  const da = gen(diff[0] ?? null);
  const db = gen(diff[1] ?? null);
  return {
    range: pair(q.get('range')),
    generation: gen(q.get('gen')),
    cpus: cpuList.length ? cpuList : null,
    // DESIGN prints it in lowercase; a hand-typed uppercase one is the same hash
    selectedStackHash: stack !== null && isStackHash(stack.toLowerCase()) ? stack.toLowerCase() : null,
    flameMode: mode && MODES.includes(mode) ? mode : DEFAULT_VIEW.flameMode,
    flameWeight: weightOf(q.get('weight')),
    flameFrames: q.get('frames') === 'site' ? 'site' : q.get('frames') === 'function' ? 'function' : null,
    flameFocus: q.get('focus') || null,
    flameZoom: q.get('fzoom') ? q.get('fzoom')!.split(';') : [],
    flameSearch: q.get('fsearch') ?? '',
    flameTransforms: parseTransforms(q.get('tf') ?? ''),
    flameGroup: parseGroupBy(q.get('group') ?? ''),
    filter: q.get('find') ?? '',
    // several filter= are several filters (ORed), a line each
    eventFilter: filterLines(q.getAll('filter').join('\n')).join('\n'),
    lanes: q.get('lanes') === 'task' ? 'task' : 'cpu',
    theme: theme === 'light' || theme === 'dark' ? theme : 'system',
    window: pair(q.get('window')),
    diff: da !== null && db !== null ? [da, db] : null,
    compare: q.get('compare')?.slice(0, 200) || null,
    compareNormalize: q.get('cmpnorm') === '1',
    compareWidths: q.get('cmpwidths') === 'before' ? 'before' : 'after',
  };
}

/** The query keys the view owns; any other (the simulator's `view`) is left as it is. */
export const VIEW_KEYS = [
  'range',
  'window',
  'gen',
  'cpus',
  'stack',
  'flame',
  'weight',
  'frames',
  'focus',
  'fzoom',
  'fsearch',
  'tf',
  'group',
  'find',
  'filter',
  'lanes',
  'theme',
  'diff',
  'compare',
  'cmpnorm',
  'cmpwidths',
];

/**
 * The query string for a view, keeping the keys of `search` the view does not own; defaults are
 * left out so plain links stay short.
 */
export function formatView(v: UrlView, search = ''): string {
  const q = new URLSearchParams(search);
  for (const k of VIEW_KEYS) q.delete(k);
  if (v.range) q.set('range', v.range.map(fmt).join(','));
  if (v.window) q.set('window', v.window.map(fmt).join(','));
  if (v.generation !== null) q.set('gen', String(v.generation));
  if (v.cpus) q.set('cpus', v.cpus.join(','));
  if (v.selectedStackHash !== null) q.set('stack', v.selectedStackHash);
  if (v.flameMode !== DEFAULT_VIEW.flameMode) q.set('flame', v.flameMode);
  if (v.flameWeight !== DEFAULT_VIEW.flameWeight) q.set('weight', v.flameWeight);
  if (v.flameFrames !== null) q.set('frames', v.flameFrames);
  if (v.flameFocus) q.set('focus', v.flameFocus);
  if (v.flameZoom.length) q.set('fzoom', v.flameZoom.join(';'));
  if (v.flameSearch) q.set('fsearch', v.flameSearch);
  if (v.flameTransforms.length) q.set('tf', formatTransforms(v.flameTransforms));
  if (v.flameGroup) q.set('group', v.flameGroup);
  if (v.filter) q.set('find', v.filter);
  for (const f of filterLines(v.eventFilter)) q.append('filter', f);
  if (v.lanes !== 'cpu') q.set('lanes', v.lanes);
  if (v.theme !== 'system') q.set('theme', v.theme);
  if (v.diff) q.set('diff', v.diff.join(','));
  if (v.compare) q.set('compare', v.compare);
  if (v.compare && v.compareNormalize) q.set('cmpnorm', '1');
  if (v.compare && v.compareWidths !== 'after') q.set('cmpwidths', v.compareWidths);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** What of a capture a view must fit: its span, CPUs and generations. */
export interface CaptureShape {
  t0: number;
  t1: number;
  cpus: number[];
  generations: (number | 'none')[];
  /** generations the overview's list left out (a capture of very many): a link may name one of them */
  generationsCut?: number;
}

export const shapeOf = (o: Overview): CaptureShape => ({
  t0: o.t0,
  t1: o.t1,
  cpus: o.cpus,
  generations: o.generations.map((g) => g.generation),
  generationsCut: o.generationsCut,
});

/**
 * The view with what does not fit the capture dropped: a generation it lacks (also in the diff),
 * CPUs it does not have (the rest stay), a range or window that misses its span entirely. The stack
 * is not checked here: whether its hash is in the capture is the worker's to say (stackByHash).
 */
export function fitView(v: UrlView, c: CaptureShape): { view: UrlView; dropped: Dropped[] } {
  const dropped: Dropped[] = [];
  const out = { ...v };
  // past the listed generations' cap a numbered generation is kept: the worker's selection counts it
  const hasGen = (g: number | 'none') => c.generations.includes(g) || (typeof g === 'number' && (c.generationsCut ?? 0) > 0);
  if (v.generation !== null && !hasGen(v.generation)) {
    dropped.push({ what: 'generation', generation: v.generation });
    out.generation = null;
  }
  if (v.cpus) {
    const missing = v.cpus.filter((x) => !c.cpus.includes(x));
    if (missing.length) {
      dropped.push({ what: 'cpus', cpus: missing });
      const kept = v.cpus.filter((x) => c.cpus.includes(x));
      out.cpus = kept.length ? kept : null;
    }
  }
  // NaN (a capture with no events) overlaps nothing
  const misses = (r: [number, number]) => !(r[1] >= c.t0 && r[0] <= c.t1);
  if (v.range && misses(v.range)) {
    dropped.push({ what: 'range', range: v.range });
    out.range = null;
  }
  if (v.window && misses(v.window)) {
    dropped.push({ what: 'window', window: v.window });
    out.window = null;
  }
  if (v.diff && !v.diff.every(hasGen)) {
    dropped.push({ what: 'diff', generations: v.diff.filter((g) => !hasGen(g)) });
    out.diff = null;
  }
  return { view: out, dropped };
}
