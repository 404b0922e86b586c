import { partBuffers, readTracePart } from '../core/capture/split-trace.ts';

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

const EVERY = 4 << 20;

self.onmessage = async (e: MessageEvent<TracePartJob>) => {
  const { blob, start, file } = e.data;
  try {
    const reader = readTracePart(file);
    const stream = blob.slice(start).stream().getReader();
    let n = 0;
    let told = 0;
    for (;;) {
      const r = await stream.read();
      if (r.done) break;
      reader.push(r.value);
      n += r.value.length;
      if (n - told >= EVERY) {
        told = n;
        self.postMessage({ type: 'bytes', n });
      }
    }
    const part = reader.end();
    (self as unknown as Worker).postMessage({ type: 'part', part }, partBuffers(part));
  } catch (err) {
    self.postMessage({ type: 'error', message: `could not read ${file} from byte ${start}: ${String((err as Error)?.message ?? err)}` });
  }
};
