import { gateOf, mapParams, type CpuReport, type SharedRefs, type SimConfig } from './cpu-loop.ts';
import { decodeBinDump, ESTALE, readBinDump, readTextDump, type MapDump } from './dump-reader.ts';
import { computeLedger, stackKey, type Ledger, type LedgerInput } from './ledger.ts';
import { Rng } from './random.ts';
import { createRingBuffer, DEFAULT_EVENT_BYTES, REC, Ring, type RingRecord } from './ring.ts';
import { C, createMapBuffer, K, SharedStackMap, type MapCounters, type Mode } from './shared-map.ts';
import type { SymbolSource } from './replay.ts';
import { buildPopulation, type Population, type WorkloadSpec } from './workload.ts';

/**
 * The host side of a simulation, independent of the kind of worker: it builds the shared
 * buffers, and once the host has started one worker per CPU (each calling runCpu) it drives
 * the run (`drive`: resets and dumps at the reset points) and collects the result (`finish`:
 * ring contents, dumps, stat, ledger, report). run-node.ts is the worker_threads host; a
 * browser host would start Web Workers over the same `shared` and `config`.
 *
 * Resets: the host performs `resets` resets, reset k when every CPU has recorded gateOf(k)
 * events. v7/v8: CPUs keep recording meanwhile (each may run up to `gateSlack` of a generation
 * past the point, then waits for the reset), so resets race with inserts. v4: "recording on" is
 * the RECORDING word; CPUs stop exactly at the point, the host turns recording off, dumps,
 * resets (map and ring buffers) and turns it back on. A v4 reset attempted while recording is
 * on (`cpuResetEvery`) is refused and counted.
 */

export interface SimOptions {
  mode: Mode;
  cpus: number;
  bits: number;
  /** events in all, split evenly over the CPUs */
  events: number;
  resets: number;
  raceWindowUs: number;
  raceWait: 'sleep' | 'spin';
  seed: number;
  /** distinct stacks of the generated population */
  stacks: number;
  zipf: number;
  depthMin: number;
  depthMax: number;
  /** replay these stacks (raw ips, leaf first) instead of a generated population */
  replay: readonly (readonly bigint[])[] | null;
  /** 'weights': drawn by replayWeights (a loaded capture's occurrence counts) */
  replayOrder: 'sequential' | 'zipf' | 'weights';
  replayWeights: number[] | null;
  /** the symbols replayed ips were made for (see replay.ts), used to export the run */
  replaySymbols: SymbolSource | null;
  ringKb: number;
  eventBytes: number;
  /** which stack_map_bin dumps the host takes: before every reset and at the end, only at the end, none */
  dumps: 'before-reset' | 'end' | 'none';
  /** also read the text `stack_map` at the end */
  textDump: boolean;
  cpuResetEvery: number;
  gateSlack: number;
}

export const DEFAULT_OPTIONS: SimOptions = {
  mode: 'v8',
  cpus: 4,
  bits: 14,
  events: 40000,
  resets: 3,
  raceWindowUs: 0,
  raceWait: 'sleep',
  seed: 1,
  stacks: 500,
  zipf: 1.1,
  depthMin: 8,
  depthMax: 20,
  replay: null,
  replayOrder: 'sequential',
  replayWeights: null,
  replaySymbols: null,
  ringKb: 512,
  eventBytes: DEFAULT_EVENT_BYTES,
  dumps: 'before-reset',
  textDump: true,
  cpuResetEvery: 0,
  gateSlack: 0.5,
};

/** The map as it was when a generation ended (taken inside reset, with no insert in flight) or at the end. */
export interface GenerationSnapshot {
  generation: number;
  entries: number;
  published: number;
  distinct: number;
  /** published slots holding a stack another published slot of the generation also holds */
  duplicates: number;
  gravestones: number;
}

