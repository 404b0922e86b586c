import { useLoadStore } from '../load/load-store.ts';
import { ingestWorker } from '../load/load-worker.ts';
import { useViewStore } from './view-store.ts';

/**
 * The event filter (`?filter=`, trace-cmd's -F syntax) against the capture shown: whenever the
 * view's filter and the filter the capture shown was made with differ, the worker is asked to
 * filter the capture loaded last (workers/ingest-api.ts applyFilter); its answer is shown as a
 * capture of its own (load-store showFiltered: every pane asks again), or its error is put where
 * the filter is typed (the capture shown stays as it was: no partial answer). A newer filter
 * supersedes one still on its way; a filter that failed is not asked again until it changes.
 */
let asking: string | null = null;
let failed: string | null = null;

function sync(): void {
  const l = useLoadStore.getState();
  if (l.status !== 'done' || l.overview === null) return;
  const want = useViewStore.getState().eventFilter;
  if (want === l.filterOf) {
    if (useViewStore.getState().eventFilterError) useViewStore.setState({ eventFilterError: null });
    failed = null;
    return;
  }
  if (want === asking || want === failed) return;
  asking = want;
  const base = l.captureId;
  ingestWorker()
    .applyFilter(want)
    .then(
      (a) => {
        if (asking !== want) return;
        asking = null;
        // another capture opened meanwhile: it is asked about on its own
        if (useLoadStore.getState().captureId !== base) return sync();
        if (a.outcome === 'error') {
          failed = want;
          useViewStore.setState({ eventFilterError: { text: a.text, line: a.line, column: a.column, message: a.message } });
          return;
        }
        failed = null;
        useViewStore.setState({ eventFilterError: null });
        useLoadStore.getState().showFiltered(a);
      },
      (e: unknown) => {
        if (asking !== want) return;
        asking = null;
        failed = want;
        useViewStore.setState({ eventFilterError: { text: want, line: 0, column: 0, message: (e as Error).message } });
      },
    );
}

if (typeof window !== 'undefined') {
  useLoadStore.subscribe((s, prev) => {
    if (s.captureId !== prev.captureId || s.status !== prev.status) sync();
  });
  useViewStore.subscribe((v, prev) => {
    if (v.eventFilter !== prev.eventFilter) {
      failed = null;
      sync();
    }
  });
}

/** Imported for its subscriptions (the filter follows the view from the first capture on). */
export const EVENT_FILTER_SYNC = true;
