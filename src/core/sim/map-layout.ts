/**
 * The stack map's layout on one SharedArrayBuffer (DESIGN section 1) and the buffer's creation.
 * `SharedStackMap` (shared-map.ts) runs the insert and reset paths over it; `MapView`
 * (map-view.ts) reads it.
 *
 * Layout (32-bit words, in this order):
 *   control   CTL_WORDS words: the element cursor next_elt, the generation, the reset flag, ...
 *   per CPU   CPU_STRIDE words each (two 64-byte lines, the hot counters in the first): in-flight count and counters
 *   keys      2^(bits+1) u32 hashes, 0 = free
 *   vals      2^(bits+1) i32: element index + 1, 0 = empty (unpublished or a gravestone)
 *   elements  2^bits x ELT_WORDS: nr, ref_count, then 64 ips as (low u32, high u32) pairs
 *   scratch   per CPU SCRATCH_WORDS: where the WebAssembly hit (insert-wasm.ts) hands back the
 *             generation and the hash; not part of the kernel's map
 *
 * The buffer is a shared WebAssembly.Memory's where one can be made (`mapMemoryOf`), so the hit
 * path can run in WebAssembly over the same words; any SharedArrayBuffer of the size works for
 * every other path.
 */

export type Mode = 'v4' | 'v7' | 'v8';
export const MODES: readonly Mode[] = ['v4', 'v7', 'v8'];

export const MAX_DEPTH = 64;
export const PROBE_LIMIT = 64;
export const ELT_WORDS = 2 + 2 * MAX_DEPTH;
/** per CPU: the generation and the hash, in 128 bytes of the CPU's own (no line shared with another CPU's) */
export const SCRATCH_WORDS = 32;

// control words
export const C = {
  NEXT_ELT: 0,
  /** the map's generation; v8 prints it, v4/v7 keep it only as the simulation's truth */
  GENERATION: 1,
  RESET_FLAG: 2,
  /** one reset at a time: 1 while a reset runs */
  RESET_BUSY: 3,
  /** the stack_map lock: -1 while a reset (or free) holds it for its whole run, else the dump passes holding its read side (v7's an rwsem; v4's and v8's a mutex: at most 1) */
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
  /** options/stackmap: 1 on, 0 off (the record path then writes every stack in full, uncounted) */
  OPTION: 17,
  /** 1 while the map is allocated (v8: at tracefs initialization with trace_options=stackmap, else when the option is enabled; released by `free`) */
  ALLOCATED: 18,
  /** stack_map / stack_map_bin files open on the map (v8's free waits for them) */
  READERS: 19,
  /** v8: completed `free`s */
  FREES: 20,
  /** v4 zeroes successes and drops on reset: the sums at the last reset, subtracted for stack_map_stat */
  STAT_BASE_SUCCESSES: 21,
  STAT_BASE_DROPS: 22,
  /** a reset is between setting its flag and clearing it (a dump read now sees a map being cleared) */
  RESETTING: 23,
  /** held (CAS 0 -> 1) while options/stackmap changes or a free runs, so the per-CPU GATE_OFF bits follow C.OPTION */
  OPTION_LOCK: 24,
  /** the runner's: 1 while a host's script (a scenario's reader) runs; a CPU past its events keeps recording until it is 0 */
  HOLD: 25,
} as const;
export const CTL_WORDS = 32;

// per-CPU words
export const K = {
  /**
   * The insert path's RCU read side, one word per CPU: the in-flight count in the low bits
   * (GATE_COUNT), GATE_RESET while a reset or free waits for in-flight inserts and clears,
   * GATE_OFF while options/stackmap is off (or the map freed). An insert announces itself with
   * one Atomics.add and reads both bits in what it returns (shared-map.ts).
   */
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
  /** fallbacks because the same hash was being inserted elsewhere: v8 (unpublished or lost cmpxchg, at once), v7 (unpublished, after its bounded wait) */
  FB_INFLIGHT: 8,
  /** v4/v7: cmpxchg lost to the same hash (the loser advanced) */
  LOST_SAME: 9,
  /** events this CPU recorded (the runner's progress) */
  PROGRESS: 10,
  PROBES: 11,
  /** v7/v8 fallbacks on key == hash with no element while the pool is empty: most likely a gravestone */
  FB_GRAVE: 12,
  /** live hosts: 1 while this CPU is parked by C.PAUSE */
  PAUSED: 13,
  /** stacks deeper than MAX_DEPTH: recorded in full without reaching the map, not counted (a bypass) */
  DEEP: 14,
  /** v8: stacks taken while RCU is not watching, discarded without a record */
  RCU_DISCARDS: 15,
  /** inserts run by an IRQ or NMI nested inside this CPU's own insert (between its claim and publish) */
  NESTED: 16,
  /** of those, the ones that met an unpublished slot of the same stack (their own CPU's insert): v8 in full, v7 in full after its bounded wait, v4 advances */
  NESTED_SAME: 17,
  /** stack records whose ring-buffer reservation failed: the stack is lost, the map never asked (a bypass, counted) */
  RESERVE_FAILS: 18,
  /** stacks recorded before the map was published (the boot window): in full, never reaching the map */
  BOOT: 19,
} as const;
export const CPU_STRIDE = 32;

