import type { CpuReport, SimConfig } from './cpu-loop.ts';
import type { MapDump } from './dump-reader.ts';
import type { Ledger } from './ledger.ts';
import { C, type Mode } from './map-layout.ts';
import type { MapCounters } from './map-view.ts';
import type { Ring, RingRecord } from './ring.ts';
import type { SharedStackMap } from './shared-map.ts';
import type { SimOptions } from './sim-options.ts';
import type { GenerationSnapshot } from './sim-snapshot.ts';
import type { Population } from './workload.ts';

export interface SimReport {
  mode: Mode;
  cpus: number;
  bits: number;
  capacity: number;
  events: number;
  attempts: number;
  successes: number;
  fallbacks: number;
  /** inserts that met the reset flag (recorded in full, not counted in stack_map_stat) */
  bypasses: number;
  /** stacks deeper than 64 frames: recorded in full without reaching the map, not counted */
  deepStacks: number;
  /** v8: stacks taken while RCU was not watching, discarded without any record */
  rcuDiscards: number;
  /** interrupts inside inserts (SimOptions irqRate, nmiRate): their events, their inserts, and those inserts that met the same stack unpublished on their own CPU (v8: in full at once; v7: in full after its bounded wait) */
  interrupts: { events: number; inserts: number; sameStackInFlight: number };
  /** stack records lost to a failed ring reservation (a bypass the map never sees) */
  reserveFails: number;
  /** stacks recorded in full before the map was published (the boot window) */
  bootStacks: number;
  /** what stack_map_stat prints at the end: v4 counts since the last reset, v7/v8 since boot */
  stat: { successes: number; drops: number };
  /** v8: `free`s done */
  frees: number;
  /** poolEmpty: a claim found no element (each leaves a gravestone); probeLimit; inFlight: the same hash unpublished (v7 after its bounded wait, v8 at once) or a lost cmpxchg to it (v8); gravestone (v7, v8): met key == hash with no element while the pool is empty */
  fallbackReasons: { poolEmpty: number; probeLimit: number; inFlight: number; gravestone: number };
  /** v4/v7: cmpxchg lost to the same hash (the loser advanced) */
  lostSameHash: number;
  /** slots probed per map operation (1 when every stack finds its slot at once; gravestones and collisions raise it) */
  probesPerInsert: number;
  /** stack_map_stat entries at the end */
  entries: number;
  /** the largest entries of any generation */
  maxEntries: number;
  /** duplicate copies, summed over the generations the host saw end (and the last) */
  duplicates: number;
  /** claimed-but-empty slots: the most any generation left */
  gravestones: number;
  /** generations the run went through (successful resets + 1) */
  generations: number;
  /** the map's generation at the end (what v8 prints) */
  generation: number;
  resets: { requested: number; done: number; ebusy: number; refused: number; byCpus: number };
  estale: number;
  dumps: number;
  ledger: Omit<Ledger, 'entries'>;
  retention: { eventsOff: number; eventsOn: number; bytesPerEventOff: number; bytesPerEventOn: number; gain: number; ringBytesPerCpu: number };
  /** the workers' median ns per insert, averaged weighted by their inserts (see CpuReport) */
  nsPerInsert: number;
  workers: { cpu: number; events: number; inserts: number; nsPerInsert: number; nsPerInsertMean: number; nsPerInsertP99: number }[];
  elapsedMs: number;
}

/** One record left in a ring buffer, in trace order (merged over CPUs by timestamp). */
/** A reset the host did: when (the records' clock, seconds) and the generation it began. */
export interface ResetMark {
  ts: number;
  generation: number;
}

export interface TraceItem {
  cpu: number;
  rec: RingRecord;
}

export interface RunResult {
  options: SimOptions;
  config: SimConfig;
  population: Population;
  items: TraceItem[];
  /** in the order taken (= export order) */
  dumps: MapDump[];
  snapshots: GenerationSnapshot[];
  counters: MapCounters;
  /** stack_map_stat's successes and drops at the end */
  stat: { successes: number; drops: number };
  /** the map was allocated at the end (v8 after `free`: stack_map_stat reads `stackmap not initialized`) */
  allocated: boolean;
  finalGeneration: number;
  entries: number;
  ledger: Ledger;
  report: SimReport;
  /** the population's stack keys by index (the ledger's stacks are keys) */
  stackKeys: readonly string[];
  /** the host's resets (provenance.ts) */
  resets: ResetMark[];
}

