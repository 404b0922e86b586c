import { zipSync } from 'fflate';
import { create } from 'zustand';
import { exportCapture } from '../../core/sim/export.ts';
import type { Ledger } from '../../core/sim/ledger.ts';
import { createLiveBuffer, Live } from '../../core/sim/live.ts';
import { C } from '../../core/sim/map-layout.ts';
import { REC, Ring } from '../../core/sim/ring.ts';
import type { RunResult, SimReport } from '../../core/sim/sim-report.ts';
import { idStories, type IdStory } from '../../core/sim/provenance.ts';
import { snapshotMap, type GenerationSnapshot } from '../../core/sim/sim-snapshot.ts';
import { hasBinExport, type SimOptions } from '../../core/sim/sim-options.ts';
import { Simulation } from '../../core/sim/simulation.ts';
import { useLoadStore } from '../load/load-store.ts';
import { initialNotice, initialPane, initialSettings, syncPane } from './sim-pane.ts';
import {
  addHostNote,
  cpuReports,
  dumpReader,
  freeByFreeWriter,
  parkCpus,
  resetByFirstWriter,
  resetByFreeWriter,
  serial,
  setSimSession,
  simSession,
  sleep,
  startLedgerTimer,
  startWorkers,
  stopLedgerTimer,
  terminate,
  writersBusy,
  type SimSession,
} from './sim-session.ts';
import type { FreeOutcome } from '../../core/sim/shared-map.ts';
import {
  liveStacksOf,
  MAX_LIVE_STACKS,
  maxSimCpus,
  paceUs,
  replayOfLoadedCapture,
  simOptionsOf,
  type SimPane,
  type SimSettings,
  type SimStatus,
} from './sim-settings.ts';

/**
 * The live simulator (DESIGN 6) in the page: one Web Worker per simulated CPU running the core's
 * `runCpu` on the shared buffers, tracefs workers for resets and dumps (sim-session.ts), and this
 * thread as the host (`Simulation`, canBlock false). Panes poll the buffers (`simSession()`) with
 * requestAnimationFrame; the store holds what React shows less often (ledger, report, status).
 * Settings are in sim-settings.ts, the pane and its URL in sim-pane.ts.
 */

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
  /** an `echo free > stack_map` is running (it waits for the files open on the map) */
  freeing: boolean;
  /** the last free's outcome this run */
  lastFree: FreeOutcome | null;
  report: SimReport | null;
  /** once a run has ended: the stories of its wrong and detected ids (core/sim/provenance.ts), oldest first, and how many there are in all */
  stories: { list: IdStory[]; total: number } | null;
  /** a slot clicked in the slot grid: the story of an id naming it is shown (IdStories); a new object per click, so a second click on the same slot plays it again */
  storyFocus: { slot: number } | null;
  focusStory(slot: number): void;
  setPane(pane: SimPane): void;
  set(patch: Partial<SimSettings>): void;
  /** a run of the pane's settings, or of `run`'s options at its pace (slow motion) */
  start(run?: { options: Partial<SimOptions>; paceUs: number }): Promise<void>;
  stop(): Promise<void>;
  reset(): Promise<void>;
  dump(): Promise<void>;
  /** `echo 1|0 > options/stackmap` (every mode honours it; v8 allocates a freed map again on 1) */
  setOption(on: boolean): void;
  /** v8: `echo free > stack_map`, from a tracefs worker (it blocks until the open stack_map files close) */
  free(): Promise<void>;
  refreshLedger(): Promise<void>;
  /** the finished run as capture files, by tracefs name */
  files(): Map<string, Uint8Array> | null;
  download(): void;
  openInExplorer(): Promise<void>;
}

/** What a run (a free one or a guided scenario, sim-scenario.ts) starts from: nothing of the last run's kept. */
export function runStarting() {
  return {
    status: 'starting' as const,
    error: null,
    ledger: null,
    stories: null,
    current: null,
    snapshots: [],
    dumps: 0,
    estale: 0,
    resets: { ok: 0, ebusy: 0, refused: 0 },
    pendingResets: 0,
    freeing: false,
    lastFree: null,
    report: null,
  };
}

