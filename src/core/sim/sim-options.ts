import type { SimConfig } from './cpu-loop.ts';
import { MAX_WORKLOAD_DEPTH, type Mode } from './map-layout.ts';
import { Rng } from './random.ts';
import type { SymbolSource } from './replay.ts';
import { DEFAULT_EVENT_BYTES, type RingModel } from './ring.ts';

/** What a simulation run is asked for (the CLI's flags, the browser's settings), its defaults and their checks. */

export interface SimOptions {
  mode: Mode;
  cpus: number;
  bits: number;
  /** events in all, split evenly over the CPUs */
  events: number;
  resets: number;
  raceWindowUs: number;
  /** held between reading a slot's key as empty and the cmpxchg claiming it (MapOptions.claimRaceUs) */
  claimRaceUs: number;
  raceWait: 'sleep' | 'spin';
  seed: number;
  /** distinct stacks of the generated population */
  stacks: number;
  zipf: number;
  depthMin: number;
  depthMax: number;
  /** replay these stacks (raw ips, leaf first) instead of a generated population */
  replay: readonly (readonly bigint[])[] | null;
  /** 'weights': drawn by replayWeights (a loaded capture's occurrence counts) */
  replayOrder: 'sequential' | 'zipf' | 'weights';
  replayWeights: number[] | null;
  /** a replay in phases of this many stacks: after each reset the CPUs move to the next ones (0: one population) */
  replayPhase: number;
  /** the symbols replayed ips were made for (see replay.ts), used to export the run */
  replaySymbols: SymbolSource | null;
  ringKb: number;
  /** record sizes as the seeds count them, or with the ring buffer's event headers and page-granular overwrite (ring.ts) */
  ringModel: RingModel;
  eventBytes: number;
  /** which stack_map_bin dumps the host takes: before every reset and at the end, only at the end, none */
  dumps: 'before-reset' | 'end' | 'none';
  /** also read the text `stack_map` at the end */
  textDump: boolean;
  cpuResetEvery: number;
  gateSlack: number;
  /**
   * The workload's change after each reset, as a share of `stacks`: 0 one stationary population;
   * 0.25 a quarter of the stacks replaced and the popularity shifted by as many ranks; 1 a new
   * population per phase (a user resetting between test phases). Generated populations only.
   */
  phaseShift: number;
  /** v8: the share of stacks taken while RCU is not watching, which v8 discards */
  rcuOffShare: number;
  /**
   * Interrupts inside an insert: the chance, at each point between an insert's claim and its
   * publish, that an IRQ (`irqRate`) or an NMI (`nmiRate`) arrives on that CPU and records an
   * event with a stack of its own through the same insert path, nested (half of them the
   * interrupted stack, as a sample taken in the same code path). An NMI may also arrive inside an IRQ's insert.
   */
  irqRate: number;
  nmiRate: number;
  /** events each CPU records before the map is published (the boot window): stacks in full, never deduplicated */
  bootEvents: number;
  /** the share of stack records whose ring-buffer reservation fails: the stack is lost, counted (a bypass the map never sees) */
  reserveFailShare: number;
  /**
   * v8 as posted (fixed capacity 16,384, text `stack_map` only), or with the proposed follow-up
   * (`stack_map_bin` version 2 and the `bits` parameter)
   */
  v8Variant: 'posted' | 'bin';
}

/** The phases a generated population is built for (later phases wrap around). */
export const MAX_PHASES = 16;

/** How many distinct stacks the workload holds, and how far the ranks shift per phase. */
export function phaseOf(
  o: Pick<SimOptions, 'stacks' | 'phaseShift' | 'resets' | 'replay'> & { replayPhase?: number },
  live = false,
): { size: number; shift: number; total: number } {
  if (o.replay && o.replayPhase) return { size: o.replayPhase, shift: o.replayPhase, total: o.replay.length };
  const shift = o.replay ? 0 : Math.round(o.phaseShift * o.stacks);
  const phases = shift === 0 ? 1 : live ? MAX_PHASES : Math.min(MAX_PHASES, o.resets + 1);
  return { size: o.stacks, shift, total: o.stacks + (phases - 1) * shift };
}

