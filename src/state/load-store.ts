import { create } from 'zustand';
import type { Diagnostic } from '../core/formats/diagnostics.ts';
import { SNIFF_BYTES, sniffKind } from '../core/formats/sniff.ts';
import type { FileKind, ParsedStat } from '../core/formats/types.ts';
import type { Overview, Warning } from '../core/model/query-types.ts';
import type { Summary } from '../core/model/summary.ts';
import { unpack } from '../core/model/unpack.ts';
import { CANCELLED, type FileReport, type IngestAnswer, type IngestApi, type LoadProgress, type NamedBlob } from '../workers/ingest-api.ts';
import { Comlink, IngestHost, spawnIngestWorker, WorkerFaultError, type FaultKind, type WorkerFault } from '../workers/ingest-client.ts';
import { forgetCapture, keepCapture, readKeptCapture, type Backend } from './capture-persist.ts';
import { useViewStore } from './view-store.ts';

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

/**
 * What the page says after the ingest worker died or hung. A new worker is started at once; the
 * capture shown (its summary and overview stay on screen) is reopened in it from the files the
 * store holds, so the panes' questions are answered again.
 */
export interface FaultNotice {
  kind: FaultKind;
  /** follows "The ingest worker": "stopped (it crashed, ran out of memory or was ended)" */
  detail: string;
  /** the files of the load it was running, or null when it was idle */
  during: string[] | null;
  /** the capture shown (reopened in the new worker), in words: "the sample", "trace", "5 files" */
  capture: string;
  /** `reopening` it, `reopened`, `failed` (why in `reason`), `none` (no capture was open), `gave-up` (no new worker: too many faults) */
  reopen: 'reopening' | 'reopened' | 'failed' | 'none' | 'gave-up';
  reason: string | null;
}

/** The page's words for a fault notice (the `worker-fault` line). */
export function faultText(f: FaultNotice): string {
  const during = f.during ? ` while reading ${f.during.join(', ')}` : '';
  const capture = f.capture;
  const head = `The ingest worker ${f.detail}${during}.`;
  switch (f.reopen) {
    case 'reopening':
      return `${head} A new one was started; reopening the capture shown (${capture}) in it…`;
    case 'reopened':
      return `${head} A new one was started and the capture shown (${capture}) reopened in it.`;
    case 'failed':
      return `${head} A new one was started, but the capture shown (${capture}) could not be reopened in it (${f.reason}): open its files again.`;
    case 'none':
      return `${head} A new one was started.`;
    case 'gave-up':
      return `${head} It failed too often to start another: reload the page.`;
  }
}

/** A load with no progress for this long is taken for hung (30 s; once every byte is read, 180 s). */
const HANG_MS = 30_000;
const INDEX_HANG_MS = 180_000;

/** `?test-hooks` in the URL, or `window.__SMX_TEST_HOOKS__`: the e2e tests' hooks (window.__smxTest) are installed. */
const testHooks =
  typeof window !== 'undefined' &&
  (new URLSearchParams(window.location.search).has('test-hooks') || (window as { __SMX_TEST_HOOKS__?: boolean }).__SMX_TEST_HOOKS__ === true);

let host: IngestHost | null = null;
const hostOf = () =>
  (host ??= new IngestHost({ spawn: spawnIngestWorker, hangMs: HANG_MS, indexHangMs: INDEX_HANG_MS, testHooks, onFault: (f) => onWorkerFault(f) }));

/** settles once a reopen after a fault is over; the panes' questions wait for it */
let reopening: Promise<void> = Promise.resolve();
let reopenInFlight = false;
/** the new worker could not reopen the capture shown: it holds none */
let workerLost = false;

type Api = Comlink.Remote<IngestApi>;
/**
 * The worker that holds the loaded capture, for the panes' questions (queries.ts): always the
 * current one. A question waits while a new worker reopens the capture, and one cut off by a
 * fault is asked once more of the new worker.
 */
const queryApi = new Proxy({} as Api, {
  get(_, method) {
    // not a thenable
    if (typeof method !== 'string' || method === 'then') return undefined;
    return async (...args: unknown[]) => {
      for (let attempt = 0; ; attempt++) {
        await reopening;
        try {
          return await hostOf().run((api) => (api as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method](...args));
        } catch (e) {
          if (e instanceof WorkerFaultError && attempt === 0 && e.fault.restarted) continue;
          throw e;
        }
      }
    };
  },
});
export const ingestWorker = (): Api => queryApi;

/** Tells the current worker to drop load `id` (nothing to do if it is gone). */
const cancelLoad = (id: number) => void hostOf().run((api) => api.cancel(id)).catch(() => {});

/** Where the embedded capture lives (public/samples/, listed by its index.json). */
export const SAMPLE_BASE = `${import.meta.env.BASE_URL}samples/`;

/** the files of the capture shown, kept for the browser's store (they are references, not copies) */
let captureBlobs: NamedBlob[] = [];
/** the load in flight; its answer is dropped once it is no longer this one */
let running: { id: number } | null = null;
let requestSeq = 0;
/** the newest keep; an older one finishing later does not overwrite its state */
let keepSeq = 0;

/** What part of a capture a kind of file provides. */
const PART: Partial<Record<FileKind, 'trace' | 'dump' | 'stat' | 'symbols'>> = {
  trace_text: 'trace',
  systrace_html: 'trace',
  stack_map_text: 'dump',
  stack_map_bin: 'dump',
  dump_json: 'dump',
  stack_map_stat: 'stat',
  kallsyms: 'symbols',
};