export interface SimReport {
  mode: Mode;
  cpus: number;
  bits: number;
  capacity: number;
  events: number;
  attempts: number;
  successes: number;
  fallbacks: number;
  bypasses: number;
  /** poolEmpty: a claim found no element (each leaves a gravestone); probeLimit; inFlight (v8): the same hash unpublished or a lost cmpxchg to it; gravestone (v8): met key == hash with no element while the pool is empty */
  fallbackReasons: { poolEmpty: number; probeLimit: number; inFlight: number; gravestone: number };
  /** v4/v7: cmpxchg lost to the same hash (the loser advanced) */
  lostSameHash: number;
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
  finalGeneration: number;
  entries: number;
  ledger: Ledger;
  report: SimReport;
}

export class Simulation {
  readonly options: SimOptions;
  readonly population: Population;
  readonly config: SimConfig;
  readonly shared: SharedRefs;
  readonly map: SharedStackMap;
  readonly dumps: MapDump[] = [];
  readonly snapshots: GenerationSnapshot[] = [];
  estale = 0;
  resetsDone = 0;
  private readonly started = performance.now();
  private readonly stackKeys: string[];

  constructor(opts: Partial<SimOptions>, canBlock = true) {
    const o = (this.options = { ...DEFAULT_OPTIONS, ...opts });
    validate(o);
    const rng = new Rng(o.seed);
    const spec: WorkloadSpec = o.replay
      ? { kind: 'replay', stacks: o.replay, order: o.replayOrder, zipf: o.zipf, seed: o.seed, symbols: o.replaySymbols ?? undefined }
      : { kind: 'population', stacks: o.stacks, zipf: o.zipf, depthMin: o.depthMin, depthMax: o.depthMax, seed: o.seed };
    this.population = buildPopulation(spec);
    this.stackKeys = this.population.ips.map(stackKey);
    this.config = {
      mode: o.mode,
      bits: o.bits,
      cpus: o.cpus,
      hashSeed: rng.u32(),
      eventsPerCpu: Math.floor(o.events / o.cpus),
      resets: o.resets,
      gateSlack: o.gateSlack,
      cpuResetEvery: o.cpuResetEvery,
      raceWindowUs: o.raceWindowUs,
      raceWait: o.raceWait,
      eventBytes: o.eventBytes,
      ringBytes: o.ringKb * 1024,
      pick: pickOf(o),
      seed: o.seed,
      t0: performance.timeOrigin + performance.now(),
    };
    const mapSab = createMapBuffer(mapParams(this.config));
    this.shared = {
      map: mapSab,
      rings: Array.from({ length: o.cpus }, () => createRingBuffer(this.config.ringBytes)),
      population: this.population.shared,
    };
    this.map = new SharedStackMap(mapSab, mapParams(this.config), { raceWindowUs: o.raceWindowUs, raceWait: o.raceWait, canBlock });
  }

  /** Releases the CPUs (call once every worker is running). */
  start(): void {
    Atomics.store(this.map.i32, C.START, 1);
    Atomics.notify(this.map.i32, C.START);
  }

  /** Asks the CPUs to stop early. */
  stop(): void {
    Atomics.store(this.map.i32, C.STOP, 1);
    Atomics.store(this.map.i32, C.GATE, this.config.resets);
    Atomics.notify(this.map.i32, C.GATE);
  }

  progress(cpu: number): number {
    return Atomics.load(this.map.i32, this.map.cpuWord(cpu, K.PROGRESS));
  }

  /**
   * Performs the resets (and the dumps before them) as the CPUs reach the reset points.
   * `sleep` yields to the host's event loop; `finished` says the workers have all ended.
   */
  async drive(sleep: (ms: number) => Promise<void>, finished: () => boolean): Promise<void> {
    const cfg = this.config;
    const i32 = this.map.i32;
    for (let k = 1; k <= cfg.resets; k++) {
      const point = gateOf(cfg, k);
      for (;;) {
        let all = true;
        for (let c = 0; c < cfg.cpus; c++) if (this.progress(c) < point) all = false;
        if (all) break;
        if (finished()) return;
        await sleep(1);
      }
      if (cfg.mode === 'v4') Atomics.store(i32, C.RECORDING, 0);
      if (this.options.dumps === 'before-reset') this.takeBinDump();
      for (;;) {
        const r = this.map.reset(() => this.snapshot());
        if (r === 'ok') break;
        if (r === 'refused') throw new Error('v4 reset refused with recording off');
        await sleep(0);
      }
      this.resetsDone++;
      if (cfg.mode === 'v4') {
        for (const sab of this.shared.rings) new Ring(sab, cfg.ringBytes).clear();
        Atomics.store(i32, C.RECORDING, 1);
      }
      Atomics.store(i32, C.GATE, k);
      Atomics.notify(i32, C.GATE);
    }
  }

