import { create } from 'zustand';
import type { Summary } from '../../core/capture/summary.ts';
import type { NamedBlob } from '../../workers/ingest-api.ts';
import { forgetCapture, keepCapture, readKeptCapture } from './capture-persist.ts';
import { ingestWorker } from './load-worker.ts';
import { useLoadStore } from './load-store.ts';
import { useViewStore } from '../view/view-store.ts';

/**
 * The baseline a capture is compared with (issue 37): "Compare with…" reads a second capture
 * into the ingest worker beside the open one, keeps its files in the browser (apart from the open
 * capture's), and names it in the URL (`?compare=`), so a reload, or the link in a new page of
 * this browser, compares the same two again. The panes ask the worker for the differential.
 */

export type BaselineStatus = 'none' | 'loading' | 'loaded' | 'error';

export interface BaselineState {
  status: BaselineStatus;
  name: string | null;
  summary: Summary | null;
  error: string | null;
  /** bumps with every baseline read, so the panes ask again */
  baselineId: number;
  /** kept in the browser for a reload: null while being written (or none), else whether it was kept and why not */
  kept: { kept: true } | { kept: false; reason: string } | null;
  open(files: NamedBlob[]): Promise<void>;
  close(): Promise<void>;
}

/** A baseline's name: its folder, or its one file, or its largest file and how many more. */
export function baselineName(files: readonly NamedBlob[]): string {
  const dirs = new Set(files.map((f) => (f.name.includes('/') ? f.name.slice(0, f.name.lastIndexOf('/')) : '')));
  if (dirs.size === 1 && [...dirs][0] !== '') return [...dirs][0];
  // loose files: named by the largest (the trace, as a rule)
  const first =
    [...files]
      .sort((a, b) => b.blob.size - a.blob.size)[0]
      ?.name.split('/')
      .pop() ?? '';
  return files.length > 1 ? `${first} and ${files.length - 1} more` : first;
}

export const useBaselineStore = create<BaselineState>((set, get) => ({
  status: 'none',
  name: null,
  summary: null,
  error: null,
  baselineId: 0,
  kept: null,

  async open(files) {
    if (files.length === 0) return;
    const name = baselineName(files);
    set({ status: 'loading', error: null, name, kept: null });
    try {
      const a = await ingestWorker().loadBaseline(files);
      if (a.outcome !== 'loaded') {
        set({ status: 'error', error: a.outcome === 'rejected' ? a.reason : 'dropped', summary: null });
        return;
      }
      set({ status: 'loaded', summary: a.summary, baselineId: get().baselineId + 1 });
      useViewStore.getState().set({ compare: name });
      const k = await keepCapture(files, 'baseline');
      if (get().name === name) set({ kept: k.kept ? { kept: true } : { kept: false, reason: k.reason } });
    } catch (e) {
      set({ status: 'error', error: (e as Error).message, summary: null });
    }
  },

  async close() {
    set({ status: 'none', name: null, summary: null, error: null, kept: null });
    useViewStore.getState().set({ compare: null });
    await ingestWorker()
      .loadBaseline(null)
      .catch(() => {});
    await forgetCapture('baseline');
  },
}));

type Gen = number | 'none';
/** `?compare=gen:A,B`: the sides are two generations of the open capture (the generation diff's), not a baseline capture. */
export function comparedGenerations(compare: string | null): [Gen, Gen] | null {
  if (!compare?.startsWith('gen:')) return null;
  const g = compare
    .slice(4)
    .split(',')
    .map((x): Gen | null => (x === 'none' ? 'none' : /^\d{1,9}$/.test(x) ? Number(x) : null));
  return g.length === 2 && g[0] !== null && g[1] !== null ? [g[0], g[1]] : null;
}

/** The panes compare: two generations named in the view, or a baseline read and named. */
export const useComparing = (): boolean => {
  const loaded = useBaselineStore((s) => s.status === 'loaded');
  const compare = useViewStore((s) => s.compare);
  return comparedGenerations(compare) !== null || (loaded && compare !== null);
};

/** The generations compared, or undefined (a baseline capture). */
export const useComparedGenerations = (): [Gen, Gen] | undefined => comparedGenerations(useViewStore((s) => s.compare)) ?? undefined;

/**
 * A link or a reload that names a baseline: once a capture is open, the baseline kept in this
 * browser is read again (when it is the one named); none kept, and the URL's name is dropped.
 */
async function restore(): Promise<void> {
  const named = useViewStore.getState().compare;
  const b = useBaselineStore.getState();
  if (!named || comparedGenerations(named) || b.status !== 'none') return;
  const kept = await readKeptCapture('baseline');
  if (kept.state !== 'found' || baselineName(kept.files) !== named) {
    useViewStore.getState().set({ compare: null });
    return;
  }
  await useBaselineStore.getState().open(kept.files);
}

let restoring = false;
useLoadStore.subscribe((s) => {
  if (s.status !== 'done' || restoring) return;
  restoring = true;
  void restore().finally(() => {
    restoring = false;
  });
});
