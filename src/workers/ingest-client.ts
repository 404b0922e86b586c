import * as Comlink from 'comlink';
import { TEST_HOOKS, TEST_HOOKS_BUILT, type IngestApi, type LoadProgress } from './ingest-api.ts';

/**
 * The page's side of the ingest worker: starting one, and noticing when it is gone.
 *
 * A worker can die (a crash, running out of memory, terminated) or hang (a reader caught in a
 * loop). Either way a Comlink call to it never settles, so the page would wait forever. The host
 * notices three ways: the worker's `error` event; its death, through a Web Lock the worker holds
 * while it lives (granted to the page the moment the worker is gone); and, while a load runs, no
 * progress for `hangMs` (`indexHangMs` once every byte is read, a long step with no progress of
 * its own). It then ends that worker, starts the next one, rejects every call still waiting on
 * the old one with a WorkerFaultError, and tells `onFault`, which decides what to reopen.
 */

export type FaultKind = 'died' | 'error' | 'hung';

export interface WorkerFault {
  kind: FaultKind;
  /** what happened, in words that follow "the ingest worker": "stopped (it crashed, ...)" */
  detail: string;
  /** which worker (1 for the first) */
  worker: number;
  /** whether the next one was started (false once the host gave up: too many faults in a minute) */
  restarted: boolean;
}

export class WorkerFaultError extends Error {
  constructor(readonly fault: WorkerFault) {
    super(`the ingest worker ${fault.detail}`);
    this.name = 'WorkerFaultError';
  }
}

/** One worker as the host sees it. */
export interface SpawnedWorker {
  api: Comlink.Remote<IngestApi>;
  /** settles when the worker fails by itself: its `error` event, or its death */
  gone: Promise<Pick<WorkerFault, 'kind' | 'detail'>>;
  terminate(): void;
}

export const DIED = 'stopped (it crashed, ran out of memory or was ended)';

/** Starts an ingest worker under `name` (unique: its liveness lock is named after it). */
export function spawnIngestWorker(name: string): SpawnedWorker {
  const worker = new Worker(new URL('./ingest.worker.ts', import.meta.url), { type: 'module', name });
  const api = Comlink.wrap<IngestApi>(worker);
  const gone = new Promise<Pick<WorkerFault, 'kind' | 'detail'>>((resolve) => {
    worker.addEventListener('error', (e) => resolve({ kind: 'error', detail: `failed (${e.message || 'an error it did not catch'})` }));
    worker.addEventListener('messageerror', () => resolve({ kind: 'error', detail: 'failed (a message from it could not be read)' }));
    const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
    if (locks) {
      // granted only once the worker no longer holds it: it is gone
      api.alive().then(
        (lock) => {
          if (lock) void locks.request(lock, () => resolve({ kind: 'died', detail: DIED }));
        },
        () => {},
      );
    }
  });
  return { api, gone, terminate: () => worker.terminate() };
}

export interface HostOptions {
  spawn: (name: string) => SpawnedWorker;
  /** a load with no progress for this long is taken for hung */
  hangMs: number;
  /** the same once every byte is read (`indexing`) */
  indexHangMs: number;
  /** told of each fault, once the next worker (if any) is started */
  onFault: (f: WorkerFault) => void;
  /** at most this many restarts within a minute; past that the host gives up (a worker that cannot start at all) */
  maxRestarts?: number;
  /** workers accept the test hooks (IngestApi.testStall) */
  testHooks?: boolean;
}

interface Incarnation {
  n: number;
  w: SpawnedWorker;
  /** rejects with the WorkerFaultError when this worker faults */
  fault: Promise<never>;
  fail: (f: WorkerFault) => void;
}

/** Keeps one ingest worker running: see the top of this file. */
export class IngestHost {
  private count = 0;
  private current!: Incarnation;
  private readonly loads = new Map<number, { worker: number; last: number; phase: LoadProgress['phase'] }>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private restarts: number[] = [];
  private gaveUp: WorkerFault | null = null;
  private readonly tag = Math.random().toString(36).slice(2, 10);

  constructor(private readonly opts: HostOptions) {
    this.start();
  }

