import { create } from 'zustand';
import type { Diagnostic } from '../../core/formats/diagnostics.ts';
import type { ParsedStat } from '../../core/formats/types.ts';
import type { Overview, Warning } from '../../core/query/api.ts';
import type { Summary } from '../../core/capture/summary.ts';
import { CANCELLED, type FileReport, type IngestAnswer, type LoadProgress, type NamedBlob } from '../../workers/ingest-api.ts';
import { Comlink, WorkerFaultError } from '../../workers/ingest-client.ts';
import { forgetCapture, keepCapture, readKeptCapture, type Backend, type StoredCapture } from './capture-persist.ts';
import { describeRejected, sniffKinds, suggestMode } from './load-offer.ts';
import { cancelLoad, connectLoadStore, hostOf, isWorkerLost, nextRequestId, reopened, setWorkerLost, type FaultNotice } from './load-worker.ts';
import type { CaptureSource, LoadMode } from './load-types.ts';
import { useViewStore } from '../view/view-store.ts';

/** The capture's state: 'done' while one is open (whatever a later load does); before the first, how the first load goes. */
export type LoadStatus = 'idle' | 'loading' | 'done' | 'cancelled' | 'error';
/** The last load's own state (the progress line's data-status). */
export type LoadActivity = 'idle' | 'loading' | 'done' | 'cancelled' | 'error' | 'rejected';

/**
 * What a load reads: files in hand, or a fetch of them (the sample's files, the kept capture)
 * that is part of the load. A fetch runs under the load's own request id, so a pick made while
 * it runs supersedes it, and Cancel aborts it (its signal).
 */
export type LoadInput = NamedBlob[] | ((signal: AbortSignal) => Promise<{ files: NamedBlob[]; source: CaptureSource }>);

/** How a load ended for its caller: `superseded` by a newer load, or cancelled, is no failure of its files. */
export type LoadOutcome = 'done' | 'rejected' | 'error' | 'cancelled' | 'superseded';

/**
 * One line about the capture kept in this browser, when the page could not open it. Nothing is
 * deleted for it: the user chooses (`forget`, or `keepStored` to leave it for the next visit).
 */
export interface KeptNotice {
  text: string;
  /** the kept capture is still in the browser's store, waiting for the user's choice */
  choice: boolean;
}

/** Whether the capture shown is kept in the browser for the next visit. */
export type KeepState = { state: 'off' } | { state: 'saving' } | { state: 'kept'; backend: Backend; bytes: number } | { state: 'not-kept'; reason: string };

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
  /** bumps with every capture loaded (and every event filter applied); queries are keyed by it so answers about an older one are dropped */
  captureId: number;
  /** the event filter the capture shown is filtered by ('' for none): its summary and overview are the filtered capture's */
  filterOf: string;
  /** the capture before any filter: its summary (what "of all" counts) */
  unfiltered: Summary | null;
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
  notice: KeptNotice | null;
  keep: KeepState;
  /** loads whose fetch or answer came after a newer load or a cancel took their place, and was dropped (the progress line's data-dropped) */
  dropped: number;
  /** files that arrived while a capture of the user's is open, waiting for "add" or "replace" */
  offer: { files: NamedBlob[]; suggested: LoadMode | null } | null;
  /** the last time the ingest worker died or hung, and what became of the capture shown; null once a later load is done */
  fault: FaultNotice | null;

  /**
   * Reads `input` as a new capture or into the one shown. `names` is what the progress line
   * says while a fetch runs; `leaveStore` keeps a sample load from forgetting the kept capture
   * (start-up opens the sample while the user has yet to choose what becomes of it).
   */
  load(input: LoadInput, source: CaptureSource, mode?: LoadMode, opts?: { names?: string[]; leaveStore?: boolean }): Promise<LoadOutcome>;
  /** files picked or dropped: opened at once over the sample or nothing, else offered (add or replace) */
  offerFiles(files: NamedBlob[]): void;
  /** the answer to the offer; null drops it */
  answerOffer(mode: LoadMode | null): void;
  loadSample(): Promise<void>;
  /** the first capture of a visit: the one kept in the browser, else the sample */
  openInitial(): Promise<void>;
  cancel(): void;
  /** forgets the kept capture; from the header (the kept capture is shown) opens the sample, from the notice leaves the page as it is */
  forget(): Promise<void>;
  /** leaves the kept capture that could not be opened in the store, for the next visit */
  keepStored(): void;
  dismissFault(): void;
  /** the capture shown filtered by an event filter (the worker's applyFilter answer), as a capture of its own: every query asks again */
  showFiltered(a: { text: string; summary: Summary; overview: Overview; warnings: Warning[] }): void;
}

