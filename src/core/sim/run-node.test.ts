import { describe, expect, it } from 'vitest';
import { BinDumpReader, ESTALE } from './dump-reader.ts';
import { stackKey } from './ledger.ts';
import { C, MODES } from './map-layout.ts';
import { REC } from './ring.ts';
import { runNode } from './run-node.ts';
import type { RunResult } from './sim-report.ts';

// Real concurrency: 4 worker_threads CPUs on one SharedArrayBuffer. Robust on 2 cores: race
// windows (the inserting CPU sleeps between claim and publish) and enough resets make the races
// happen; nothing asserts on timing.

const T = 30_000;

function invariants(r: RunResult): void {
  const x = r.report;
  expect(x.attempts).toBe(x.successes + x.fallbacks + x.bypasses);
  expect(x.attempts).toBe(x.events);
  for (const s of r.snapshots) {
    expect(s.entries).toBeLessThanOrEqual(x.capacity);
    expect(s.published).toBeLessThanOrEqual(s.entries);
  }
  expect(x.entries).toBeLessThanOrEqual(x.capacity);
  const stacks = r.items.filter((i) => i.rec.type !== REC.EVENT).length;
  expect(x.ledger.records).toBe(stacks);
  expect(x.ledger.full + x.ledger.ids).toBe(stacks);
  expect(x.ledger.correct + x.ledger.wrong + x.ledger.detected + x.ledger.unresolved).toBe(x.ledger.ids);
  // full stacks carry the stack they stood for
  for (const { rec } of r.items) {
    if (rec.type !== REC.FULL) continue;
    expect(Array.from(rec.words!)).toEqual(Array.from(r.population.words[rec.truthStack]));
  }
}

/** No two published slots of one dump (one generation) hold the same stack. */
function uniquePerDump(r: RunResult): void {
  for (const d of r.dumps) {
    if (d.format !== 'bin') continue;
    const keys = d.records.map((x) => stackKey(x.ips));
    expect(new Set(keys).size).toBe(keys.length);
  }
}

