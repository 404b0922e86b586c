import { C, CPU_STRIDE, CTL_WORDS, ELT_WORDS, GATE_COUNT, GATE_OFF, GATE_RESET, INSERT_BYPASS, INSERT_DEEP, INSERT_FALLBACK, INSERT_OFF, K, MAX_DEPTH, PROBE_LIMIT, refLimit, type MapParams } from './map-layout.ts';
import { jhash2i } from './jhash.ts';
import { MapView } from './map-view.ts';

/**
 * The stack map of DESIGN section 1 on one SharedArrayBuffer, with every shared access through
 * `Atomics`. The same object is built over the same buffer in every thread (a Node worker, a
 * Web Worker or the main thread); nothing here knows which kind of thread it runs in.
 * The layout is in map-layout.ts, the read side in map-view.ts; this file holds the insert and
 * reset paths.
 */

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
  | 'deep'
  | 'rcu-discard'
  | 'option-on'
  | 'option-off'
  | 'free'
  | 'free-wait'
  | 'reset-flag'
  | 'reset-drained'
  | 'reset-cleared'
  | 'reset-done'
  | 'ebusy'
  | 'refused';

export type ResetOutcome = 'ok' | 'ebusy' | 'refused';
/** `echo free > stack_map` (v8): 'busy' while the option is on or a reset runs, 'einval' before v8 */
export type FreeOutcome = 'ok' | 'busy' | 'einval' | 'not-allocated';

export class SharedStackMap extends MapView {
  private readonly v8: boolean;
  private readonly windowMs: number;
  private readonly sleep: boolean;
  private readonly canBlock: boolean;
  private readonly liveWindow: boolean;
  private readonly onEvent: MapOptions['onEvent'];
  /** the generation the last successful insert on this object saw (the cookie's high half) */
  lastGeneration = 0;
  private readonly refMax: number;
  /** the hash seed as an int32 (the same bits) */
  private readonly seed: number;

  constructor(sab: SharedArrayBuffer, params: MapParams, opts: MapOptions = {}) {
    super(sab, params);
    this.v8 = params.mode === 'v8';
    this.windowMs = (opts.raceWindowUs ?? 0) / 1000;
    this.canBlock = opts.canBlock ?? true;
    this.sleep = (opts.raceWait ?? 'sleep') === 'sleep' && this.canBlock;
    this.liveWindow = opts.liveWindow ?? false;
    this.onEvent = opts.onEvent;
    this.refMax = refLimit(params.mode);
    this.seed = params.hashSeed | 0;
  }

  /**
   * v8: the stack was taken while RCU was not watching; record_stackmap() discards it, writing
   * nothing. Counted in its own counter (this CPU's own word: one writer, read with Atomics.load).
   */
  discard(cpu: number): void {
    this.i32[this.cpuWord(cpu, K.RCU_DISCARDS)]++;
    this.onEvent?.('rcu-discard', -1, 0);
  }

  /**
   * The insert path. `words` holds the stack's ips as (low, high) u32 pairs, leaf first.
   * Returns the slot, INSERT_FALLBACK (record the stack in full; counted) or INSERT_BYPASS
   * (a reset is running: record the stack in full; counted as a bypass), INSERT_DEEP (deeper than
   * 64 frames: recorded in full, never reaching the map, counted apart) or INSERT_OFF
   * (options/stackmap off or the map freed: recorded in full, not a map operation).
   * The stack is hashed inside the read-side section, as the kernel does.
   */
  insert(cpu: number, words: Uint32Array, nr: number): number {
    return this.insertHashed(cpu, words, nr, 0);
  }

