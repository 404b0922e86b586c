import { describe, expect, it } from 'vitest';
import { BinDumpReader, decodeBinDump, ESTALE, readTextDump } from './dump-reader.ts';
import { exportCapture } from './export.ts';
import { C, createMapBuffer, ELT_WORDS, INSERT_BOOT, INSERT_DEEP, INSERT_OFF, MAX_DEPTH, type Mode } from './map-layout.ts';
import { REC } from './ring.ts';
import { runNode } from './run-node.ts';
import { SharedStackMap } from './shared-map.ts';
import { validate, DEFAULT_OPTIONS } from './sim-options.ts';
import { captureMap, snapshotMap, snapshotOf } from './sim-snapshot.ts';
import { buildPopulation } from './workload.ts';

// The simulator against the seeds and DESIGN 1, one deviation of the first version per test.
// Expected numbers come from the ring buffers' contents (what a reader of the trace would count)
// or from the population, never from the map's own counters alone.

const pop = buildPopulation({ kind: 'population', stacks: 400, zipf: 0, depthMin: 4, depthMax: 16, seed: 7 });

function newMap(mode: Mode, bits = 12, cpus = 1): SharedStackMap {
  const p = { mode, bits, cpus, hashSeed: 0x1234567 };
  return new SharedStackMap(createMapBuffer(p), p);
}

describe('stacks deeper than 64 frames bypass the map, in every mode', { timeout: 60_000 }, () => {
  for (const mode of ['v4', 'v7', 'v8'] as const) {
    it(`${mode}: recorded in full, never counted`, async () => {
      const r = await runNode({
        mode,
        v8Variant: 'bin',
        cpus: 2,
        bits: 12,
        events: 4000,
        resets: 1,
        stacks: 200,
        zipf: 0,
        depthMin: 56,
        depthMax: 80,
        ringKb: 2048,
      });
      const depths = r.population.ips.map((s) => s.length);
      expect(Math.max(...depths)).toBeGreaterThan(MAX_DEPTH);
      // second method: events in the rings whose true stack is deeper than 64 (v4 clears the rings at its reset)
      const events = r.items.filter((i) => i.rec.type === REC.EVENT);
      const deepEvents = events.filter((i) => depths[i.rec.truthStack] > MAX_DEPTH).length;
      const deepFull = r.items.filter((i) => i.rec.type === REC.FULL && i.rec.a > MAX_DEPTH);
      expect(deepEvents).toBeGreaterThan(0);
      expect(deepFull.length).toBe(deepEvents);
      if (mode !== 'v4') expect(r.report.deepStacks).toBe(deepEvents);
      // the map never saw them: its operations are the shallow stacks only
      expect(r.report.attempts).toBe(r.report.successes + r.report.fallbacks + r.report.bypasses);
      expect(r.report.attempts + r.report.deepStacks).toBe(r.report.events);
      // and the explorer reads the 80-frame stacks back in full
      const trace = new TextDecoder().decode(exportCapture(r).get('trace')!);
      expect(trace.split('\n').filter((l) => l.startsWith(' => ')).length).toBeGreaterThan(deepFull.length * MAX_DEPTH);
    });
  }

  it('the insert path refuses a deep stack before touching the map', () => {
    const deep = buildPopulation({ kind: 'population', stacks: 3, zipf: 0, depthMin: 70, depthMax: 80, seed: 1 });
    const m = newMap('v7');
    expect(m.insert(0, deep.words[0], deep.depths[0])).toBe(INSERT_DEEP);
    expect(m.counters()).toMatchObject({ attempts: 0, successes: 0, fallbacks: 0, deep: 1 });
    expect(m.entries).toBe(0);
  });
});

describe('v8 discards a stack taken while RCU is not watching', { timeout: 60_000 }, () => {
  it('no record at all, counted in its own counter; v7 records them', async () => {
    for (const mode of ['v8', 'v7'] as const) {
      const r = await runNode({ mode, v8Variant: 'bin', cpus: 2, bits: 12, events: 6000, resets: 0, stacks: 200, rcuOffShare: 0.05, ringKb: 2048 });
      const events = r.items.filter((i) => i.rec.type === REC.EVENT).length;
      const stacks = r.items.filter((i) => i.rec.type !== REC.EVENT).length;
      expect(events).toBe(6000);
      if (mode === 'v8') {
        expect(r.report.rcuDiscards).toBeGreaterThan(100); // 5% of 6000, drawn
        expect(events - stacks).toBe(r.report.rcuDiscards);
      } else {
        expect(r.report.rcuDiscards).toBe(0);
        expect(stacks).toBe(events);
      }
    }
  });
});

