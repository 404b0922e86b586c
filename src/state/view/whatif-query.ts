import { useEffect, useState } from 'react';
import type { WhatIfOptions, WhatIfResult } from '../../core/whatif/whatif.ts';
import { runWhatIf, WHATIF_CANCELLED, type WhatIfRun } from '../../workers/whatif-client.ts';
import { useLoadStore } from '../load/load-store.ts';
import { ingestWorker } from '../load/load-worker.ts';

export interface WhatIfState {
  data: WhatIfResult | null;
  /** a newer answer is on its way; data is the last one */
  pending: boolean;
  /** steps done of the replay on its way (whatif.ts whatIfSteps), null before it starts */
  progress: { done: number; total: number } | null;
  error: string | null;
}

/**
 * The what-if table for the loaded capture. The ingest worker only hands over the capture's
 * columns; the replay runs in a worker of its own (workers/whatif-client.ts), so the timeline and
 * flame graph queries are answered meanwhile. A newer question (another buffer size or share, or
 * another capture) ends the replay on its way at once and starts its own after `debounceMs`.
 */
export function useWhatIf(opts: WhatIfOptions | null, debounceMs = 150): WhatIfState {
  const captureId = useLoadStore((s) => (s.status === 'done' ? s.captureId : 0));
  const key = opts === null || captureId === 0 ? null : `${captureId}|${JSON.stringify(opts)}`;
  const [state, setState] = useState<WhatIfState & { capture: number }>({ data: null, pending: false, progress: null, error: null, capture: 0 });
  useEffect(() => {
    if (key === null) return;
    let live = true;
    let run: WhatIfRun | null = null;
    setState((s) => ({ ...s, pending: true, progress: null }));
    const timer = setTimeout(() => {
      ingestWorker()
        .whatIfColumns()
        .then((columns) => {
          if (!live) return null;
          run = runWhatIf(columns, opts!, (done, total) => live && setState((s) => ({ ...s, progress: { done, total } })));
          return run.result;
        })
        .then(
          (data) => live && data && setState({ data, pending: false, progress: null, error: null, capture: captureId }),
          (e: unknown) => {
            const message = (e as Error).message;
            if (live && message !== WHATIF_CANCELLED) setState((s) => ({ ...s, pending: false, progress: null, error: message, capture: captureId }));
          },
        );
    }, debounceMs);
    return () => {
      live = false;
      clearTimeout(timer);
      run?.cancel();
    };
    // opts is what the key serialises
  }, [key]);
  // an answer about an older capture is never shown
  if (state.capture !== captureId || key === null) return { data: null, pending: key !== null, progress: key !== null ? state.progress : null, error: null };
  return { data: state.data, pending: state.pending, progress: state.progress, error: state.error };
}
