import { stackHash } from './jhash.ts';
import { makeStack, SyntheticKernel } from './kernel-symbols.ts';
import type { MapView } from './map-view.ts';
import { Rng } from './random.ts';
import { REC } from './ring-records.ts';
import { hashSeedOf, MAX_PHASES, type SimOptions } from './sim-options.ts';

/**
 * Slow motion (issue 36): one reset race a person can watch. Two CPUs record four stacks at a
 * pace a person follows; once each has been written, the host resets; the CPUs move to four other
 * stacks, chosen so that each hashes to the slot an old one held (as happens by chance in a busy
 * map, here on every run); and a reader reads the old ids back as they are refilled. v7 reads an
 * old id as the stack that took its slot (wrong, marked the moment it happens); v8 refuses the old
 * cookie because its generation is not the map's.
 *
 * The population is built here; the host side (the page's store) drives a live run with it and
 * feeds what the CPUs wrote and what the map holds to `SlowMotionScript`, which says what
 * happened, one beat at a time. No clock: the host passes its own milliseconds, the live log's.
 */

/** Stacks per phase (ranks), CPUs, the smallest map the kernel allows (bits 10: 2,048 slots). */
export const SLOW = { perPhase: 4, cpus: 2, bits: 10, depthMin: 8, depthMax: 16, eventsPerSecond: 1 } as const;

/** The slot a stack's insert starts probing at: hash >>> (32 - (bits + 1)). */
export const homeSlot = (ips: BigUint64Array, bits: number, hashSeed: number): number => stackHash(ips, hashSeed) >>> (32 - (bits + 1));

/**
 * `phases` x `perPhase` distinct stacks of the synthetic kernel of `seed` (the kernel
 * `buildPopulation` makes for that seed, so the run's kallsyms names them): rank r of every
 * phase starts probing at the slot rank r of phase 0 does, and its leaf is another function, so
 * after each reset the new stack takes the old one's slot and differs from it at a glance.
 */
export function collidingStacks(
  seed: number,
  bits: number,
  perPhase: number,
  phases: number,
  hashSeed: number,
): { stacks: BigUint64Array[]; kernel: SyntheticKernel } {
  const kernel = new SyntheticKernel(new Rng(seed));
  const rng = new Rng(seed ^ 0x51f0);
  const chains = [...kernel.allocChains, ...kernel.wakeupChains];
  const seen = new Set<string>();
  const draw = (): BigUint64Array => {
    const depth = rng.range(SLOW.depthMin, SLOW.depthMax);
    let chain = [...rng.pick(kernel.allocChains)];
    while (chain.length < depth) chain = [...rng.pick(chains).slice(0, -1), ...chain];
    return makeStack(kernel, chain.slice(chain.length - depth), rng);
  };
  const leafOf = (ips: BigUint64Array) => kernel.printFrame(ips[0]).split('+')[0];
  const first: BigUint64Array[] = [];
  const homes = new Set<number>();
  while (first.length < perPhase) {
    const s = draw();
    const home = homeSlot(s, bits, hashSeed);
    // distinct starting slots, away from the table's end (no wrap while probing), distinct leaves
    if (homes.has(home) || homes.has(home + 1) || homes.has(home - 1) || home >= 2 ** (bits + 1) - 1) continue;
    if (first.some((f) => leafOf(f) === leafOf(s)) || seen.has(s.join())) continue;
    homes.add(home);
    seen.add(s.join());
    first.push(s);
  }
  const stacks = [...first];
  // each later rank drawn until one starts at its phase-0 rank's slot (about 2^(bits+1) draws each)
  const limit = 2 ** (bits + 1) * 200;
  for (let p = 1; p < phases; p++) {
    for (let r = 0; r < perPhase; r++) {
      const want = homeSlot(first[r], bits, hashSeed);
      const before = leafOf(stacks[(p - 1) * perPhase + r]);
      let got: BigUint64Array | null = null;
      for (let tries = 0; tries < limit && !got; tries++) {
        const s = draw();
        if (homeSlot(s, bits, hashSeed) === want && leafOf(s) !== before && !seen.has(s.join())) got = s;
      }
      if (!got) throw new Error(`no stack of this kernel starts at slot ${want} within ${limit} draws`);
      seen.add(got.join());
      stacks.push(got);
    }
  }
  return { stacks, kernel };
}