  /**
   * `insert` with the stack's hash (`hash(words, nr)`) computed by the caller, which may cache
   * it for a stack object it records again; the kernel cannot (it hashes every stack it takes).
   * 0 (never a hash) hashes here. Same results and counters as `insert`.
   *
   * Memory model (the kernel's argument, in the JS model's terms; "plain" = a non-atomic,
   * tear-free aligned read of the SharedArrayBuffer):
   * 1. rcu_read_lock() is one Atomics.add on this CPU's gate word, which returns the reset and
   *    option bits with the count. A reset or free sets GATE_RESET on every gate with an RMW
   *    before it waits for the counts to drain, clears, then drops the bit with another RMW.
   *    RMWs on one word are totally ordered, so either our add comes first (the reset waits for
   *    our sub) or we see the bit (bypass): synchronize_rcu() without a separate flag load.
   * 2. Our add reads-from the last RMW on the gate, after every clear (a reset's or a free's,
   *    each followed by such an RMW in the clearing thread): the clear and generation++ happen
   *    before everything below, and no clear can come while we are in flight. So the
   *    generation, a key and ref_count may be read plainly: the generation is exact, a key is
   *    0 or a hash claimed in this generation (a stale 0 only sends us to the cmpxchg, which
   *    returns the real key), ref_count is only the expected value of the cmpxchg.
   * 3. `val` is the one acquire: an Atomics.load that reads-from the publisher's Atomics.store
   *    (release), which comes after its plain writes filling the element; a published element
   *    is immutable until a clear, so the memcmp reads it plainly.
   * 4. Our sub (rcu_read_unlock) comes after every access above, and the reset's drain reads it
   *    with Atomics.load before it clears: none of our reads can see the clear.
   */
  insertHashed(cpu: number, words: Uint32Array, nr: number, cachedHash: number): number {
    const i32 = this.i32;
    const base = CTL_WORDS + cpu * CPU_STRIDE;
    const gate = Atomics.add(i32, base + K.INFLIGHT, 1);
    // the option on implies an allocated map (setOption(true) allocates, free needs it off)
    if ((gate & GATE_OFF) !== 0) {
      this.leave(base);
      return INSERT_OFF;
    }
    if (nr > MAX_DEPTH) {
      this.leave(base);
      i32[base + K.DEEP]++;
      this.onEvent?.('deep', -1, 0);
      return INSERT_DEEP;
    }
    // this CPU's own counters: one writer, plain increments, read elsewhere with Atomics.load
    i32[base + K.ATTEMPTS]++;
    if ((gate & GATE_RESET) !== 0) {
      this.leave(base);
      i32[base + K.BYPASSES]++;
      this.onEvent?.('bypass', -1, 0);
      return INSERT_BYPASS;
    }
    const generation = i32[C.GENERATION]; // exact (2.)
    // the hash as int32 throughout (keys compared and claimed through i32): no double for one >= 2^31
    let h = cachedHash | 0;
    if (h === 0) h = jhash2i(words, nr * 2, this.seed) || 1; // MapView.hash, as int32
    const keysAt = this.keysAt;
    const valsAt = this.valsAt;
    const mask = this.slots - 1;
    let idx = h >>> this.shift;
    let result = INSERT_FALLBACK;
    let reason: number = K.FB_PROBE;
    let probes = 0;
    let metSame = false; // v4/v7: passed the same hash (unpublished or a lost cmpxchg): a claim now is a second copy
    const ev = this.onEvent;
    for (; probes < PROBE_LIMIT; probes++, idx = (idx + 1) & mask) {
      const key = i32[keysAt + idx]; // plain (2.): read once
      if (key === h) {
        const v = Atomics.load(i32, valsAt + idx); // the acquire (3.)
        if (v !== 0 && this.equals(v - 1, words, nr)) {
          this.incRef(v - 1);
          result = idx;
          ev?.('hit', idx, h >>> 0);
          break;
        }
        if (v === 0) {
          // with the pool empty no element can come: most likely a gravestone
          if (ev) ev(Atomics.load(i32, C.NEXT_ELT) >= this.capacity ? 'gravestone' : 'unpublished', idx, h >>> 0);
          metSame = true;
          if (this.v8) {
            // unpublished, or a gravestone (the kernel cannot tell them apart either): v8 records
            // in full. Counted apart when the pool is empty, where it is most likely a gravestone.
            reason = Atomics.load(i32, C.NEXT_ELT) >= this.capacity ? K.FB_GRAVE : K.FB_INFLIGHT;
            break;
          }
        }
        continue; // unpublished, a gravestone or a hash collision: advance
      }
      if (key !== 0) continue;
      const old = Atomics.compareExchange(i32, keysAt + idx, 0, h);
      if (old === 0) {
        ev?.('claim', idx, h >>> 0);
        const elt = this.takeElement();
        if (elt < 0) {
          reason = K.FB_POOL; // the key stays claimed: a gravestone
          break;
        }
        this.fill(elt, words, nr);
        this.window();
        Atomics.store(i32, valsAt + idx, elt + 1); // publish (release)
        i32[base + K.NEW]++;
        result = idx;
        ev?.('publish', idx, h >>> 0);
        if (metSame && ev) ev('duplicate', idx, h >>> 0);
        break;
      }
      if (old === h) {
        ev?.('lost-same', idx, h >>> 0);
        metSame = true;
        if (this.v8) {
          reason = K.FB_INFLIGHT;
          break;
        }
        i32[base + K.LOST_SAME]++;
      } else ev?.('lost', idx, h >>> 0);
      // lost the cmpxchg: advance
    }
    i32[base + K.PROBES] += probes < PROBE_LIMIT ? probes + 1 : PROBE_LIMIT; // slots looked at
    if (result >= 0) {
      i32[base + K.SUCCESSES]++;
      this.lastGeneration = generation;
    } else {
      i32[base + K.FALLBACKS]++;
      i32[base + reason]++;
      if (ev) {
        const kind = reason === K.FB_POOL ? 'fallback-pool' : reason === K.FB_INFLIGHT ? 'fallback-inflight' : reason === K.FB_GRAVE ? 'fallback-gravestone' : 'fallback-probe';
        ev(kind, reason === K.FB_PROBE ? -1 : idx, h >>> 0);
      }
    }
    this.leave(base);
    return result;
  }