  /** Reads stack_map_bin until a read completes (each ESTALE is counted and the file reopened). */
  takeBinDump(): void {
    for (let attempt = 0; attempt < 100; attempt++) {
      const bytes = readBinDump(this.map);
      if (bytes === ESTALE) {
        this.estale++;
        continue;
      }
      this.dumps.push({ ...decodeBinDump(bytes), bytes });
      return;
    }
  }

  /**
   * The current generation's state (call with no insert in flight: inside reset, or at the
   * end). Kept cheap, since inserts bypass the map while a reset runs: copies of one stack share
   * a key, so only elements under the same key are compared.
   */
  snapshot(): void {
    this.snapshots.push(snapshotMap(this.map));
  }

  /**
   * The ring buffers' contents (CPUs merged by time) and their ledger against the dumps taken so
   * far. Call while no CPU writes: after they ended, or with every CPU parked (C.PAUSE).
   */
  collect(): { rings: Ring[]; items: TraceItem[]; ledger: Ledger } {
    const rings = this.shared.rings.map((sab) => {
      const r = new Ring(sab, this.config.ringBytes);
      r.sync();
      return r;
    });
    const items = mergeByTime(rings.map((r) => r.records()));
    const ledgerIn: LedgerInput[] = [];
    for (const { rec } of items) {
      if (rec.type === REC.EVENT) continue;
      ledgerIn.push({
        kind: rec.type === REC.FULL ? 'full' : rec.type === REC.COOKIE ? 'cookie' : 'id',
        slot: rec.type === REC.FULL ? -1 : rec.a,
        generation: rec.type === REC.COOKIE ? rec.b : null,
        truth: this.stackKeys[rec.truthStack],
      });
    }
    return { rings, items, ledger: computeLedger(ledgerIn, this.dumps) };
  }

  /** After every CPU has ended: final dumps, ring contents, ledger and report. */
  finish(reports: CpuReport[]): RunResult {
    const o = this.options;
    const cfg = this.config;
    this.snapshot();
    if (o.dumps !== 'none') this.takeBinDump();
    if (o.textDump && o.dumps !== 'none') this.dumps.push(readTextDump(this.map));
    const { rings, items, ledger } = this.collect();
    const counters = this.map.counters();
    const i32 = this.map.i32;
    const eventsOn = rings.reduce((n, r) => n + r.eventsIn, 0);
    const bytesOn = rings.reduce((n, r) => n + r.bytesIn, 0);
    const eventsOff = reports.reduce((n, r) => n + r.off.eventsIn, 0);
    const bytesOff = reports.reduce((n, r) => n + r.off.bytesIn, 0);
    const inserts = reports.reduce((n, r) => n + r.inserts, 0);
    const { entries: _e, ...ledgerCounts } = ledger;
    void _e;
    const report: SimReport = {
      mode: cfg.mode,
      cpus: cfg.cpus,
      bits: cfg.bits,
      capacity: this.map.capacity,
      events: reports.reduce((n, r) => n + r.events, 0),
      attempts: counters.attempts,
      successes: counters.successes,
      fallbacks: counters.fallbacks,
      bypasses: counters.bypasses,
      fallbackReasons: {
        poolEmpty: counters.fallbacksPoolEmpty,
        probeLimit: counters.fallbacksProbeLimit,
        inFlight: counters.fallbacksInFlight,
        gravestone: counters.fallbacksGravestone,
      },
      lostSameHash: counters.lostSameHash,
      entries: this.map.entries,
      maxEntries: Math.max(0, ...this.snapshots.map((s) => s.entries)),
      duplicates: this.snapshots.reduce((n, s) => n + s.duplicates, 0),
      gravestones: Math.max(0, ...this.snapshots.map((s) => s.gravestones)),
      generations: Atomics.load(i32, C.RESETS) + 1,
      generation: this.map.generation,
      resets: {
        requested: cfg.resets,
        done: Atomics.load(i32, C.RESETS),
        ebusy: Atomics.load(i32, C.EBUSY),
        refused: Atomics.load(i32, C.REFUSED),
        byCpus: reports.reduce((n, r) => n + r.resetOutcomes.ok, 0),
      },
      estale: this.estale,
      dumps: this.dumps.length,
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
      elapsedMs: Math.round(performance.now() - this.started),
    };
    return {
      options: o,
      config: cfg,
      population: this.population,
      items,
      dumps: this.dumps,
      snapshots: this.snapshots,
      counters,
      finalGeneration: this.map.generation,
      entries: this.map.entries,
      ledger,
      report,
    };
  }
}

