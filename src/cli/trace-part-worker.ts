import { openAsBlob } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { partBuffers, readPartFrom } from '../core/capture/split-trace.ts';

/** What trace-parts.ts starts a worker with: the file's rest from `start`, read as trace text named `file`. */
export interface TracePartWorkerData {
  entry: string;
  path: string;
  start: number;
  file: string;
}

const { path, start, file } = workerData as TracePartWorkerData;
try {
  const blob = (await openAsBlob(path)).slice(start);
  const part = await readPartFrom(blob.stream(), file, (n) => parentPort!.postMessage({ type: 'bytes', n }));
  parentPort!.postMessage({ type: 'part', part }, partBuffers(part));
} catch (e) {
  parentPort!.postMessage({ type: 'error', message: `could not read ${path} from byte ${start}: ${String((e as Error)?.message ?? e)}` });
}