describe(
  'an IRQ or NMI inside an insert, on the same CPU (v7 document: "safe in NMI/IRQ/any context"; v8 letter: "records the stack in full instead of spinning", "instead of waiting")',
  { timeout: 120_000 },
  () => {
    // 3,000 distinct stacks, each claimed once: 3,000 inserts with a claim-to-publish stretch for an interrupt to land in
    const opts = { cpus: 2, bits: 14, events: 12000, resets: 0, stacks: 3000, zipf: 0, irqRate: 0.05, nmiRate: 0.05, ringKb: 8192 } as const;
    for (const mode of ['v8', 'v7'] as const)
      it(`${mode}: nested inserts on the CPU's own worker_threads thread, nothing waits on itself for ever`, async () => {
        const r = await runNode({ ...opts, mode, v8Variant: 'bin' });
        const i = r.report.interrupts;
        // about 3,000 claims x 2 points x 10%
        expect(i.events).toBeGreaterThan(200);
        expect(i.inserts).toBe(i.events);
        // every event recorded: the CPUs' own and the interrupts', each with its stack record
        const events = r.items.filter((x) => x.rec.type === REC.EVENT).length;
        expect(events).toBe(12000 + i.events);
        expect(r.report.events).toBe(events);
        expect(r.items.length - events).toBe(events);
        expect(r.report.attempts).toBe(r.report.successes + r.report.fallbacks + r.report.bypasses);
        // half the interrupts take the interrupted stack, whose slot their own CPU has claimed and not published
        expect(i.sameStackInFlight).toBeGreaterThan(i.events / 4);
        // v8 records the stack in full at once; v7 waits for its own CPU's publish, which cannot come
        // while the interrupt runs, so its bounded wait gives up and records it in full too: no copy
        expect(r.report.fallbackReasons.inFlight).toBeGreaterThanOrEqual(i.sameStackInFlight);
        if (mode === 'v8') expect(r.report.duplicates).toBe(0);
        // v7 document: "the `cmpxchg` loser advances by one slot and may insert the same stack again":
        // the only second copies are after a lost cmpxchg (between the two CPUs), none from the interrupts
        else expect(r.report.duplicates).toBeLessThanOrEqual(r.report.lostSameHash);
        // no reset: every id and cookie resolves to its own stack
        expect(r.report.ledger.wrong).toBe(0);
      });
  },
);

describe(
  'the boot window and ring reservation failures (v7 document: boot-time activation; "ring buffer reservation failures" bypass the map)',
  { timeout: 60_000 },
  () => {
    it('the first events of each CPU record full stacks, then the map; failed reservations lose the stack, counted, the map not asked', async () => {
      const r = await runNode({
        mode: 'v8',
        v8Variant: 'bin',
        cpus: 2,
        bits: 12,
        events: 6000,
        resets: 0,
        stacks: 200,
        bootEvents: 2000,
        reserveFailShare: 0.02,
        ringKb: 4096,
      });
      const rep = r.report;
      const stacks = r.items.filter((x) => x.rec.type !== REC.EVENT);
      const boot = stacks.filter((x) => x.rec.truthGeneration === INSERT_BOOT);
      expect(rep.bootStacks).toBe(boot.length);
      // 1,000 per CPU before publication, less the reservations that failed among them (2%)
      expect(boot.length).toBeGreaterThan(1900);
      expect(boot.length).toBeLessThanOrEqual(2000);
      for (const cpu of [0, 1]) {
        const mine = r.items.filter((x) => x.cpu === cpu && x.rec.type !== REC.EVENT);
        const firstMapped = mine.findIndex((x) => x.rec.truthGeneration !== INSERT_BOOT);
        // every boot stack comes before the first from the map, and all of them are in full
        expect(mine.slice(firstMapped).some((x) => x.rec.truthGeneration === INSERT_BOOT)).toBe(false);
        expect(mine.slice(0, firstMapped).every((x) => x.rec.type === REC.FULL)).toBe(true);
      }
      expect(rep.reserveFails).toBeGreaterThan(60); // 2% of 6,000, drawn
      expect(stacks.length).toBe(6000 - rep.reserveFails);
      expect(rep.events).toBe(rep.attempts + rep.deepStacks + rep.rcuDiscards + rep.reserveFails + rep.bootStacks);
      expect(rep.attempts).toBe(rep.successes + rep.fallbacks + rep.bypasses);
    });
  },
);

