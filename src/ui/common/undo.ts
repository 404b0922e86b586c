import { useLoadStore } from '../../state/load/load-store.ts';
import { useViewStore, type ViewState } from '../../state/view/view-store.ts';

/**
 * Esc's memory: the zooms and selections of this capture, newest last, so Esc steps back one
 * at a time (as Perfetto and the Firefox Profiler do). A burst of zooms (wheel, held W) is one
 * step. Pans and the theme, filters and modes are not steps.
 */
const KEYS = ['window', 'flameZoom', 'range', 'stack', 'generation', 'cpus'] as const;
type Key = (typeof KEYS)[number];
type Snapshot = Pick<ViewState, Key>;

const BURST_MS = 700;
const LIMIT = 100;

interface Step {
  before: Snapshot;
  keys: Key[];
  at: number;
}

const steps: Step[] = [];
let restoring = false;

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);
const pick = (v: ViewState): Snapshot => ({ window: v.window, flameZoom: v.flameZoom, range: v.range, stack: v.stack, generation: v.generation, cpus: v.cpus });
/** a change of the window that keeps its width is a pan, not a zoom */
const isPan = (v: ViewState, prev: ViewState) =>
  v.window !== null &&
  prev.window !== null &&
  Math.abs(v.window[1] - v.window[0] - (prev.window[1] - prev.window[0])) <= 1e-9 * Math.max(1, Math.abs(v.window[1]));

let started = false;
/** Starts listening (once); the panes that offer Esc call it. */
export function startUndo(): void {
  if (started || typeof window === 'undefined') return;
  started = true;
  useViewStore.subscribe((v, prev) => {
    if (restoring) return;
    let changed = KEYS.filter((k) => !same(v[k], prev[k]));
    if (changed.length === 1 && changed[0] === 'window' && isPan(v, prev)) changed = [];
    if (!changed.length) return;
    const now = performance.now();
    const last = steps[steps.length - 1];
    const zoomOnly = changed.every((k) => k === 'window' || k === 'flameZoom');
    if (last && zoomOnly && now - last.at < BURST_MS && same(last.keys, changed)) {
      last.at = now;
      return;
    }
    steps.push({ before: pick(prev), keys: changed, at: now });
    if (steps.length > LIMIT) steps.shift();
  });
  // another capture: its stacks are other stacks, so the old steps mean nothing; changes the
  // capture switch itself makes (in other listeners of the same update) are dropped too
  useLoadStore.subscribe((s, prev) => {
    if (s.captureId === prev.captureId) return;
    steps.length = 0;
    queueMicrotask(() => (steps.length = 0));
  });
}

/** Undoes the last zoom or selection; false when there is none. */
export function undoLast(): boolean {
  const step = steps.pop();
  if (!step) return false;
  restoring = true;
  try {
    useViewStore.getState().set(step.before);
  } finally {
    restoring = false;
  }
  return true;
}

export const undoDepth = () => steps.length;
