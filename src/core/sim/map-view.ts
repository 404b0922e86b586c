import { jhash2i } from './jhash.ts';
import { C, CPU_STRIDE, CTL_WORDS, ELT_WORDS, K, MAX_DEPTH, type MapParams } from './map-layout.ts';

export interface MapCounters {
  attempts: number;
  successes: number;
  fallbacks: number;
  bypasses: number;
  newElements: number;
  fallbacksPoolEmpty: number;
  fallbacksProbeLimit: number;
  fallbacksInFlight: number;
  fallbacksGravestone: number;
  lostSameHash: number;
  probes: number;
  /** stacks deeper than 64 frames, recorded in full without reaching the map */
  deep: number;
  /** v8: stacks discarded because RCU was not watching */
  rcuDiscards: number;
  /** inserts run by an interrupt nested in a CPU's own insert, and those that met an unpublished slot of the same stack */
  nested: number;
  nestedSame: number;
  /** stack records whose ring reservation failed (lost, the map not asked) */
  reserveFails: number;
  /** stacks recorded before the map was published (in full) */
  boot: number;
}

/** What stack_map_stat prints for successes and drops/fallbacks (v4 zeroes them on reset; v7/v8 count since boot). */
export interface StatCounters {
  successes: number;
  drops: number;
}

/**
 * The read side of the map over its SharedArrayBuffer: where the regions start, the key hash,
 * and Atomics reads of the control words, counters, slots and elements. `SharedStackMap` adds the
 * insert and reset paths.
 */
export class MapView {
  readonly i32: Int32Array;
  readonly u32: Uint32Array;
  readonly slots: number;
  readonly capacity: number;
  readonly keysAt: number;
  readonly valsAt: number;
  readonly eltsAt: number;
  /** where the CPUs' scratch words start (map-layout.ts: the WebAssembly hit path's) */
  readonly scratchAt: number;
  protected readonly shift: number;

  constructor(
    readonly sab: SharedArrayBuffer,
    readonly params: MapParams,
  ) {
    this.i32 = new Int32Array(sab);
    this.u32 = new Uint32Array(sab);
    // Shifts, not 2 ** n: V8 keeps the result of ** as a heap number, and a region start made from
    // one (valsAt, eltsAt) turned every index of the insert path (probe, memcmp) into double
    // arithmetic with a conversion per access. bits is at most 18 (createMapBuffer).
    this.slots = 1 << (params.bits + 1);
    this.capacity = 1 << params.bits;
    this.keysAt = CTL_WORDS + params.cpus * CPU_STRIDE;
    this.valsAt = this.keysAt + this.slots;
    this.eltsAt = this.valsAt + this.slots;
    this.scratchAt = this.eltsAt + this.capacity * ELT_WORDS;
    this.shift = 32 - (params.bits + 1);
  }

  cpuWord(cpu: number, k: number): number {
    return CTL_WORDS + cpu * CPU_STRIDE + k;
  }

  /** The map's key for a stack given as (low, high) u32 pairs: jhash2 over the words, 0 taken as 1. */
  hash(words: Uint32Array, nr: number): number {
    const h = jhash2i(words, nr * 2, this.params.hashSeed | 0); // int32 seed: no heap number per call
    return h === 0 ? 1 : h >>> 0;
  }

  startIndex(hash: number): number {
    return hash >>> this.shift;
  }

  get generation(): number {
    return Atomics.load(this.i32, C.GENERATION);
  }

  /** stack_map_stat's entries: elements claimed since the last reset */
  get entries(): number {
    return Math.min(Atomics.load(this.i32, C.NEXT_ELT), this.capacity);
  }

  counters(cpu?: number): MapCounters {
    const sum = (k: number) => {
      if (cpu !== undefined) return Atomics.load(this.i32, this.cpuWord(cpu, k)) >>> 0;
      let n = 0;
      for (let c = 0; c < this.params.cpus; c++) n += Atomics.load(this.i32, this.cpuWord(c, k)) >>> 0;
      return n;
    };
    return {
      attempts: sum(K.ATTEMPTS),
      successes: sum(K.SUCCESSES),
      fallbacks: sum(K.FALLBACKS),
      bypasses: sum(K.BYPASSES),
      newElements: sum(K.NEW),
      fallbacksPoolEmpty: sum(K.FB_POOL),
      fallbacksProbeLimit: sum(K.FB_PROBE),
      fallbacksInFlight: sum(K.FB_INFLIGHT),
      fallbacksGravestone: sum(K.FB_GRAVE),
      lostSameHash: sum(K.LOST_SAME),
      probes: sum(K.PROBES),
      deep: sum(K.DEEP),
      rcuDiscards: sum(K.RCU_DISCARDS),
      nested: sum(K.NESTED),
      nestedSame: sum(K.NESTED_SAME),
      reserveFails: sum(K.RESERVE_FAILS),
      boot: sum(K.BOOT),
    };
  }

  /** stack_map_stat's successes and drops: v4 counts since the last reset, v7/v8 since boot. */
  statCounters(): StatCounters {
    const c = this.counters();
    return {
      successes: c.successes - (Atomics.load(this.i32, C.STAT_BASE_SUCCESSES) >>> 0),
      drops: c.fallbacks - (Atomics.load(this.i32, C.STAT_BASE_DROPS) >>> 0),
    };
  }

  /** options/stackmap is on */
  get optionOn(): boolean {
    return Atomics.load(this.i32, C.OPTION) !== 0;
  }

  /** the map is allocated (v8 releases it on `free`) */
  get allocated(): boolean {
    return Atomics.load(this.i32, C.ALLOCATED) !== 0;
  }

  /** A published slot's element (index), or -1. */
  published(slot: number): number {
    return Atomics.load(this.i32, this.valsAt + slot) - 1;
  }

  key(slot: number): number {
    return Atomics.load(this.u32, this.keysAt + slot);
  }

  /** The element's stack as raw ips, read with Atomics. */
  elementIps(elt: number): BigUint64Array {
    const at = this.eltsAt + elt * ELT_WORDS;
    const nr = Math.min(Atomics.load(this.u32, at), MAX_DEPTH);
    const ips = new BigUint64Array(nr);
    for (let i = 0; i < nr; i++) {
      const lo = Atomics.load(this.u32, at + 2 + 2 * i);
      const hi = Atomics.load(this.u32, at + 3 + 2 * i);
      ips[i] = (BigInt(hi) << 32n) | BigInt(lo);
    }
    return ips;
  }

  /** Two elements hold the same stack. */
  sameElement(a: number, b: number): boolean {
    const pa = this.eltsAt + a * ELT_WORDS;
    const pb = this.eltsAt + b * ELT_WORDS;
    const nr = Atomics.load(this.u32, pa);
    if (Atomics.load(this.u32, pb) !== nr) return false;
    for (let i = 0; i < 2 * nr; i++) if (Atomics.load(this.u32, pa + 2 + i) !== Atomics.load(this.u32, pb + 2 + i)) return false;
    return true;
  }

  elementRef(elt: number): number {
    return Atomics.load(this.u32, this.eltsAt + elt * ELT_WORDS + 1);
  }

  /** Slots with a key and no element: claimed, pool empty (only meaningful with no insert in flight). */
  gravestones(): number {
    let n = 0;
    for (let s = 0; s < this.slots; s++) if (this.key(s) !== 0 && this.published(s) < 0) n++;
    return n;
  }
}
