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
 * The share of a large trace the worker reads (the rest from the split on) when it is the load's
 * first file (after others, more: early-part.ts). Half; alternating runs of the bundled summary --json on the
 * 105 MB capture (load 1.6-2.8) were best at 0.5 among 0.45, 0.5 and 0.55 (608-689 ms against
 * 633-754 and 663-689).
 */
const SHARE = 0.5;

type WorkerMessage = { type: 'bytes'; n: number } | { type: 'part'; part: TracePart } | { type: 'error'; message: string };

/** A job given to a worker: its part, and the bytes read so far, told to whoever listens once it does. */
interface Run {
  job: TracePartJob;
  worker: Worker;
  part: Promise<TracePart>;
  bytes: number;
  onBytes?: (n: number) => void;
}

/** Gives `job` to a worker (started here); the process waits for it until it ends. */
function run(job: TracePartJob): Run {
  const data: TracePartWorkerData = { entry: ENTRY };
  const worker = new Worker(BOOT, { workerData: data });
  worker.postMessage(job);
  const r: Run = { job, worker, bytes: 0, part: null as unknown as Promise<TracePart> };
  r.part = new Promise<TracePart>((resolve, reject) => {
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'bytes') r.onBytes?.((r.bytes = m.n));
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
 * thread). A trace after other files has its part started when the load begins (early-part.ts);
 * `close()` ends a run nobody waited for.
 */
export function nodeTraceParts(paths: ReadonlyMap<Blob, string>, minBytes = PART_MIN_BYTES): TracePartReader & { close(): void } {
  const runs = new Set<Worker>();
  return {
    minBytes,
    share: SHARE,
    start(blob, start, file, onBytes) {
      const path = paths.get(blob);
      if (path === undefined) return null;
      const r = Object.assign(run({ path, start, file }), { onBytes });
      const w = r.worker;
      runs.add(w);
      void r.part.finally(() => runs.delete(w)).catch(() => {});
      return { part: r.part, cancel: () => void w.terminate() };
    },
    close() {
      for (const w of runs) void w.terminate();
      runs.clear();
    },
  };
}