describe('the stack_map readers\' lock: v7 document: "serializes each seq_file pass against reset through the same rwsem"; v8 letter: "Use a mutex instead of an rwsem for the readers (Steven)."', () => {
  it('v7: two dump passes hold the read side at once, a reset is the writer alone; v8 (a mutex) and v4: one holder at a time', () => {
    for (const mode of ['v7', 'v8', 'v4'] as const) {
      const m = newMap(mode);
      const lock = () => Atomics.load(m.i32, C.MUTEX);
      // the v7 document's rwsem shares its read side; the v8 letter's mutex does not
      const shared = mode === 'v7';
      expect(m.tryLockRead()).toBe(true);
      // a second reader, on another CPU's reader thread: shares it (v7) or must wait (v8, v4)
      expect(m.tryLockRead()).toBe(shared);
      expect(lock()).toBe(shared ? 2 : 1);
      m.unlockRead();
      if (shared) m.unlockRead();
      expect(lock()).toBe(0);
      // the writer: no reader while it holds the lock
      m.lock();
      expect(lock()).toBe(-1);
      expect(m.tryLockRead()).toBe(false);
      m.unlock();
      // readers opened on the map still dump it whole
      const slot = m.insert(0, pop.words[1], pop.depths[1]);
      expect(slot).toBeGreaterThanOrEqual(0);
      const [a, b] = [new BinDumpReader(m), new BinDumpReader(m)];
      expect([a.nrStacks, b.nrStacks]).toEqual([1, 1]);
      a.close();
      b.close();
    }
  });
});

describe('the RCU discard is scoped to options/stackmap set (cover letter: "With options/stackmap set")', { timeout: 60_000 }, () => {
  it('option off from the start: nothing discarded, every event has its stack in full (worker_threads)', async () => {
    const r = await runNode(
      { mode: 'v8', v8Variant: 'bin', cpus: 2, bits: 12, events: 6000, resets: 0, stacks: 200, rcuOffShare: 0.2, ringKb: 4096 },
      { beforeStart: (sim) => sim.map.bootOptionOff() },
    );
    const events = r.items.filter((i) => i.rec.type === REC.EVENT).length;
    const full = r.items.filter((i) => i.rec.type === REC.FULL).length;
    expect(events).toBe(6000);
    expect(r.report.rcuDiscards).toBe(0);
    expect(full).toBe(events);
    // and no map: "The map is allocated when the option is enabled at runtime" (never, here)
    expect(r.allocated).toBe(false);
    const files = exportCapture(r);
    const text = (name: string) => new TextDecoder().decode(files.get(name)!);
    expect(text('stack_map_stat')).toBe('stackmap not initialized\n');
    expect([...files.keys()].filter((n) => n.startsWith('stack_map.')).map(text)).toEqual(['stackmap not initialized\n']);
  });
});

describe("v8's lifecycle (cover letter): allocated on enable, kept when off, released by free after readers close", { timeout: 60_000 }, () => {
  it('option off: stacks in full, the map kept and still dumped', () => {
    const m = newMap('v8');
    const slot = m.insert(0, pop.words[1], pop.depths[1]);
    expect(slot).toBeGreaterThanOrEqual(0);
    m.setOption(false);
    expect(m.insert(0, pop.words[2], pop.depths[2])).toBe(INSERT_OFF);
    expect(m.counters().attempts).toBe(1);
    const d = readTextDump(m);
    expect(d.records.map((r) => r.slot)).toEqual([slot]);
  });

  it('free waits for the files open on the map, then reads "stackmap not initialized"; enable allocates again', () => {
    const m = newMap('v8');
    for (let i = 0; i < 50; i++) m.insert(0, pop.words[i], pop.depths[i]);
    expect(m.free(false)).toBe('busy'); // the option is on
    m.setOption(false);
    const reader = new BinDumpReader(m, 512);
    expect(m.free(false)).toBe('busy'); // a reader opened the old map
    const parts: Uint8Array[] = [];
    for (;;) {
      const c = reader.read();
      if (c === null || c === ESTALE) break;
      parts.push(c.slice());
    }
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((o, p) => (bytes.set(p, o), o + p.length), 0);
    expect(decodeBinDump(bytes).records.length).toBe(50); // it read a complete map
    const gen = m.generation;
    expect(m.free()).toBe('ok');
    expect(m.allocated).toBe(false);
    expect(readTextDump(m).uninitialized).toBe(true);
    expect(m.insert(0, pop.words[1], pop.depths[1])).toBe(INSERT_OFF);
    m.setOption(true);
    expect(m.allocated).toBe(true);
    expect(m.entries).toBe(0);
    expect(m.generation).toBe(gen + 1);
    expect(m.insert(0, pop.words[1], pop.depths[1])).toBeGreaterThanOrEqual(0);
  });

  it('free is v8 only', () => {
    const m = newMap('v7');
    m.setOption(false);
    expect(m.free()).toBe('einval');
  });
});

