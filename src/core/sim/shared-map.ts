import { jhash2 } from './jhash.ts';

/**
 * The stack map of DESIGN section 1 on one SharedArrayBuffer, with every shared access through
 * `Atomics`. The same object is built over the same buffer in every thread (a Node worker, a
 * Web Worker or the main thread); nothing here knows which kind of thread it runs in.
 *
 * Layout (32-bit words, in this order):
 *   control   CTL_WORDS words: the element cursor next_elt, the generation, the reset flag, ...
 *   per CPU   CPU_STRIDE words each (one 64-byte line): in-flight count and counters
 *   keys      2^(bits+1) u32 hashes, 0 = free
 *   vals      2^(bits+1) i32: element index + 1, 0 = empty (unpublished or a gravestone)
 *   elements  2^bits x ELT_WORDS: nr, ref_count, then 64 ips as (low u32, high u32) pairs
 */

export type Mode = 'v4' | 'v7' | 'v8';
export const MODES: readonly Mode[] = ['v4', 'v7', 'v8'];

export const MAX_DEPTH = 64;
export const PROBE_LIMIT = 64;
export const ELT_WORDS = 2 + 2 * MAX_DEPTH;

// control words
export const C = {
  NEXT_ELT: 0,
  /** the map's generation; v8 prints it, v4/v7 keep it only as the simulation's truth */
  GENERATION: 1,
  RESET_FLAG: 2,
  /** one reset at a time: 1 while a reset runs */
  RESET_BUSY: 3,
  /** the stack_map mutex: held by a reset for its whole run and by each dump pass */
  MUTEX: 4,
  /** bumped when a reset starts: a binary dump opened before it fails with ESTALE */
  RESET_SEQ: 5,
  /** resets refused with EBUSY (another reset was running) */
  EBUSY: 6,
  /** resets completed */
  RESETS: 7,
  /** v4: resets refused because recording was on */
  REFUSED: 8,
  /** v4: 1 while the CPUs record (the runner clears it only when every CPU is paused) */
  RECORDING: 9,
  /** a cell nobody writes: race windows sleep on it with Atomics.wait */
  DUMMY: 10,
  // the runner's coordination words (not part of the kernel's map)
  START: 11,
  GATE: 12,
  STOP: 13,
  /** live hosts (the browser): a pause between events per CPU, in microseconds (0: none) */
  PACE_US: 14,
  /** live hosts: 1 asks every CPU to park between events (each acknowledges in K.PAUSED) */
  PAUSE: 15,
  /** live hosts: the race window in microseconds, read at every window (MapOptions.liveWindow) */
  WINDOW_US: 16,
} as const;
export const CTL_WORDS = 32;

// per-CPU words
export const K = {
  INFLIGHT: 0,
  ATTEMPTS: 1,
  SUCCESSES: 2,
  FALLBACKS: 3,
  BYPASSES: 4,
  /** successes that filled a new element */
  NEW: 5,
  /** fallbacks because the pool was empty (each leaves a gravestone) */
  FB_POOL: 6,
  /** fallbacks after PROBE_LIMIT probes */
  FB_PROBE: 7,
  /** v8 fallbacks: the same hash was being inserted elsewhere (unpublished or lost cmpxchg) */
  FB_INFLIGHT: 8,
  /** v4/v7: cmpxchg lost to the same hash (the loser advanced) */
  LOST_SAME: 9,
  /** events this CPU recorded (the runner's progress) */
  PROGRESS: 10,
  PROBES: 11,
  /** v8 fallbacks on key == hash with no element while the pool is empty: most likely a gravestone */
  FB_GRAVE: 12,
  /** live hosts: 1 while this CPU is parked by C.PAUSE */
  PAUSED: 13,
} as const;
export const CPU_STRIDE = 16;

export const INSERT_FALLBACK = -1;
export const INSERT_BYPASS = -2;

export interface MapParams {
  mode: Mode;
  bits: number;
  cpus: number;
  /** the per-boot jhash seed */
  hashSeed: number;
}

export interface MapOptions {
  /** hold each insert between claim and publish, and each reset between its steps, this long */
  raceWindowUs?: number;
  /** how a race window waits: 'sleep' (Atomics.wait on a dummy cell; workers) or 'spin' */
  raceWait?: 'sleep' | 'spin';
  /** false where Atomics.wait is not allowed (a browser's main thread): waits spin instead */
  canBlock?: boolean;
  /** read the race window from the map's WINDOW_US word at every window (a live host changes it while running) */
  liveWindow?: boolean;
  /** notable steps of the insert and reset paths, for live views (`slot` -1 where none; `hash` 0 where none) */
  onEvent?: (kind: MapEventKind, slot: number, hash: number) => void;
}

