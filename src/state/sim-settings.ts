import type { Mode } from '../core/sim/map-layout.ts';
import { replayWorkload } from '../core/sim/replay.ts';
import type { SimOptions } from '../core/sim/sim-options.ts';
import { ingestWorker, useLoadStore } from './load-store.ts';
import { useViewStore } from './view-store.ts';

/** The simulator pane's settings, its presets, and the `Simulation` options a run is started with. */

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

export const maxSimCpus = () => Math.max(4, (typeof navigator !== 'undefined' && navigator.hardwareConcurrency) || 4);

/** The pause between events for `speed` events per second (C.PACE_US). */
export function paceUs(speed: number): number {
  return speed > 0 ? Math.round(1e6 / speed) : 0;
}

/** The options of a live run from the settings: no resets and 1e9 events, so the CPUs run until Stop. */
export function simOptionsOf(o: SimSettings, cpus: number, replay: ReturnType<typeof replayWorkload> | null): Partial<SimOptions> {
  return {
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
  };
}

/** The explorer's current selection of the loaded capture, as the simulator's replay workload. */
export async function replayOfLoadedCapture(): Promise<ReturnType<typeof replayWorkload>> {
  if (useLoadStore.getState().status !== 'done') throw new Error('replay needs a loaded capture: open one in the explorer first');
  const { range, generation, cpus } = useViewStore.getState();
  const src = await ingestWorker().replayStacks({ range, generation, cpus }, 4096);
  const w = replayWorkload(src);
  if (w.stacks.length === 0) throw new Error('the loaded capture has no resolved stacks to replay');
  return w;
}