/** The per-boot jhash seed a run draws: the first u32 of its seed's generator. */
export const hashSeedOf = (seed: number): number => new Rng(seed).u32();

/** The map can hold a binary dump (v4, v7, v8 with the proposed follow-up). */
export const hasBinExport = (o: Pick<SimOptions, 'mode' | 'v8Variant'>): boolean => o.mode !== 'v8' || o.v8Variant === 'bin';

export const DEFAULT_OPTIONS: SimOptions = {
  mode: 'v8',
  cpus: 4,
  bits: 14,
  events: 40000,
  resets: 3,
  raceWindowUs: 0,
  claimRaceUs: 0,
  raceWait: 'sleep',
  seed: 1,
  stacks: 500,
  zipf: 1.1,
  depthMin: 8,
  depthMax: 20,
  replay: null,
  replayOrder: 'sequential',
  replayWeights: null,
  replayPhase: 0,
  replaySymbols: null,
  ringKb: 512,
  ringModel: 'seed',
  eventBytes: DEFAULT_EVENT_BYTES,
  dumps: 'before-reset',
  textDump: true,
  cpuResetEvery: 0,
  gateSlack: 0.5,
  phaseShift: 0,
  rcuOffShare: 0,
  irqRate: 0,
  nmiRate: 0,
  bootEvents: 0,
  reserveFailShare: 0,
  v8Variant: 'posted',
};

/**
 * What a run may ask for, from runs measured on this project's 2-core machine (Node 20, 4 CPUs,
 * the defaults unless said), so that a run ends within minutes and about 1 GB, and a slip
 * (`--resets 100000`, `--race-window-us 1e300`, `--stacks 1000000 --depth 80-80`) is refused at
 * once instead of running for hours or out of memory.
 */
export const LIMITS = {
  /** events in all, for a run that ends by itself (40M took 24 s; a live run goes until Stop) */
  events: 100_000_000,
  /** events in all, for a live run (it is stopped by hand) */
  liveEvents: 1e9,
  /** host resets (each one a copy of the map and, with before-reset dumps, a dump: 1,000 took 11 s, 375 MB) */
  resets: 1000,
  /** the race window (the pane's longest, 1 s; every claim and reset step waits it out) */
  raceWindowUs: 1_000_000,
  /** seconds a run may spend in race windows, estimated by raceWindowSeconds() (10 ms took 4 s of 5 estimated) */
  raceWindowSeconds: 300,
  /** ring buffer per CPU, KiB (the pane's largest) */
  ringKb: 8192,
  /** all CPUs' ring buffers together, KiB, for a run that ends by itself (filled and written out, 4 x 4 MB took 0.86 GB and 11 s, 4 x 8 MB 1.6 GB, 4 x 64 MB ran out of memory at 4.5 GB after 103 s) */
  ringKbAll: 16384,
  /** distinct stacks x the deepest depth, every phase's stacks counted: the population is built in memory (100,000 x 80 took 0.83 GB, 200,000 x 40 0.98 GB; 1,000,000 x 80 5.1 GB) */
  populationFrames: 8_000_000,
  /** generations x entries a generation x the deepest depth: each generation's map is copied and dumped (11 x 181,000 x 20 took 0.93 GB, 14.5 s) */
  generationFrames: 50_000_000,
} as const;

/** How an option is named in a limit's message: the CLI's flags, the core's own words by default. */
export type OptionNames = Record<
  'cpus' | 'bits' | 'events' | 'resets' | 'stacks' | 'depth' | 'ringKb' | 'eventBytes' | 'raceWindowUs' | 'phaseShift' | 'cpuResetEvery',
  string
>;
export const CORE_NAMES: OptionNames = {
  cpus: 'cpus',
  bits: 'bits',
  events: 'events',
  resets: 'resets',
  stacks: 'stacks',
  depth: 'depth',
  ringKb: 'ring KiB',
  eventBytes: 'event bytes',
  raceWindowUs: 'race window (µs)',
  phaseShift: 'phase shift',
  cpuResetEvery: 'cpu resets every',
};

