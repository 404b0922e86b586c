import { gateOf, mapParams, recordClock, type CpuReport, type SharedRefs, type SimConfig } from './cpu-loop.ts';
import { decodeBinDump, ESTALE, readBinDump, readTextDump, type MapDump } from './dump-reader.ts';
import { computeLedger, stackKey, type Ledger, type LedgerInput } from './ledger.ts';
import { C, createMapBuffer, K, mapBytes, mapMemoryOf } from './map-layout.ts';
import { createRingBuffer, REC, Ring, type RingRecord } from './ring.ts';
import { SharedStackMap, type ResetOutcome } from './shared-map.ts';
import type { LiveEventKind } from './live.ts';
import { DEFAULT_OPTIONS, hashSeedOf, hasBinExport, phaseOf, pickOf, validate, type SimOptions } from './sim-options.ts';
import { buildReport, type ResetMark, type RunResult, type TraceItem } from './sim-report.ts';
import { captureMap, snapshotMap, snapshotOf, type GenerationSnapshot, type MapCopy } from './sim-snapshot.ts';
import { buildPopulation, populationBytes, populationInto, type Population, type WorkloadSpec } from './workload.ts';

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

export class Simulation {
  readonly options: SimOptions;
  readonly population: Population;
  readonly config: SimConfig;
  readonly shared: SharedRefs;
  readonly map: SharedStackMap;
  readonly dumps: MapDump[] = [];
  readonly snapshots: GenerationSnapshot[] = [];
  estale = 0;
  /** where the host's own steps are told (its resets, dumps, ESTALE, splices): a live view's log; none headless */
  private hostEvents: ((kind: LiveEventKind, slot: number, generation: number) => void) | null = null;
  resetsDone = 0;
  /** the host's resets, when (the records' clock) and the generation each began (provenance.ts) */
  readonly resetLog: ResetMark[] = [];
  private readonly started = performance.now();
  /** the population's stack keys by index */
  readonly stackKeys: string[];

  /** `live`: a host that resets by hand (the browser), so the workload is built for MAX_PHASES phases */
  constructor(opts: Partial<SimOptions>, canBlock = true, live = false) {
    const o = (this.options = { ...DEFAULT_OPTIONS, ...opts });
    validate(o);
    const spec: WorkloadSpec = o.replay
      ? { kind: 'replay', stacks: o.replay, order: o.replayOrder, zipf: o.zipf, seed: o.seed, symbols: o.replaySymbols ?? undefined }
      : { kind: 'population', stacks: phaseOf(o, live).total, zipf: o.zipf, depthMin: o.depthMin, depthMax: o.depthMax, seed: o.seed };
    this.population = buildPopulation(spec);
    this.stackKeys = this.population.ips.map(stackKey);
    this.config = {
      mode: o.mode,
      bits: o.bits,
      cpus: o.cpus,
      hashSeed: hashSeedOf(o.seed),
      eventsPerCpu: Math.floor(o.events / o.cpus),
      resets: o.resets,
      gateSlack: o.gateSlack,
      cpuResetEvery: o.cpuResetEvery,
      raceWindowUs: o.raceWindowUs,
      claimRaceUs: o.claimRaceUs,
      raceWait: o.raceWait,
      eventBytes: o.eventBytes,
      ringBytes: o.ringKb * 1024,
      ringModel: o.ringModel,
      pick: pickOf(o),
      phase: (({ size, shift }) => ({ size: o.replay && !o.replayPhase ? this.population.ips.length : size, shift }))(phaseOf(o, live)),
      rcuOffShare: o.mode === 'v8' ? o.rcuOffShare : 0,
      irqRate: o.irqRate,
      nmiRate: o.nmiRate,
      bootEventsPerCpu: Math.floor(o.bootEvents / o.cpus),
      reserveFailShare: o.reserveFailShare,
      seed: o.seed,
      t0: performance.timeOrigin + performance.now(),
    };
    // the CPUs' stacks in the map's buffer, past the map: where its memory is a WebAssembly.Memory,
    // the hit path hashes and compares them there (map-insert.ts)
    const mapSab = createMapBuffer(mapParams(this.config), populationBytes(this.population.shared));
    this.shared = {
      map: mapSab,
      mapMemory: mapMemoryOf(mapSab),
      rings: Array.from({ length: o.cpus }, () => createRingBuffer(this.config.ringBytes)),
      population: populationInto(this.population.shared, mapSab, mapBytes(this.config.bits, this.config.cpus)),
    };
    this.map = new SharedStackMap(mapSab, mapParams(this.config), { raceWindowUs: o.raceWindowUs, raceWait: o.raceWait, canBlock });
  }

  /** Tells `f` the host's steps (resets, dumps, ESTALE, text splices), as a free-form run's tracefs workers tell the live log. */
  setHostEvents(f: (kind: LiveEventKind, slot: number, generation: number) => void): void {
    this.hostEvents = f;
    this.map.setEventSink((kind, slot) => f(kind, slot, this.map.generation));
  }

