import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { differs } from './file-blob.ts';
import { parentPort, workerData } from 'node:worker_threads';
import { partBuffers, readTracePart, REPORT_EVERY } from '../core/capture/split-trace.ts';

/** What trace-parts.ts starts a worker with: the entry to boot from source (node-worker-boot.mjs). */
export interface TracePartWorkerData {
  entry: string;
}

/** What it sends the worker once its file is split: the file's rest from `start`, read as trace text named `file`. */
export interface TracePartJob {
  path: string;
  start: number;
  file: string;
}

/** Bytes read at once: the reader takes them in pieces of one read (one buffer, reused). */
const READ_PIECE = 4 << 20;

/**
 * Reads the job's part with blocking reads of READ_PIECE bytes (this thread does nothing else),
 * told every REPORT_EVERY bytes. A file written or resized meanwhile fails the read, as a Blob
 * of it would: the other thread then reads the rest itself and says what it finds.
 */
function run({ path, start, file }: TracePartJob): void {
  const fd = openSync(path, 'r');
  try {
    const before = fstatSync(fd);
    const reader = readTracePart(file, before.size - start);
    const buf = new Uint8Array(READ_PIECE);
    let at = start;
    let told = 0;
    for (;;) {
      const k = readSync(fd, buf, 0, buf.length, at);
      if (k === 0) break;
      reader.push(k === buf.length ? buf : buf.subarray(0, k));
      at += k;
      if (at - start - told >= REPORT_EVERY) parentPort!.postMessage({ type: 'bytes', n: (told = at - start) });
    }
    const d = differs(before, fstatSync(fd));
    if (d) throw new Error(`the file changed while it was read (${d})`);
    const part = reader.end();
    parentPort!.postMessage({ type: 'part', part }, partBuffers(part));
  } finally {
    closeSync(fd);
  }
}

void (workerData as TracePartWorkerData);
parentPort!.once('message', (job: TracePartJob) => {
  try {
    run(job);
  } catch (e) {
    parentPort!.postMessage({ type: 'error', message: `could not read ${job.path} from byte ${job.start}: ${String((e as Error)?.message ?? e)}` });
  }
});
