import { TEST_HOOKS_BUILT, type IngestAnswer, type IngestApi, type LoadProgress, type NamedBlob } from '../../workers/ingest-api.ts';
import { Comlink, IngestHost, spawnIngestWorker, WorkerFaultError, type FaultKind, type WorkerFault } from '../../workers/ingest-client.ts';
import { describeRejected } from './load-offer.ts';
import type { CaptureSource } from './load-types.ts';

/**
 * The ingest worker behind load-store.ts: its host (ingest-client.ts), the request ids, the
 * panes' view of it (`ingestWorker`), and what happens when it dies or hangs: the fault notice and
 * the reopen of the capture shown in the new worker. The store connects itself
 * (`connectLoadStore`) when its module is read.
 */

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

/**
 * `?test-hooks` in the URL, or `window.__SMX_TEST_HOOKS__`: the e2e tests' hooks (window.__smxTest)
 * are installed, in a bundle built with them (TEST_HOOKS_BUILT: the dev server and the e2e tests'
 * dist-hooks/; the production build has neither the switch nor the hooks).
 */
const testHooks =
  TEST_HOOKS_BUILT &&
  typeof window !== 'undefined' &&
  (new URLSearchParams(window.location.search).has('test-hooks') || (window as { __SMX_TEST_HOOKS__?: boolean }).__SMX_TEST_HOOKS__ === true);

let host: IngestHost | null = null;
export const hostOf = (): IngestHost =>
  (host ??= new IngestHost({ spawn: spawnIngestWorker, hangMs: HANG_MS, indexHangMs: INDEX_HANG_MS, testHooks, onFault: (f) => onWorkerFault(f) }));

/** settles once a reopen after a fault is over; the panes' questions wait for it */
let reopening: Promise<void> = Promise.resolve();
let reopenInFlight = false;
/** the new worker could not reopen the capture shown: it holds none */
let workerLost = false;

export const isWorkerLost = (): boolean => workerLost;
export const setWorkerLost = (lost: boolean): void => {
  workerLost = lost;
};
/** what the panes' questions and a new load wait for */
export const reopened = (): Promise<void> => reopening;

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
export const cancelLoad = (id: number) =>
  void hostOf()
    .run((api) => api.cancel(id))
    .catch(() => {});

let requestSeq = 0;
/** the id of a new request to the worker (a load, or a reopen after a fault) */
export const nextRequestId = (): number => ++requestSeq;

/** The load store's fields the fault recovery reads and sets. */
export interface LinkState {
  loading: string[];
  files: string[];
  source: CaptureSource | null;
  /** 'done' while a capture is open */
  status: string;
  fault: FaultNotice | null;
}

/** What the fault recovery reads of the load store, and tells it. */
export interface LoadStoreLink {
  getState(): LinkState;
  setState(partial: { fault: FaultNotice | null }): void;
  /** whether a load is in flight (its files are the state's `loading`) */
  loadRunning(): boolean;
  /** the files of the capture shown */
  captureBlobs(): NamedBlob[];
}
let store: LoadStoreLink | null = null;
/** load-store.ts connects itself, so a fault can be told and the capture shown reopened. */
export const connectLoadStore = (link: LoadStoreLink): void => {
  store = link;
};

/**
 * The ingest worker died or hung (ingest-client.ts), and a new one is running. A load it was
 * running fails with the fault's words (its own catch in load-store.ts, naming its files); the
 * capture shown stays on screen, and is reopened in the new worker from the files the store
 * holds, so the panes' questions (which wait for it, see queryApi) are answered again.
 */
function onWorkerFault(f: WorkerFault): void {
  if (!store) return;
  const s = store.getState();
  const during = store.loadRunning() ? s.loading : null;
  const capture = s.source === 'sample' ? 'the sample' : s.files.length === 1 ? s.files[0] : `${s.files.length} files`;
  const base = { kind: f.kind, detail: f.detail, during, capture, reason: null };
  if (!f.restarted) {
    store.setState({ fault: { ...base, reopen: 'gave-up' } });
    return;
  }
  if (reopenInFlight) {
    // the reopen itself faulted: the capture's files may be what kills the worker; not tried again
    workerLost = true;
    store.setState({ fault: { ...base, during: s.fault?.during ?? during, reopen: 'failed', reason: `the new worker ${f.detail} too` } });
    return;
  }
  const captureBlobs = store.captureBlobs();
  if (s.status !== 'done' || captureBlobs.length === 0) {
    store.setState({ fault: { ...base, reopen: 'none' } });
    return;
  }
  store.setState({ fault: { ...base, reopen: 'reopening' } });
  reopening = reopen(store, captureBlobs);
}

/** Reads the capture's files again in the new worker, as one Replace (an Add continues it later). */
async function reopen(store: LoadStoreLink, files: NamedBlob[]): Promise<void> {
  const id = nextRequestId();
  const h = hostOf();
  reopenInFlight = true;
  workerLost = true;
  const settle = (reopen: FaultNotice['reopen'], reason: string | null = null) => {
    const f = store.getState().fault;
    if (f?.reopen === 'reopening') store.setState({ fault: { ...f, reopen, reason } });
  };
  h.busy(id);
  try {
    const answer = await h.run(
      (api) =>
        api.ingest(
          { id, mode: 'replace', files },
          Comlink.proxy((p: LoadProgress) => h.beat(id, p.phase)),
        ) as Promise<IngestAnswer>,
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

/** the cell of the load the e2e tests hold (holdLoadAt) */
let held: Int32Array | null = null;

if (TEST_HOOKS_BUILT && testHooks) {
  /** for the e2e tests (e2e/faults.spec.ts): the current ingest worker, ended or blocked as a crash or an endless loop would */
  (window as unknown as { __smxTest: object }).__smxTest = {
    killIngestWorker: () => hostOf().kill(),
    stallIngestWorker: () => hostOf().stall(),
    setHangMs: (ms: number, indexMs?: number) => hostOf().setHangMs(ms, indexMs),
    ingestWorkerNumber: () => hostOf().worker,
    /** the next load waits once `percent` of its bytes are read; loadHeld() tells when it does, releaseLoad() lets it go on */
    holdLoadAt: (percent: number) => {
      held = new Int32Array(new SharedArrayBuffer(4));
      return hostOf().holdAt(held, percent / 100);
    },
    loadHeld: () => held !== null && Atomics.load(held, 0) === 1,
    releaseLoad: () => {
      if (!held) return;
      Atomics.store(held, 0, 2);
      Atomics.notify(held, 0);
    },
  };
}
