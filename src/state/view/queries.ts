import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type {
  EventInfo,
  ExportKind,
  FlameRequest,
  FlameResult,
  GenerationDiff,
  Selection,
  SelectionSummary,
  TopStacksRequest,
  TopStacksResult,
} from '../../core/query/api.ts';
import type { ExportOptions, IngestApi } from '../../workers/ingest-api.ts';
import type { IdStoryView } from '../../core/query/id-story.ts';
import type { NodeFrames } from '../../core/query/flame-frames.ts';
import { useLoadStore } from '../load/load-store.ts';
import { ingestWorker } from '../load/load-worker.ts';
import { setQuietly, stackIds, useViewStore } from './view-store.ts';
import { fitView, shapeOf, type Dropped } from './view-url.ts';

type Api = ReturnType<typeof ingestWorker>;

export interface QueryState<T> {
  data: T | null;
  /** a newer answer is on its way; data is the last one */
  pending: boolean;
  error: string | null;
}

/**
 * Worker questions in flight, as `data-queries` on the document's root element: 0 once every
 * pane has its answer (what end-to-end tests wait on before they click, like Perfetto's
 * waitForPerfettoIdle: a pane that fills in later moves what is below it).
 */
let inFlight = 0;
function track(d: number): void {
  inFlight += d;
  if (typeof document !== 'undefined') document.documentElement.dataset.queries = String(inFlight);
}

/**
 * Asks the worker whenever `key` (the request, serialised) or the capture changes. Answers to an
 * older request are dropped; while the next answer is on its way the last one stays on screen.
 * `debounceMs` waits for a burst (zoom, pan, typing) to settle before asking; the first question
 * about a capture is asked at once (nothing to settle: the pane is empty until it is answered).
 */
export function useWorkerQuery<T>(key: string | null, ask: (api: Api) => Promise<T>, debounceMs = 0): QueryState<T> {
  const captureId = useLoadStore((s) => (s.status === 'done' ? s.captureId : 0));
  const [state, setState] = useState<QueryState<T> & { capture: number }>({ data: null, pending: false, error: null, capture: 0 });
  const fullKey = key === null || captureId === 0 ? null : `${captureId}|${key}`;
  /** the capture of the last question asked */
  const shownCapture = useRef(0);
  useLayoutEffect(() => {
    if (fullKey === null) return;
    let live = true;
    let counted = true;
    const done = () => {
      if (counted) track(-1);
      counted = false;
    };
    track(1);
    setState((s) => ({ ...s, pending: true }));
    // a new capture's first question goes at once: only a burst within one capture is waited out
    const wait = shownCapture.current === captureId ? debounceMs : 0;
    shownCapture.current = captureId;
    const go = () => {
      ask(ingestWorker()).then(
        (data) => {
          if (live) setState({ data, pending: false, error: null, capture: captureId });
          done();
        },
        (e: unknown) => {
          if (live) setState((s) => ({ ...s, pending: false, error: (e as Error).message, capture: captureId }));
          done();
        },
      );
    };
    // asked from the commit, before the frame is painted: a new capture's panes all ask at once,
    // not after the browser has laid out and painted what the capture's summary changed
    const timer = wait > 0 ? setTimeout(go, wait) : (go(), null);
    return () => {
      live = false;
      if (timer !== null) clearTimeout(timer);
      done();
    };
    // `ask` is a fresh closure each render; the key says everything it depends on
  }, [fullKey]);
  // an answer about an older capture is never shown
  if (state.capture !== captureId || fullKey === null) return { data: null, pending: fullKey !== null, error: null };
  return { data: state.data, pending: state.pending, error: state.error };
}

// the timeline's counts: ui/timeline/timeline-asker.ts (one question in flight, not debounced)

export function useTopStacks(req: TopStacksRequest): QueryState<TopStacksResult> {
  const q = useWorkerQuery<TopStacksResult>(JSON.stringify(req), (api) => api.topStacks(req), 60);
  // each row names its stack by hash and dump slots: selecting one then needs no round trip, and a
  // stack chosen elsewhere (timeline, diff) learns its slots here
  useEffect(() => {
    if (!q.data) return;
    for (const r of q.data.rows) stackIds.remember(r.stack, r.stackHash, r.slots);
    const v = useViewStore.getState();
    if (v.stack !== null && v.selectedStackSlots === null && stackIds.slots.has(v.stack)) setQuietly({ selectedStackSlots: stackIds.slots.get(v.stack)! });
  }, [q.data]);
  return q;
}

/** the capture's event names, once `wanted` (a filter being typed or applied) */
export const useEventNames = (wanted: boolean) => useWorkerQuery<string[]>(wanted ? 'event-names' : null, (api) => api.eventNames());

export const useIdStoryCount = () => useWorkerQuery<number>('count', (api) => api.idStoryCount());
export const useIdStory = (n: number | null) => useWorkerQuery<IdStoryView | null>(n === null ? null : String(n), (api) => api.idStoryAt(n!));

export const useFlame = (req: FlameRequest) => useWorkerQuery<FlameResult>(JSON.stringify(req), (api) => api.flame(req), 30);
/** the frames merged into each node of a flame answer's trees, asked once it is drawn (null: the answer is gone from the worker) */
export const useFlameFrames = (framesId: number | null | undefined) =>
  useWorkerQuery<{ tree: NodeFrames; callers: NodeFrames | null } | null>(framesId == null ? null : `flame-frames|${framesId}`, (api) =>
    api.flameFrames(framesId!),
  );