/** K.INFLIGHT: the in-flight count (the CPU's own insert, and an IRQ's and an NMI's nested inside it: at most 3) */
export const GATE_COUNT = 0xffff;
/** K.INFLIGHT: set by a reset (and a free) on every CPU's word from before it drains until after it clears */
export const GATE_RESET = 1 << 16;
/** K.INFLIGHT: set on every CPU's word while options/stackmap is off */
export const GATE_OFF = 1 << 17;

/** insert results below 0: the stack is recorded in full */
export const INSERT_FALLBACK = -1;
/** a reset is running */
export const INSERT_BYPASS = -2;
/** deeper than MAX_DEPTH: never reaches the map */
export const INSERT_DEEP = -3;
/** options/stackmap is off, or the map is not allocated */
export const INSERT_OFF = -4;
/** before the map is published (the boot window): the regular full-stack path, the map never asked */
export const INSERT_BOOT = -5;

/** The deepest stack a workload may hold (the map keeps MAX_DEPTH; deeper ones bypass it). */
export const MAX_WORKLOAD_DEPTH = 80;

/** ref_count saturates here: INT_MAX in v4, U32_MAX from v7 on. */
export const refLimit = (mode: Mode): number => (mode === 'v4' ? 0x7fffffff : 0xffffffff);

export interface MapParams {
  mode: Mode;
  bits: number;
  cpus: number;
  /** the per-boot jhash seed */
  hashSeed: number;
}

export function mapBytes(bits: number, cpus: number): number {
  const slots = 2 ** (bits + 1);
  return 4 * (CTL_WORDS + cpus * CPU_STRIDE + 2 * slots + 2 ** bits * ELT_WORDS + cpus * SCRATCH_WORDS);
}

/** the Memory each buffer made here in this thread belongs to (a thread it is posted to is handed the Memory apart) */
const memories = new WeakMap<SharedArrayBuffer, WebAssembly.Memory>();

/** The shared WebAssembly.Memory whose buffer `sab` is, where createMapBuffer made it in this thread. */
export function mapMemoryOf(sab: SharedArrayBuffer): WebAssembly.Memory | undefined {
  return memories.get(sab);
}

/** A zeroed shared buffer of `bytes`: a shared WebAssembly.Memory's where one can be made, else a plain one. */
function sharedBuffer(bytes: number): SharedArrayBuffer {
  const pages = Math.ceil(bytes / 65536);
  try {
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    const sab = memory.buffer as unknown as SharedArrayBuffer;
    memories.set(sab, memory);
    return sab;
  } catch {
    return new SharedArrayBuffer(bytes);
  }
}

/**
 * The map's buffer, zeroed but for the words below; `extraBytes` more after the map (from byte
 * mapBytes(bits, cpus) on), where a host may put the stacks its CPUs record (workload.ts,
 * `populationInto`): stacks in the map's memory are hashed and compared by the WebAssembly hit
 * path where they lie, with no copy.
 */
export function createMapBuffer(p: MapParams, extraBytes = 0): SharedArrayBuffer {
  if (!Number.isInteger(p.bits) || p.bits < 10 || p.bits > 18) throw new RangeError('bits must be in [10, 18]');
  const sab = sharedBuffer(mapBytes(p.bits, p.cpus) + extraBytes);
  const i32 = new Int32Array(sab);
  Atomics.store(i32, C.GENERATION, 1);
  Atomics.store(i32, C.RECORDING, 1);
  // options/stackmap on from the start, as booted with trace_options=stackmap: the map allocated
  // during tracefs initialization, in every mode (the v8 letter says so of that boot; the v7
  // document of every boot). SharedStackMap.bootOptionOff starts it off instead.
  Atomics.store(i32, C.OPTION, 1);
  Atomics.store(i32, C.ALLOCATED, 1);
  return sab;
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
