import type { CpuReport } from '../../core/sim/cpu-loop.ts';
import { C, K, type MapParams } from '../../core/sim/map-layout.ts';
import type { Live } from '../../core/sim/live.ts';
import type { FreeOutcome, ResetOutcome } from '../../core/sim/shared-map.ts';
import type { RunResult } from '../../core/sim/sim-report.ts';
import type { GenerationSnapshot } from '../../core/sim/sim-snapshot.ts';
import type { Simulation } from '../../core/sim/simulation.ts';
import { startSimCpuWorker, startSimTracefsWorker } from '../../workers/sim-client.ts';

/**
 * The simulator's session and its workers, outside React: one Web Worker per simulated CPU
 * running the core's `runCpu` on the shared buffers, and tracefs workers for resets (two, so
 * resets can race) and dumps (one). The store (sim-store.ts) drives them; panes poll the buffers
 * through `simSession()`.
 */

/** What the panes poll: the map, the live buffer and the rings (non-reactive, replaced per run). */
export interface SimSession {
  sim: Simulation;
  live: Live;
  workers: Worker[];
  ended: boolean[];
  t0: number;
  run: RunResult | null;
}

/**
 * What the page itself observed and the live buffer has no event kind for (a dump that read
 * "stackmap not initialized", a free refused), shown in the event log beside the buffer's entries.
 */
export interface HostNote {
  /** ms since the run started */
  ms: number;
  kind: 'uninitialized' | 'free-refused';
  text: string;
}

const notes = new WeakMap<SimSession, HostNote[]>();
export const hostNotes = (s: SimSession): readonly HostNote[] => notes.get(s) ?? [];
export function addHostNote(s: SimSession, kind: HostNote['kind'], text: string): void {
  const list = notes.get(s) ?? [];
  list.push({ ms: performance.timeOrigin + performance.now() - s.t0, kind, text });
  notes.set(s, list);
}

let session: SimSession | null = null;
export const simSession = () => session;
export function setSimSession(s: SimSession | null): void {
  session = s;
}

type Tracefs = ReturnType<typeof startSimTracefsWorker>;
let writers: Tracefs[] = [];
let writerBusy: number[] = [];
let reader: Tracefs | null = null;
let cpuRuns: Promise<CpuReport>[] = [];
let ledgerTimer: ReturnType<typeof setInterval> | null = null;
/** host operations that park the CPUs run one at a time */
let exclusive: Promise<unknown> = Promise.resolve();
export const serial = <T>(fn: () => Promise<T>): Promise<T> => {
  const p = exclusive.then(fn, fn);
  exclusive = p.catch(() => undefined);
  return p;
};

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Parks every running CPU between events; returns the function that releases them. */
export async function parkCpus(s: SimSession): Promise<() => void> {
  const i32 = s.sim.map.i32;
  Atomics.store(i32, C.PAUSE, 1);
  for (;;) {
    let all = true;
    for (let c = 0; c < s.sim.config.cpus; c++) if (!s.ended[c] && Atomics.load(i32, s.sim.map.cpuWord(c, K.PAUSED)) === 0) all = false;
    if (all) break;
    await sleep(1);
  }
  return () => {
    Atomics.store(i32, C.PAUSE, 0);
    Atomics.notify(i32, C.PAUSE);
  };
}

export function terminate(): void {
  stopLedgerTimer();
  for (const w of session?.workers ?? []) w.terminate();
  writers = [];
  writerBusy = [];
  reader = null;
  cpuRuns = [];
}

/**
 * Starts the tracefs workers and one worker per CPU over the session's shared buffers (the CPUs
 * wait for `sim.start()`). A CPU that fails is marked ended and reported to `onCpuError`.
 */
export async function startWorkers(s: SimSession, liveSab: SharedArrayBuffer, onCpuError: (cpu: number, e: Error) => void): Promise<void> {
  const { sim, t0 } = s;
  const cpus = sim.config.cpus;
  const params: MapParams = { mode: sim.config.mode, bits: sim.config.bits, cpus, hashSeed: sim.config.hashSeed };
  writers = [startSimTracefsWorker('reset-a'), startSimTracefsWorker('reset-b')];
  writerBusy = [0, 0];
  reader = startSimTracefsWorker('dump');
  for (const t of [...writers, reader]) s.workers.push(t.worker);
  await Promise.all([...writers, reader].map((t) => t.api.init(sim.shared.map, params, liveSab, t0)));
  cpuRuns = [];
  for (let cpu = 0; cpu < cpus; cpu++) {
    const { api, worker } = startSimCpuWorker(cpu);
    s.workers.push(worker);
    const run = Promise.resolve(api.run(sim.shared, cpu, sim.config, liveSab));
    cpuRuns.push(run);
    void run.then(
      () => (s.ended[cpu] = true),
      (e: Error) => {
        s.ended[cpu] = true;
        onCpuError(cpu, e);
      },
    );
  }
}

/** Every CPU's report, once they have all ended. */
export const cpuReports = () => Promise.all(cpuRuns);

export function startLedgerTimer(refresh: () => void): void {
  ledgerTimer = setInterval(refresh, 1000);
}

export function stopLedgerTimer(): void {
  if (ledgerTimer) clearInterval(ledgerTimer);
  ledgerTimer = null;
}

type ResetResult = { outcome: ResetOutcome; snapshot: GenerationSnapshot | null; at?: number; generation?: number };

/** v4: the first reset worker resets (the caller has parked the CPUs). */
export const resetByFirstWriter = (): Promise<ResetResult> => writers[0].api.reset();

/** v7/v8: the less busy reset worker resets, so a second reset while one runs gets EBUSY. `record` runs before the worker counts as free. */
export async function resetByFreeWriter(record: (r: ResetResult) => void): Promise<void> {
  const w = writerBusy[0] <= writerBusy[1] ? 0 : 1;
  writerBusy[w]++;
  try {
    record(await writers[w].api.reset());
  } finally {
    writerBusy[w]--;
  }
}

/**
 * v8: `echo free > stack_map` from the less busy reset worker (free blocks until the stack_map
 * files opened on the map are closed; the other worker stays free to reset meanwhile).
 */
export async function freeByFreeWriter(): Promise<{ outcome: FreeOutcome; readers: number }> {
  const w = writerBusy[0] <= writerBusy[1] ? 0 : 1;
  writerBusy[w]++;
  try {
    return await writers[w].api.free();
  } finally {
    writerBusy[w]--;
  }
}

/** A reset (or free) worker is still busy. */
export const writersBusy = () => writerBusy.some((b) => b > 0);

/** The dump reader, while a run's workers are up. */
export const dumpReader = () => reader;