export const useSimStore = create<SimState>((set, get) => ({
  // a run's state as one starting has it, idle
  ...runStarting(),
  pane: initialPane,
  settings: initialSettings,
  status: 'idle',
  // the URL's sim.* values the page did not take, said once (a run's own error replaces it)
  error: initialNotice,
  runId: 0,
  storyFocus: null,
  focusStory: (slot) => set({ storyFocus: { slot } }),
  dumping: false,

  setPane: (pane) => set({ pane }),

  set(patch) {
    const settings = { ...get().settings, ...patch };
    set({ settings });
    // speed and race window apply to a running simulation at once
    const s = simSession();
    if (s && get().status === 'running') {
      Atomics.store(s.sim.map.i32, C.PACE_US, paceUs(settings.speed));
      Atomics.store(s.sim.map.i32, C.WINDOW_US, settings.windowUs);
    }
  },

  async start(run) {
    if (get().status === 'running' || get().status === 'starting' || get().status === 'stopping') return;
    terminate();
    setSimSession(null);
    const o = get().settings;
    if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer === 'undefined') {
      set({ status: 'error', error: 'SharedArrayBuffer is unavailable: the page is not cross-origin isolated (COOP/COEP)' });
      return;
    }
    const stacks = run ? 0 : liveStacksOf(o);
    if (stacks > MAX_LIVE_STACKS) {
      set({
        status: 'error',
        error: `a workload that changes after each reset builds all 16 phases up front: ${stacks.toLocaleString('en')} distinct stacks, more than ${MAX_LIVE_STACKS.toLocaleString('en')}; lower the stacks or the change`,
      });
      return;
    }
    set(runStarting());
    try {
      const cpus = run?.options.cpus ?? Math.min(Math.max(1, o.cpus), maxSimCpus());
      const replay = !run && o.workload === 'replay' ? await replayOfLoadedCapture() : null;
      const sim = new Simulation(run ? run.options : simOptionsOf(o, cpus, replay), false, true);
      const i32 = sim.map.i32;
      Atomics.store(i32, C.PACE_US, run ? run.paceUs : paceUs(o.speed));
      Atomics.store(i32, C.WINDOW_US, run ? 0 : o.windowUs);
      const t0 = sim.config.t0;
      const liveSab = createLiveBuffer(cpus);
      const s: SimSession = { sim, live: new Live(liveSab, cpus, t0), workers: [], ended: Array(cpus).fill(false), t0, run: null };
      setSimSession(s);
      await startWorkers(s, liveSab, (cpu, e) => {
        if (simSession() === s) set({ status: 'error', error: `CPU ${cpu}: ${e.message}` });
      });
      sim.start();
      set({ status: 'running', runId: get().runId + 1 });
      startLedgerTimer(() => void get().refreshLedger());
    } catch (e) {
      terminate();
      set({ status: 'error', error: (e as Error).message });
    }
  },

  async stop() {
    const s = simSession();
    if (!s || get().status !== 'running') return;
    set({ status: 'stopping' });
    stopLedgerTimer();
    try {
      // let the host operations in progress end (a reset waits for in-flight inserts)
      await serial(async () => undefined);
      while (writersBusy() || get().dumping || get().freeing) await sleep(5);
      s.sim.stop();
      Atomics.store(s.sim.map.i32, C.PAUSE, 0);
      Atomics.notify(s.sim.map.i32, C.PAUSE);
      const reports = await cpuReports();
      const run = s.sim.finish(reports);
      s.run = run;
      const { entries: _e, ...counts } = run.ledger;
      void _e;
      const events = run.items.filter((i) => i.rec.type === REC.EVENT).length;
      set({
        status: 'stopped',
        report: run.report,
        stories: storiesOf(run),
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
    const s = simSession();
    if (!s || get().status !== 'running') return;
    const record = (r: { outcome: 'ok' | 'ebusy' | 'refused'; snapshot: GenerationSnapshot | null; at?: number; generation?: number }) => {
      if (r.snapshot) s.sim.snapshots.push(r.snapshot);
      if (r.outcome === 'ok') s.sim.resetsDone++;
      // when it cleared the map, for the stories of the ids it made stale (provenance.ts)
      if (r.outcome === 'ok' && r.at !== undefined && r.generation !== undefined) s.sim.resetLog.push({ ts: r.at, generation: r.generation });
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
            const r = await resetByFirstWriter();
            if (r.outcome === 'ok') for (const sab of s.sim.shared.rings) new Ring(sab, s.sim.config.ringBytes, s.sim.config.ringModel).clear();
            Atomics.store(i32, C.RECORDING, 1);
            record(r);
          } finally {
            release();
          }
        });
        return;
      }
      // v7/v8: CPUs keep recording; a second reset while one runs gets EBUSY
      await resetByFreeWriter(record);
    } catch (e) {
      if (simSession() === s) set({ error: (e as Error).message });
    } finally {
      set({ pendingResets: get().pendingResets - 1 });
    }
  },

  async dump() {
    const s = simSession();
    if (!s || get().status !== 'running' || get().dumping || !dumpReader()) return;
    set({ dumping: true });
    const i32 = s.sim.map.i32;
    // taken during a reset: one queued or running when the dump starts, or one started (RESET_SEQ) or running before a read ends
    const busy = () => get().pendingResets > 0 || Atomics.load(i32, C.RESET_BUSY) !== 0;
    const seq = Atomics.load(i32, C.RESET_SEQ);
    let duringReset = busy();
    const check = () => (duringReset ||= busy() || Atomics.load(i32, C.RESET_SEQ) !== seq);
    // a read that came back empty because the reset had cleared the map under it is no stack_map.N: not kept, and logged
    // ('dump-during-reset', slot: 1 the binary read, 2 the text read, 3 both)
    let dropped = 0;
    try {
      if (!s.sim.map.allocated) {
        // v8 after free: stack_map reads "stackmap not initialized" (and stack_map_bin has no map to read): nothing to keep
        const text = await dumpReader()!.api.readText();
        if (text.uninitialized) {
          addHostNote(
            s,
            'uninitialized',
            'stack_map read: "stackmap not initialized" (the map was freed): no dump to keep; turning options/stackmap on allocates a new map',
          );
          return;
        }
        // the option was turned on meanwhile: a new map, read as usual below
      }
      if (hasBinExport(s.sim.options)) {
        const bin = await dumpReader()!.api.readBin();
        check();
        s.sim.estale += bin.estale;
        if (bin.dump && bin.dump.records.length === 0 && duringReset) dropped |= 1;
        else if (bin.dump) s.sim.dumps.push(bin.dump);
      }
      const text = await dumpReader()!.api.readText();
      check();
      if (text.uninitialized) addHostNote(s, 'uninitialized', 'stack_map read: "stackmap not initialized" (the map was freed during the dump): not kept');
      else if (text.records.length === 0 && duringReset) dropped |= 2;
      else s.sim.dumps.push(text);
      if (dropped) s.live.event('dump-during-reset', -1, dropped, s.sim.map.generation);
      set({ dumps: s.sim.dumps.length, estale: s.sim.estale });
    } catch (e) {
      if (simSession() === s) set({ error: (e as Error).message });
    } finally {
      set({ dumping: false });
    }
    await get().refreshLedger();
  },

  setOption(on) {
    const s = simSession();
    if (!s || get().status !== 'running') return;
    const map = s.sim.map;
    if (map.optionOn === on) return;
    const wasFreed = !map.allocated;
    map.setOption(on);
    // slot 1: the option's enable allocated a new map (v8 after free); its generation continues
    s.live.event(on ? 'option-on' : 'option-off', -1, on && wasFreed ? 1 : 0, map.generation);
  },

  async free() {
    const s = simSession();
    if (!s || get().status !== 'running' || get().freeing) return;
    set({ freeing: true });
    try {
      const { outcome, readers } = await freeByFreeWriter();
      if (simSession() !== s) return;
      if (outcome !== 'ok') {
        const why =
          outcome === 'busy'
            ? s.sim.map.optionOn
              ? 'EBUSY: options/stackmap is on (free releases only a map whose option is off)'
              : 'EBUSY: a reset is running'
            : outcome === 'not-allocated'
              ? 'the map is already freed'
              : 'EINVAL: only v8 has free';
        addHostNote(s, 'free-refused', `free refused: ${why}${readers ? ` (${readers} stack_map files open)` : ''}`);
      }
      set({ lastFree: outcome });
    } catch (e) {
      if (simSession() === s) set({ error: (e as Error).message });
    } finally {
      set({ freeing: false });
    }
    await get().refreshLedger();
  },

  async refreshLedger() {
    const s = simSession();
    if (!s || get().status !== 'running') return;
    await serial(async () => {
      if (get().status !== 'running' || simSession() !== s) return;
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
    const run = simSession()?.run;
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

syncPane(useSimStore);

/** The stories a finished run shows: the first STORIES of its wrong and detected ids. */
const STORIES = 200;
export function storiesOf(run: RunResult): { list: IdStory[]; total: number } {
  return { list: idStories(run.items, run.ledger, run.stackKeys, run.resets, STORIES), total: run.ledger.wrong + run.ledger.detected };
}