const fmt = (n: number) => n.toLocaleString('en');

/** Generations the map goes through: the host's resets, and the CPUs' own (`cpuResetEvery`). */
function generationsOf(o: SimOptions): { host: number; byCpus: number } {
  const perCpu = Math.floor(o.events / o.cpus);
  return { host: o.resets + 1, byCpus: o.cpuResetEvery > 0 ? o.cpus * Math.floor(perCpu / o.cpuResetEvery) : 0 };
}

/** Entries a generation the host ends can hold: its stacks, the map's capacity, its events. */
function entriesPerGeneration(o: SimOptions): number {
  const stacks = o.replay ? o.replay.length : o.stacks;
  return Math.min(stacks, 2 ** o.bits, Math.ceil(o.events / (o.resets + 1)));
}

/**
 * Seconds the run's race windows take, at most: each first insert of a stack in a generation
 * waits once (the CPUs side by side), each reset step once (3 a reset; the host's resets one at
 * a time, each CPU's own one after another on that CPU).
 */
export function raceWindowSeconds(o: SimOptions): number {
  if (o.raceWindowUs <= 0) return 0;
  const g = generationsOf(o);
  const claims = Math.min(o.events, (g.host + g.byCpus) * Math.min(o.replay ? o.replay.length : o.stacks, 2 ** o.bits));
  return ((claims / o.cpus + 3 * (o.resets + g.byCpus / o.cpus)) * o.raceWindowUs) / 1e6;
}

/**
 * The options checked, each against its range and the limits above: throws a RangeError naming the
 * option as `names` does, with its bounds. `batch`: a run that ends by itself (the CLI, tests),
 * whose events, ring buffers, dumps and race windows are bounded too; a live run (the pane) only
 * by what the pane offers and the population.
 */
