import { create } from 'zustand';
import type { Diagnostic } from '../core/formats/diagnostics.ts';
import type { ParsedStat } from '../core/formats/types.ts';
import type { Overview, Warning } from '../core/model/query-types.ts';
import type { Summary } from '../core/model/summary.ts';
import { CANCELLED, type FileReport, type IngestAnswer, type LoadProgress, type NamedBlob } from '../workers/ingest-api.ts';
import { Comlink, WorkerFaultError } from '../workers/ingest-client.ts';
import { forgetCapture, keepCapture, readKeptCapture, type Backend } from './capture-persist.ts';
import { describeRejected, sniffKinds, suggestMode } from './load-offer.ts';
import { cancelLoad, connectLoadStore, hostOf, isWorkerLost, nextRequestId, reopened, setWorkerLost, type FaultNotice } from './load-worker.ts';
import { useViewStore } from './view-store.ts';

// the worker's fault recovery (load-worker.ts) and the Add-or-Replace helpers (load-offer.ts), importable from here as before
export { describeRejected, sniffKinds, suggestMode } from './load-offer.ts';
export { faultText, ingestWorker, type FaultNotice } from './load-worker.ts';

/** The capture's state: 'done' while one is open (whatever a later load does); before the first, how the first load goes. */
export type LoadStatus = 'idle' | 'loading' | 'done' | 'cancelled' | 'error';
/** The last load's own state (the progress line's data-status). */
export type LoadActivity = 'idle' | 'loading' | 'done' | 'cancelled' | 'error' | 'rejected';
/** Add the files to the capture shown, or open them as a new capture. */
export type LoadMode = 'add' | 'replace';
/** where the capture's files came from: the embedded sample, the user, or the browser's store (a reload) */
export type CaptureSource = 'sample' | 'files' | 'stored';

/** Whether the capture shown is kept in the browser for the next visit. */
export type KeepState =
  | { state: 'off' }
  | { state: 'saving' }
  | { state: 'kept'; backend: Backend; bytes: number }
  | { state: 'not-kept'; reason: string };

export interface LoadState {
  status: LoadStatus;
  activity: LoadActivity;
  /** the running (or last) load's mode and file names */
  mode: LoadMode;
  loading: string[];
  /** names of the files of the capture shown */
  files: string[];
  source: CaptureSource | null;
  /** the running (or last) load's progress */
  progress: LoadProgress | null;
  summary: Summary | null;
  overview: Overview | null;
  warnings: Warning[];
  stats: ParsedStat[];
  /** bumps with every capture loaded; queries are keyed by it so answers about an older one are dropped */
  captureId: number;
  error: string | null;
  elapsedMs: number | null;
  /**
   * The file reports (with their sniffed kinds) of the last load when nothing in it could be
   * read (a trace.dat, perf script output, random bytes): the capture shown stayed. Null after
   * a load that read something.
   */
  rejected: FileReport[] | null;
  /** that load's diagnostics (what each file is, what to do instead) */
  rejectedDiagnostics: Diagnostic[];
  /** one line about the kept capture (it could not be reopened), shown with the progress */
  notice: string | null;
  keep: KeepState;
  /** files that arrived while a capture of the user's is open, waiting for "add" or "replace" */
  offer: { files: NamedBlob[]; suggested: LoadMode | null } | null;
  /** the last time the ingest worker died or hung, and what became of the capture shown; null once a later load is done */
  fault: FaultNotice | null;

  load(files: NamedBlob[], source: 'sample' | 'files' | 'stored', mode?: LoadMode): Promise<void>;
  /** files picked or dropped: opened at once over the sample or nothing, else offered (add or replace) */
  offerFiles(files: NamedBlob[]): void;
  /** the answer to the offer; null drops it */
  answerOffer(mode: LoadMode | null): void;
  loadSample(): Promise<void>;
  /** the first capture of a visit: the one kept in the browser, else the sample */
  openInitial(): Promise<void>;
  cancel(): void;
  /** forgets the kept capture and opens the sample */
  forget(): Promise<void>;
  dismissFault(): void;
}

