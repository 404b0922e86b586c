import {
  C,
  CPU_STRIDE,
  CTL_WORDS,
  ELT_WORDS,
  GATE_OFF,
  GATE_RESET,
  INSERT_BYPASS,
  INSERT_DEEP,
  INSERT_FALLBACK,
  INSERT_OFF,
  K,
  mapBytes,
  mapMemoryOf,
  MAX_DEPTH,
  PROBE_LIMIT,
  refLimit,
  SCRATCH_WORDS,
  type MapParams,
} from './map-layout.ts';
import { jhash2i } from './jhash.ts';
import { hitOver, type HitFn } from './insert-wasm.ts';
import { MapView } from './map-view.ts';

/**
 * The stack map's insert path (DESIGN section 1) on one SharedArrayBuffer: what a CPU runs for
 * each stack. The same object is built over the same buffer in every thread (a Node worker, a
 * Web Worker or the main thread); nothing here knows which kind of thread it runs in.
 * `SharedStackMap` (shared-map.ts) adds the reset, free and option paths; the layout is in
 * map-layout.ts, the read side in map-view.ts.
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
  /**
   * Microseconds held between reading a slot's key as empty and the cmpxchg that claims it: two
   * CPUs inserting the same new stack both see the slot free, one wins the cmpxchg and the other
   * loses it to the same hash (the v7 document's "the cmpxchg loser advances by one slot").
   */
  claimRaceUs?: number;
  /** notable steps of the insert and reset paths, for live views (`slot` -1 where none; `hash` 0 where none) */
  onEvent?: (kind: MapEventKind, slot: number, hash: number) => void;
  /**
   * Where an interrupt may come in: called between an insert's claim and its publish (right
   * after the cmpxchg won, and again with the element filled), with how many inserts this CPU
   * has open (1: its own). A handler may run `insert` again on the same CPU, as an IRQ or NMI
   * does in the kernel (cpu-loop.ts).
   */
  interrupt?: (depth: number) => void;
  /**
   * The shared WebAssembly.Memory whose buffer the map is (createMapBuffer makes one where it
   * can; `mapMemoryOf` finds it in the thread that made it, a thread it is posted to is handed it
   * here). With it, `insertAt`'s hit at the stack's first slot runs in WebAssembly
   * (insert-wasm.ts); anything else, and every insert without it, runs the JS path. Same results,
   * buffer and counters.
   */
  memory?: WebAssembly.Memory;
  /** false: the JS path only, even where the map's Memory is known */
  wasm?: boolean;
  /**
   * Wraps the WebAssembly hit (where it runs), so a test can count the hits it takes itself: the
   * JS path given up to makes the same map, so a map's words alone cannot tell that the hit works
   * (insert-fast.test.ts). Applied once here, never in the product (no cost per insert).
   */
  hitForTests?: (hit: HitFn) => HitFn;
}

