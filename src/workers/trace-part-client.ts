import { PART_MIN_BYTES, type TracePart, type TracePartReader } from '../core/capture/split-trace.ts';
import type { TracePartJob } from './trace-part.worker.ts';

/**
 * The page's second thread for large traces (core/capture/split-trace.ts): the ingest worker
 * starts a nested worker per large trace text file, which reads the File from the split on
 * (a File is passed by reference, not copied) and transfers the part's columns back.
 */
export function browserTraceParts(minBytes = PART_MIN_BYTES, share = 0.5): TracePartReader {
  return {
    minBytes,
    share,
    start(blob, start, file, onBytes) {
      if (typeof Worker !== 'function') return null;
      const w = new Worker(new URL('./trace-part.worker.ts', import.meta.url), { type: 'module', name: `trace-part ${file}` });
      const part = new Promise<TracePart>((resolve, reject) => {
        w.onmessage = (e: MessageEvent<{ type: 'bytes'; n: number } | { type: 'part'; part: TracePart } | { type: 'error'; message: string }>) => {
          const m = e.data;
          if (m.type === 'bytes') onBytes?.(m.n);
          else if (m.type === 'part') resolve(m.part);
          else reject(new Error(m.message));
        };
        w.onerror = (e) => reject(new Error(`the part reader failed: ${e.message || 'it could not start'}`));
      }).finally(() => w.terminate());
      const job: TracePartJob = { blob, start, file };
      w.postMessage(job);
      return { part, cancel: () => w.terminate() };
    },
  };
}
