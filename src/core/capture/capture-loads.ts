import type { Diagnostic } from '../formats/diagnostics.ts';
import { Ingest, understood, type Capture, type FileReport } from './ingest.ts';
import { CancelledError, readFiles, type LoadOptions, type LoadProgress, type NamedBlob } from './load.ts';

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
        let last: LoadProgress | null = null;
        const onProgress = opts.onProgress && ((p: LoadProgress) => opts.onProgress!((last = p)));
        const reports = await readFiles(ingest, req.files, { ...opts, onProgress, isCancelled });
        // every byte is read: what follows (dumps, cookies, the Explorer's tables) is one step with no progress of its own
        if (last && onProgress) onProgress({ ...(last as LoadProgress), phase: 'indexing' });
        // a cancel read at a turn after the file's last chunk (the other thread's half awaited) is
        // checked by nothing in the reading: without this the worker kept a load the page dropped
        if (isCancelled()) throw new CancelledError();
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
