import { useEffect, useState } from 'react';
import type {
  EventInfo,
  ExportKind,
  FlameRequest,
  FlameResult,
  GenerationDiff,
  Selection,
  SelectionSummary,
  TimelineRequest,
  TimelineResult,
  TopStacksRequest,
  TopStacksResult,
} from '../core/model/query-types.ts';
import type { ExportOptions, IngestApi } from '../workers/ingest-api.ts';
import { ingestWorker, useLoadStore } from './load-store.ts';

type Api = ReturnType<typeof ingestWorker>;

export interface QueryState<T> {
  data: T | null;
  /** a newer answer is on its way; data is the last one */
  pending: boolean;
  error: string | null;
}

/**
 * Asks the worker whenever `key` (the request, serialised) or the capture changes. Answers to an
 * older request are dropped; while the next answer is on its way the last one stays on screen.
 * `debounceMs` waits for a burst (zoom, pan, typing) to settle before asking.
 */
export function useWorkerQuery<T>(key: string | null, ask: (api: Api) => Promise<T>, debounceMs = 0): QueryState<T> {
  const captureId = useLoadStore((s) => (s.status === 'done' ? s.captureId : 0));
  const [state, setState] = useState<QueryState<T> & { capture: number }>({ data: null, pending: false, error: null, capture: 0 });
  const fullKey = key === null || captureId === 0 ? null : `${captureId}|${key}`;
  useEffect(() => {
    if (fullKey === null) return;
    let live = true;
    setState((s) => ({ ...s, pending: true }));
    const timer = setTimeout(() => {
      ask(ingestWorker()).then(
        (data) => live && setState({ data, pending: false, error: null, capture: captureId }),
        (e: unknown) => live && setState((s) => ({ ...s, pending: false, error: (e as Error).message })),
      );
    }, debounceMs);
    return () => {
      live = false;
      clearTimeout(timer);
    };
    // `ask` is a fresh closure each render; the key says everything it depends on
  }, [fullKey]);
  // an answer about an older capture is never shown
  if (state.capture !== captureId || fullKey === null) return { data: null, pending: fullKey !== null, error: null };
  return { data: state.data, pending: state.pending, error: state.error };
}

/** The answer comes with its request: while a zoom is on its way the last one is drawn stretched to the new window. */
export const useTimeline = (req: TimelineRequest | null) =>
  useWorkerQuery<{ req: TimelineRequest; result: TimelineResult }>(
    req && JSON.stringify(req),
    async (api) => ({ req: req!, result: await api.timeline(req!) }),
    40,
  );

export const useTopStacks = (req: TopStacksRequest) =>
  useWorkerQuery<TopStacksResult>(JSON.stringify(req), (api) => api.topStacks(req), 60);

export const useFlame = (req: FlameRequest) => useWorkerQuery<FlameResult>(JSON.stringify(req), (api) => api.flame(req), 30);

export const useSelectionSummary = (sel: Selection | null) =>
  useWorkerQuery<SelectionSummary>(sel && JSON.stringify(sel), (api) => api.selectionSummary(sel!));

export const useStackFrames = (stack: number | null) =>
  useWorkerQuery<string[]>(stack === null ? null : String(stack), (api) => api.stackFrames(stack!));

export const useGenerationDiff = (pair: [number | 'none', number | 'none'] | null) =>
  useWorkerQuery<GenerationDiff>(pair && JSON.stringify(pair), (api) => api.generationDiff(pair![0], pair![1]));

/** One-off questions (hover, export) outside a render. */
export const ask = {
  eventNear: (...args: Parameters<IngestApi['eventNear']>): Promise<EventInfo | null> => ingestWorker().eventNear(...args),
  exportSelection: (kind: ExportKind, sel: Selection, opts: ExportOptions): Promise<string> =>
    ingestWorker().exportSelection(kind, sel, opts),
};
