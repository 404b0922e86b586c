import type { FlameMode, FlameWeight } from '../core/model/query-types.ts';

/** What the URL carries: a link reproduces what the sender saw. */
export interface UrlView {
  /** brushed time range (filters every pane) */
  range: [number, number] | null;
  generation: number | 'none' | null;
  cpus: number[] | null;
  stack: number | null;
  flameMode: FlameMode;
  flameWeight: FlameWeight;
  /** sandwich: the function in the middle */
  flameFocus: string | null;
  /** flame graph zoomed to this path of functions, root first */
  flameZoom: string[];
  flameSearch: string;
  /** top stacks filter: a function name or /regex/ */
  filter: string;
  lanes: 'cpu' | 'task';
  theme: 'system' | 'light' | 'dark';
  /** the timeline's visible window; null: the whole trace */
  window: [number, number] | null;
  diff: [number | 'none', number | 'none'] | null;
}

export const DEFAULT_VIEW: UrlView = {
  range: null,
  generation: null,
  cpus: null,
  stack: null,
  flameMode: 'top-down',
  flameWeight: 'occurrences',
  flameFocus: null,
  flameZoom: [],
  flameSearch: '',
  filter: '',
  lanes: 'cpu',
  theme: 'system',
  window: null,
  diff: null,
};

const MODES: readonly FlameMode[] = ['top-down', 'bottom-up', 'sandwich'];
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

export function parseView(search: string): UrlView {
  const q = new URLSearchParams(search);
  const cpus = q.get('cpus');
  const cpuList = cpus ? cpus.split(',').map(num).filter(Number.isInteger) : [];
  const stack = q.has('stack') ? num(q.get('stack')!) : NaN;
  const mode = q.get('flame') as FlameMode | null;
  const theme = q.get('theme');
  const diff = q.get('diff')?.split(',') ?? [];
  const da = gen(diff[0] ?? null);
  const db = gen(diff[1] ?? null);
  return {
    range: pair(q.get('range')),
    generation: gen(q.get('gen')),
    cpus: cpuList.length ? cpuList : null,
    stack: Number.isInteger(stack) && stack >= 0 ? stack : null,
    flameMode: mode && MODES.includes(mode) ? mode : DEFAULT_VIEW.flameMode,
    flameWeight: q.get('weight') === 'refcount' ? 'refcount' : 'occurrences',
    flameFocus: q.get('focus') || null,
    flameZoom: q.get('fzoom') ? q.get('fzoom')!.split(';') : [],
    flameSearch: q.get('fsearch') ?? '',
    filter: q.get('filter') ?? '',
    lanes: q.get('lanes') === 'task' ? 'task' : 'cpu',
    theme: theme === 'light' || theme === 'dark' ? theme : 'system',
    window: pair(q.get('window')),
    diff: da !== null && db !== null ? [da, db] : null,
  };
}

/** The query keys the view owns; any other (the simulator's `view`) is left as it is. */
export const VIEW_KEYS = ['range', 'window', 'gen', 'cpus', 'stack', 'flame', 'weight', 'focus', 'fzoom', 'fsearch', 'filter', 'lanes', 'theme', 'diff'];

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
  if (v.stack !== null) q.set('stack', String(v.stack));
  if (v.flameMode !== DEFAULT_VIEW.flameMode) q.set('flame', v.flameMode);
  if (v.flameWeight !== DEFAULT_VIEW.flameWeight) q.set('weight', v.flameWeight);
  if (v.flameFocus) q.set('focus', v.flameFocus);
  if (v.flameZoom.length) q.set('fzoom', v.flameZoom.join(';'));
  if (v.flameSearch) q.set('fsearch', v.flameSearch);
  if (v.filter) q.set('filter', v.filter);
  if (v.lanes !== 'cpu') q.set('lanes', v.lanes);
  if (v.theme !== 'system') q.set('theme', v.theme);
  if (v.diff) q.set('diff', v.diff.join(','));
  const s = q.toString();
  return s ? `?${s}` : '';
}
