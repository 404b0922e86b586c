import type { Diagnostic } from '../formats/diagnostics.ts';
import { Ingest, understood, type Capture, type FileReport } from './ingest.ts';
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

/** One load: its id (its answer and a cancel name it), whether it adds to the capture or replaces it, and its files. */
export interface LoadRequest {
  id: number;
  mode: 'add' | 'replace';
  files: NamedBlob[];
}

/** What a load came to: the capture it made (and what was built over it), or, when nothing in it could be read, its file reports. */
export type LoadOutcome<T> =
  | { outcome: 'loaded'; capture: Capture; built: T; elapsedMs: number }
  | { outcome: 'rejected'; files: FileReport[]; diagnostics: Diagnostic[]; elapsedMs: number };

/**
 * The captures of a page, one load at a time (the ingest worker's state, in plain TypeScript so
 * it is tested in Node). `add` continues the ingest session of the capture loaded last, so no
 * file is read twice; `replace` starts a new session and keeps the old one until the new one is
 * ready. A load is cancelled by `cancel(id)` or by any newer request; a cancelled or failed load,
 * or one in which nothing could be read, leaves the current capture as it was (an Add's
 * appends are rolled back). A load that already finished can still be taken back by cancelling
 * it, as long as no newer load started: the page dropped its answer, so the worker must not keep it.
 */
export class CaptureLoads<T> {
  private now: { ingest: Ingest; built: T } | null = null;
  private undo: { id: number; restore: () => void } | null = null;
  private readonly cancelled = new Set<number>();
  private newest = 0;
  private queue: Promise<unknown> = Promise.resolve();

  /** `build` makes what is kept over each capture (the worker's Explorer). */
  constructor(private readonly build: (capture: Capture) => T) {}

  /** What was built over the capture loaded last, or null before one. */
  get current(): T | null {
    return this.now?.built ?? null;
  }

  load(req: LoadRequest, opts: Omit<LoadOptions, 'isCancelled' | 'session'> = {}): Promise<LoadOutcome<T>> {
    this.newest = Math.max(this.newest, req.id);
    const run = this.queue.then(() => this.run(req, opts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  cancel(id: number): void {
    if (this.undo?.id === id) {
      this.undo.restore();
      this.undo = null;
    } else this.cancelled.add(id);
  }

  private async run(req: LoadRequest, opts: Omit<LoadOptions, 'isCancelled' | 'session'>): Promise<LoadOutcome<T>> {
    const isCancelled = () => this.cancelled.has(req.id) || req.id < this.newest;
    try {
      if (isCancelled()) throw new CancelledError();
      // a new load starts: the page has the last one's answer, which can no longer be taken back
      this.undo = null;
      const started = performance.now();
      const before = this.now;
      const base = req.mode === 'add' ? (before?.ingest ?? null) : null;
      const ingest = base ?? new Ingest();
      const mark = ingest.mark();
      try {
        const reports = await readFiles(ingest, req.files, { ...opts, isCancelled });
        if (!reports.some(understood)) {
          const diagnostics = ingest.diagnosticsSince(mark);
          ingest.rollback(mark);
          return { outcome: 'rejected', files: reports, diagnostics, elapsedMs: performance.now() - started };
        }
        const capture = ingest.finish();
        const built = this.build(capture);
        this.now = { ingest, built };
        this.undo = {
          id: req.id,
          restore: () => {
            if (base) base.rollback(mark);
            this.now = before;
          },
        };
        return { outcome: 'loaded', capture, built, elapsedMs: performance.now() - started };
      } catch (e) {
        // readFiles rolled the session back itself; a failure after it (finish, build) is undone here
        if (base) base.rollback(mark);
        throw e;
      }
    } finally {
      this.cancelled.delete(req.id);
    }
  }
}