/** Add when the new files provide a part the capture lacks (a trace, then its dumps), else Replace. */
export function suggestMode(have: readonly FileKind[], incoming: readonly FileKind[]): LoadMode {
  const parts = new Set(have.map((k) => PART[k]));
  return incoming.some((k) => PART[k] !== undefined && !parts.has(PART[k])) ? 'add' : 'replace';
}

/** The kinds of the files (of each member of an archive, from its first MB), sniffed from their first bytes as the worker will. */
export async function sniffKinds(files: readonly NamedBlob[]): Promise<FileKind[]> {
  const kinds: FileKind[] = [];
  for (const f of files) {
    for await (const inner of unpack({ name: f.name, blob: f.blob.slice(0, 1 << 20) }, () => {})) {
      const reader = inner.stream.getReader();
      const parts: Uint8Array[] = [];
      let n = 0;
      while (n < SNIFF_BYTES) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        n += value.length;
      }
      await reader.cancel().catch(() => {});
      const head = new Uint8Array(n);
      let o = 0;
      for (const p of parts) {
        head.set(p, o);
        o += p.length;
      }
      kinds.push(sniffKind(head));
    }
  }
  return kinds;
}

const KIND_WORDS: Partial<Record<FileKind, string>> = {
  trace_cmd_dat: 'a trace-cmd trace.dat',
  perf_script: '`perf script` output',
  unknown: 'not a format this page reads',
};
/** "trappy-trace.dat (a trace-cmd trace.dat), noise (not a format this page reads)" */
export const describeRejected = (files: readonly FileReport[], diagnostics: readonly Diagnostic[] = []) => {
  const named = files.map((f) => `${f.file} (${KIND_WORDS[f.kind] ?? f.kind}${f.size === 0 ? ', empty' : ''})`);
  // files with no report: nothing of them could be read at all (a folder, a file gone), their diagnostic says why
  const seen = new Set(files.map((f) => f.file));
  for (const d of diagnostics) {
    if (seen.has(d.file)) continue;
    seen.add(d.file);
    named.push(`${d.file} (${d.message})`);
  }
  return named.join(', ');
};

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
      const id = ++requestSeq;
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
      await reopening;
      if (!stillMine()) return;
      // and when that failed the new worker holds nothing to add to: every file is read again
      const lost = m === 'add' && workerLost;
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
        workerLost = false;
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

/**
 * The ingest worker died or hung (ingest-client.ts), and a new one is running. A load it was
 * running fails with the fault's words (its own catch above, naming its files); the capture shown
 * stays on screen, and is reopened in the new worker from the files the store holds, so the
 * panes' questions (which wait for it, see queryApi) are answered again.
 */
function onWorkerFault(f: WorkerFault): void {
  const s = useLoadStore.getState();
  const during = running ? s.loading : null;
  const capture = s.source === 'sample' ? 'the sample' : s.files.length === 1 ? s.files[0] : `${s.files.length} files`;
  const base = { kind: f.kind, detail: f.detail, during, capture, reason: null };
  if (!f.restarted) {
    useLoadStore.setState({ fault: { ...base, reopen: 'gave-up' } });
    return;
  }
  if (reopenInFlight) {
    // the reopen itself faulted: the capture's files may be what kills the worker; not tried again
    workerLost = true;
    useLoadStore.setState({ fault: { ...base, during: s.fault?.during ?? during, reopen: 'failed', reason: `the new worker ${f.detail} too` } });
    return;
  }
  if (s.status !== 'done' || captureBlobs.length === 0) {
    useLoadStore.setState({ fault: { ...base, reopen: 'none' } });
    return;
  }
  useLoadStore.setState({ fault: { ...base, reopen: 'reopening' } });
  reopening = reopen(captureBlobs);
}

/** Reads the capture's files again in the new worker, as one Replace (an Add continues it later). */
async function reopen(files: NamedBlob[]): Promise<void> {
  const id = ++requestSeq;
  const h = hostOf();
  reopenInFlight = true;
  workerLost = true;
  const settle = (reopen: FaultNotice['reopen'], reason: string | null = null) => {
    const f = useLoadStore.getState().fault;
    if (f?.reopen === 'reopening') useLoadStore.setState({ fault: { ...f, reopen, reason } });
  };
  h.busy(id);
  try {
    const answer = await h.run(
      (api) => api.ingest({ id, mode: 'replace', files }, Comlink.proxy((p: LoadProgress) => h.beat(id, p.phase))) as Promise<IngestAnswer>,
    );
    if (answer.outcome === 'loaded') {
      // the same files read the same way: the stacks keep their indices, so the panes' state holds
      workerLost = false;
      settle('reopened');
    } else settle('failed', `nothing in ${describeRejected(answer.files, answer.diagnostics)} could be read`);
  } catch (e) {
    // a fault of the new worker is told by onWorkerFault
    if (!(e instanceof WorkerFaultError)) settle('failed', (e as Error).message);
  } finally {
    h.idle(id);
    reopenInFlight = false;
  }
}

if (testHooks) {
  /** for the e2e tests (e2e/faults.spec.ts): the current ingest worker, ended or blocked as a crash or an endless loop would */
  (window as unknown as { __smxTest: object }).__smxTest = {
    killIngestWorker: () => hostOf().kill(),
    stallIngestWorker: () => hostOf().stall(),
    setHangMs: (ms: number, indexMs?: number) => hostOf().setHangMs(ms, indexMs),
    ingestWorkerNumber: () => hostOf().worker,
  };
}