  /** rcu_read_unlock(): a reset waiting for this CPU (GATE_RESET in what the sub returns) is woken */
  private leave(base: number): void {
    if ((Atomics.sub(this.i32, base + K.INFLIGHT, 1) & GATE_RESET) !== 0) Atomics.notify(this.i32, base + K.INFLIGHT);
  }

  /** fetch_add_unless(next_elt, 1, capacity) as a CAS loop; -1 when the pool is empty */
  private takeElement(): number {
    for (;;) {
      const cur = Atomics.load(this.i32, C.NEXT_ELT);
      if (cur >= this.capacity) return -1;
      if (Atomics.compareExchange(this.i32, C.NEXT_ELT, cur, cur + 1) === cur) return cur;
    }
  }

  /**
   * Plain writes: nobody reads the element before it is published, and the publishing
   * `Atomics.store` of `val` orders them before any reader's `Atomics.load` of `val`.
   */
  private fill(elt: number, words: Uint32Array, nr: number): void {
    const at = this.eltsAt + elt * ELT_WORDS;
    const u32 = this.u32;
    u32[at] = nr;
    u32[at + 1] = 1; // ref_count, changed only with Atomics from now on
    u32.set(words.subarray(0, nr * 2), at + 2);
  }

  /**
   * memcmp, after the hash (the key) and the length: plain reads, as a published element is
   * immutable (until a reset, which waits for this insert) and the `Atomics.load` of `val` that
   * found it orders them after its filling. Four words a step, XORs OR'ed into one test (a
   * stack is an even number of words: the tail is one pair).
   */
  private equals(elt: number, words: Uint32Array, nr: number): boolean {
    const i32 = this.i32;
    const at = this.eltsAt + elt * ELT_WORDS;
    if (i32[at] !== nr) return false;
    const n = nr * 2;
    let f = at + 2;
    let i = 0;
    for (; i + 4 <= n; i += 4, f += 4) {
      if (((i32[f] ^ words[i]) | (i32[f + 1] ^ words[i + 1]) | (i32[f + 2] ^ words[i + 2]) | (i32[f + 3] ^ words[i + 3])) !== 0) return false;
    }
    return i === n || ((i32[f] ^ words[i]) | (i32[f + 1] ^ words[i + 1])) === 0;
  }

