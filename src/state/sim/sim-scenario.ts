import { create } from 'zustand';
import { createLiveBuffer, Live } from '../../core/sim/live.ts';
import { C } from '../../core/sim/map-layout.ts';
import { REC } from '../../core/sim/ring.ts';
import { SCENARIOS, scenarioReport, type ScenarioName, type ScenarioReport } from '../../core/sim/scenarios.ts';
import { DEFAULT_OPTIONS } from '../../core/sim/sim-options.ts';
import { Simulation } from '../../core/sim/simulation.ts';
import { cpuReports, setSimSession, simSession, sleep, startWorkers, terminate, type SimSession } from './sim-session.ts';
import { maxSimCpus, type SimSettings } from './sim-settings.ts';
import { runStarting, storiesOf, useSimStore } from './sim-store.ts';

/**
 * The guided scenarios in the page (core/sim/scenarios.ts): Run sets the pane's settings to the
 * scenario's, starts one Web Worker per CPU on a finite run, and hosts it from this thread as
 * `cli simulate --scenario` does from Node: `Simulation.drive` for the resets and dumps at the
 * reset points, and the scenario's own script (a reader racing a reset) beside it. When every CPU
 * has ended, the run is finished as a stopped run (export, open in explorer) and its verdict kept.
 */

export interface ScenarioState {
  running: ScenarioName | null;
  /** the scenario run last (its stories are the sim store's until another run starts) */
  last: ScenarioName | null;
  results: Partial<Record<ScenarioName, ScenarioReport>>;
  error: string | null;
  run(name: ScenarioName): Promise<void>;
}

export const useScenarioStore = create<ScenarioState>((set, get) => ({
  running: null,
  last: null,
  results: {},
  error: null,
  async run(name) {
    const sim = useSimStore.getState();
    if (get().running || sim.status === 'running' || sim.status === 'starting' || sim.status === 'stopping') return;
    if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer === 'undefined') {
      set({ error: 'SharedArrayBuffer is unavailable: the page is not cross-origin isolated (COOP/COEP)' });
      return;
    }
    const sc = SCENARIOS[name];
    const o = { ...DEFAULT_OPTIONS, ...sc.options };
    if (o.cpus > maxSimCpus()) {
      set({ error: `${sc.title} needs ${o.cpus} CPU workers; this page allows ${maxSimCpus()}` });
      return;
    }
    set({ running: name, last: name, error: null, results: { ...get().results, [name]: undefined } });
    terminate();
    setSimSession(null);
    // the controls show what the scenario runs with
    sim.set(settingsOf(o));
    useSimStore.setState(runStarting());
    try {
      const simulation = new Simulation(sc.options, false);
      // the CPUs record past their events until the scenario's script is done (ScenarioHost)
      if (sc.during) simulation.hold();
      const s = await start(simulation);
      const finished = () => s.ended.every(Boolean);
      await Promise.all([s.sim.drive(sleep, finished), sc.during?.(s.sim, { sleep, finished }).finally(() => s.sim.release())]);
      const run = s.sim.finish(await cpuReports());
      s.run = run;
      const { entries: _e, ...counts } = run.ledger;
      void _e;
      useSimStore.setState({
        status: 'stopped',
        report: run.report,
        // the story of the first wrong (v7) or detected (v8) id, played when the run ends
        stories: storiesOf(run),
        ledger: { counts, events: run.items.filter((i) => i.rec.type === REC.EVENT).length, atMs: performance.timeOrigin + performance.now() - s.t0 },
        snapshots: [...run.snapshots],
        current: run.snapshots[run.snapshots.length - 1] ?? null,
        dumps: run.dumps.length,
        estale: s.sim.estale,
        resets: { ok: run.report.resets.done, ebusy: run.report.resets.ebusy, refused: run.report.resets.refused },
      });
      set({ results: { ...get().results, [name]: scenarioReport(sc, run) } });
    } catch (e) {
      useSimStore.setState({ status: 'error', error: (e as Error).message });
      set({ error: (e as Error).message });
    } finally {
      terminate();
      set({ running: null });
    }
  },
}));

/** The session and its workers for a finite run (the CPUs wait for `sim.start()`, called here). */
async function start(sim: Simulation): Promise<SimSession> {
  const i32 = sim.map.i32;
  Atomics.store(i32, C.PACE_US, 0);
  Atomics.store(i32, C.WINDOW_US, Math.round(sim.options.raceWindowUs));
  const cpus = sim.config.cpus;
  const liveSab = createLiveBuffer(cpus);
  const s: SimSession = { sim, live: new Live(liveSab, cpus, sim.config.t0), workers: [], ended: Array(cpus).fill(false), t0: sim.config.t0, run: null };
  // the host's resets, dumps, ESTALE and splices in the log, as a free-form run's tracefs workers log them
  sim.setHostEvents((kind, slot, generation) => s.live.event(kind, -1, slot, generation));
  setSimSession(s);
  await startWorkers(s, liveSab, (cpu, e) => {
    if (simSession() === s) useSimStore.setState({ status: 'error', error: `CPU ${cpu}: ${e.message}` });
  });
  sim.start();
  useSimStore.setState({ status: 'running', runId: useSimStore.getState().runId + 1 });
  return s;
}

function settingsOf(o: typeof DEFAULT_OPTIONS): Partial<SimSettings> {
  return {
    mode: o.mode,
    workload: 'population',
    cpus: o.cpus,
    bits: o.bits,
    stacks: o.stacks,
    zipf: o.zipf,
    depthMin: o.depthMin,
    depthMax: o.depthMax,
    windowUs: o.raceWindowUs,
    ringKb: o.ringKb,
    seed: o.seed,
    speed: 0,
    v8Variant: o.v8Variant,
    rcuOffShare: o.rcuOffShare,
    phaseShift: o.phaseShift,
    irqRate: o.irqRate,
    nmiRate: o.nmiRate,
  };
}