/** Where the embedded capture lives (public/samples/, listed by its index.json). */
export const SAMPLE_BASE = `${import.meta.env.BASE_URL}samples/`;

/** The sample's files, listed by its index.json; `signal` aborts the fetches. */
async function fetchSample(signal: AbortSignal): Promise<NamedBlob[]> {
  const get = async (name: string) => {
    const r = await fetch(SAMPLE_BASE + name, { signal });
    if (!r.ok) throw new Error(`cannot load the sample: ${name}: HTTP ${r.status}`);
    return r;
  };
  try {
    const index = (await (await get('index.json')).json()) as { files: string[] };
    return await Promise.all(index.files.map(async (name) => ({ name, blob: await (await get(name)).blob() })));
  } catch (e) {
    const m = (e as Error).message;
    throw new Error(m.startsWith('cannot load the sample') ? m : `cannot load the sample: ${m}`);
  }
}

/** the files of the capture shown, kept for the browser's store (they are references, not copies) */
let captureBlobs: NamedBlob[] = [];
/** the load in flight (its fetch included); its answer is dropped once it is no longer this one */
let running: { id: number; abort: AbortController; cancelled: boolean } | null = null;
/** the newest keep; an older one finishing later does not overwrite its state */
let keepSeq = 0;

export const useLoadStore = create<LoadState>((set, get) => {
  /** Keeps the capture's files for the next visit (the sample is not kept: a reload opens it anyway). */
  const keep = async (source: CaptureSource) => {
    const mine = ++keepSeq;
    // the store is rewritten (or emptied, for the sample): a notice about what it held is moot
    set({ notice: null });
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
    filterOf: '',
    unfiltered: null,
    error: null,
    elapsedMs: null,
    rejected: null,
    rejectedDiagnostics: [],
    notice: null,
    keep: { state: 'off' },
    dropped: 0,
    offer: null,
    fault: null,

    async load(input, requested, mode = 'replace', opts = {}) {
      if (running) {
        cancelLoad(running.id);
        running.abort.abort();
      }
      const id = nextRequestId();
      const abort = new AbortController();
      const me = { id, abort, cancelled: false };
      running = me;
      const open = get().status === 'done';
      // with nothing open there is nothing to add to
      const m: LoadMode = open ? mode : 'replace';
      const stillMine = () => running === me;
      const dropped = (): LoadOutcome => {
        set({ dropped: get().dropped + 1 });
        return me.cancelled ? 'cancelled' : 'superseded';
      };
      set({
        activity: 'loading',
        mode: m,
        loading: typeof input === 'function' ? (opts.names ?? ['…']) : input.map((f) => f.name),
        progress: null,
        error: null,
        offer: null,
        ...(open ? {} : { status: 'loading' as const }),
      });
      const failed = (message: string): LoadOutcome => {
        running = null;
        set({ activity: 'error', error: message, ...(open ? {} : { status: 'error' as const }) });
        return 'error';
      };
      let files: NamedBlob[];
      let source: CaptureSource = requested;
      if (typeof input === 'function') {
        try {
          ({ files, source } = await input(abort.signal));
        } catch (e) {
          if (!stillMine()) return dropped();
          return failed((e as Error).message);
        }
        if (!stillMine()) return dropped();
        set({ loading: files.map((f) => f.name) });
      } else files = input;
      // after a fault a new worker is reopening the capture shown: an Add continues that session, and
      // a Replace waits too, so the capture stays whole in the worker should the Replace fail
      await reopened();
      if (!stillMine()) return dropped();
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
        if (!stillMine()) return dropped();
        running = null;
        if (answer.outcome === 'rejected') {
          set({
            activity: 'rejected',
            rejected: answer.files,
            rejectedDiagnostics: answer.diagnostics,
            elapsedMs: answer.elapsedMs,
            ...(open ? {} : { status: 'error' as const, error: `nothing in ${describeRejected(answer.files, answer.diagnostics)} could be read` }),
          });
          return 'rejected';
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
          filterOf: '',
          unfiltered: answer.summary,
          rejected: null,
          rejectedDiagnostics: [],
          fault: null,
        });
        // a capture reopened from the store is kept already
        if (!(source === 'stored' && m === 'replace') && !(nextSource === 'sample' && opts.leaveStore)) void keep(nextSource);
        return 'done';
      } catch (e) {
        if (!stillMine()) return dropped();
        const message = (e as Error).message;
        if (!(e instanceof WorkerFaultError) && message.includes(CANCELLED)) {
          running = null;
          set({ activity: 'cancelled', ...(open ? {} : { status: 'cancelled' as const }) });
          return 'cancelled';
        }
        return failed(message);
      } finally {
        h.idle(id);
      }
    },

    showFiltered(a) {
      if (get().status !== 'done') return;
      set({ summary: a.summary, overview: a.overview, warnings: a.warnings, filterOf: a.text, captureId: get().captureId + 1 });
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
      await get().load(async (signal) => ({ files: await fetchSample(signal), source: 'sample' }), 'sample', 'replace', { names: ['samples/index.json'] });
    },

    async openInitial() {
      if (get().status !== 'idle') return;
      // one load from the first read of the store to the panes drawn: a pick made meanwhile supersedes it
      let kept: StoredCapture | null = null;
      const outcome = await get().load(
        async (signal) => {
          kept = await readKeptCapture();
          if (kept.state === 'found') return { files: kept.files, source: 'stored' };
          return { files: await fetchSample(signal), source: 'sample' };
        },
        'stored',
        'replace',
        { names: ['the capture kept in this browser'], leaveStore: true },
      );
      const k = kept as StoredCapture | null;
      if (!k || k.state === 'none') return;
      if (k.state === 'unreadable') {
        // only when the sample did open: files the user picked meanwhile are kept in its place
        if (outcome === 'done')
          set({ notice: { text: `The capture kept in this browser is damaged (${k.reason}); the sample opened instead.`, choice: true } });
        return;
      }
      if (outcome === 'done') {
        set({ keep: { state: 'kept', backend: k.backend, bytes: k.bytes } });
        return;
      }
      // superseded by the user's files, or cancelled: not a failure of the kept capture, which stays
      if (outcome === 'superseded' || outcome === 'cancelled') return;
      const why = get().error ?? 'nothing in it could be read';
      set({ notice: { text: `The capture kept in this browser could not be opened (${why}); the sample opened instead.`, choice: true } });
      await get().load(async (signal) => ({ files: await fetchSample(signal), source: 'sample' }), 'sample', 'replace', {
        names: ['samples/index.json'],
        leaveStore: true,
      });
    },

    cancel() {
      if (!running) return;
      const { id, abort } = running;
      running.cancelled = true;
      running = null;
      abort.abort();
      cancelLoad(id);
      set({ activity: 'cancelled', ...(get().status === 'done' ? {} : { status: 'cancelled' as const }) });
    },

    dismissFault() {
      set({ fault: null });
    },

    async forget() {
      const fromNotice = get().notice?.choice === true;
      ++keepSeq;
      await forgetCapture();
      set({ keep: { state: 'off' }, notice: null });
      // from the notice (what is shown is not the kept capture), over the sample, or while a load runs, the page stays as it is
      if (fromNotice || get().source === 'sample' || running) return;
      await get().loadSample();
    },

    keepStored() {
      set({ notice: null });
    },
  };
});

connectLoadStore({
  getState: () => useLoadStore.getState(),
  setState: (partial) => useLoadStore.setState(partial),
  loadRunning: () => running !== null,
  captureBlobs: () => captureBlobs,
});