  /**
   * ref_count++, saturating (INT_MAX in v4, U32_MAX later): a cmpxchg loop whose first expected
   * value is a plain read (2.), so a hit nobody races costs one atomic; a stale guess only fails
   * the cmpxchg, which returns the value to try next. Saturation is judged on the value the
   * cmpxchg compares, so the count never passes the limit.
   */
  private incRef(elt: number): void {
    const at = this.eltsAt + elt * ELT_WORDS + 1;
    const u32 = this.u32;
    const max = this.refMax;
    let cur = u32[at];
    for (;;) {
      if (cur >= max) return;
      const old = Atomics.compareExchange(u32, at, cur, cur + 1);
      if (old === cur) return;
      cur = old;
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
    Atomics.store(i32, C.RESET_FLAG, 1); // what readers of the map show; inserts read their gate
    this.closeGates();
    ev?.('reset-flag', -1, 0);
    this.window();
    this.drain();
    ev?.('reset-drained', -1, 0);
    beforeClear?.();
    Atomics.store(i32, C.RESETTING, 1);
    this.window();
    this.clear();
    if (this.params.mode === 'v4') {
      // v4 zeroes successes and drops with the map (v7/v8 keep counting since boot)
      const c = this.counters();
      Atomics.store(i32, C.STAT_BASE_SUCCESSES, c.successes | 0);
      Atomics.store(i32, C.STAT_BASE_DROPS, c.fallbacks | 0);
    }
    Atomics.store(i32, C.RESETTING, 0);
    ev?.('reset-cleared', -1, 0);
    this.window();
    this.openGates();
    Atomics.store(i32, C.RESET_FLAG, 0);
    Atomics.add(i32, C.RESETS, 1);
    this.unlock();
    Atomics.store(i32, C.RESET_BUSY, 0);
    ev?.('reset-done', -1, 0);
    return 'ok';
  }

  /** Sets GATE_RESET on every CPU's gate (an RMW each): inserts from now on bypass the map. */
  private closeGates(): void {
    for (let cpu = 0; cpu < this.params.cpus; cpu++) Atomics.or(this.i32, this.cpuWord(cpu, K.INFLIGHT), GATE_RESET);
  }

  /**
   * Drops GATE_RESET with an RMW on every gate, after the clear: each later insert's announcing
   * add reads-from it (or from a later RMW), so the clear happens before that insert's plain reads.
   */
  private openGates(): void {
    for (let cpu = 0; cpu < this.params.cpus; cpu++) Atomics.and(this.i32, this.cpuWord(cpu, K.INFLIGHT), ~GATE_RESET);
  }

  /** synchronize_rcu(): waits until no insert that came before the gates closed is in flight. */
  private drain(): void {
    const i32 = this.i32;
    for (let cpu = 0; cpu < this.params.cpus; cpu++) {
      const w = this.cpuWord(cpu, K.INFLIGHT);
      for (;;) {
        const n = Atomics.load(i32, w);
        if ((n & GATE_COUNT) === 0) break;
        if (this.canBlock) Atomics.wait(i32, w, n, 1);
      }
    }
  }

  private lockOption(): void {
    while (Atomics.compareExchange(this.i32, C.OPTION_LOCK, 0, 1) !== 0) {
      if (this.canBlock) Atomics.wait(this.i32, C.OPTION_LOCK, 1, 1);
    }
  }

  private unlockOption(): void {
    Atomics.store(this.i32, C.OPTION_LOCK, 0);
    Atomics.notify(this.i32, C.OPTION_LOCK, 1);
  }

  /** Empties slots and elements, next_elt = 0, generation++ (with no insert in flight). */
  private clear(): void {
    const i32 = this.i32;
    const used = Math.min(Atomics.load(i32, C.NEXT_ELT), this.capacity);
    // memset, as the kernel clears: no insert is in flight and none starts before the flag drops
    // (an Atomics store the inserts read with Atomics loads), so plain writes are ordered before them
    this.u32.fill(0, this.keysAt, this.valsAt + this.slots);
    this.u32.fill(0, this.eltsAt, this.eltsAt + used * ELT_WORDS);
    Atomics.store(i32, C.NEXT_ELT, 0);
    Atomics.add(i32, C.GENERATION, 1);
  }

  /** `echo 1 > options/stackmap` / `echo 0`: v8 allocates the map when the option is enabled and keeps it when disabled. */
  setOption(on: boolean): void {
    const i32 = this.i32;
    this.lockOption(); // C.OPTION and the gates' GATE_OFF change together (and not during a free)
    if (on) Atomics.store(i32, C.ALLOCATED, 1);
    Atomics.store(i32, C.OPTION, on ? 1 : 0);
    for (let cpu = 0; cpu < this.params.cpus; cpu++) {
      const w = this.cpuWord(cpu, K.INFLIGHT);
      if (on) Atomics.and(i32, w, ~GATE_OFF);
      else Atomics.or(i32, w, GATE_OFF);
    }
    this.unlockOption();
    this.onEvent?.(on ? 'option-on' : 'option-off', -1, 0);
  }

  /** A stack_map or stack_map_bin file opened on the map (free waits for it to close). */
  openReader(): void {
    Atomics.add(this.i32, C.READERS, 1);
  }

  closeReader(): void {
    Atomics.sub(this.i32, C.READERS, 1);
    Atomics.notify(this.i32, C.READERS);
  }

  /**
   * `echo free > stack_map` (v8): releases a map whose option is off. Waits until the files opened
   * on it are closed, so a reader that started before reads a complete map; with `wait` false it
   * returns 'busy' instead of waiting while readers are open. The released map is empty; a
   * later enable allocates a new one, whose generation continues from the freed one's (the
   * cover letter does not say; continuing keeps old cookies from matching new dumps).
   */
  free(wait = true): FreeOutcome {
    const i32 = this.i32;
    if (this.params.mode !== 'v8') return 'einval';
    if (Atomics.load(i32, C.ALLOCATED) === 0) return 'not-allocated';
    if (Atomics.load(i32, C.OPTION) !== 0) return 'busy';
    if (Atomics.compareExchange(i32, C.RESET_BUSY, 0, 1) !== 0) return 'busy';
    try {
      this.onEvent?.('free-wait', -1, 0);
      for (;;) {
        const n = Atomics.load(i32, C.READERS);
        if (n <= 0) break;
        if (!wait) return 'busy';
        if (this.canBlock) Atomics.wait(i32, C.READERS, n, 5);
      }
      this.lockOption();
      try {
        // the option may have been turned back on while free waited (and cannot be now)
        if (Atomics.load(i32, C.OPTION) !== 0) return 'busy';
        this.lock();
        try {
          Atomics.store(i32, C.ALLOCATED, 0);
          // synchronize_rcu(): an insert that saw the option on before it went off may still be
          // in flight; the gates are closed and drained, then reopened after the clear
          this.closeGates();
          this.drain();
          this.clear();
          this.openGates();
          Atomics.add(i32, C.FREES, 1);
        } finally {
          this.unlock();
        }
      } finally {
        this.unlockOption();
      }
      this.onEvent?.('free', -1, 0);
      return 'ok';
    } finally {
      Atomics.store(i32, C.RESET_BUSY, 0);
    }
  }
}
