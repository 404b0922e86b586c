import { useEffect, useState } from 'react';
import { useLoadStore } from '../load/load-store.ts';
import { ingestWorker } from '../load/load-worker.ts';

/** per capture, its numeric payload fields once asked (the worker reads the files again for them) */
const asked = new Map<number, Promise<{ name: string; events: number }[]>>();

/**
 * The loaded capture's payload fields with numbers (what a weight can be), asked of the worker
 * only once `wanted` (a weight menu opened, or a field weight in the URL): reading them means
 * reading the files again with payloads kept. Empty while unknown.
 */
export function useNumericFields(wanted: boolean): { name: string; events: number }[] {
  const captureId = useLoadStore((s) => (s.status === 'done' ? s.captureId : 0));
  const [state, setState] = useState<{ capture: number; list: { name: string; events: number }[] }>({ capture: 0, list: [] });
  useEffect(() => {
    if (!wanted || captureId === 0) return;
    let live = true;
    let p = asked.get(captureId);
    if (!p) {
      asked.clear();
      asked.set(captureId, (p = ingestWorker().numericFields()));
      p.catch(() => asked.delete(captureId));
    }
    p.then((list) => live && setState({ capture: captureId, list })).catch(() => {});
    return () => {
      live = false;
    };
  }, [wanted, captureId]);
  return state.capture === captureId ? state.list : [];
}