describe('simulated CPUs on worker_threads', () => {
  it.each(MODES)(
    '%s: attempts = successes + fallbacks + bypasses, entries within capacity',
    async (mode) => {
      const r = await runNode({ mode, v8Variant: 'bin', cpus: 4, events: 8000, resets: 6, bits: 10, stacks: 600, zipf: 0.8, raceWindowUs: 20 });
      invariants(r);
      expect(r.report.resets.done).toBe(6);
      expect(r.report.generations).toBe(7);
    },
    T,
  );

  it(
    'v8: at most one copy of a stack per generation, and no cookie misresolves over many resets',
    async () => {
      // heavy contention on few stacks, with a race window: the v7 path would duplicate here
      const hot = await runNode({ mode: 'v8', v8Variant: 'bin', cpus: 4, events: 4000, resets: 10, bits: 10, stacks: 4, zipf: 0, raceWindowUs: 200 });
      invariants(hot);
      expect(hot.snapshots.length).toBe(11);
      for (const s of hot.snapshots) expect(s.duplicates).toBe(0);
      uniquePerDump(hot);
      expect(hot.report.fallbackReasons.inFlight).toBeGreaterThan(0);
      expect(hot.report.ledger.wrong).toBe(0);
      // slot reuse across many resets, dumps only at the end: old cookies are detected, never wrong
      const reuse = await runNode({
        mode: 'v8',
        v8Variant: 'bin',
        cpus: 4,
        events: 16000,
        resets: 16,
        bits: 10,
        stacks: 600,
        zipf: 0.7,
        dumps: 'end',
        ringKb: 2048,
        raceWindowUs: 5,
      });
      invariants(reuse);
      for (const s of reuse.snapshots) expect(s.duplicates).toBe(0);
      expect(reuse.report.ledger.wrong).toBe(0);
      expect(reuse.report.ledger.detected).toBeGreaterThan(0);
      expect(reuse.report.ledger.correct).toBeGreaterThan(0);
    },
    T,
  );

  it(
    'v7: with resets and slot reuse the ledger counts silently wrong ids',
    async () => {
      const r = await runNode({
        mode: 'v7',
        cpus: 4,
        events: 16000,
        resets: 16,
        bits: 10,
        stacks: 600,
        zipf: 0.7,
        dumps: 'end',
        ringKb: 2048,
        raceWindowUs: 5,
      });
      invariants(r);
      expect(r.report.ledger.wrong).toBeGreaterThan(0);
    },
    T,
  );

  it(
    'v7: heavy contention on few stacks with a race window produces duplicates, each after a lost cmpxchg',
    async () => {
      // v7 document: "the `cmpxchg` loser advances by one slot and may insert the same stack again";
      // the claim race (200 µs between reading the key as empty and the cmpxchg) makes losers certain,
      // the race window makes CPUs meet unpublished slots, which v7 waits for (no copy from those)
      const r = await runNode({ mode: 'v7', cpus: 4, events: 4000, resets: 10, bits: 10, stacks: 4, zipf: 0, raceWindowUs: 200, claimRaceUs: 200 });
      invariants(r);
      expect(r.report.duplicates).toBeGreaterThan(0);
      expect(r.report.duplicates).toBeLessThanOrEqual(r.report.lostSameHash);
      // duplicates are self-consistent entries: every id still resolves to its own stack in its generation
      expect(r.report.ledger.wrong).toBe(0);
    },
    T,
  );

  it.each(['v7', 'v8'] as const)(
    '%s: a pool run dry leaves gravestones and fallbacks',
    async (mode) => {
      const r = await runNode({ mode, v8Variant: 'bin', cpus: 4, events: 16000, resets: 0, bits: 10, stacks: 3000, zipf: 0 });
      invariants(r);
      const x = r.report;
      expect(x.entries).toBe(1024);
      expect(x.gravestones).toBeGreaterThan(0);
      expect(x.fallbackReasons.poolEmpty).toBe(x.gravestones);
      expect(x.fallbacks).toBeGreaterThan(x.fallbackReasons.poolEmpty);
      expect(x.ledger.wrong).toBe(0);
    },
    T,
  );

  it(
    'v8: a reset landing during a binary dump read fails it with ESTALE',
    async () => {
      let outcome: unknown = 'not read';
      let resetsSeen = 0;
      const r = await runNode(
        { mode: 'v8', v8Variant: 'bin', cpus: 4, events: 40000, resets: 0, bits: 12, stacks: 600, cpuResetEvery: 250 },
        {
          during: async (sim) => {
            const sleep = () => new Promise((res) => setTimeout(res, 1));
            // open once the map holds enough stacks for several 512-byte passes
            let reader = new BinDumpReader(sim.map, 512);
            for (let i = 0; i < 5000 && reader.nrStacks < 20; i++) {
              await sleep();
              reader = new BinDumpReader(sim.map, 512);
            }
            reader.read(); // header
            reader.read(); // first pass
            const before = Atomics.load(sim.map.i32, C.RESETS);
            for (let i = 0; i < 5000 && Atomics.load(sim.map.i32, C.RESETS) === before; i++) await sleep();
            resetsSeen = Atomics.load(sim.map.i32, C.RESETS) - before;
            outcome = reader.nrStacks > 0 ? reader.read() : 'empty';
          },
        },
      );
      expect(resetsSeen).toBeGreaterThan(0);
      expect(outcome).toBe(ESTALE);
      expect(r.report.resets.byCpus).toBeGreaterThan(0);
      invariants(r);
    },
    T,
  );

  it(
    'v4: resets only with recording off, and they leave no stale id in the ring buffers',
    async () => {
      const r = await runNode({ mode: 'v4', cpus: 4, events: 12000, resets: 5, bits: 10, stacks: 600, cpuResetEvery: 700, raceWindowUs: 5 });
      invariants(r);
      expect(r.report.resets.done).toBe(5);
      expect(r.report.resets.refused).toBeGreaterThan(0); // the CPUs' own resets, while recording
      const ids = r.items.filter((i) => i.rec.type === REC.ID);
      expect(ids.length).toBeGreaterThan(0);
      for (const { rec } of ids) expect(rec.truthGeneration).toBe(r.finalGeneration);
      // only the last generation's events are left
      const perCpu = r.report.events / 4;
      for (const { rec } of r.items) if (rec.type === REC.EVENT) expect(rec.a).toBeGreaterThanOrEqual(Math.floor((5 * perCpu) / 6));
    },
    T,
  );
});
