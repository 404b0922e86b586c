import { closeSync, openSync, readSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { PART_MIN_BYTES, type TracePart, type TracePartReader } from '../core/capture/split-trace.ts';
import { encodingOf } from '../core/formats/lines.ts';
import { SNIFF_BYTES, sniffKind } from '../core/formats/sniff.ts';
import type { TracePartJob, TracePartWorkerData } from './trace-part-worker.ts';

/**
 * From source (tsx, vitest) the worker is trace-part-worker.ts, started through the simulator's
 * tsx bootstrap; bundled (scripts/build-cli.ts) it is trace-part-worker.mjs beside this chunk.
 */
const BUNDLED = !/\.[cm]?ts$/.test(new URL(import.meta.url).pathname);
const BOOT = BUNDLED ? new URL('./trace-part-worker.mjs', import.meta.url) : new URL('../core/sim/node-worker-boot.mjs', import.meta.url);
const ENTRY = BUNDLED ? BOOT.href : new URL('./trace-part-worker.ts', import.meta.url).href;

type WorkerMessage = { type: 'bytes'; n: number } | { type: 'part'; part: TracePart } | { type: 'error'; message: string };

/** A worker started before its job: it loads its code while this thread reads the files before the trace. */
function startWorker(): Worker {
  const data: TracePartWorkerData = { entry: ENTRY };
  const w = new Worker(BOOT, { workerData: data });
  // idle until given a job, it does not keep the process alive
  w.unref();
  return w;
}

/** Whether the file at `path` starts as a UTF-8 trace text (the only kind split-trace.ts splits), read from its first bytes. */
function looksLikeTrace(path: string): boolean {
  try {
    const fd = openSync(path, 'r');
    try {
      const head = new Uint8Array(SNIFF_BYTES);
      const n = readSync(fd, head, 0, head.length, 0);
      return sniffKind(head.subarray(0, n)) === 'trace_text' && encodingOf(head.subarray(0, n)) === 'utf-8';
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/**
 * The command line's second thread for large traces (split-trace.ts): a worker_threads worker
 * opens the file again by its path and reads it from the split on. `paths`: the path of each
 * Blob the command line opened (a Blob it did not open is read on one thread). `warm`: one worker
 * is started at once when a file of at least `minBytes` looks like a trace text, so it has its
 * code loaded by the time the trace is split; `close()` ends it if no file needed it.
 */
export function nodeTraceParts(paths: ReadonlyMap<Blob, string>, minBytes = PART_MIN_BYTES, warm = false): TracePartReader & { close(): void } {
  let spare: Worker | null = null;
  if (warm) for (const [blob, path] of paths) if (blob.size >= minBytes && looksLikeTrace(path)) {
    spare = startWorker();
    break;
  }
  return {
    minBytes,
    share: 0.5,
    start(blob, start, file, onBytes) {
      const path = paths.get(blob);
      if (path === undefined) return null;
      const w = spare ?? startWorker();
      spare = null;
      w.ref();
      const job: TracePartJob = { path, start, file };
      w.postMessage(job);
      const part = new Promise<TracePart>((resolve, reject) => {
        w.on('message', (m: WorkerMessage) => {
          if (m.type === 'bytes') onBytes?.(m.n);
          else if (m.type === 'part') {
            resolve(m.part);
            void w.terminate();
          } else {
            reject(new Error(m.message));
            void w.terminate();
          }
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
    close() {
      if (spare) void spare.terminate();
      spare = null;
    },
  };
}