describe('v8 as posted: 16,384 stacks fixed, no stack_map_bin', { timeout: 60_000 }, () => {
  it('other bits need the proposed follow-up', () => {
    expect(() => validate({ ...DEFAULT_OPTIONS, mode: 'v8', bits: 10 })).toThrow(/16,384/);
    expect(() => validate({ ...DEFAULT_OPTIONS, mode: 'v8', bits: 10, v8Variant: 'bin' })).not.toThrow();
  });

  it('dumps before each reset are text stack_map files', async () => {
    const r = await runNode({ mode: 'v8', cpus: 2, events: 4000, resets: 2, stacks: 200, dumps: 'before-reset' });
    const names = [...exportCapture(r).keys()];
    expect(names.filter((n) => n.startsWith('stack_map_bin'))).toEqual([]);
    expect(names.filter((n) => n.startsWith('stack_map.'))).toHaveLength(3);
    expect(r.report.capacity).toBe(16384);
    expect(r.ledger.wrong).toBe(0);
  });
});

describe("stack_map_stat's successes and drops", { timeout: 60_000 }, () => {
  it('v4 zeroes them on reset: they count the records of the last generation only', async () => {
    const r = await runNode({ mode: 'v4', cpus: 2, bits: 10, events: 12000, resets: 3, stacks: 3000, zipf: 0, ringKb: 4096 });
    // v4 cleared the rings with the map: what is left is exactly the last generation
    const ids = r.items.filter((i) => i.rec.type === REC.ID).length;
    const drops = r.items.filter((i) => i.rec.type === REC.FULL).length;
    expect(drops).toBeGreaterThan(0);
    expect(r.report.stat).toEqual({ successes: ids, drops });
    expect(r.report.successes).toBeGreaterThan(ids); // the run's own totals keep counting
    const stat = new TextDecoder().decode(exportCapture(r).get('stack_map_stat')!);
    expect(stat).toMatch(new RegExp(`successes:\\s+${ids}\\b`));
  });

  it('v7 and v8 count them since boot', async () => {
    for (const mode of ['v7', 'v8'] as const) {
      const r = await runNode({ mode, cpus: 2, events: 4000, resets: 3, stacks: 200 });
      expect(r.report.stat).toEqual({ successes: r.report.successes, drops: r.report.fallbacks });
    }
  });
});

describe('v4 specifics', { timeout: 60_000 }, () => {
  it('the binary export is a private copy made at open: a reset does not make it fail', () => {
    const m = newMap('v4');
    for (let i = 0; i < 200; i++) m.insert(0, pop.words[i], pop.depths[i]);
    const reader = new BinDumpReader(m, 512);
    const first = reader.read()!;
    Atomics.store(m.i32, C.RECORDING, 0);
    expect(m.reset()).toBe('ok');
    const parts = [first as Uint8Array];
    for (;;) {
      const c = reader.read();
      expect(c).not.toBe(ESTALE);
      if (c === null) break;
      parts.push((c as Uint8Array).slice());
    }
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((o, p) => (bytes.set(p, o), o + p.length), 0);
    expect(decodeBinDump(bytes).records.length).toBe(200);
    // the same interleaving fails a v7 read
    const m7 = newMap('v7');
    for (let i = 0; i < 200; i++) m7.insert(0, pop.words[i], pop.depths[i]);
    const r7 = new BinDumpReader(m7, 512);
    r7.read();
    r7.read();
    m7.reset();
    let seen: unknown = null;
    for (let k = 0; k < 100 && seen === null; k++) {
      const c = r7.read();
      if (c === ESTALE || c === null) seen = c;
    }
    expect(seen).toBe(ESTALE);
  });

  it('ref_count saturates at INT_MAX in v4, at U32_MAX from v7 on', () => {
    for (const [mode, limit] of [
      ['v4', 0x7fffffff],
      ['v7', 0xffffffff],
    ] as const) {
      const m = newMap(mode);
      const slot = m.insert(0, pop.words[5], pop.depths[5]);
      const at = m.eltsAt + m.published(slot) * ELT_WORDS + 1;
      Atomics.store(m.u32, at, limit - 1);
      m.insert(0, pop.words[5], pop.depths[5]);
      m.insert(0, pop.words[5], pop.depths[5]);
      expect(m.elementRef(m.published(slot))).toBe(limit);
    }
  });
});

describe("the host's generation snapshot", { timeout: 60_000 }, () => {
  it('is a copy inside the reset, computed after it, and equals a direct look at the quiescent map', () => {
    const m = newMap('v7', 10);
    for (let i = 0; i < 400; i++) m.insert(0, pop.words[i % 300], pop.depths[i % 300]);
    // a duplicate by hand: copy slot a's element to a free slot under the same key
    const direct = snapshotMap(m);
    let copy = null as ReturnType<typeof captureMap> | null;
    expect(m.reset(() => (copy = captureMap(m)))).toBe('ok');
    expect(m.entries).toBe(0);
    expect(snapshotOf(copy!)).toEqual(direct);
    expect(direct.published).toBe(300);
  });
});