/** What `Simulation.finish` builds the report from, once every CPU has ended. */
export interface ReportInput {
  config: SimConfig;
  map: SharedStackMap;
  /** the workers' reports */
  reports: CpuReport[];
  /** the ring buffers, synced */
  rings: Ring[];
  counters: MapCounters;
  ledger: Ledger;
  snapshots: readonly GenerationSnapshot[];
  estale: number;
  dumps: number;
  /** performance.now() when the simulation was built */
  started: number;
}

/** The run's `SimReport`: the map's counters, the generations' snapshots, the ledger, retention and the workers' insert times. */
export function buildReport({ config: cfg, map, reports, rings, counters, ledger, snapshots, estale, dumps, started }: ReportInput): SimReport {
  const i32 = map.i32;
  const eventsOn = rings.reduce((n, r) => n + r.eventsIn, 0);
  const bytesOn = rings.reduce((n, r) => n + r.bytesIn, 0);
  const eventsOff = reports.reduce((n, r) => n + r.off.eventsIn, 0);
  const bytesOff = reports.reduce((n, r) => n + r.off.bytesIn, 0);
  const inserts = reports.reduce((n, r) => n + r.inserts, 0);
  const { entries: _e, ...ledgerCounts } = ledger;
  void _e;
  return {
    mode: cfg.mode,
    cpus: cfg.cpus,
    bits: cfg.bits,
    capacity: map.capacity,
    events: reports.reduce((n, r) => n + r.events, 0),
    attempts: counters.attempts,
    successes: counters.successes,
    fallbacks: counters.fallbacks,
    bypasses: counters.bypasses,
    deepStacks: counters.deep,
    rcuDiscards: counters.rcuDiscards,
    interrupts: { events: reports.reduce((n, r) => n + r.nestedEvents, 0), inserts: counters.nested, sameStackInFlight: counters.nestedSame },
    reserveFails: counters.reserveFails,
    bootStacks: counters.boot,
    stat: map.statCounters(),
    frees: Atomics.load(i32, C.FREES),
    fallbackReasons: {
      poolEmpty: counters.fallbacksPoolEmpty,
      probeLimit: counters.fallbacksProbeLimit,
      inFlight: counters.fallbacksInFlight,
      gravestone: counters.fallbacksGravestone,
    },
    lostSameHash: counters.lostSameHash,
    probesPerInsert: counters.attempts ? Math.round((counters.probes / Math.max(1, counters.attempts - counters.bypasses)) * 100) / 100 : 0,
    entries: map.entries,
    maxEntries: Math.max(0, ...snapshots.map((s) => s.entries)),
    duplicates: snapshots.reduce((n, s) => n + s.duplicates, 0),
    gravestones: Math.max(0, ...snapshots.map((s) => s.gravestones)),
    generations: Atomics.load(i32, C.RESETS) + 1,
    generation: map.generation,
    resets: {
      requested: cfg.resets,
      done: Atomics.load(i32, C.RESETS),
      ebusy: Atomics.load(i32, C.EBUSY),
      refused: Atomics.load(i32, C.REFUSED),
      byCpus: reports.reduce((n, r) => n + r.resetOutcomes.ok, 0),
    },
    estale,
    dumps,
    ledger: ledgerCounts,
    retention: {
      eventsOff,
      eventsOn,
      bytesPerEventOff: round1(bytesOff / eventsOff),
      bytesPerEventOn: round1(bytesOn / eventsOn),
      gain: Math.round((eventsOn / eventsOff) * 1000) / 1000,
      ringBytesPerCpu: cfg.ringBytes,
    },
    nsPerInsert: inserts ? round1(reports.reduce((n, r) => n + r.nsPerInsert * r.inserts, 0) / inserts) : 0,
    workers: reports.map((r) => ({
      cpu: r.cpu,
      events: r.events,
      inserts: r.inserts,
      nsPerInsert: round1(r.nsPerInsert),
      nsPerInsertMean: round1(r.nsPerInsertMean),
      nsPerInsertP99: round1(r.nsPerInsertP99),
    })),
    elapsedMs: Math.round(performance.now() - started),
  };
}

const round1 = (x: number) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : 0);