/** The live run's options: the colliding stacks replayed in order, a new phase (four stacks) per reset. */
export function slowMotionOptions(mode: 'v7' | 'v8', seed = 1): Partial<SimOptions> {
  const { stacks, kernel } = collidingStacks(seed, SLOW.bits, SLOW.perPhase, MAX_PHASES, hashSeedOf(seed));
  return {
    mode,
    cpus: SLOW.cpus,
    bits: SLOW.bits,
    // v8's slot reuse needs the small map: the proposed follow-up's capacity parameter (v8 as posted is fixed at 16,384)
    v8Variant: mode === 'v8' ? 'bin' : 'posted',
    replay: stacks.map((s) => [...s]),
    replayOrder: 'sequential',
    replayPhase: SLOW.perPhase,
    replaySymbols: kernel,
    events: 1e9 - (1e9 % SLOW.cpus),
    resets: 0,
    seed,
    ringKb: 64,
    dumps: 'end',
    textDump: true,
  };
}

/** One stack record a CPU wrote: the id (a slot) or the cookie's generation, and the stack it stood for. */
export interface Written {
  cpu: number;
  type: number;
  slot: number;
  generation: number;
  stack: number;
  ms: number;
}

export type BeatKind = 'written' | 'reset' | 'refilled' | 'wrong' | 'refused' | 'same';

/** A step of the race as it happened. `stack`: the population's index; `other`: the stack it now reads as. */
export interface Beat {
  kind: BeatKind;
  ms: number;
  cpu: number;
  slot: number;
  generation: number;
  stack: number;
  other: number;
  /** for a read-back: when the old id was written */
  writtenMs: number;
}

/**
 * What happened, from what the host saw: the records the CPUs wrote (`write`), the host's reset
 * (`reset`), and the map as it stands (`look`: which slots were refilled, and what a reader now
 * gets for each old id). Each old id is read back once, when its slot holds a published stack
 * again: as that stack (v7: `wrong` when it is another, `same` when the same stack came back) or
 * refused by its generation (v8).
 */
export class SlowMotionScript {
  readonly beats: Beat[] = [];
  /** ids written in the current generation, by slot: the first record of each */
  private current = new Map<number, Written>();
  /** ids from before the last reset, not yet read back */
  private stale: Written[] = [];
  private refilled = new Set<number>();
  /** the stacks of the current phase written so far (by stack index) */
  private phaseStacks = new Set<number>();
  resets = 0;

  constructor(
    readonly mode: 'v7' | 'v8',
    private readonly stackOf: (view: MapView, slot: number) => number,
  ) {}

  /** A record a CPU wrote: the first id or cookie of each slot in a generation is a beat. */
  write(w: Written): void {
    if (w.type !== REC.ID && w.type !== REC.COOKIE) return;
    this.phaseStacks.add(w.stack);
    if (this.current.has(w.slot)) return;
    this.current.set(w.slot, w);
    this.beats.push({ kind: 'written', ms: w.ms, cpu: w.cpu, slot: w.slot, generation: w.generation, stack: w.stack, other: -1, writtenMs: w.ms });
  }

  /** Every stack of the phase has an id: time to reset. */
  get phaseWritten(): boolean {
    return this.phaseStacks.size >= SLOW.perPhase && this.current.size >= SLOW.perPhase;
  }

  /** The old ids are all read back (or there were none): the round is over. */
  get roundOver(): boolean {
    return this.resets > 0 && this.stale.length === 0;
  }

  /** `echo 0 > stack_map` returned: the ids written so far are stale. */
  reset(ms: number, generation: number): void {
    this.resets++;
    this.stale.push(...this.current.values());
    this.current.clear();
    this.phaseStacks.clear();
    this.refilled.clear();
    this.beats.push({ kind: 'reset', ms, cpu: -1, slot: -1, generation, stack: -1, other: -1, writtenMs: ms });
  }

  /** Looks at the map: slots of old ids refilled, and each such old id read back as a reader would. */
  look(view: MapView, ms: number): void {
    const generation = view.generation;
    const left: Written[] = [];
    for (const w of this.stale) {
      const now = view.published(w.slot) >= 0 ? this.stackOf(view, w.slot) : -1;
      if (now < 0) {
        left.push(w);
        continue;
      }
      if (!this.refilled.has(w.slot)) {
        this.refilled.add(w.slot);
        this.beats.push({ kind: 'refilled', ms, cpu: -1, slot: w.slot, generation, stack: now, other: w.stack, writtenMs: w.ms });
      }
      const kind: BeatKind = this.mode === 'v8' && w.generation !== generation ? 'refused' : now === w.stack ? 'same' : 'wrong';
      this.beats.push({ kind, ms, cpu: w.cpu, slot: w.slot, generation: w.generation, stack: w.stack, other: now, writtenMs: w.ms });
    }
    this.stale = left;
  }
}
