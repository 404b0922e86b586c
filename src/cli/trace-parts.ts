import { Worker } from 'node:worker_threads';
import { PART_MIN_BYTES, type TracePart, type TracePartReader } from '../core/capture/split-trace.ts';
import type { TracePartJob, TracePartWorkerData } from './trace-part-worker.ts';

/**
 * From source (tsx, vitest) the worker is trace-part-worker.ts, started through the simulator's
 * tsx bootstrap; bundled (scripts/build-cli.ts) it is trace-part-worker.mjs beside this chunk.
 */
const BUNDLED = !/\.[cm]?ts$/.test(new URL(import.meta.url).pathname);
const BOOT = BUNDLED ? new URL('./trace-part-worker.mjs', import.meta.url) : new URL('../core/sim/node-worker-boot.mjs', import.meta.url);
const ENTRY = BUNDLED ? BOOT.href : new URL('./trace-part-worker.ts', import.meta.url).href;

/**
 * The share of a large trace the worker reads (the rest from the split on) when nothing else is
 * read meanwhile (more when other files are: split-trace.ts aheadShare). Half: alternating runs of
 * the bundled summary --json on the 105 MB capture (load 1.6-2.8) were best at 0.5 among 0.45,
 * 0.5 and 0.55 (608-689 ms against 633-754 and 663-689).
 */
const SHARE = 0.5;

type WorkerMessage = { type: 'bytes'; n: number } | { type: 'part'; part: TracePart } | { type: 'error'; message: string };

/** A job given to a worker, and its part. */
interface Run {
  worker: Worker;
  part: Promise<TracePart>;
}

/** Gives `job` to a worker (started here), `onBytes` told the bytes it has read; the process waits for it until it ends. */
function run(job: TracePartJob, onBytes?: (n: number) => void): Run {
  const data: TracePartWorkerData = { entry: ENTRY };
  const worker = new Worker(BOOT, { workerData: data });
  worker.postMessage(job);
  const r: Run = { worker, part: null as unknown as Promise<TracePart> };
  r.part = new Promise<TracePart>((resolve, reject) => {
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'bytes') onBytes?.(m.n);
      else if (m.type === 'part') {
        resolve(m.part);
        void worker.terminate();
      } else {
        reject(new Error(m.message));
        void worker.terminate();
      }
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`the part reader ended (exit code ${code}) before it sent its part`)));
  });
  // a run nobody asks for (ended by close) fails unheard
  r.part.catch(() => {});
  return r;
}

/**
 * The command line's second thread for large traces (split-trace.ts): a worker_threads worker
 * opens the file again by its path and reads it from the split on, with blocking reads.
 * `paths`: the path of each Blob the command line opened (a Blob it did not open is read on one
 * thread). The load starts the first large trace's run before it reads the files ahead of it
 * (load.ts, aheadOf). `close()` ends every run the load left (one it started and did not take).
 */
export function nodeTraceParts(paths: ReadonlyMap<Blob, string>, minBytes = PART_MIN_BYTES): TracePartReader & { close(): void } {
  const runs = new Set<Run>();
  return {
    minBytes,
    share: SHARE,
    start(blob, start, file, onBytes) {
      const path = paths.get(blob);
      if (path === undefined) return null;
      const r = run({ path, start, file }, onBytes);
      runs.add(r);
      void r.part.finally(() => runs.delete(r)).catch(() => {});
      const w = r.worker;
      return { part: r.part, cancel: () => void w.terminate() };
    },
    close() {
      for (const r of runs) void r.worker.terminate();
      runs.clear();
    },
  };
}