export function checkOptions(o: SimOptions, names: OptionNames = CORE_NAMES, batch = true): void {
  const fail = (msg: string) => {
    throw new RangeError(msg);
  };
  const int = (key: keyof OptionNames, v: number, lo: number, hi: number) => {
    if (!Number.isInteger(v) || v < lo || v > hi) fail(`${names[key]} must be ${Number.isInteger(v) ? '' : 'an integer '}${fmt(lo)}..${fmt(hi)}`);
  };
  int('bits', o.bits, 10, 18);
  int('cpus', o.cpus, 1, 256);
  int('events', o.events, o.cpus, batch ? LIMITS.events : LIMITS.liveEvents);
  int('resets', o.resets, 0, LIMITS.resets);
  int('stacks', o.stacks, 1, 1e6);
  int('ringKb', o.ringKb, 1, LIMITS.ringKb);
  int('eventBytes', o.eventBytes, 16, 4096);
  if (o.eventBytes % 4) fail(`${names.eventBytes} must be a multiple of 4`);
  if (!(o.raceWindowUs >= 0 && o.raceWindowUs <= LIMITS.raceWindowUs)) fail(`${names.raceWindowUs} must be 0..${fmt(LIMITS.raceWindowUs)}`);
  if (!(o.zipf >= 0)) fail('zipf must be >= 0');
  if (o.resets >= Math.floor(o.events / o.cpus)) fail(`more ${names.resets} than ${names.events} per CPU`);
  if (!Number.isInteger(o.cpuResetEvery) || o.cpuResetEvery < 0) fail(`${names.cpuResetEvery} must be an integer >= 0`);
  if (!Number.isInteger(o.seed) || o.seed < 0 || o.seed > 0xffffffff) fail('seed must be an integer in [0, 4294967295]');
  if (!(o.phaseShift >= 0 && o.phaseShift <= 1)) fail(`${names.phaseShift} must be in [0, 1]`);
  if (!(o.rcuOffShare >= 0 && o.rcuOffShare <= 0.5)) fail('RCU-off share must be in [0, 0.5]');
  if (!(o.claimRaceUs >= 0 && o.claimRaceUs <= 10_000)) fail('claim race window must be 0..10,000 µs');
  if (!(o.irqRate >= 0 && o.irqRate <= 0.5)) fail('IRQ rate must be in [0, 0.5]');
  if (!(o.nmiRate >= 0 && o.nmiRate <= 0.5)) fail('NMI rate must be in [0, 0.5]');
  if (!(o.reserveFailShare >= 0 && o.reserveFailShare <= 0.5)) fail('reservation failure share must be in [0, 0.5]');
  if (!(Number.isInteger(o.bootEvents) && o.bootEvents >= 0 && o.bootEvents <= o.events)) fail(`boot events must be a whole number in [0, ${fmt(o.events)}]`);
  if (!(o.depthMin >= 1 && o.depthMax <= MAX_WORKLOAD_DEPTH && o.depthMin <= o.depthMax)) fail(`${names.depth} must lie within 1-${MAX_WORKLOAD_DEPTH}`);
  if (o.mode === 'v8' && o.v8Variant === 'posted' && o.bits !== 14)
    fail('v8 as posted has a fixed capacity of 16,384 stacks (bits 14); other sizes come with the proposed follow-up (v8Variant "bin")');
  if (!o.replay) {
    const { total } = phaseOf(o);
    const frames = total * o.depthMax;
    if (frames > LIMITS.populationFrames)
      fail(
        `${names.stacks} x the deepest ${names.depth}${total > o.stacks ? ` (${fmt(total)} stacks over the phases ${names.phaseShift} makes)` : ''} must be at most ${fmt(LIMITS.populationFrames)} frames, not ${fmt(total)} x ${o.depthMax} = ${fmt(frames)}: the stacks are built in memory (100,000 of 80 frames take ~0.8 GB)`,
      );
  }
  if (!batch) return;
  const ringAll = o.ringKb * o.cpus;
  if (ringAll > LIMITS.ringKbAll)
    fail(
      `${names.ringKb} x ${names.cpus} must be at most ${fmt(LIMITS.ringKbAll)} KiB, not ${fmt(o.ringKb)} x ${o.cpus} = ${fmt(ringAll)}: a filled ring buffer takes ~40 times its size while the run is written out`,
    );
  const gens = generationsOf(o).host;
  const entries = entriesPerGeneration(o);
  const dumped = gens * entries * o.depthMax;
  if (dumped > LIMITS.generationFrames)
    fail(
      `(${names.resets} + 1) generations x ${fmt(entries)} entries each x ${o.depthMax} frames = ${fmt(dumped)} frames, more than ${fmt(LIMITS.generationFrames)}: each generation's map is copied and dumped at its reset; lower ${names.resets}, ${names.stacks}, ${names.bits} or ${names.depth}`,
    );
  const waits = raceWindowSeconds(o);
  if (waits > LIMITS.raceWindowSeconds)
    fail(
      `the race window would hold the run for up to ${fmt(Math.round(waits))} s (every first insert of a stack in a generation and every reset step waits ${fmt(o.raceWindowUs)} µs), more than ${LIMITS.raceWindowSeconds} s: lower ${names.raceWindowUs}, ${names.stacks}, ${names.resets} or ${names.cpuResetEvery}`,
    );
}

/** The options' checks for any run (a live one too): see checkOptions. */
export function validate(o: SimOptions): void {
  checkOptions(o, CORE_NAMES, false);
}

/** How each CPU picks the next stack (SimConfig.pick). */
export function pickOf(o: SimOptions): SimConfig['pick'] {
  if (!o.replay || o.replayOrder === 'zipf') return { kind: 'zipf', zipf: o.zipf };
  if (o.replayOrder === 'sequential') return { kind: 'sequential' };
  if (!o.replayWeights || o.replayWeights.length !== o.replay.length) throw new RangeError('replayWeights must give one weight per replayed stack');
  return { kind: 'weights', weights: o.replayWeights };
}