/**
 * What `MapOptions.onEvent` reports. Insert: `hit` (an existing element), `claim` (won the
 * cmpxchg), `publish`, `unpublished` (met the same hash with no element), `gravestone` (the same,
 * with the pool empty), `lost` / `lost-same`
 * (cmpxchg lost to another / the same hash), `duplicate` (v4/v7: published a second copy after
 * meeting the same hash), `fallback-*` (the reason), `bypass`. Reset: `reset-flag`,
 * `reset-drained`, `reset-cleared`, `reset-done`, `ebusy`, `refused`.
 */
export type MapEventKind =
  | 'hit'
  | 'claim'
  | 'publish'
  | 'unpublished'
  | 'gravestone'
  | 'lost'
  | 'lost-same'
  | 'duplicate'
  | 'fallback-pool'
  | 'fallback-probe'
  | 'fallback-inflight'
  | 'fallback-gravestone'
  | 'bypass'
  | 'reset-flag'
  | 'reset-drained'
  | 'reset-cleared'
  | 'reset-done'
  | 'ebusy'
  | 'refused';

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
}

export type ResetOutcome = 'ok' | 'ebusy' | 'refused';

export function mapBytes(bits: number, cpus: number): number {
  const slots = 2 ** (bits + 1);
  return 4 * (CTL_WORDS + cpus * CPU_STRIDE + 2 * slots + 2 ** bits * ELT_WORDS);
}

export function createMapBuffer(p: MapParams): SharedArrayBuffer {
  if (!Number.isInteger(p.bits) || p.bits < 10 || p.bits > 18) throw new RangeError('bits must be in [10, 18]');
  const sab = new SharedArrayBuffer(mapBytes(p.bits, p.cpus));
  const i32 = new Int32Array(sab);
  Atomics.store(i32, C.GENERATION, 1);
  Atomics.store(i32, C.RECORDING, 1);
  return sab;
}

export class SharedStackMap {
  readonly i32: Int32Array;
  readonly u32: Uint32Array;
  readonly slots: number;
  readonly capacity: number;
  readonly keysAt: number;
  readonly valsAt: number;
  readonly eltsAt: number;
  private readonly shift: number;
  private readonly v8: boolean;
  private readonly windowMs: number;
  private readonly sleep: boolean;
  private readonly canBlock: boolean;
  private readonly liveWindow: boolean;
  private readonly onEvent: MapOptions['onEvent'];
  /** the generation the last successful insert on this object saw (the cookie's high half) */
  lastGeneration = 0;

  constructor(
    readonly sab: SharedArrayBuffer,
    readonly params: MapParams,
    opts: MapOptions = {},
  ) {
    this.i32 = new Int32Array(sab);
    this.u32 = new Uint32Array(sab);
    this.slots = 2 ** (params.bits + 1);
    this.capacity = 2 ** params.bits;
    this.keysAt = CTL_WORDS + params.cpus * CPU_STRIDE;
    this.valsAt = this.keysAt + this.slots;
    this.eltsAt = this.valsAt + this.slots;
    this.shift = 32 - (params.bits + 1);
    this.v8 = params.mode === 'v8';
    this.windowMs = (opts.raceWindowUs ?? 0) / 1000;
    this.canBlock = opts.canBlock ?? true;
    this.sleep = (opts.raceWait ?? 'sleep') === 'sleep' && this.canBlock;
    this.liveWindow = opts.liveWindow ?? false;
    this.onEvent = opts.onEvent;
  }

  cpuWord(cpu: number, k: number): number {
    return CTL_WORDS + cpu * CPU_STRIDE + k;
  }

  /** The map's key for a stack given as (low, high) u32 pairs: jhash2 over the words, 0 taken as 1. */
  hash(words: Uint32Array, nr: number): number {
    const h = jhash2(words, nr * 2, this.params.hashSeed);
    return h === 0 ? 1 : h;
  }

  startIndex(hash: number): number {
    return hash >>> this.shift;
  }

