import { C, INSERT_BOOT, K, type MapParams, type Mode } from './map-layout.ts';
import { Rng, Weighted, Zipf } from './random.ts';
import { CTX, packEvent, REC, Ring, RECORD_SIZE, type RingModel } from './ring.ts';
import { SharedStackMap, type MapOptions } from './shared-map.ts';
import { TASKS } from './kernel-symbols.ts';
import { populationViews, type PopulationShared } from './workload.ts';

/**
 * One simulated CPU's record path: for each event, write the event record, then ask the map
 * for the stack and write an id (v4/v7), a cookie (v8) or the full stack (fallback or bypass).
 * `runCpu` is plain synchronous code over shared buffers: a Node worker_threads worker
 * (node-worker.ts), a browser Web Worker, or a test calls it the same way.
 */

export interface SimConfig {
  mode: Mode;
  bits: number;
  cpus: number;
  hashSeed: number;
  /** events each CPU records */
  eventsPerCpu: number;
  /** resets the host performs; CPU c waits at its gate until reset k is done (see gateOf) */
  resets: number;
  /** v7/v8: how far (a fraction of a generation's events) a CPU may run past a reset point before it waits for that reset; v4 always 0 */
  gateSlack: number;
  /** each CPU also writes `0 > stack_map` every N of its events (0: never); gives EBUSY and ESTALE */
  cpuResetEvery: number;
  raceWindowUs: number;
  claimRaceUs: number;
  raceWait: 'sleep' | 'spin';
  eventBytes: number;
  ringBytes: number;
  ringModel: RingModel;
  /** how CPUs pick stacks: a rank in [0, phase.size) (Zipf, sequential, or weights) */
  pick: { kind: 'zipf'; zipf: number } | { kind: 'sequential' } | { kind: 'weights'; weights: number[] };
  /**
   * The workload's phases: after each reset the CPUs move to the next phase, where rank r records
   * stack (r + phase * shift) mod the population (`shift` 0: one stationary population; `size`:
   * a whole new population per phase, as when a user resets between test phases).
   */
  phase: { size: number; shift: number };
  /** v8: the share of stacks taken while RCU is not watching (discarded without a record) */
  rcuOffShare: number;
  /** per point between an insert's claim and publish: the chance of an IRQ / an NMI there (SimOptions) */
  irqRate: number;
  nmiRate: number;
  /** each CPU's first events, recorded before the map is published (in full) */
  bootEventsPerCpu: number;
  /** the chance a stack record's ring reservation fails (the stack lost, counted) */
  reserveFailShare: number;
  seed: number;
  /** performance.timeOrigin + performance.now() (ms) at the run's start, for timestamps */
  t0: number;
}

export interface SharedRefs {
  map: SharedArrayBuffer;
  /** the shared WebAssembly.Memory `map` is the buffer of, where there is one: the CPUs' first-slot hits then run in WebAssembly (map-insert.ts) */
  mapMemory?: WebAssembly.Memory;
  rings: SharedArrayBuffer[];
  /** the stacks, in `map`'s buffer past the map (workload.ts, `populationInto`) */
  population: PopulationShared;
}

export interface CpuReport {
  cpu: number;
  /** events recorded: the CPU's own and those of interrupts nested in its inserts (`nestedEvents`) */
  events: number;
  nestedEvents: number;
  inserts: number;
  /**
   * median wall time of one insert (hash + probe + fill + publish), the cost of reading the
   * clock subtracted; the median, since on an oversubscribed machine a CPU descheduled in the
   * middle of an insert adds milliseconds to a mean. Includes race windows.
   */
  nsPerInsert: number;
  /** the mean, preemptions included */
  nsPerInsertMean: number;
  nsPerInsertP99: number;
  resetsIssued: number;
  resetOutcomes: { ok: number; ebusy: number; refused: number };
  /** the same events in a ring of the same size with the map off (every stack in full) */
  off: { eventsIn: number; bytesIn: number };
}

/**
 * What a live host (the browser) adds to a CPU: map options (a race window read live, an event
 * sink) and a call after every stack record (`slot` -1 for a fallback, -2 for a bypass).
 * Headless runs pass none. The loop also honours C.PACE_US and C.PAUSE, which only live hosts set.
 */
export interface CpuHooks {
  map?: Pick<MapOptions, 'liveWindow' | 'onEvent'>;
  onRecord?: (type: number, slot: number, generation: number, stack: number) => void;
}