  /** the current worker's number (1 for the first) */
  get worker(): number {
    return this.current.n;
  }

  /** Runs `call` on the current worker; it rejects with a WorkerFaultError if that worker faults before answering. */
  run<T>(call: (api: Comlink.Remote<IngestApi>) => Promise<T>): Promise<T> {
    if (this.gaveUp) return Promise.reject(new WorkerFaultError(this.gaveUp));
    const c = this.current;
    return Promise.race([call(c.w.api), c.fault]);
  }

  /** Load `id` runs on the current worker: watched for progress until `idle(id)`. */
  busy(id: number): void {
    this.loads.set(id, { worker: this.current.n, last: Date.now(), phase: 'reading' });
    this.timer ??= setInterval(this.check, Math.min(1000, this.opts.hangMs / 4));
  }

  /** A progress report of load `id`. */
  beat(id: number, phase: LoadProgress['phase']): void {
    const l = this.loads.get(id);
    if (!l) return;
    l.last = Date.now();
    l.phase = phase;
  }

  idle(id: number): void {
    this.loads.delete(id);
    if (this.loads.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** Test hook: sets how long a load may go without progress. */
  setHangMs(hangMs: number, indexHangMs = hangMs): void {
    this.opts.hangMs = hangMs;
    this.opts.indexHangMs = indexHangMs;
    if (this.timer !== null) {
      clearInterval(this.timer);
      this.timer = setInterval(this.check, Math.min(1000, hangMs / 4));
    }
  }

  /** Test hook: ends the current worker without telling the host, as a crash would. */
  kill(): void {
    this.current.w.terminate();
  }

  /** Test hook: blocks the current worker for good (IngestApi.testStall). */
  stall(): void {
    void this.current.w.api.testStall().catch(() => {});
  }

  /** Test hook: the current worker's next load waits at `fraction` of its bytes until `cell[0]` is 2 (IngestApi.testHoldAt). */
  holdAt(cell: Int32Array, fraction: number): Promise<void> {
    return this.current.w.api.testHoldAt(cell, fraction);
  }

  private readonly check = () => {
    const now = Date.now();
    for (const l of this.loads.values()) {
      if (l.worker !== this.current.n) continue;
      const limit = l.phase === 'indexing' ? this.opts.indexHangMs : this.opts.hangMs;
      if (now - l.last > limit) {
        const secs = limit >= 10_000 ? `${Math.round(limit / 1000)} s` : `${(limit / 1000).toFixed(1)} s`;
        this.fault(this.current.n, { kind: 'hung', detail: `stopped answering (no progress for ${secs}${l.phase === 'indexing' ? ' while indexing' : ''})` });
        return;
      }
    }
  };

  private start(): void {
    const n = ++this.count;
    const w = this.opts.spawn(`ingest-${n}-${this.tag}${TEST_HOOKS_BUILT && this.opts.testHooks ? ` ${TEST_HOOKS}` : ''}`);
    let fail!: (f: WorkerFault) => void;
    const fault = new Promise<never>((_, reject) => {
      fail = (f) => reject(new WorkerFaultError(f));
    });
    // nobody may be waiting on it
    fault.catch(() => {});
    this.current = { n, w, fault, fail };
    void w.gone.then((g) => this.fault(n, g));
  }

  private fault(n: number, what: Pick<WorkerFault, 'kind' | 'detail'>): void {
    // a worker replaced already (its lock is granted once the host ended it) is not news
    if (n !== this.current.n || this.gaveUp) return;
    const old = this.current;
    old.w.terminate();
    for (const [id, l] of this.loads) if (l.worker === n) this.idle(id);
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < 60_000);
    const restarted = this.restarts.length < (this.opts.maxRestarts ?? 4);
    const f: WorkerFault = { ...what, worker: n, restarted };
    if (restarted) {
      this.restarts.push(now);
      this.start();
    } else this.gaveUp = f;
    // told first, so what it sets up (a reopen) is there when the waiting calls learn of the fault
    this.opts.onFault(f);
    old.fail(f);
  }
}

export { Comlink };