/**
 * What `MapOptions.onEvent` reports. Insert: `hit` (an existing element), `claim` (won the
 * cmpxchg), `publish`, `unpublished` (met the same hash with no element: v7 then waits, v8 records in full, v4 advances), `gravestone` (the same,
 * with the pool empty), `lost` / `lost-same`
 * (cmpxchg lost to another / the same hash), `duplicate` (v4/v7: published a second copy after
 * meeting the same hash: v7 only after a lost cmpxchg, v4 also past an unpublished slot), `fallback-*` (the reason), `bypass`. Reset: `reset-flag`,
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
  | 'nested'
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
export class MapInsert extends MapView {
  protected readonly v8: boolean;
  private readonly v4: boolean;
  private readonly windowMs: number;
  private readonly claimRaceMs: number;
  private readonly sleep: boolean;
  protected readonly canBlock: boolean;
  private readonly liveWindow: boolean;
  protected onEvent: MapOptions['onEvent'];
  private interrupt: MapOptions['interrupt'];
  /** inserts open on this CPU (this object is one CPU's): 1 for its own, more while an interrupt's insert runs inside it */
  private depth = 0;
  /** the generation the last successful insert on this object saw (the cookie's high half) */
  lastGeneration = 0;
  private readonly refMax: number;
  /** the hash seed as an int32 (the same bits) */
  private readonly seed: number;
  /** the WebAssembly first-slot hit over the map's memory, or null (the JS path only) */
  private readonly hit: HitFn | null;

  constructor(sab: SharedArrayBuffer, params: MapParams, opts: MapOptions = {}) {
    super(sab, params);
    this.v8 = params.mode === 'v8';
    this.v4 = params.mode === 'v4';
    this.windowMs = (opts.raceWindowUs ?? 0) / 1000;
    this.claimRaceMs = (opts.claimRaceUs ?? 0) / 1000;
    this.canBlock = opts.canBlock ?? true;
    this.sleep = (opts.raceWait ?? 'sleep') === 'sleep' && this.canBlock;
    this.liveWindow = opts.liveWindow ?? false;
    this.onEvent = opts.onEvent;
    this.interrupt = opts.interrupt;
    this.refMax = refLimit(params.mode);
    this.seed = params.hashSeed | 0;
    const memory = opts.wasm === false ? undefined : (opts.memory ?? mapMemoryOf(sab));
    const hit =
      memory !== undefined && memory.buffer.byteLength >= mapBytes(params.bits, params.cpus) && memory.buffer.byteLength === sab.byteLength
        ? hitOver(memory)
        : null;
    this.hit = hit !== null && opts.hitForTests !== undefined ? opts.hitForTests(hit) : hit;
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
    return this.insertJs(cpu, words, nr, cachedHash);
  }

  /**
   * `insertHashed` for a stack that lies in the map's own buffer (the host put its stacks there:
   * workload.ts, `populationInto`; every Simulation does): `words` a view of this map's buffer and
   * `wordsAt` its byteOffset, which the caller keeps per stack (reading a view's buffer and
   * byteOffset per insert cost ~35 ns). Where the map's memory is a WebAssembly.Memory, the
   * WebAssembly hit hashes (unless given `cachedHash`) and compares the stack where it lies, with
   * no copy; the one entry that takes it. Same results and counters as `insertHashed`.
   */
  insertAt(cpu: number, words: Uint32Array, nr: number, wordsAt: number, cachedHash = 0): number {
    const hit = this.hit;
    // not for an insert nested in this CPU's own (the JS path counts it) nor where the steps are
    // watched (the WebAssembly reports none)
    if (hit === null || nr > MAX_DEPTH || this.depth !== 0 || this.onEvent !== undefined) return this.insertJs(cpu, words, nr, cachedHash);
    const s = this.scratchAt + cpu * SCRATCH_WORDS;
    this.i32[s + 1] = cachedHash; // the hash the JS path gets if it gives up before hashing (0: it hashes)
    const slot = hit(
      4 * (CTL_WORDS + cpu * CPU_STRIDE),
      wordsAt,
      nr,
      this.seed,
      this.shift,
      4 * this.keysAt,
      4 * this.valsAt,
      4 * this.eltsAt,
      this.refMax,
      cachedHash,
      4 * s,
    );
    if (slot >= 0) {
      this.lastGeneration = this.i32[s]; // read inside the read side, written by this thread
      return slot;
    }
    // gave up before any counter: the JS path from the start, with the hash if it made one
    return this.insertJs(cpu, words, nr, this.i32[s + 1]);
  }

  /** The JS path: every case (`insertAt`'s WebAssembly hit gives every case but its first-slot hit here). */
  private insertJs(cpu: number, words: Uint32Array, nr: number, cachedHash: number): number {
    const i32 = this.i32;
    const base = CTL_WORDS + cpu * CPU_STRIDE;
    if (nr > MAX_DEPTH) {
      // never reaches the map, so never enters the read side; with the option off it is not
      // counted either (the rare path reads C.OPTION itself)
      if (Atomics.load(i32, C.OPTION) === 0) return INSERT_OFF;
      i32[base + K.DEEP]++;
      this.onEvent?.('deep', -1, 0);
      return INSERT_DEEP;
    }
    const gate = Atomics.add(i32, base + K.INFLIGHT, 1);
    const nested = ++this.depth > 1;
    // the option on implies an allocated map (setOption(true) allocates, free needs it off)
    if ((gate & GATE_OFF) !== 0) {
      this.leave(base);
      return INSERT_OFF;
    }
    // this CPU's own counters: one writer, plain increments, read elsewhere with Atomics.load (an
    // interrupt's insert on this CPU runs whole between two of the CPU's own steps: still one writer)
    i32[base + K.ATTEMPTS]++;
    if (nested) {
      i32[base + K.NESTED]++;
      this.onEvent?.('nested', -1, 0);
    }
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
    const idx = (h >>> this.shift) | 0; // < slots; `| 0` keeps the probe index an int32 (a bare >>> result made it a double)
    // The warm map's common case, the stack published at its first slot, apart from the probe
    // loop so that it compiles small (jhash2i's caller, the memcmp and ref_count inlined): the same
    // reads, atomics and counters as the loop's first step, which runs from this slot otherwise
    // (reading its key and val again: a later read of the same slot, as if this one had not been).
    if (i32[this.keysAt + idx] === h) {
      const v = Atomics.load(i32, this.valsAt + idx); // the acquire (3.)
      if (v !== 0 && this.equals(v - 1, words, nr)) {
        this.incRef(v - 1);
        this.onEvent?.('hit', idx, h >>> 0);
        i32[base + K.PROBES]++; // one slot looked at
        i32[base + K.SUCCESSES]++;
        this.lastGeneration = generation;
        this.leave(base);
        return idx;
      }
    }
    return this.probe(base, words, nr, h, idx, generation, nested);
  }

  /** The probe loop of `insertHashed` from slot `idx` (hashed, inside the read side), and the insert's end. */
  private probe(base: number, words: Uint32Array, nr: number, h: number, idx: number, generation: number, nested: boolean): number {
    const i32 = this.i32;
    const keysAt = this.keysAt;
    const valsAt = this.valsAt;
    const mask = this.slots - 1;
    let result = INSERT_FALLBACK;
    let reason: number = K.FB_PROBE;
    let probes = 0;
    let metSame = false; // passed the same hash (v4: unpublished or a lost cmpxchg; v7: a lost cmpxchg only): a claim now is a second copy
    let metUnpublished = false; // met the same hash with no element (counted once for a nested insert)
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
          if (nested && !metSame && !metUnpublished) i32[base + K.NESTED_SAME]++;
          metUnpublished = true;
          if (this.v4) {
            metSame = true; // v4 advances past it: a claim further on is a second copy
            continue;
          }
          // v7 waits for the element (bounded); v8 does not wait (the v8 letter: "If another
          // context is inserting the same stack, that stack is recorded in full instead of waiting")
          const w = this.v8 ? 0 : this.awaitPublish(valsAt + idx);
          if (w === 0) {
            // unpublished, or a gravestone (the kernel cannot tell them apart either): recorded in
            // full. Counted apart when the pool is empty, where it is most likely a gravestone.
            reason = Atomics.load(i32, C.NEXT_ELT) >= this.capacity ? K.FB_GRAVE : K.FB_INFLIGHT;
            break;
          }
          // v7: published while we waited; the same stack or a hash collision
          if (this.equals(w - 1, words, nr)) {
            this.incRef(w - 1);
            result = idx;
            ev?.('hit', idx, h >>> 0);
            break;
          }
        }
        continue; // a hash collision (or v4's unpublished slot): advance
      }
      if (key !== 0) continue;
      if (this.claimRaceMs > 0) this.hold(this.claimRaceMs);
      const old = Atomics.compareExchange(i32, keysAt + idx, 0, h);
      if (old === 0) {
        ev?.('claim', idx, h >>> 0);
        // claimed, not published: an interrupt here finds this slot's key with no element
        this.interrupt?.(this.depth);
        const elt = this.takeElement();
        if (elt < 0) {
          reason = K.FB_POOL; // the key stays claimed: a gravestone
          break;
        }
        this.fill(elt, words, nr);
        this.window();
        this.interrupt?.(this.depth);
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
        const kind =
          reason === K.FB_POOL
            ? 'fallback-pool'
            : reason === K.FB_INFLIGHT
              ? 'fallback-inflight'
              : reason === K.FB_GRAVE
                ? 'fallback-gravestone'
                : 'fallback-probe';
        ev(kind, reason === K.FB_PROBE ? -1 : idx, h >>> 0);
      }
    }
    this.leave(base);
    return result;
  }

  /**
   * v7: an insert that meets its own hash with no element waits for the element, re-reading
   * `val` (an Atomics.load: the acquire of 3., each time) until it is published. The seeds give
   * v7's wait, not its bound: the v8 letter says v8 records such a stack "in full instead of
   * waiting" and, of the map it is modeled on (tracing_map), "instead of spinning". The bound is
   * tracing_map's (kernel/trace/tracing_map.c, not a seed): it gives up, counting a drop, once
   * `dup_try > map_size`, map_size being the slot count.
   * It must be bounded: an IRQ or NMI inserting the stack its own CPU has claimed and not yet
   * published would otherwise spin forever; bounded, it gives up and the stack is recorded in full.
   * The insert stays in flight while it waits (a reset's drain waits for it, as synchronize_rcu
   * waits for a spinning reader); the key cannot change meanwhile (2.). Returns `val`, or 0 when
   * it gives up.
   *
   * The simulator stretches an insert's claim-to-publish by the race window (`window()`), which
   * the kernel's bound was never sized for (its claim-to-publish is an element index and a
   * memcpy). So where a window is set, the wait also lasts out twice the window plus 1 ms, asleep
   * between re-reads where it may, so that a wait across CPUs ends as in the kernel (the element
   * published), not by the stretch. Not with the pool empty: the slot is then most likely a
   * gravestone, which nothing will publish.
   */
  private awaitPublish(at: number): number {
    const i32 = this.i32;
    for (let n = 0; n <= this.slots; n++) {
      const v = Atomics.load(i32, at);
      if (v !== 0) return v;
    }
    const stretch = this.liveWindow ? Atomics.load(i32, C.WINDOW_US) / 1000 : this.windowMs;
    if (stretch <= 0 || Atomics.load(i32, C.NEXT_ELT) >= this.capacity) return 0;
    const end = performance.now() + 2 * stretch + 1;
    const step = Math.max(0.05, stretch / 20);
    for (;;) {
      const v = Atomics.load(i32, at);
      if (v !== 0) return v;
      const left = end - performance.now();
      if (left <= 0) return 0;
      // no publisher notifies: a timed sleep (it returns at once if val is no longer 0)
      if (this.sleep) Atomics.wait(i32, at, 0, Math.min(left, step));
    }
  }

  /** Sets where the notable steps go (MapOptions.onEvent), e.g. the host's own map once a live view exists. */
  setEventSink(f: MapOptions['onEvent']): void {
    this.onEvent = f;
  }

  /** Sets where interrupts come in (MapOptions.interrupt), for a handler that needs the map made first. */
  setInterrupt(f: MapOptions['interrupt']): void {
    this.interrupt = f;
  }

  /** rcu_read_unlock(): a reset waiting for this CPU (GATE_RESET in what the sub returns) is woken */
  private leave(base: number): void {
    this.depth--;
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
   * This is a hit's one write to a line other CPUs read, as the kernel's atomic on the element's
   * ref_count is: CPUs on two cores pass the element's first line (nr, ref_count, the first ips)
   * between them whenever another CPU counted the stack last. That transfer is all the difference
   * between 1 and 2 workers in bench/sim-insert.ts (bench/RESULTS.md's notes); the gate and counter
   * words are per CPU, 128 bytes apart.
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
    this.hold(this.liveWindow ? Atomics.load(this.i32, C.WINDOW_US) / 1000 : this.windowMs);
  }

  /** Holds the caller `ms` milliseconds: asleep, or spinning where it must not block. */
  private hold(ms: number): void {
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
}