/** The records' clock: seconds since the run's start `t0` (performance.timeOrigin + performance.now(), ms), plus 100. */
export const recordClock = (t0: number): number => (performance.timeOrigin + performance.now() - t0) / 1000 + 100;

export function mapParams(cfg: SimConfig): MapParams {
  return { mode: cfg.mode, bits: cfg.bits, cpus: cfg.cpus, hashSeed: cfg.hashSeed };
}

/** The event index at which CPUs reach reset k (1-based). */
export function gateOf(cfg: SimConfig, k: number): number {
  return Math.floor((k * cfg.eventsPerCpu) / (cfg.resets + 1));
}

export function slackOf(cfg: SimConfig): number {
  return cfg.mode === 'v4' ? 0 : Math.floor((cfg.gateSlack * cfg.eventsPerCpu) / (cfg.resets + 1));
}

export function runCpu(shared: SharedRefs, cpu: number, cfg: SimConfig, hooks: CpuHooks = {}): CpuReport {
  const map = new SharedStackMap(shared.map, mapParams(cfg), {
    raceWindowUs: cfg.raceWindowUs,
    claimRaceUs: cfg.claimRaceUs,
    raceWait: cfg.raceWait,
    memory: shared.mapMemory,
    ...hooks.map,
  });
  const onRecord = hooks.onRecord;
  const paused = map.cpuWord(cpu, K.PAUSED);
  const ctl = map.i32;
  const ring = new Ring(shared.rings[cpu], cfg.ringBytes, cfg.ringModel);
  const off = new Ring(null, cfg.ringBytes, cfg.ringModel);
  const d = ring.data;
  const { words, depths } = populationViews(shared.population);
  // the stacks lie in the map's own buffer (a Simulation puts them there): each one's byte in it, for insertAt
  if (shared.population.sab !== shared.map) throw new Error("runCpu: the population must lie in the map's buffer (workload.ts, populationInto)");
  const at = Int32Array.from(words, (w) => w.byteOffset);
  const total = words.length;
  const n = cfg.phase.size;
  const shift = cfg.phase.shift;
  const rng = new Rng((cfg.seed ^ Math.imul(cpu + 1, 0x9e3779b1)) >>> 0);
  const zipf = cfg.pick.kind === 'zipf' ? new Zipf(n, cfg.pick.zipf) : cfg.pick.kind === 'weights' ? new Weighted(cfg.pick.weights) : null;
  const v8 = cfg.mode === 'v8';
  const progress = map.cpuWord(cpu, K.PROGRESS);
  const slack = slackOf(cfg);
  const overhead = timerOverhead();
  const hist = new Uint32Array(HIST_BUCKETS + 1);
  const outcomes = { ok: 0, ebusy: 0, refused: 0 };
  let task = TASKS[cpu % TASKS.length];
  let insertMs = 0;
  let inserts = 0;
  let resetsIssued = 0;

  const bootEvents = cfg.bootEventsPerCpu;
  let nestedEvents = 0;
  /** the stack of the insert an interrupt comes into (the outer one) */
  let interrupted = -1;
  let eventSeq = 0;
  /** the time of the CPU's last record: a record is stamped no earlier (its own time, or this) */
  let lastStamp = 0;
  const stamp = (ts: number): number => (lastStamp = ts > lastStamp ? ts : lastStamp);

  /** Writes an event in `context`; returns its sequence number and context (packEvent), which its stack record carries as its truth. */
  function writeEvent(stack: number, ts: number, context: number): number {
    const seq = eventSeq++;
    const ev = ring.reserve(REC.EVENT, cfg.eventBytes, stack, -1, stamp(ts), packEvent(seq, context));
    d[ev + 1] = task.pid;
    d[ev + 2] = seq;
    d[ev + 3] = rng.u32() | 0;
    off.reserve(REC.EVENT, cfg.eventBytes, -1, -1, 0);
    return packEvent(seq, context);
  }

  /**
   * The stack path after an event: the ring reservation (which can fail: the stack is lost, the
   * map never asked), the boot window (before the map is published: in full), v8's RCU discard
   * (with options/stackmap set), then the map, and the id, cookie or full stack written.
   * `outer`: the CPU's own event (timed); an interrupt's nested one is not. `event`: the event's
   * sequence number, kept beside the record as the truth of which event it belongs to. The record
   * has its event's time, but never earlier than the CPU's last record: an outer event's stack
   * record comes after the events and stacks of the interrupts nested in its insert, and the ring
   * buffer's times on a CPU never go back.
   */
  function recordStack(stack: number, ts: number, boot: boolean, outer: boolean, event: number): void {
    const w = words[stack];
    const nr = depths[stack];
    if (cfg.reserveFailShare > 0 && rng.next() < cfg.reserveFailShare) {
      ctl[map.cpuWord(cpu, K.RESERVE_FAILS)]++;
      return;
    }
    if (boot) {
      // before publication the regular full-stack path records it (v7 document, boot-time activation)
      ctl[map.cpuWord(cpu, K.BOOT)]++;
      writeFull(stack, INSERT_BOOT, ts, event);
      off.reserve(REC.FULL, RECORD_SIZE.full(nr), -1, -1, 0);
      return;
    }
    // drawn whatever the option, so the option does not change which events are drawn next
    const rcuOff = v8 && cfg.rcuOffShare > 0 && rng.next() < cfg.rcuOffShare;
    if (rcuOff && Atomics.load(ctl, C.OPTION) !== 0) {
      // the stack was taken while RCU was not watching: with options/stackmap set (the letter's
      // scope), record_stackmap() discards it; with the option off the stack path records it below
      map.discard(cpu);
      off.reserve(REC.FULL, RECORD_SIZE.full(nr), -1, -1, 0); // with the map off, the stack path records it
      return;
    }

    let slot: number;
    if (outer) {
      interrupted = stack;
      const t = performance.now();
      slot = map.insertAt(cpu, w, nr, at[stack]);
      const dt = performance.now() - t;
      insertMs += dt;
      hist[Math.min(HIST_BUCKETS, Math.floor((dt * 1e6) / HIST_NS))]++;
      inserts++;
      interrupted = -1;
    } else slot = map.insertAt(cpu, w, nr, at[stack]);

    if (slot >= 0) {
      const gen = map.lastGeneration;
      if (v8) {
        const r = ring.reserve(REC.COOKIE, RECORD_SIZE.cookie, stack, gen, stamp(ts), event);
        d[r + 1] = task.pid;
        d[r + 2] = slot;
        d[r + 3] = gen;
      } else {
        const r = ring.reserve(REC.ID, RECORD_SIZE.id, stack, gen, stamp(ts), event);
        d[r + 1] = task.pid;
        d[r + 2] = slot;
      }
      onRecord?.(v8 ? REC.COOKIE : REC.ID, slot, gen, stack);
    } else {
      writeFull(stack, slot, ts, event);
    }
    off.reserve(REC.FULL, RECORD_SIZE.full(nr), -1, -1, 0);
  }

  /** A stack in full; `why` (the truth's generation field) says why: INSERT_FALLBACK, _BYPASS, _DEEP, _OFF or _BOOT. */
  function writeFull(stack: number, why: number, ts: number, event: number): void {
    const nr = depths[stack];
    const r = ring.reserve(REC.FULL, RECORD_SIZE.full(nr), stack, why, stamp(ts), event);
    d[r + 1] = task.pid;
    d[r + 2] = nr;
    d.set(words[stack], r + 3);
    onRecord?.(REC.FULL, why, -1, stack);
  }

  /**
   * An IRQ or NMI arriving between an insert's claim and publish on this CPU (MapOptions.interrupt):
   * it records an event and its stack through the same path, nested, on this CPU's ring. An IRQ
   * comes only into the CPU's own insert; an NMI also into an IRQ's.
   */
  function interrupt(depth: number): void {
    if (depth > 2) return;
    const r = rng.next();
    const nmi = r < cfg.nmiRate;
    if (!nmi && (depth > 1 || r >= cfg.nmiRate + cfg.irqRate)) return;
    const stack = rng.next() < 0.5 && interrupted >= 0 ? interrupted : pick();
    const ts = recordClock(cfg.t0);
    nestedEvents++;
    recordStack(stack, ts, false, false, writeEvent(stack, ts, nmi ? (depth > 1 ? CTX.NMI_IN_IRQ : CTX.NMI) : CTX.IRQ));
  }
  if (cfg.irqRate + cfg.nmiRate > 0) map.setInterrupt(interrupt);

  /** the next stack drawn from the workload (its phase: the resets done so far) */
  function pick(): number {
    const rank = zipf ? zipf.sample(rng) : (eventSeq * cfg.cpus + cpu) % n;
    return shift === 0 ? rank : (rank + Atomics.load(ctl, C.RESETS) * shift) % total;
  }

  // wait until the host has started every CPU
  while (Atomics.load(ctl, C.START) === 0) Atomics.wait(ctl, C.START, 0, 50);

  let i = 0;
  // past its events a CPU keeps recording while the host holds it (a scenario's reader not done
  // yet), up to HOLD_LIMIT times its events, so a script waiting for what never comes still ends
  const held = cfg.eventsPerCpu * HOLD_LIMIT;
  for (; i < cfg.eventsPerCpu || (i < held && Atomics.load(ctl, C.HOLD) !== 0); i++) {
    let waited = false;
    for (;;) {
      const done = Atomics.load(ctl, C.GATE);
      if (done >= cfg.resets || i < gateOf(cfg, done + 1) + slack) break;
      Atomics.wait(ctl, C.GATE, done, 50);
      waited = true;
    }
    if (waited && cfg.mode === 'v4') {
      // the host paused recording, reset the map and cleared the ring buffers
      ring.sync();
      off.clear();
    }
    if (Atomics.load(ctl, C.PAUSE) !== 0) {
      // a live host parks every CPU between events (v4 reset, a consistent read of the rings)
      Atomics.store(ctl, paused, 1);
      Atomics.notify(ctl, paused);
      while (Atomics.load(ctl, C.PAUSE) !== 0 && Atomics.load(ctl, C.STOP) === 0) Atomics.wait(ctl, C.PAUSE, 1, 50);
      Atomics.store(ctl, paused, 0);
      if (cfg.mode === 'v4') {
        ring.sync(); // the host may have cleared it
        off.clear();
      }
    }
    const pace = Atomics.load(ctl, C.PACE_US);
    if (pace > 0) Atomics.wait(ctl, C.DUMMY, 0, pace / 1000);
    if (Atomics.load(ctl, C.STOP) !== 0) break;
    const rank = zipf ? zipf.sample(rng) : (i * cfg.cpus + cpu) % n;
    const stack = shift === 0 ? rank : (rank + Atomics.load(ctl, C.RESETS) * shift) % total;
    if (rng.next() < 0.05) task = TASKS[rng.int(TASKS.length)];
    const ts = recordClock(cfg.t0);

    const event = writeEvent(stack, ts, CTX.PROCESS);

    if (cfg.cpuResetEvery > 0 && (i + 1) % cfg.cpuResetEvery === 0) {
      resetsIssued++;
      outcomes[map.write('0\n').reset!]++; // echo 0 > stack_map (a reset in every version)
    }

    recordStack(stack, ts, i < bootEvents, true, event);
    Atomics.store(ctl, progress, i + 1);
  }
  return {
    cpu,
    // the CPU's own events and the interrupts' nested inside its inserts
    events: i + nestedEvents,
    nestedEvents,
    inserts,
    nsPerInsert: Math.max(0, quantile(hist, inserts, 0.5) - overhead),
    nsPerInsertMean: inserts ? Math.max(0, (insertMs / inserts) * 1e6 - overhead) : 0,
    nsPerInsertP99: Math.max(0, quantile(hist, inserts, 0.99) - overhead),
    resetsIssued,
    resetOutcomes: outcomes,
    off: { eventsIn: off.eventsIn, bytesIn: off.bytesIn },
  };
}

/** a held CPU records at most this many times its events (Simulation.hold) */
const HOLD_LIMIT = 64;

const HIST_NS = 10;
const HIST_BUCKETS = 100_000; // 10 ns buckets up to 1 ms

function quantile(hist: Uint32Array, n: number, q: number): number {
  if (n === 0) return 0;
  const want = Math.ceil(q * n);
  let acc = 0;
  for (let b = 0; b < hist.length; b++) {
    acc += hist[b];
    if (acc >= want) return (b + 0.5) * HIST_NS;
  }
  return hist.length * HIST_NS;
}

/** ns that a pair of performance.now() calls adds to a timed interval (median). */
function timerOverhead(): number {
  const N = 20000;
  const hist = new Uint32Array(HIST_BUCKETS + 1);
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    hist[Math.min(HIST_BUCKETS, Math.floor(((performance.now() - t) * 1e6) / HIST_NS))]++;
  }
  return quantile(hist, N, 0.5);
}
