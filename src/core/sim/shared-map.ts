import { C, ELT_WORDS, GATE_COUNT, GATE_OFF, GATE_RESET, K, type Mode } from './map-layout.ts';
import { MapInsert } from './map-insert.ts';

export type { MapEventKind, MapOptions } from './map-insert.ts';

/**
 * The stack map of DESIGN section 1 on one SharedArrayBuffer: the insert path (map-insert.ts)
 * and, here, what tracefs writes do to the map: stack_map's writes as each version parses them
 * (`write`: reset, v8's free), options/stackmap, and the stack_map lock (v7's rwsem, v4's and
 * v8's mutex) and open-file count the dumps take.
 */

export type ResetOutcome = 'ok' | 'ebusy' | 'refused';
/** `echo free > stack_map` (v8): 'busy' while the option is on or a reset runs, 'einval' before v8 */
export type FreeOutcome = 'ok' | 'busy' | 'einval' | 'not-allocated';

/** errno values a stack_map write returns negated (Linux's asm-generic/errno-base.h) */
export const EBUSY = 16;
export const EINVAL = 22;

/**
 * A write to stack_map: what write(2) returns (`ret`: the bytes written, or -errno), the command
 * the text named (null: none this version takes), and that command's outcome.
 */
export interface StackMapWrite {
  ret: number;
  command: 'reset' | 'free' | null;
  reset?: ResetOutcome;
  free?: FreeOutcome;
}

/**
 * The words each version's stack_map takes. v7 document: "Writing ``0`` or ``reset`` clears all
 * entries." v8 letter: "Reset is "echo 0 > stack_map" only", and the map stays allocated "until
 * "free" is written to stack_map". v4 has no seed; it takes v7's words.
 */
const WRITE_WORDS: Record<Mode, Readonly<Record<string, 'reset' | 'free'>>> = {
  v4: { '0': 'reset', reset: 'reset' },
  v7: { '0': 'reset', reset: 'reset' },
  v8: { '0': 'reset', free: 'free' },
};

/** The command a write to stack_map names, or null: the word alone or with one trailing newline, as `echo` writes it (sysfs_streq). */
export function parseStackMapWrite(mode: Mode, text: string): 'reset' | 'free' | null {
  const word = text.endsWith('\n') ? text.slice(0, -1) : text;
  return Object.hasOwn(WRITE_WORDS[mode], word) ? WRITE_WORDS[mode][word] : null;
}

export class SharedStackMap extends MapInsert {
  /**
   * `echo TEXT > stack_map`: parses the text as this version's stack_map does and runs the reset
   * or free it names (`beforeClear` and `wait` as `reset` and `free` take them). Returns the
   * bytes written, or -EINVAL for a text this version does not take, -EBUSY for a reset while
   * another runs (the v7 document: "Reset returns ``-EBUSY`` only if another reset is already in
   * progress") or a free refused while the option is on, a reset runs or files are open. Not in
   * the seeds, the model's choices: v4's reset refused while recording is -EBUSY, a free of a map
   * already freed -EINVAL.
   */
  write(text: string, opts: { beforeClear?: () => void; wait?: boolean } = {}): StackMapWrite {
    const command = parseStackMapWrite(this.params.mode, text);
    if (command === 'reset') {
      const reset = this.reset(opts.beforeClear);
      return { ret: reset === 'ok' ? text.length : -EBUSY, command, reset };
    }
    if (command === 'free') {
      const free = this.free(opts.wait ?? true);
      return { ret: free === 'ok' ? text.length : free === 'busy' ? -EBUSY : -EINVAL, command, free };
    }
    return { ret: -EINVAL, command: null };
  }

  /**
   * The stack_map lock, write side (a reset, a free): C.MUTEX -1 while held. v7's is an rwsem:
   * dump passes take the read side together (the v7 document: "serializes each seq_file pass
   * against reset through the same rwsem"). v8's is a mutex (the v8 letter, changes since v7:
   * "Use a mutex instead of an rwsem for the readers (Steven)."), as v4's: every holder alone.
   */
  lock(): void {
    for (;;) {
      const v = Atomics.compareExchange(this.i32, C.MUTEX, 0, -1);
      if (v === 0) return;
      if (this.canBlock) Atomics.wait(this.i32, C.MUTEX, v, 1);
    }
  }

  unlock(): void {
    Atomics.store(this.i32, C.MUTEX, 0);
    Atomics.notify(this.i32, C.MUTEX);
  }

  /** The read side: with no writer, one more reader (v7's rwsem), or the only holder (v4's and v8's mutex). False when it must wait. */
  tryLockRead(): boolean {
    const v = Atomics.load(this.i32, C.MUTEX);
    if (v < 0 || (v > 0 && this.params.mode !== 'v7')) return false;
    return Atomics.compareExchange(this.i32, C.MUTEX, v, v + 1) === v;
  }

  /** A dump pass's hold: the read side of v7's rwsem (v4, v8: the mutex). */
  lockRead(): void {
    while (!this.tryLockRead()) {
      const v = Atomics.load(this.i32, C.MUTEX);
      if (this.canBlock && v !== 0) Atomics.wait(this.i32, C.MUTEX, v, 1);
    }
  }

  unlockRead(): void {
    if (Atomics.sub(this.i32, C.MUTEX, 1) === 1) Atomics.notify(this.i32, C.MUTEX);
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

  /**
   * Tracefs initialization without `trace_options=stackmap`: options/stackmap starts off. A map
   * made by createMapBuffer starts with the option on, as if booted with trace_options=stackmap,
   * and allocated: the v8 letter, "with trace_options=stackmap it is allocated during tracefs
   * initialization". Started off, v8 has no map until the option is enabled ("The map is
   * allocated when the option is enabled at runtime"): stack_map and stack_map_stat read
   * "stackmap not initialized", as after `free`, and `setOption(true)` allocates it. v7's map is
   * allocated all the same (its document: "This allocation happens even if the runtime
   * ``stackmap`` option remains disabled"), and v4's (no seed) as v7's. Call before anything
   * records; a runtime `setOption(false)` instead keeps the map ("It stays allocated when the
   * option is disabled").
   */
  bootOptionOff(): void {
    const i32 = this.i32;
    if (Atomics.load(i32, C.NEXT_ELT) !== 0 || this.counters().attempts !== 0) throw new Error('bootOptionOff: the map has already recorded');
    this.lockOption();
    Atomics.store(i32, C.OPTION, 0);
    for (let cpu = 0; cpu < this.params.cpus; cpu++) Atomics.or(i32, this.cpuWord(cpu, K.INFLIGHT), GATE_OFF);
    if (this.v8) Atomics.store(i32, C.ALLOCATED, 0);
    this.unlockOption();
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