  /** A binary read failed with ESTALE (counted, and told). */
  noteEstale(generation = this.map.generation): void {
    this.estale++;
    this.hostEvents?.('estale', -1, generation);
  }

  /** A dump read by the host, kept for the export (a text one spanning a reset is told as a splice). */
  addDump(d: MapDump, generation = this.map.generation): void {
    this.dumps.push(d);
    if (d.format === 'text' && d.generationsSeen.length > 1)
      this.hostEvents?.('text-spliced', d.records.length, d.generationsSeen[d.generationsSeen.length - 1]);
    else this.hostEvents?.('dump', d.records.length, d.generationsSeen[0] ?? generation);
  }

  /** Releases the CPUs (call once every worker is running). */
  start(): void {
    Atomics.store(this.map.i32, C.START, 1);
    Atomics.notify(this.map.i32, C.START);
  }

  /**
   * Keeps the CPUs recording past their events until `release()` (call before `start()`): a host
   * does so while a scenario's script runs (`during`), so what the script waits for (records
   * after the reset it made) comes however fast the CPUs are, not only if they have events left.
   */
  hold(): void {
    Atomics.store(this.map.i32, C.HOLD, 1);
  }

  /** Ends `hold()`: each CPU ends once it has recorded its events. */
  release(): void {
    Atomics.store(this.map.i32, C.HOLD, 0);
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
      if (this.options.dumps === 'before-reset') this.takeDump();
      await this.resetNow(sleep);
      if (cfg.mode === 'v4') {
        for (const sab of this.shared.rings) new Ring(sab, cfg.ringBytes, cfg.ringModel).clear();
        Atomics.store(i32, C.RECORDING, 1);
      }
      Atomics.store(i32, C.GATE, k);
      Atomics.notify(i32, C.GATE);
    }
  }

  /**
   * One reset by the host (retried on EBUSY), with the generation's snapshot: the map is copied
   * inside the reset, once inserts have drained, and the snapshot computed from the copy after the
   * reset has dropped its flag, so the host's look adds no bypasses.
   */
  async resetNow(sleep: (ms: number) => Promise<void>): Promise<void> {
    for (;;) {
      const r = this.tryReset();
      if (r === 'ok') return;
      if (r === 'refused') throw new Error('v4 reset refused with recording off');
      await sleep(0);
    }
  }

  /** The records' clock (cpu-loop.ts writes the same): seconds since the run's start, plus 100. */
  now(): number {
    return recordClock(this.config.t0);
  }

  /** One `echo 0 > stack_map` by the host, counted and snapshotted when it succeeds. */
  tryReset(): ResetOutcome {
    let copy: MapCopy | null = null;
    /** when the map was drained and about to be cleared: no record of the next generation is earlier */
    let at = 0;
    const r = this.map.write('0\n', {
      beforeClear: () => {
        copy = captureMap(this.map);
        at = this.now();
      },
    }).reset!; // "0" is a reset in every version
    if (r === 'ok') {
      this.snapshots.push(snapshotOf(copy!));
      this.resetsDone++;
      this.resetLog.push({ ts: at, generation: this.map.generation });
    }
    return r;
  }

  /** The dump a user saves before a reset: `stack_map_bin` where the map has one, else the text `stack_map`. */
  takeDump(): void {
    if (hasBinExport(this.options) && this.map.allocated) this.takeBinDump();
    else this.addDump(readTextDump(this.map));
  }

  /** Reads stack_map_bin until a read completes (each ESTALE is counted and the file reopened). */
  takeBinDump(): void {
    if (!hasBinExport(this.options)) throw new Error('v8 as posted has no stack_map_bin (it comes with the proposed follow-up)');
    for (let attempt = 0; attempt < 100; attempt++) {
      const gen = this.map.generation;
      const bytes = readBinDump(this.map);
      if (bytes === ESTALE) {
        this.noteEstale(gen);
        continue;
      }
      this.addDump({ ...decodeBinDump(bytes), bytes }, gen);
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
      const r = new Ring(sab, this.config.ringBytes, this.config.ringModel);
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
    if (o.dumps !== 'none') this.takeDump();
    if (o.textDump && o.dumps !== 'none' && hasBinExport(o) && this.map.allocated) this.dumps.push(readTextDump(this.map));
    const { rings, items, ledger } = this.collect();
    const counters = this.map.counters();
    const report = buildReport({
      config: cfg,
      map: this.map,
      reports,
      rings,
      counters,
      ledger,
      snapshots: this.snapshots,
      estale: this.estale,
      dumps: this.dumps.length,
      started: this.started,
    });
    return {
      options: o,
      config: cfg,
      population: this.population,
      items,
      dumps: this.dumps,
      snapshots: this.snapshots,
      counters,
      stat: this.map.statCounters(),
      allocated: this.map.allocated,
      finalGeneration: this.map.generation,
      entries: this.map.entries,
      ledger,
      report,
      stackKeys: this.stackKeys,
      resets: this.resetLog.slice(),
    };
  }
}

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
