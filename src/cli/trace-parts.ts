import { Worker } from 'node:worker_threads';
import { PART_MIN_BYTES, type TracePart, type TracePartReader } from '../core/capture/split-trace.ts';
import type { TracePartWorkerData } from './trace-part-worker.ts';

/**
 * From source (tsx, vitest) the worker is trace-part-worker.ts, started through the simulator's
 * tsx bootstrap; bundled (scripts/build-cli.ts) it is trace-part-worker.mjs beside this chunk.
 */
const BUNDLED = !/\.[cm]?ts$/.test(new URL(import.meta.url).pathname);
const BOOT = BUNDLED ? new URL('./trace-part-worker.mjs', import.meta.url) : new URL('../core/sim/node-worker-boot.mjs', import.meta.url);
const ENTRY = BUNDLED ? BOOT.href : new URL('./trace-part-worker.ts', import.meta.url).href;


/**
 * The command line's second thread for large traces (split-trace.ts): a worker_threads worker
 * opens the file again by its path and reads it from the split on. `paths`: the path of each
 * Blob the command line opened (a Blob it did not open is read on one thread).
 */
export function nodeTraceParts(paths: ReadonlyMap<Blob, string>, minBytes = PART_MIN_BYTES): TracePartReader {
  return {
    minBytes,
    share: 0.5,
    start(blob, start, file, onBytes) {
      const path = paths.get(blob);
      if (path === undefined) return null;
      const data: TracePartWorkerData = { entry: ENTRY, path, start, file };
      const w = new Worker(BOOT, { workerData: data });
      const part = new Promise<TracePart>((resolve, reject) => {
        w.on('message', (m: { type: 'bytes'; n: number } | { type: 'part'; part: TracePart } | { type: 'error'; message: string }) => {
          if (m.type === 'bytes') onBytes?.(m.n);
          else if (m.type === 'part') resolve(m.part);
          else reject(new Error(m.message));
        });
        w.on('error', reject);
        w.on('exit', (code) => reject(new Error(`the part reader ended (exit code ${code}) before it sent its part`)));
      });
      return {
        part,
        cancel: () => {
          void w.terminate();
        },
      };
    },
  };
}