/**
 * The map's state for one generation (call with no insert in flight: inside reset, or at the
 * end). Kept cheap, since inserts bypass the map while a reset runs: copies of one stack share a
 * key, so only elements under the same key are compared.
 */
export function snapshotMap(m: SharedStackMap): GenerationSnapshot {
  const byKey = new Map<number, number[]>();
  let published = 0;
  let gravestones = 0;
  let duplicates = 0;
  for (let s = 0; s < m.slots; s++) {
    const e = m.published(s);
    if (e < 0) {
      if (m.key(s) !== 0) gravestones++;
      continue;
    }
    published++;
    const key = m.key(s);
    const same = byKey.get(key);
    if (!same) byKey.set(key, [e]);
    else if (same.some((o) => m.sameElement(o, e))) duplicates++;
    else same.push(e);
  }
  return { generation: m.generation, entries: m.entries, published, distinct: published - duplicates, duplicates, gravestones };
}

const round1 = (x: number) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : 0);

function mergeByTime(perCpu: RingRecord[][]): TraceItem[] {
  const out: TraceItem[] = [];
  const pos = perCpu.map(() => 0);
  for (;;) {
    let best = -1;
    for (let c = 0; c < perCpu.length; c++) {
      if (pos[c] >= perCpu[c].length) continue;
      if (best < 0 || perCpu[c][pos[c]].ts < perCpu[best][pos[best]].ts) best = c;
    }
    if (best < 0) return out;
    out.push({ cpu: best, rec: perCpu[best][pos[best]++] });
  }
}

export function validate(o: SimOptions): void {
  const int = (name: string, v: number, lo: number, hi: number) => {
    if (!Number.isInteger(v) || v < lo || v > hi) throw new RangeError(`${name} must be an integer in [${lo}, ${hi}]`);
  };
  int('bits', o.bits, 10, 18);
  int('cpus', o.cpus, 1, 256);
  int('events', o.events, o.cpus, 1e9);
  int('resets', o.resets, 0, 100000);
  int('stacks', o.stacks, 1, 1e6);
  int('ring KB', o.ringKb, 1, 1 << 20);
  int('event bytes', o.eventBytes, 16, 4096);
  if (o.eventBytes % 4) throw new RangeError('event bytes must be a multiple of 4');
  if (!(o.raceWindowUs >= 0)) throw new RangeError('race window must be >= 0');
  if (!(o.zipf >= 0)) throw new RangeError('zipf must be >= 0');
  if (o.resets >= Math.floor(o.events / o.cpus)) throw new RangeError('more resets than events per CPU');
}

function pickOf(o: SimOptions): SimConfig['pick'] {
  if (!o.replay || o.replayOrder === 'zipf') return { kind: 'zipf', zipf: o.zipf };
  if (o.replayOrder === 'sequential') return { kind: 'sequential' };
  if (!o.replayWeights || o.replayWeights.length !== o.replay.length) throw new RangeError('replayWeights must give one weight per replayed stack');
  return { kind: 'weights', weights: o.replayWeights };
}
