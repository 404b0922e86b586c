import { Ingest, type Capture } from './ingest.ts';

/** A file as both the browser (File) and Node (fs.openAsBlob) hand it over. */
export interface NamedBlob {
  name: string;
  blob: Blob;
}

export interface LoadProgress {
  file: string;
  bytesRead: number;
  totalBytes: number;
  /** MB/s since the load started */
  mbPerSecond: number;
}

export interface LoadOptions {
  onProgress?: (p: LoadProgress) => void;
  /** checked after every chunk; true stops the load with a CancelledError */
  isCancelled?: () => boolean;
  /** minimum milliseconds between progress reports */
  progressEveryMs?: number;
}

export class CancelledError extends Error {
  constructor() {
    super('cancelled');
  }
}

/**
 * Streams every file chunk by chunk (`Blob.stream()`, never one big string) into one ingest
 * session and returns the capture. The browser's ingest worker and the Node command line both
 * load through here, so they see the same numbers.
 */
export async function loadFiles(files: readonly NamedBlob[], opts: LoadOptions = {}): Promise<Capture> {
  const started = performance.now();
  const totalBytes = files.reduce((n, f) => n + f.blob.size, 0);
  const every = opts.progressEveryMs ?? 50;
  let bytesRead = 0;
  let last = -Infinity;
  const report = (file: string, force: boolean) => {
    if (!opts.onProgress) return;
    const now = performance.now();
    if (!force && now - last < every) return;
    last = now;
    const secs = Math.max((now - started) / 1000, 1e-6);
    opts.onProgress({ file, bytesRead, totalBytes, mbPerSecond: bytesRead / 1e6 / secs });
  };
  const ingest = new Ingest();
  for (const f of files) {
    const parser = ingest.open(f.name);
    const reader = f.blob.stream().getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (opts.isCancelled?.()) {
        await reader.cancel();
        throw new CancelledError();
      }
      if (done) break;
      parser.push(value);
      bytesRead += value.length;
      report(f.name, false);
    }
    parser.end();
    report(f.name, true);
  }
  return ingest.finish();
}
