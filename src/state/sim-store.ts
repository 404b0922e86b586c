import { zipSync } from 'fflate';
import { create } from 'zustand';
import type { CpuReport } from '../core/sim/cpu-loop.ts';
import { exportCapture } from '../core/sim/export.ts';
import type { Ledger } from '../core/sim/ledger.ts';
import { createLiveBuffer, Live } from '../core/sim/live.ts';
import { REC, Ring } from '../core/sim/ring.ts';
import { C, K, type Mode } from '../core/sim/shared-map.ts';
import { Simulation, snapshotMap, type GenerationSnapshot, type RunResult, type SimReport } from '../core/sim/simulation.ts';
import { startSimCpuWorker, startSimTracefsWorker } from '../workers/sim-client.ts';
import { replayWorkload } from '../core/sim/replay.ts';
import { ingestWorker, useLoadStore } from './load-store.ts';
import { useViewStore } from './view-store.ts';

/**
 * The live simulator (DESIGN 6) in the page: one Web Worker per simulated CPU running the core's
 * `runCpu` on the shared buffers, tracefs workers for resets and dumps, and this thread as the
 * host (`Simulation`, canBlock false). Panes poll the buffers (`simSession()`) with
 * requestAnimationFrame; the store holds what React shows less often (ledger, report, status).
 */

export type SimPane = 'explorer' | 'simulator';
export type SimStatus = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'error';

export interface SimSettings {
  mode: Mode;
  /** a generated stack population, or the loaded capture's stacks at their frequencies */
  workload: 'population' | 'replay';
  bits: number;
  cpus: number;
  /** distinct stacks of the population */
  stacks: number;
  zipf: number;
  depthMin: number;
  depthMax: number;
  /** events per second per CPU; 0: as fast as it goes */
  speed: number;
  /** each insert waits this long between claim and publish, each reset between its steps */
  windowUs: number;
  ringKb: number;
  seed: number;
}

export const DEFAULT_SETTINGS: SimSettings = {
  mode: 'v8',
  workload: 'population',
  bits: 10,
  cpus: 4,
  stacks: 600,
  zipf: 0.9,
  depthMin: 8,
  depthMax: 20,
  speed: 2000,
  windowUs: 0,
  ringKb: 256,
  seed: 1,
};

/** Few hot stacks, slow CPUs and a long race window: claims, lost cmpxchgs and resets you can watch. */
export const RACE_PRESET: Partial<SimSettings> = { stacks: 6, zipf: 0, speed: 5, windowUs: 300_000 };

export interface LedgerView {
  counts: Omit<Ledger, 'entries'>;
  /** event records left in the ring buffers (what the explorer's summary calls events) */
  events: number;
  /** when it was computed (ms since the run started) */
  atMs: number;
}

export interface SimState {
  pane: SimPane;
  settings: SimSettings;
  status: SimStatus;
  error: string | null;
  /** bumps with every run started (panes re-read the session) */
  runId: number;
  ledger: LedgerView | null;
  /** the current generation's duplicates and gravestones, from the last quiescent look */
  current: GenerationSnapshot | null;
  snapshots: GenerationSnapshot[];
  dumps: number;
  estale: number;
  resets: { ok: number; ebusy: number; refused: number };
  pendingResets: number;
  dumping: boolean;
  report: SimReport | null;
  setPane(pane: SimPane): void;
  set(patch: Partial<SimSettings>): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  reset(): Promise<void>;
  dump(): Promise<void>;
  refreshLedger(): Promise<void>;
  /** the finished run as capture files, by tracefs name */
  files(): Map<string, Uint8Array> | null;
  download(): void;
  openInExplorer(): Promise<void>;
}

export const maxSimCpus = () => Math.max(4, (typeof navigator !== 'undefined' && navigator.hardwareConcurrency) || 4);

/** What the panes poll: the map, the live buffer and the rings (non-reactive, replaced per run). */
export interface SimSession {
  sim: Simulation;
  live: Live;
  workers: Worker[];
  ended: boolean[];
  t0: number;
  run: RunResult | null;
}

let session: SimSession | null = null;
export const simSession = () => session;

