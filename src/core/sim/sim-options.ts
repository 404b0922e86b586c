import type { SimConfig } from './cpu-loop.ts';
import { MAX_WORKLOAD_DEPTH, type Mode } from './map-layout.ts';
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
   * v8 as posted (fixed capacity 16,384, text `stack_map` only), or with the proposed follow-up
   * (`stack_map_bin` version 2 and the `bits` parameter)
   */
  v8Variant: 'posted' | 'bin';
}

/** The phases a generated population is built for (later phases wrap around). */
export const MAX_PHASES = 16;

/** How many distinct stacks the workload holds, and how far the ranks shift per phase. */
export function phaseOf(o: Pick<SimOptions, 'stacks' | 'phaseShift' | 'resets' | 'replay'>, live = false): { size: number; shift: number; total: number } {
  const shift = o.replay ? 0 : Math.round(o.phaseShift * o.stacks);
  const phases = shift === 0 ? 1 : live ? MAX_PHASES : Math.min(MAX_PHASES, o.resets + 1);
  return { size: o.stacks, shift, total: o.stacks + (phases - 1) * shift };
}

/** The map can hold a binary dump (v4, v7, v8 with the proposed follow-up). */
export const hasBinExport = (o: Pick<SimOptions, 'mode' | 'v8Variant'>): boolean => o.mode !== 'v8' || o.v8Variant === 'bin';

export const DEFAULT_OPTIONS: SimOptions = {
  mode: 'v8',
  cpus: 4,
  bits: 14,
  events: 40000,
  resets: 3,
  raceWindowUs: 0,
  raceWait: 'sleep',
  seed: 1,
  stacks: 500,
  zipf: 1.1,
  depthMin: 8,
  depthMax: 20,
  replay: null,
  replayOrder: 'sequential',
  replayWeights: null,
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
  v8Variant: 'posted',
};

export function validate(o: SimOptions): void {
  const int = (name: string, v: number, lo: number, hi: number) => {
    if (!Number.isInteger(v) || v < lo || v > hi) throw new RangeError(`${name} must be an integer in [${lo}, ${hi}]`);
  };
  int('bits', o.bits, 10, 18);
  int('cpus', o.cpus, 1, 256);
  int('events', o.events, o.cpus, 1e9);
  int('resets', o.resets, 0, 100000);
  int('stacks', o.stacks, 1, 1e6);
  int('ring KB', o.ringKb, 1, 1 << 20);
  int('event bytes', o.eventBytes, 16, 4096);
  if (o.eventBytes % 4) throw new RangeError('event bytes must be a multiple of 4');
  if (!(o.raceWindowUs >= 0)) throw new RangeError('race window must be >= 0');
  if (!(o.zipf >= 0)) throw new RangeError('zipf must be >= 0');
  if (o.resets >= Math.floor(o.events / o.cpus)) throw new RangeError('more resets than events per CPU');
  if (!Number.isInteger(o.cpuResetEvery) || o.cpuResetEvery < 0) throw new RangeError('cpu resets every must be an integer >= 0');
  if (!Number.isInteger(o.seed) || o.seed < 0 || o.seed > 0xffffffff) throw new RangeError('seed must be an integer in [0, 4294967295]');
  if (!(o.phaseShift >= 0 && o.phaseShift <= 1)) throw new RangeError('phase shift must be in [0, 1]');
  if (!(o.rcuOffShare >= 0 && o.rcuOffShare <= 0.5)) throw new RangeError('RCU-off share must be in [0, 0.5]');
  if (o.depthMin < 1 || o.depthMax > MAX_WORKLOAD_DEPTH || o.depthMin > o.depthMax) throw new RangeError(`depth must lie within 1-${MAX_WORKLOAD_DEPTH}`);
  if (o.mode === 'v8' && o.v8Variant === 'posted' && o.bits !== 14)
    throw new RangeError('v8 as posted has a fixed capacity of 16,384 stacks (bits 14); other sizes come with the proposed follow-up (v8Variant "bin")');
}

/** How each CPU picks the next stack (SimConfig.pick). */
export function pickOf(o: SimOptions): SimConfig['pick'] {
  if (!o.replay || o.replayOrder === 'zipf') return { kind: 'zipf', zipf: o.zipf };
  if (o.replayOrder === 'sequential') return { kind: 'sequential' };
  if (!o.replayWeights || o.replayWeights.length !== o.replay.length) throw new RangeError('replayWeights must give one weight per replayed stack');
  return { kind: 'weights', weights: o.replayWeights };
}