export const useSelectionSummary = (sel: Selection | null) => useWorkerQuery<SelectionSummary>(sel && JSON.stringify(sel), (api) => api.selectionSummary(sel!));

export const useStackFrames = (stack: number | null) => useWorkerQuery<string[]>(stack === null ? null : String(stack), (api) => api.stackFrames(stack!));

export const useGenerationDiff = (pair: [number | 'none', number | 'none'] | null) =>
  useWorkerQuery<GenerationDiff>(pair && JSON.stringify(pair), (api) => api.generationDiff(pair![0], pair![1]));

/** One-off questions (hover, export) outside a render. */
export const ask = {
  eventNear: (...args: Parameters<IngestApi['eventNear']>): Promise<EventInfo | null> => ingestWorker().eventNear(...args),
  idStoryOfEvent: (e: number): Promise<number> => ingestWorker().idStoryOfEvent(e),
  exportSelection: (kind: ExportKind, sel: Selection, opts: ExportOptions & { group?: string }): Promise<string> =>
    ingestWorker().exportSelection(kind, sel, opts),
};

/*
 * The view against the capture open now. The URL names the selected stack by stack_hash; the panes
 * and queries take this capture's index. So: a stack chosen by index gets its hash (then the URL
 * is written); a hash from the URL is looked up in the capture; and whenever a capture opens or
 * Back restores an entry, what the view holds that the capture lacks (stack, generation, CPUs,
 * range) is dropped with a notice. Fixes are written with replaceState: Back undoes user choices only.
 */

/** the capture open now (0: none yet); the worker then answers about it */
const openCapture = () => {
  const s = useLoadStore.getState();
  return s.overview !== null ? s.captureId : 0;
};

const addNotice = (dropped: Dropped[]) => {
  if (dropped.length) setQuietly({ notice: [...(useViewStore.getState().notice ?? []), ...dropped] });
};

const asking = new Set<string>();

/** Asks the worker for what the selected stack lacks: its hash (chosen by index) or its index (from the URL). */
function resolveStack(): void {
  const capture = openCapture();
  if (capture === 0) return;
  const v = useViewStore.getState();
  const current = () => openCapture() === capture;
  if (v.stack !== null && v.selectedStackHash === null) {
    const stack = v.stack;
    const key = `${capture}:index:${stack}`;
    if (asking.has(key)) return;
    asking.add(key);
    const stillPending = () => {
      const now = useViewStore.getState();
      return current() && now.stack === stack && now.selectedStackHash === null;
    };
    // no hash (not a stack of this capture, or no answer): unselect rather than hold every URL write back
    const unselect = () => stillPending() && setQuietly({ stack: null, selectedStackSlots: null });
    ingestWorker()
      .stackHash(stack)
      .then((hash) => {
        if (!stillPending()) return;
        if (!hash) return unselect();
        stackIds.remember(stack, hash);
        // the user's choice: written now, as a history entry
        useViewStore.setState({ selectedStackHash: hash, selectedStackSlots: stackIds.slots.get(stack) ?? null });
      })
      .catch(unselect)
      .finally(() => asking.delete(key));
  } else if (v.stack === null && v.selectedStackHash !== null) {
    const hash = v.selectedStackHash;
    const key = `${capture}:hash:${hash}`;
    if (asking.has(key)) return;
    asking.add(key);
    ingestWorker()
      .stackByHash(hash)
      .then((stack) => {
        const now = useViewStore.getState();
        if (!current() || now.selectedStackHash !== hash || now.stack !== null) return;
        if (stack === null) {
          setQuietly({ selectedStackHash: null, selectedStackSlots: null });
          addNotice([{ what: 'stack', hash }]);
          return;
        }
        stackIds.remember(stack, hash);
        setQuietly({ stack, selectedStackSlots: stackIds.slots.get(stack) ?? null });
      })
      .catch(() => undefined)
      .finally(() => asking.delete(key));
  }
}

/** Drops what the view holds that the open capture lacks, then finds the selected stack in it. */
function fitToCapture(): void {
  const overview = useLoadStore.getState().overview;
  if (!overview || openCapture() === 0) return;
  const { view, dropped } = fitView(useViewStore.getState(), shapeOf(overview));
  if (dropped.length) {
    const { range, window, generation, cpus, diff } = view;
    setQuietly({ range, window, generation, cpus, diff });
    addNotice(dropped);
  }
  resolveStack();
}

if (typeof window !== 'undefined') {
  useLoadStore.subscribe((s, prev) => {
    if (s.captureId === prev.captureId || s.overview === null) return;
    // another capture: its indices name other stacks; the hash finds the selected one again
    stackIds.clear();
    const v = useViewStore.getState();
    if (v.stack !== null) setQuietly({ stack: null, selectedStackSlots: null });
    fitToCapture();
  });
  useViewStore.subscribe((v, prev) => {
    if (v.urlEpoch !== prev.urlEpoch) fitToCapture();
    else if ((v.stack === null) !== (v.selectedStackHash === null)) resolveStack();
  });
}