  /**
   * The insert path. `words` holds the stack's ips as (low, high) u32 pairs, leaf first.
   * Returns the slot, INSERT_FALLBACK (record the stack in full; counted) or INSERT_BYPASS
   * (a reset is running: record the stack in full; counted as a bypass).
   */
  insert(cpu: number, words: Uint32Array, nr: number): number {
    const i32 = this.i32;
    const u32 = this.u32;
    const base = CTL_WORDS + cpu * CPU_STRIDE;
    Atomics.add(i32, base + K.ATTEMPTS, 1);
    // rcu_read_lock(): announce the insert, then look at the reset flag (both sequentially
    // consistent, so a reset that set the flag either sees us in flight or we see the flag)
    Atomics.add(i32, base + K.INFLIGHT, 1);
    if (Atomics.load(i32, C.RESET_FLAG) !== 0) {
      this.leave(base);
      Atomics.add(i32, base + K.BYPASSES, 1);
      this.onEvent?.('bypass', -1, 0);
      return INSERT_BYPASS;
    }
    const generation = Atomics.load(i32, C.GENERATION);
    const hash = this.hash(words, nr);
    const mask = this.slots - 1;
    let idx = hash >>> this.shift;
    let result = INSERT_FALLBACK;
    let reason: number = K.FB_PROBE;
    let probes = 0;
    let metSame = false; // v4/v7: passed the same hash (unpublished or a lost cmpxchg): a claim now is a second copy
    const ev = this.onEvent;
    for (; probes < PROBE_LIMIT; probes++, idx = (idx + 1) & mask) {
      const key = Atomics.load(u32, this.keysAt + idx);
      if (key === hash) {
        const v = Atomics.load(i32, this.valsAt + idx);
        if (v !== 0 && this.equals(v - 1, words, nr)) {
          this.incRef(v - 1);
          result = idx;
          ev?.('hit', idx, hash);
          break;
        }
        if (v === 0) {
          // with the pool empty no element can come: most likely a gravestone
          if (ev) ev(Atomics.load(i32, C.NEXT_ELT) >= this.capacity ? 'gravestone' : 'unpublished', idx, hash);
          metSame = true;
        }
        if (v === 0 && this.v8) {
          // unpublished, or a gravestone (the kernel cannot tell them apart either): v8 records
          // in full. Counted apart when the pool is empty, where it is most likely a gravestone.
          reason = Atomics.load(i32, C.NEXT_ELT) >= this.capacity ? K.FB_GRAVE : K.FB_INFLIGHT;
          break;
        }
        continue; // unpublished, a gravestone or a hash collision: advance
      }
      if (key !== 0) continue;
      const old = Atomics.compareExchange(u32, this.keysAt + idx, 0, hash);
      if (old === 0) {
        ev?.('claim', idx, hash);
        const elt = this.takeElement();
        if (elt < 0) {
          reason = K.FB_POOL; // the key stays claimed: a gravestone
          break;
        }
        this.fill(elt, words, nr);
        this.window();
        Atomics.store(i32, this.valsAt + idx, elt + 1); // publish
        Atomics.add(i32, base + K.NEW, 1);
        result = idx;
        ev?.('publish', idx, hash);
        if (metSame && ev) ev('duplicate', idx, hash);
        break;
      }
      if (old === hash) {
        ev?.('lost-same', idx, hash);
        metSame = true;
        if (this.v8) {
          reason = K.FB_INFLIGHT;
          break;
        }
        Atomics.add(i32, base + K.LOST_SAME, 1);
      } else ev?.('lost', idx, hash);
      // lost the cmpxchg: advance
    }
    Atomics.add(i32, base + K.PROBES, probes + 1);
    if (result >= 0) {
      Atomics.add(i32, base + K.SUCCESSES, 1);
      this.lastGeneration = generation;
    } else {
      Atomics.add(i32, base + K.FALLBACKS, 1);
      Atomics.add(i32, base + reason, 1);
      if (ev) {
        const kind = reason === K.FB_POOL ? 'fallback-pool' : reason === K.FB_INFLIGHT ? 'fallback-inflight' : reason === K.FB_GRAVE ? 'fallback-gravestone' : 'fallback-probe';
        ev(kind, reason === K.FB_PROBE ? -1 : idx, hash);
      }
    }
    this.leave(base);
    return result;
  }

  private leave(base: number): void {
    Atomics.sub(this.i32, base + K.INFLIGHT, 1);
    if (Atomics.load(this.i32, C.RESET_FLAG) !== 0) Atomics.notify(this.i32, base + K.INFLIGHT);
  }

  /** fetch_add_unless(next_elt, 1, capacity) as a CAS loop; -1 when the pool is empty */
  private takeElement(): number {
    for (;;) {
      const cur = Atomics.load(this.i32, C.NEXT_ELT);
      if (cur >= this.capacity) return -1;
      if (Atomics.compareExchange(this.i32, C.NEXT_ELT, cur, cur + 1) === cur) return cur;
    }
  }

  private fill(elt: number, words: Uint32Array, nr: number): void {
    const at = this.eltsAt + elt * ELT_WORDS;
    const u32 = this.u32;
    Atomics.store(u32, at, nr);
    Atomics.store(u32, at + 1, 1);
    for (let i = 0; i < nr * 2; i++) Atomics.store(u32, at + 2 + i, words[i]);
  }

  private equals(elt: number, words: Uint32Array, nr: number): boolean {
    const at = this.eltsAt + elt * ELT_WORDS;
    const u32 = this.u32;
    if (Atomics.load(u32, at) !== nr) return false;
    for (let i = 0; i < nr * 2; i++) if (Atomics.load(u32, at + 2 + i) !== words[i]) return false;
    return true;
  }

