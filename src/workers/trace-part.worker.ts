import { partBuffers, readPartFrom } from '../core/capture/split-trace.ts';

/**
 * A large trace's second thread in the page (trace-part-client.ts): started by the ingest worker
 * for one file, it reads the File from the split to its end and posts the part's columns back,
 * transferred. One message in, `bytes` messages while it reads, one `part` or `error` out.
 */
export interface TracePartJob {
  blob: Blob;
  start: number;
  file: string;
}

self.onmessage = async (e: MessageEvent<TracePartJob>) => {
  const { blob, start, file } = e.data;
  try {
    const part = await readPartFrom(blob.slice(start).stream(), file, (n) => self.postMessage({ type: 'bytes', n }), blob.size - start);
    (self as unknown as Worker).postMessage({ type: 'part', part }, partBuffers(part));
  } catch (err) {
    self.postMessage({ type: 'error', message: `could not read ${file} from byte ${start}: ${String((err as Error)?.message ?? err)}` });
  }
};