type Tracefs = ReturnType<typeof startSimTracefsWorker>;
let writers: Tracefs[] = [];
let writerBusy: number[] = [];
let reader: Tracefs | null = null;
let cpuRuns: Promise<CpuReport>[] = [];
let ledgerTimer: ReturnType<typeof setInterval> | null = null;
/** host operations that park the CPUs run one at a time */
let exclusive: Promise<unknown> = Promise.resolve();
const serial = <T>(fn: () => Promise<T>): Promise<T> => {
  const p = exclusive.then(fn, fn);
  exclusive = p.catch(() => undefined);
  return p;
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const inBrowser = typeof window !== 'undefined' && typeof location !== 'undefined';
const initialPane: SimPane = inBrowser && new URLSearchParams(location.search).get('view') === 'simulator' ? 'simulator' : 'explorer';

function paceUs(speed: number): number {
  return speed > 0 ? Math.round(1e6 / speed) : 0;
}

/** Parks every running CPU between events; returns the function that releases them. */
async function parkCpus(s: SimSession): Promise<() => void> {
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

function terminate(): void {
  if (ledgerTimer) clearInterval(ledgerTimer);
  ledgerTimer = null;
  for (const w of session?.workers ?? []) w.terminate();
  writers = [];
  writerBusy = [];
  reader = null;
  cpuRuns = [];
}

export const useSimStore = create<SimState>((set, get) => ({
  pane: initialPane,
  settings: DEFAULT_SETTINGS,
  status: 'idle',
  error: null,
  runId: 0,
  ledger: null,
  current: null,
  snapshots: [],
  dumps: 0,
  estale: 0,
  resets: { ok: 0, ebusy: 0, refused: 0 },
  pendingResets: 0,
  dumping: false,
  report: null,

  setPane: (pane) => set({ pane }),

  set(patch) {
    const settings = { ...get().settings, ...patch };
    set({ settings });
    // speed and race window apply to a running simulation at once
    const s = session;
    if (s && get().status === 'running') {
      Atomics.store(s.sim.map.i32, C.PACE_US, paceUs(settings.speed));
      Atomics.store(s.sim.map.i32, C.WINDOW_US, settings.windowUs);
    }
  },

  async start() {
    if (get().status === 'running' || get().status === 'starting' || get().status === 'stopping') return;
    terminate();
    session = null;
    const o = get().settings;
    if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer === 'undefined') {
      set({ status: 'error', error: 'SharedArrayBuffer is unavailable: the page is not cross-origin isolated (COOP/COEP)' });
      return;
    }
    set({ status: 'starting', error: null, ledger: null, current: null, snapshots: [], dumps: 0, estale: 0, resets: { ok: 0, ebusy: 0, refused: 0 }, pendingResets: 0, report: null });
    try {
      const cpus = Math.min(Math.max(1, o.cpus), maxSimCpus());
      const replay = o.workload === 'replay' ? await replayOfLoadedCapture() : null;
      const sim = new Simulation(
        {
          mode: o.mode,
          cpus,
          bits: o.bits,
          // runs until stopped
          events: 1e9 - (1e9 % cpus),
          resets: 0,
          raceWindowUs: 0, // read live from the map (C.WINDOW_US)
          seed: o.seed,
          stacks: o.stacks,
          zipf: o.zipf,
          depthMin: o.depthMin,
          depthMax: o.depthMax,
          ...(replay && { replay: replay.stacks, replayOrder: 'weights', replayWeights: replay.weights, replaySymbols: replay.kernel }),
          ringKb: o.ringKb,
          dumps: 'end',
          textDump: true,
        },
        false,
      );
      const i32 = sim.map.i32;
      Atomics.store(i32, C.PACE_US, paceUs(o.speed));
      Atomics.store(i32, C.WINDOW_US, o.windowUs);
      const t0 = sim.config.t0;
      const liveSab = createLiveBuffer(cpus);
      const s: SimSession = { sim, live: new Live(liveSab, cpus, t0), workers: [], ended: Array(cpus).fill(false), t0, run: null };
      session = s;
      const params = { mode: sim.config.mode, bits: sim.config.bits, cpus, hashSeed: sim.config.hashSeed };
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
            if (session === s) set({ status: 'error', error: `CPU ${cpu}: ${e.message}` });
          },
        );
      }
      sim.start();
      set({ status: 'running', runId: get().runId + 1 });
      ledgerTimer = setInterval(() => void get().refreshLedger(), 1000);
    } catch (e) {
      terminate();
      set({ status: 'error', error: (e as Error).message });
    }
  },

  async stop() {
    const s = session;
    if (!s || get().status !== 'running') return;
    set({ status: 'stopping' });
    if (ledgerTimer) clearInterval(ledgerTimer);
    ledgerTimer = null;
    try {
      // let the host operations in progress end (a reset waits for in-flight inserts)
      await serial(async () => undefined);
      while (writerBusy.some((b) => b > 0) || get().dumping) await sleep(5);
      s.sim.stop();
      Atomics.store(s.sim.map.i32, C.PAUSE, 0);
      Atomics.notify(s.sim.map.i32, C.PAUSE);
      const reports = await Promise.all(cpuRuns);
      const run = s.sim.finish(reports);
      s.run = run;
      const { entries: _e, ...counts } = run.ledger;
      void _e;
      const events = run.items.filter((i) => i.rec.type === REC.EVENT).length;
      set({
        status: 'stopped',
        report: run.report,
        ledger: { counts, events, atMs: performance.timeOrigin + performance.now() - s.t0 },
        snapshots: [...run.snapshots],
        current: run.snapshots[run.snapshots.length - 1] ?? null,
        dumps: run.dumps.length,
        estale: s.sim.estale,
      });
    } catch (e) {
      set({ status: 'error', error: (e as Error).message });
    } finally {
      terminate();
    }
  },

  async reset() {
    const s = session;
    if (!s || get().status !== 'running') return;
    const record = (r: { outcome: 'ok' | 'ebusy' | 'refused'; snapshot: GenerationSnapshot | null }) => {
      if (r.snapshot) s.sim.snapshots.push(r.snapshot);
      if (r.outcome === 'ok') s.sim.resetsDone++;
      const resets = { ...get().resets, [r.outcome]: get().resets[r.outcome] + 1 };
      set({ resets, snapshots: [...s.sim.snapshots] });
    };
    set({ pendingResets: get().pendingResets + 1 });
    try {
      if (s.sim.config.mode === 'v4') {
        // v4 refuses while tracing is on: tracing off (CPUs parked), reset (map and ring buffers), tracing on
        await serial(async () => {
          const release = await parkCpus(s);
          try {
            const i32 = s.sim.map.i32;
            Atomics.store(i32, C.RECORDING, 0);
            s.live.event('v4-pause', -1, -1, s.sim.map.generation);
            const r = await writers[0].api.reset();
            if (r.outcome === 'ok') for (const sab of s.sim.shared.rings) new Ring(sab, s.sim.config.ringBytes).clear();
            Atomics.store(i32, C.RECORDING, 1);
            record(r);
          } finally {
            release();
          }
        });
        return;
      }
      // v7/v8: CPUs keep recording; a second reset while one runs gets EBUSY
      const w = writerBusy[0] <= writerBusy[1] ? 0 : 1;
      writerBusy[w]++;
      try {
        record(await writers[w].api.reset());
      } finally {
        writerBusy[w]--;
      }
    } catch (e) {
      if (session === s) set({ error: (e as Error).message });
    } finally {
      set({ pendingResets: get().pendingResets - 1 });
    }
  },

  async dump() {
    const s = session;
    if (!s || get().status !== 'running' || get().dumping || !reader) return;
    set({ dumping: true });
    try {
      const bin = await reader.api.readBin();
      s.sim.estale += bin.estale;
      if (bin.dump) s.sim.dumps.push(bin.dump);
      s.sim.dumps.push(await reader.api.readText());
      set({ dumps: s.sim.dumps.length, estale: s.sim.estale });
    } catch (e) {
      if (session === s) set({ error: (e as Error).message });
    } finally {
      set({ dumping: false });
    }
    await get().refreshLedger();
  },

  async refreshLedger() {
    const s = session;
    if (!s || get().status !== 'running') return;
    await serial(async () => {
      if (get().status !== 'running' || session !== s) return;
      // a consistent look: every CPU parked between events, so the rings and the map hold still
      const release = await parkCpus(s);
      let ledger: Ledger;
      let items: number;
      let current: GenerationSnapshot;
      try {
        const c = s.sim.collect();
        ledger = c.ledger;
        items = c.items.filter((i) => i.rec.type === REC.EVENT).length;
        current = snapshotMap(s.sim.map);
      } finally {
        release();
      }
      const { entries: _e, ...counts } = ledger;
      void _e;
      set({ ledger: { counts, events: items, atMs: performance.timeOrigin + performance.now() - s.t0 }, current });
    });
  },

  files() {
    const run = session?.run;
    return run ? exportCapture(run) : null;
  },

  download() {
    const files = get().files();
    if (!files) return;
    const zip = zipSync(Object.fromEntries([...files].map(([name, bytes]) => [`stackmap-sim/${name}`, bytes])));
    const url = URL.createObjectURL(new Blob([zip as Uint8Array<ArrayBuffer>], { type: 'application/zip' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `stackmap-sim-${get().settings.mode}.zip`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  },

  async openInExplorer() {
    const files = get().files();
    if (!files) return;
    set({ pane: 'explorer' });
    await useLoadStore.getState().load(
      [...files].map(([name, bytes]) => ({ name, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) })),
      'files',
    );
  },
}));

