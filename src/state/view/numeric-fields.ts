import { useEffect, useState } from 'react';
import type { EventFields } from '../../core/query/field-columns.ts';
import { useLoadStore } from '../load/load-store.ts';
import { ingestWorker } from '../load/load-worker.ts';

/**
 * An answer about the loaded capture's fields, asked of the worker only once `wanted` and once
 * per capture (reading them means reading the files again with payloads kept). `empty` while
 * unknown.
 */
function askedOnce<T>(ask: () => Promise<T>, empty: T): (wanted: boolean) => T {
  const asked = new Map<number, Promise<T>>();
  return function useAsked(wanted: boolean): T {
    const captureId = useLoadStore((s) => (s.status === 'done' ? s.captureId : 0));
    const [state, setState] = useState<{ capture: number; value: T }>({ capture: 0, value: empty });
    useEffect(() => {
      if (!wanted || captureId === 0) return;
      let live = true;
      let p = asked.get(captureId);
      if (!p) {
        asked.clear();
        asked.set(captureId, (p = ask()));
        p.catch(() => asked.delete(captureId));
      }
      p.then((value) => live && setState({ capture: captureId, value })).catch(() => {});
      return () => {
        live = false;
      };
    }, [wanted, captureId]);
    return state.capture === captureId ? state.value : empty;
  };
}

/** The loaded capture's payload fields with numbers (what a weight can be), once `wanted` (a weight menu opened, or a field weight in the URL). */
export const useNumericFields: (wanted: boolean) => { name: string; events: number }[] = askedOnce(() => ingestWorker().numericFields(), []);

/** Each event name's payload fields, numeric or not (what a filter can name after `EVENT:`), once `wanted` (the filter typed in). */
export const useEventFields: (wanted: boolean) => EventFields[] = askedOnce(() => ingestWorker().eventFields(), []);
