import { closeSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { Worker } from 'node:worker_threads';
import { findSplit, PART_MIN_BYTES, SPLIT_WINDOW, splitsAsTrace, splitWindow, type TracePart, type TracePartReader } from '../core/capture/split-trace.ts';
import { SNIFF_BYTES } from '../core/formats/sniff.ts';
import type { TracePartJob, TracePartWorkerData } from './trace-part-worker.ts';

/**
 * From source (tsx, vitest) the worker is trace-part-worker.ts, started through the simulator's
 * tsx bootstrap; bundled (scripts/build-cli.ts) it is trace-part-worker.mjs beside this chunk.
 */
const BUNDLED = !/\.[cm]?ts$/.test(new URL(import.meta.url).pathname);
const BOOT = BUNDLED ? new URL('./trace-part-worker.mjs', import.meta.url) : new URL('../core/sim/node-worker-boot.mjs', import.meta.url);
const ENTRY = BUNDLED ? BOOT.href : new URL('./trace-part-worker.ts', import.meta.url).href;

/**
 * The share of a large trace the worker reads (the rest from the split on). Half: it starts
 * reading before this thread does (ahead) and without the load's stream, but this thread reads
 * the files before the trace meanwhile; alternating runs of the bundled summary --json on the
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

/** Bytes `[from, from + n)` of the file at `path` (fewer at its end). */
function readAt(path: string, from: number, n: number): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const b = new Uint8Array(n);
    return b.subarray(0, readSync(fd, b, 0, n, from));
  } finally {
    closeSync(fd);
  }
}

/** Where the load will split the file at `path` (split-trace.ts splitPoint, with blocking reads), or null. */
function splitAhead(path: string, size: number, parts: Pick<TracePartReader, 'minBytes' | 'share'>): number | null {
  const at = splitWindow(size, parts);
  if (at === null) return null;
  try {
    if (!splitsAsTrace(readAt(path, 0, SNIFF_BYTES))) return null;
    const s = findSplit(readAt(path, at, Math.min(SPLIT_WINDOW, size - at)), at);
    return s > 0 ? s : null;
  } catch {
    return null;
  }
}

/**
 * The command line's second thread for large traces (split-trace.ts): a worker_threads worker
 * opens the file again by its path and reads it from the split on, with blocking reads.
 * `paths`: the path of each Blob the command line opened (a Blob it did not open is read on one
 * thread). `ahead`: the first file the load will split (at least `minBytes`, a UTF-8 trace text)
 * is split here at once, where the load will, and its worker starts reading while this thread
 * reads the files before it; the load's `start` then takes that run (any other is started when
 * asked). `close()` ends a run nobody took.
 */
export function nodeTraceParts(paths: ReadonlyMap<Blob, string>, minBytes = PART_MIN_BYTES, ahead = false): TracePartReader & { close(): void } {
  const parts = { minBytes, share: SHARE };
  let early: (Run & { blob: Blob }) | null = null;
  if (ahead) {
    for (const [blob, path] of paths) {
      const split = splitAhead(path, blob.size, parts);
      if (split === null) continue;
      early = { ...run({ path, start: split, file: basename(path) }), blob };
      break;
    }
  }
  return {
    ...parts,
    start(blob, start, file, onBytes) {
      const path = paths.get(blob);
      if (path === undefined) return null;
      let r: Run;
      if (early && early.blob === blob && early.job.start === start && early.job.file === file) {
        r = early;
        early = null;
        r.onBytes = onBytes;
        if (r.bytes > 0) onBytes?.(r.bytes);
      } else r = Object.assign(run({ path, start, file }), { onBytes });
      const w = r.worker;
      return { part: r.part, cancel: () => void w.terminate() };
    },
    close() {
      if (early) void early.worker.terminate();
      early = null;
    },
  };
}