/** The explorer's current selection of the loaded capture, as the simulator's replay workload. */
async function replayOfLoadedCapture(): Promise<ReturnType<typeof replayWorkload>> {
  if (useLoadStore.getState().status !== 'done') throw new Error('replay needs a loaded capture: open one in the explorer first');
  const { range, generation, cpus } = useViewStore.getState();
  const src = await ingestWorker().replayStacks({ range, generation, cpus }, 4096);
  const w = replayWorkload(src);
  if (w.stacks.length === 0) throw new Error('the loaded capture has no resolved stacks to replay');
  return w;
}

if (inBrowser) {
  // the pane lives in the URL as ?view=simulator (the view store leaves keys it does not own alone)
  const sync = () => {
    const q = new URLSearchParams(location.search);
    const want = useSimStore.getState().pane === 'simulator';
    if (want === (q.get('view') === 'simulator')) return;
    if (want) q.set('view', 'simulator');
    else q.delete('view');
    const qs = q.toString();
    history.replaceState(history.state, '', `${location.pathname}${qs ? `?${qs}` : ''}${location.hash}`);
  };
  useSimStore.subscribe((s, prev) => s.pane !== prev.pane && sync());
  // files opened or dropped while the simulator shows: show them (the first, automatic sample load does not)
  useLoadStore.subscribe((l, prev) => {
    if (l.status === 'loading' && prev.status !== 'loading' && (l.source === 'files' || l.captureId > 0)) useSimStore.getState().setPane('explorer');
  });
}
