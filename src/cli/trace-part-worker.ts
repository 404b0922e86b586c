import { openAsBlob } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { partBuffers, readTracePart } from '../core/capture/split-trace.ts';

/** What trace-parts.ts starts a worker with: the file's rest from `start`, read as trace text named `file`. */
export interface TracePartWorkerData {
  entry: string;
  path: string;
  start: number;
  file: string;
}

/** Bytes between progress messages. */
const EVERY = 4 << 20;

const { path, start, file } = workerData as TracePartWorkerData;
try {
  const blob = (await openAsBlob(path)).slice(start);
  const reader = readTracePart(file);
  const stream = blob.stream().getReader();
  let n = 0;
  let told = 0;
  for (;;) {
    const r = await stream.read();
    if (r.done) break;
    reader.push(r.value);
    n += r.value.length;
    if (n - told >= EVERY) {
      told = n;
      parentPort!.postMessage({ type: 'bytes', n });
    }
  }
  const part = reader.end();
  parentPort!.postMessage({ type: 'part', part }, partBuffers(part));
} catch (e) {
  parentPort!.postMessage({ type: 'error', message: `could not read ${path} from byte ${start}: ${String((e as Error)?.message ?? e)}` });
}
