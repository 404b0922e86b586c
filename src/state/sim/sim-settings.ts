import type { Mode } from '../../core/sim/map-layout.ts';
import { replayWorkload } from '../../core/sim/replay.ts';
import { phaseOf, type SimOptions } from '../../core/sim/sim-options.ts';
import { useLoadStore } from '../load/load-store.ts';
import { ingestWorker } from '../load/load-worker.ts';
import { useViewStore } from '../view/view-store.ts';

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
  /** v8 as posted (capacity fixed at 16,384, text `stack_map` only) or with the proposed follow-up (`stack_map_bin` v2, `bits`) */
  v8Variant: 'posted' | 'bin';
  /** v8: the share of stacks taken while RCU is not watching (discarded, nothing recorded); v4/v7 ignore it */
  rcuOffShare: number;
  /** after each reset, this share of the stacks is replaced (0 stationary, 1 a new population; generated populations only) */
  phaseShift: number;
  /** at each point between an insert's claim and publish, the chance an IRQ / an NMI runs the insert path nested on that CPU */
  irqRate: number;
  nmiRate: number;
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
  // v8 as the series posted it; the binary export and bits are the labelled follow-up
  v8Variant: 'posted',
  rcuOffShare: 0.001,
  phaseShift: 0,
  irqRate: 0,
  nmiRate: 0,
};

/** The capacity v8 as posted is fixed at: 16,384 stacks. */
export const V8_POSTED_BITS = 14;

/** The map's bits a run uses: v8 as posted has no `bits` parameter. */
export const bitsOf = (o: Pick<SimSettings, 'mode' | 'v8Variant' | 'bits'>) => (o.mode === 'v8' && o.v8Variant === 'posted' ? V8_POSTED_BITS : o.bits);

/** Few hot stacks, slow CPUs and a long race window: claims, lost cmpxchgs and resets you can watch. */
export const RACE_PRESET: Partial<SimSettings> = { stacks: 6, zipf: 0, speed: 5, windowUs: 300_000 };

/** The machine's logical cores as the browser reports them (0: unknown). */
export const machineCores = () => (typeof navigator !== 'undefined' && navigator.hardwareConcurrency) || 0;

/** One Web Worker per simulated CPU: up to the machine's cores, and never fewer than 4 so races show on a small machine. */
export const maxSimCpus = () => Math.max(4, machineCores() || 4);

/** Why the CPU count stops where it does, in the pane's words. */
export function cpuLimitNote(): string {
  const cores = machineCores();
  return `up to ${maxSimCpus()}: one Web Worker per simulated CPU; more than the machine's cores${cores ? ` (${cores})` : ''} only time-slices them`;
}

/** The speed choices (events per second per CPU; 0: flat out). */
export const SPEEDS: readonly (readonly [number, string])[] = [
  [2, '2 / s'],
  [5, '5 / s'],
  [20, '20 / s'],
  [200, '200 / s'],
  [2000, '2 000 / s'],
  [20000, '20 000 / s'],
  [0, 'flat out'],
];

/** The race window choices (µs). */
export const WINDOWS: readonly (readonly [number, string])[] = [
  [0, 'none'],
  [20, '20 µs'],
  [1000, '1 ms'],
  // the contention scenarios' (v7-duplicates, v8-fallback): shown and kept in the URL as they run
  [2000, '2 ms'],
  [20_000, '20 ms'],
  [100_000, '100 ms'],
  [300_000, '300 ms'],
  [1_000_000, '1 s'],
];

/** The RCU-not-watching choices (share of stacks; v8 discards them). */
export const RCU_SHARES: readonly (readonly [number, string])[] = [
  [0, 'none'],
  [0.001, '0.1%'],
  [0.01, '1%'],
  [0.05, '5%'],
  [0.2, '20%'],
  [0.5, '50%'],
];

/** The interrupt choices (SimOptions.irqRate, nmiRate): the chance at each point between claim and publish. */
export const INTERRUPT_RATES: readonly (readonly [number, string])[] = [
  [0, 'none'],
  [0.01, '1%'],
  [0.05, '5%'],
  [0.2, '20%'],
];

/** The workload's change after each reset (SimOptions.phaseShift). */
export const PHASE_SHIFTS: readonly (readonly [number, string])[] = [
  [0, 'no: the same stacks'],
  [0.25, 'a quarter of them'],
  [0.5, 'half of them'],
  [1, 'all: a new population'],
];

/** A live run with a changing workload builds every phase up front (MAX_PHASES): at most this many distinct stacks in all. */
export const MAX_LIVE_STACKS = 200_000;

/** The ring buffer sizes per CPU (KiB: 1,024 B, as buffer_size_kb counts). */
export const RING_KBS: readonly number[] = [64, 128, 256, 512, 1024, 2048, 4096, 8192];
export const ringLabel = (kb: number) => (kb >= 1024 ? `${kb / 1024} MiB` : `${kb} KiB`);

/** The pause between events for `speed` events per second (C.PACE_US). */
export function paceUs(speed: number): number {
  return speed > 0 ? Math.round(1e6 / speed) : 0;
}

/** The options of a live run from the settings: no resets and 1e9 events, so the CPUs run until Stop. */
export function simOptionsOf(o: SimSettings, cpus: number, replay: ReturnType<typeof replayWorkload> | null): Partial<SimOptions> {
  return {
    mode: o.mode,
    cpus,
    bits: bitsOf(o),
    v8Variant: o.v8Variant,
    // only v8 discards stacks taken while RCU is not watching (the core ignores the share elsewhere too)
    rcuOffShare: o.mode === 'v8' ? o.rcuOffShare : 0,
    irqRate: o.irqRate,
    nmiRate: o.nmiRate,
    // phases advance at each Reset (the CPUs read the reset count); a replay keeps its stacks
    phaseShift: o.workload === 'population' ? o.phaseShift : 0,
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

/** The distinct stacks a live run builds: the population, and with a changing workload every phase it can reach. */
export const liveStacksOf = (o: SimSettings) =>
  phaseOf({ stacks: o.stacks, phaseShift: o.workload === 'population' ? o.phaseShift : 0, resets: 0, replay: null }, true).total;

/** The explorer's current selection of the loaded capture, as the simulator's replay workload. */
export async function replayOfLoadedCapture(): Promise<ReturnType<typeof replayWorkload>> {
  if (useLoadStore.getState().status !== 'done') throw new Error('replay needs a loaded capture: open one in the explorer first');
  const { range, generation, cpus } = useViewStore.getState();
  const src = await ingestWorker().replayStacks({ range, generation, cpus }, 4096);
  const w = replayWorkload(src);
  if (w.stacks.length === 0) throw new Error('the loaded capture has no resolved stacks to replay');
  return w;
}
