import { Ingest, type Capture, type FileReport } from './ingest.ts';
import { unpack } from './unpack.ts';

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
  /**
   * An ingest session to continue (an Add): the files are read into it after the ones it has,
   * and a cancelled or failed load rolls it back to where it stood. Without one, a new session.
   */
  session?: Ingest;
}

export class CancelledError extends Error {
  constructor() {
    super('cancelled');
  }
}

/**
 * Streams every file chunk by chunk (`Blob.stream()`, never one big string) into one ingest
 * session and returns the capture. Compressed files and bundles (.gz, .tar, .tar.gz, .zip) are
 * opened on the way (unpack.ts) and their files read as if dropped one by one; progress counts
 * the bytes read of the files as given, compressed or not. The browser's ingest worker and the
 * Node command line both load through here, so they see the same numbers.
 */
export async function loadFiles(files: readonly NamedBlob[], opts: LoadOptions = {}): Promise<Capture> {
  const ingest = opts.session ?? new Ingest();
  await readFiles(ingest, files, opts);
  return ingest.finish();
}

/**
 * Reads the files into `ingest` (without finishing it) and returns the report of each file
 * read, archives' members included. On cancel (CancelledError) or any failure the session is
 * rolled back to where it stood before, as if this call had not happened.
 */
export async function readFiles(ingest: Ingest, files: readonly NamedBlob[], opts: LoadOptions = {}): Promise<FileReport[]> {
  const mark = ingest.mark();
  try {
    return await read(ingest, files, opts);
  } catch (e) {
    ingest.rollback(mark);
    throw e;
  }
}

async function read(ingest: Ingest, files: readonly NamedBlob[], opts: LoadOptions): Promise<FileReport[]> {
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
  const reports: FileReport[] = [];
  const diagnose = (file: string, message: string, offset?: number) => ingest.report(file, message, offset);
  for (const f of files) {
    const base = bytesRead;
    let outer = 0;
    let cancelled = false;
    // counts the given file's bytes, and stops reading it (every layer then ends) on cancel,
    // which also covers chunks that unpack reads past without handing over (skipped entries)
    const source = f.blob.stream().pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, c) {
          if (opts.isCancelled?.()) {
            cancelled = true;
            c.terminate();
            return;
          }
          outer += chunk.length;
          c.enqueue(chunk);
        },
      }),
    );
    for await (const inner of unpack({ name: f.name, stream: source }, diagnose)) {
      const parser = ingest.open(inner.name);
      const reader = inner.stream.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (cancelled || opts.isCancelled?.()) {
          await reader.cancel().catch(() => {});
          throw new CancelledError();
        }
        if (done) break;
        parser.push(value);
        bytesRead = base + outer;
        report(inner.name, false);
      }
      reader.releaseLock();
      reports.push(parser.end());
      report(inner.name, true);
    }
    if (cancelled || opts.isCancelled?.()) throw new CancelledError();
    bytesRead = base + f.blob.size;
    report(f.name, true);
  }
  return reports;
}
