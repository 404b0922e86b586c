import { useEffect, useRef, useState } from 'react';
import type { TimelineRequest, TimelineResult } from '../../core/query/api.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { ingestWorker } from '../../state/load/load-worker.ts';

export interface TimelineAnswer {
  req: TimelineRequest;
  result: TimelineResult;
}

interface Wanted {
  key: string;
  req: TimelineRequest;
  capture: number;
}

/**
 * The timeline's counts while the view moves: one question in flight at a time, and when its
 * answer comes the newest view is asked next (views passed over in between are never asked). So
 * a zoom or pan that goes on is answered as fast as the worker's summaries allow, instead of
 * waiting for the input to stop, and the worker never queues up stale work. Until an answer
 * comes the last one stays on screen, drawn stretched to the new window; an answer about an older
 * capture is never shown.
 */
export function useTimelineQuery(req: TimelineRequest | null): { data: TimelineAnswer | null; error: string | null } {
  const capture = useLoadStore((s) => (s.status === 'done' ? s.captureId : 0));
  const key = req === null || capture === 0 ? null : `${capture}|${JSON.stringify(req)}`;
  const [state, setState] = useState<{ data: TimelineAnswer | null; error: string | null; capture: number }>({ data: null, error: null, capture: 0 });
  const wanted = useRef<Wanted | null>(null);
  const asked = useRef<string | null>(null);
  const inFlight = useRef(false);
  const live = useRef(true);

  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
    };
  }, []);

  useEffect(() => {
    wanted.current = key === null ? null : { key, req: req!, capture };
    const pump = () => {
      const w = wanted.current;
      if (inFlight.current || w === null || w.key === asked.current) return;
      inFlight.current = true;
      asked.current = w.key;
      ingestWorker()
        .timeline(w.req)
        .then(
          (result) => live.current && setState({ data: { req: w.req, result }, error: null, capture: w.capture }),
          (e: unknown) => {
            // asked again with the next view (or this one, if it is still the newest) after a failure
            if (asked.current === w.key) asked.current = null;
            if (live.current) setState((s) => ({ ...s, error: (e as Error).message, capture: w.capture }));
          },
        )
        .finally(() => {
          inFlight.current = false;
          if (live.current && wanted.current && wanted.current.key !== w.key) pump();
        });
    };
    pump();
    // `req` is a fresh object each render; the key says everything it holds
  }, [key]);

  if (key === null || state.capture !== capture) return { data: null, error: null };
  return { data: state.data, error: state.error };
}