  /** ref_count++, saturating at u32 max */
  private incRef(elt: number): void {
    const at = this.eltsAt + elt * ELT_WORDS + 1;
    for (;;) {
      const cur = Atomics.load(this.u32, at);
      if (cur === 0xffffffff) return;
      if (Atomics.compareExchange(this.u32, at, cur, cur + 1) === cur) return;
    }
  }

  /** Holds the caller for the race window. */
  window(): void {
    const ms = this.liveWindow ? Atomics.load(this.i32, C.WINDOW_US) / 1000 : this.windowMs;
    if (ms <= 0) return;
    if (this.sleep) {
      Atomics.wait(this.i32, C.DUMMY, 0, ms);
      return;
    }
    const end = performance.now() + ms;
    while (performance.now() < end) {
      /* spin */
    }
  }

  lock(): void {
    while (Atomics.compareExchange(this.i32, C.MUTEX, 0, 1) !== 0) {
      if (this.canBlock) Atomics.wait(this.i32, C.MUTEX, 1, 1);
    }
  }

  unlock(): void {
    Atomics.store(this.i32, C.MUTEX, 0);
    Atomics.notify(this.i32, C.MUTEX, 1);
  }

  /**
   * `echo 0 > stack_map`. One at a time (a second gets 'ebusy'); v4 refuses while recording is
   * on ('refused'). Sets the reset flag (inserts bypass the map), waits for in-flight inserts,
   * calls `beforeClear` with the map quiescent (the runner's per-generation snapshot), clears
   * slots and elements, next_elt = 0, generation++.
   * In v4 the caller also clears the ring buffers (the map does not know them).
   */
  reset(beforeClear?: () => void): ResetOutcome {
    const i32 = this.i32;
    const ev = this.onEvent;
    if (Atomics.compareExchange(i32, C.RESET_BUSY, 0, 1) !== 0) {
      Atomics.add(i32, C.EBUSY, 1);
      ev?.('ebusy', -1, 0);
      return 'ebusy';
    }
    if (this.params.mode === 'v4' && Atomics.load(i32, C.RECORDING) !== 0) {
      Atomics.store(i32, C.RESET_BUSY, 0);
      Atomics.add(i32, C.REFUSED, 1);
      ev?.('refused', -1, 0);
      return 'refused';
    }
    this.lock();
    Atomics.add(i32, C.RESET_SEQ, 1);
    Atomics.store(i32, C.RESET_FLAG, 1);
    ev?.('reset-flag', -1, 0);
    this.window();
    for (let cpu = 0; cpu < this.params.cpus; cpu++) {
      const w = this.cpuWord(cpu, K.INFLIGHT);
      for (;;) {
        const n = Atomics.load(i32, w);
        if (n === 0) break;
        if (this.canBlock) Atomics.wait(i32, w, n, 1);
      }
    }
    ev?.('reset-drained', -1, 0);
    beforeClear?.();
    this.window();
    const used = Math.min(Atomics.load(i32, C.NEXT_ELT), this.capacity);
    for (let s = 0; s < this.slots; s++) {
      Atomics.store(this.u32, this.keysAt + s, 0);
      Atomics.store(i32, this.valsAt + s, 0);
    }
    for (let e = 0; e < used; e++) {
      const at = this.eltsAt + e * ELT_WORDS;
      Atomics.store(this.u32, at, 0);
      Atomics.store(this.u32, at + 1, 0);
    }
    Atomics.store(i32, C.NEXT_ELT, 0);
    Atomics.add(i32, C.GENERATION, 1);
    ev?.('reset-cleared', -1, 0);
    this.window();
    Atomics.store(i32, C.RESET_FLAG, 0);
    Atomics.add(i32, C.RESETS, 1);
    this.unlock();
    Atomics.store(i32, C.RESET_BUSY, 0);
    ev?.('reset-done', -1, 0);
    return 'ok';
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
    };
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

/** A stack's ips as (low, high) u32 pairs, the map's and the ring buffer's stack layout. */
export function ipsToWords(ips: BigUint64Array | readonly bigint[]): Uint32Array {
  const w = new Uint32Array(ips.length * 2);
  for (let i = 0; i < ips.length; i++) {
    const ip = BigInt.asUintN(64, ips[i]);
    w[2 * i] = Number(ip & 0xffffffffn);
    w[2 * i + 1] = Number(ip >> 32n);
  }
  return w;
}

export function wordsToIps(w: ArrayLike<number>, off: number, nr: number): BigUint64Array {
  const ips = new BigUint64Array(nr);
  for (let i = 0; i < nr; i++) ips[i] = (BigInt(w[off + 2 * i + 1] >>> 0) << 32n) | BigInt(w[off + 2 * i] >>> 0);
  return ips;
}