/** Where the embedded capture lives (public/samples/, listed by its index.json). */
export const SAMPLE_BASE = `${import.meta.env.BASE_URL}samples/`;

/** the files of the capture shown, kept for the browser's store (they are references, not copies) */
let captureBlobs: NamedBlob[] = [];
/** the load in flight; its answer is dropped once it is no longer this one */
let running: { id: number } | null = null;
/** the newest keep; an older one finishing later does not overwrite its state */
let keepSeq = 0;

export const useLoadStore = create<LoadState>((set, get) => {
  /** Keeps the capture's files for the next visit (the sample is not kept: a reload opens it anyway). */
  const keep = async (source: CaptureSource) => {
    const mine = ++keepSeq;
    if (source === 'sample') {
      set({ keep: { state: 'off' } });
      await forgetCapture();
      return;
    }
    set({ keep: { state: 'saving' } });
    const r = await keepCapture(captureBlobs);
    if (mine !== keepSeq) return;
    set({ keep: r.kept ? { state: 'kept', backend: r.backend, bytes: r.bytes } : { state: 'not-kept', reason: r.reason } });
  };

  return {
    status: 'idle',
    activity: 'idle',
    mode: 'replace',
    loading: [],
    files: [],
    source: null,
    progress: null,
    summary: null,
    overview: null,
    warnings: [],
    stats: [],
    captureId: 0,
    error: null,
    elapsedMs: null,
    rejected: null,
    rejectedDiagnostics: [],
    notice: null,
    keep: { state: 'off' },
    offer: null,
    fault: null,

    async load(files, source, mode = 'replace') {
      if (running) cancelLoad(running.id);
      const id = nextRequestId();
      running = { id };
      const open = get().status === 'done';
      // with nothing open there is nothing to add to
      const m: LoadMode = open ? mode : 'replace';
      set({
        activity: 'loading',
        mode: m,
        loading: files.map((f) => f.name),
        progress: null,
        error: null,
        offer: null,
        ...(open ? {} : { status: 'loading' as const }),
      });
      const stillMine = () => running?.id === id;
      // after a fault a new worker is reopening the capture shown: an Add continues that session, and
      // a Replace waits too, so the capture stays whole in the worker should the Replace fail
      await reopened();
      if (!stillMine()) return;
      // and when that failed the new worker holds nothing to add to: every file is read again
      const lost = m === 'add' && isWorkerLost();
      const send = lost ? [...captureBlobs, ...files] : files;
      const wire: LoadMode = lost ? 'replace' : m;
      const h = hostOf();
      h.busy(id);
      try {
        const answer = await h.run(
          (api) =>
            api.ingest(
              { id, mode: wire, files: send },
              Comlink.proxy((p: LoadProgress) => {
                h.beat(id, p.phase);
                if (stillMine()) set({ progress: p });
              }),
            ) as Promise<IngestAnswer>,
        );
        // a late answer for a load cancelled or superseded is dropped (the worker took it back)
        if (!stillMine()) return;
        running = null;
        if (answer.outcome === 'rejected') {
          set({
            activity: 'rejected',
            rejected: answer.files,
            rejectedDiagnostics: answer.diagnostics,
            elapsedMs: answer.elapsedMs,
            ...(open ? {} : { status: 'error' as const, error: `nothing in ${describeRejected(answer.files, answer.diagnostics)} could be read` }),
          });
          return;
        }
        // the first capture is opened with the view the URL carries; a new one starts afresh, an Add keeps it
        if (m === 'replace' && get().captureId > 0) useViewStore.getState().reset();
        captureBlobs = m === 'add' ? [...captureBlobs, ...files] : [...files];
        setWorkerLost(false);
        const prevSource = get().source;
        const nextSource: CaptureSource = m === 'add' ? (prevSource === 'sample' ? 'files' : (prevSource ?? source)) : source;
        set({
          status: 'done',
          activity: 'done',
          files: captureBlobs.map((f) => f.name),
          source: nextSource,
          summary: answer.summary,
          overview: answer.overview,
          warnings: answer.warnings,
          stats: answer.stats,
          elapsedMs: answer.elapsedMs,
          captureId: get().captureId + 1,
          rejected: null,
          rejectedDiagnostics: [],
          fault: null,
        });
        // a capture reopened from the store is kept already
        if (!(source === 'stored' && m === 'replace')) void keep(nextSource);
      } catch (e) {
        if (!stillMine()) return;
        running = null;
        const message = (e as Error).message;
        if (e instanceof WorkerFaultError) set({ activity: 'error', error: message, ...(open ? {} : { status: 'error' as const }) });
        else if (message.includes(CANCELLED)) set({ activity: 'cancelled', ...(open ? {} : { status: 'cancelled' as const }) });
        else set({ activity: 'error', error: message, ...(open ? {} : { status: 'error' as const }) });
      } finally {
        h.idle(id);
      }
    },

    offerFiles(files) {
      const s = get();
      // over the embedded sample (or nothing) there is nothing of the user's to add to
      if (s.status !== 'done' || s.source === 'sample') {
        void get().load(files, 'files', 'replace');
        return;
      }
      const offer = { files, suggested: null as LoadMode | null };
      set({ offer });
      const have = s.summary?.files.map((f) => f.kind) ?? [];
      void sniffKinds(files).then(
        (kinds) => get().offer?.files === files && set({ offer: { files, suggested: suggestMode(have, kinds) } }),
        () => get().offer?.files === files && set({ offer: { files, suggested: 'replace' } }),
      );
    },

    answerOffer(mode) {
      const o = get().offer;
      set({ offer: null });
      if (o && mode) void get().load(o.files, 'files', mode);
    },

    async loadSample() {
      const open = get().status === 'done';
      set({ activity: 'loading', mode: 'replace', loading: ['samples/index.json'], progress: null, error: null, ...(open ? {} : { status: 'loading' as const }) });
      try {
        const index = (await (await fetch(SAMPLE_BASE + 'index.json')).json()) as { files: string[] };
        const files = await Promise.all(
          index.files.map(async (name) => ({ name, blob: await (await fetch(SAMPLE_BASE + name)).blob() })),
        );
        await get().load(files, 'sample', 'replace');
      } catch (e) {
        set({ activity: 'error', error: `cannot load the sample: ${(e as Error).message}`, ...(open ? {} : { status: 'error' as const }) });
      }
    },

    async openInitial() {
      if (get().status !== 'idle') return;
      set({ status: 'loading', activity: 'loading', loading: ['the capture kept in this browser'] });
      const kept = await readKeptCapture();
      if (kept.state === 'found') {
        await get().load(kept.files, 'stored', 'replace');
        const s = get();
        if (s.status === 'done') {
          set({ keep: { state: 'kept', backend: kept.backend, bytes: kept.bytes } });
          return;
        }
        // cancelled by the user: leave it kept, and let them choose
        if (s.status === 'cancelled') return;
        set({ notice: `The capture kept in this browser could not be opened (${s.error ?? 'nothing in it could be read'}); it was forgotten and the sample opened.` });
        await forgetCapture();
      } else if (kept.state === 'unreadable') {
        set({ notice: `The capture kept in this browser is damaged (${kept.reason}); it was forgotten and the sample opened.` });
        await forgetCapture();
      }
      set({ status: 'idle' });
      await get().loadSample();
    },

    cancel() {
      if (!running) return;
      const { id } = running;
      running = null;
      cancelLoad(id);
      set({ activity: 'cancelled', ...(get().status === 'done' ? {} : { status: 'cancelled' as const }) });
    },

    dismissFault() {
      set({ fault: null });
    },

    async forget() {
      ++keepSeq;
      await forgetCapture();
      set({ keep: { state: 'off' }, notice: null });
      await get().loadSample();
    },
  };
});

connectLoadStore({
  getState: () => useLoadStore.getState(),
  setState: (partial) => useLoadStore.setState(partial),
  loadRunning: () => running !== null,
  captureBlobs: () => captureBlobs,
});
