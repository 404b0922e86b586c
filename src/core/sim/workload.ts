import { makeStack, SyntheticKernel } from './kernel-symbols.ts';
import { ipsToWords, MAX_WORKLOAD_DEPTH } from './map-layout.ts';
import type { SymbolSource } from './replay.ts';
import { Rng } from './random.ts';

/**
 * What the simulated CPUs record: a population of distinct kernel stacks (from SyntheticKernel,
 * or a replay list of raw ips), flattened into one SharedArrayBuffer so every worker sees the
 * same stacks without rebuilding them, and how each CPU picks the next one.
 */

export type WorkloadSpec =
  | {
      kind: 'population';
      /** distinct stacks */
      stacks: number;
      /** Zipf exponent over the stacks' ranks (0: uniform) */
      zipf: number;
      depthMin: number;
      depthMax: number;
      seed: number;
    }
  | {
      kind: 'replay';
      /** stacks as raw ips, leaf first; deduplicated by ips */
      stacks: readonly (readonly bigint[])[];
      /** 'sequential': global event j (= i * cpus + cpu) records stacks[j % n]; 'zipf': drawn */
      order: 'sequential' | 'zipf' | 'weights';
      zipf?: number;
      seed: number;
      /** the symbols the replayed ips were made for (replay of a loaded capture) */
      symbols?: SymbolSource;
    };

/** The flattened population: stack i is words[offsets[i] .. offsets[i] + 2 * depths[i]]. */
export interface PopulationShared {
  sab: SharedArrayBuffer;
  count: number;
  /** the byte where the stacks start in `sab` (0 if absent): after the map where they share its buffer (`populationInto`) */
  at?: number;
}

export interface Population {
  shared: PopulationShared;
  /** views per stack, (low, high) pairs */
  words: Uint32Array[];
  depths: number[];
  ips: BigUint64Array[];
  /** the symbols the stacks use (replay without symbols: the synthetic kernel, which may not cover them) */
  kernel: SymbolSource;
}

/** Builds the population on the main thread. */
export function buildPopulation(spec: WorkloadSpec): Population {
  const rng = new Rng(spec.seed);
  const kernel = new SyntheticKernel(rng);
  let stacks: BigUint64Array[];
  if (spec.kind === 'replay') {
    const seen = new Set<string>();
    stacks = [];
    for (const s of spec.stacks) {
      if (s.length === 0 || s.length > MAX_WORKLOAD_DEPTH) throw new RangeError(`replay stack depth ${s.length} outside 1..${MAX_WORKLOAD_DEPTH}`);
      const ips = BigUint64Array.from(s, (x) => BigInt.asUintN(64, x));
      const k = ips.join(',');
      if (seen.has(k)) continue;
      seen.add(k);
      stacks.push(ips);
    }
  } else {
    if (spec.depthMin < 1 || spec.depthMax > MAX_WORKLOAD_DEPTH || spec.depthMin > spec.depthMax)
      throw new RangeError(`depth range outside 1..${MAX_WORKLOAD_DEPTH}`);
    stacks = generateStacks(kernel, spec.stacks, spec.depthMin, spec.depthMax, rng);
  }
  return { ...flatten(stacks), kernel: (spec.kind === 'replay' && spec.symbols) || kernel, ips: stacks };
}

/** Rebuilds the per-stack views in a worker. */
export function populationViews(p: PopulationShared): { words: Uint32Array[]; depths: number[] } {
  const base = p.at ?? 0;
  const all = new Uint32Array(p.sab, base);
  const words: Uint32Array[] = [];
  const depths: number[] = [];
  let at = 0;
  for (let i = 0; i < p.count; i++) {
    const nr = all[at];
    words.push(new Uint32Array(p.sab, base + (at + 1) * 4, nr * 2));
    depths.push(nr);
    at += 1 + 2 * nr;
  }
  return { words, depths };
}

/** The bytes a population's flattened stacks take. */
export function populationBytes(p: PopulationShared): number {
  return p.sab.byteLength - (p.at ?? 0);
}

/**
 * The population copied into `sab` from byte `at` (a multiple of 4): the map's buffer, past the
 * map (createMapBuffer's `extraBytes`), where the CPUs' stacks then lie in the map's memory.
 */
export function populationInto(p: PopulationShared, sab: SharedArrayBuffer, at: number): PopulationShared {
  const n = populationBytes(p);
  new Uint8Array(sab, at, n).set(new Uint8Array(p.sab, p.at ?? 0, n));
  return { sab, count: p.count, at };
}

function flatten(stacks: BigUint64Array[]): { shared: PopulationShared; words: Uint32Array[]; depths: number[] } {
  let total = 0;
  for (const s of stacks) total += 1 + 2 * s.length;
  const sab = new SharedArrayBuffer(Math.max(4, total * 4));
  const all = new Uint32Array(sab);
  let at = 0;
  for (const s of stacks) {
    all[at] = s.length;
    all.set(ipsToWords(s), at + 1);
    at += 1 + 2 * s.length;
  }
  const shared = { sab, count: stacks.length };
  return { shared, ...populationViews(shared) };
}

/**
 * Distinct stacks of depths in [min, max]: an allocation call chain of the synthetic kernel,
 * with callers from other chains stacked on top until the depth is reached (an interrupt or a
 * nested path, as deep kernel stacks are), each frame a random call site of its function.
 */
function generateStacks(kernel: SyntheticKernel, n: number, min: number, max: number, rng: Rng): BigUint64Array[] {
  const all = [...kernel.allocChains, ...kernel.wakeupChains];
  const seen = new Set<string>();
  const out: BigUint64Array[] = [];
  for (let tries = 0; out.length < n && tries < n * 50; tries++) {
    const depth = rng.range(min, max);
    let chain = [...rng.pick(kernel.allocChains)];
    while (chain.length < depth) chain = [...rng.pick(all).slice(0, -1), ...chain];
    if (chain.length > depth) chain = chain.slice(chain.length - depth);
    const ips = makeStack(kernel, chain, rng);
    const key = ips.join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(ips);
  }
  if (out.length < n) throw new RangeError(`could only make ${out.length} distinct stacks of depth ${min}..${max}`);
  return out;
}
