import { describe, expect, it } from 'vitest';
import { stackKey } from './ledger.ts';
import { createMapBuffer, ipsToWords } from './map-layout.ts';
import { REC } from './ring-records.ts';
import { SharedStackMap } from './shared-map.ts';
import { hashSeedOf, MAX_PHASES } from './sim-options.ts';
import { Simulation } from './simulation.ts';
import { collidingStacks, SLOW, slowMotionOptions, SlowMotionScript } from './slow-motion.ts';

const SEED = 1;
const hashSeed = hashSeedOf(SEED);
const { stacks, kernel } = collidingStacks(SEED, SLOW.bits, SLOW.perPhase, 3, hashSeed);

function newMap(mode: 'v7' | 'v8') {
  const p = { mode, bits: SLOW.bits, cpus: 1, hashSeed };
  return new SharedStackMap(createMapBuffer(p), p);
}
const insert = (m: SharedStackMap, s: BigUint64Array) => m.insert(0, ipsToWords(s), s.length);
const keys = stacks.map(stackKey);
const stackOf = (m: { published(slot: number): number; elementIps(e: number): BigUint64Array }, slot: number) =>
  keys.indexOf(stackKey(m.elementIps(m.published(slot))));

describe('slow motion: after each reset, the new stacks take the old ones’ slots', () => {
  it('the real insert path puts rank r of every phase in the slot rank r of phase 0 had, and the stacks differ', () => {
    for (const mode of ['v7', 'v8'] as const) {
      const m = newMap(mode);
      const first = stacks.slice(0, SLOW.perPhase).map((s) => insert(m, s));
      expect(new Set(first).size).toBe(SLOW.perPhase);
      for (let p = 1; p < 3; p++) {
        expect(m.reset()).toBe('ok');
        const again = stacks.slice(p * SLOW.perPhase, (p + 1) * SLOW.perPhase).map((s) => insert(m, s));
        expect(again).toEqual(first);
        for (let r = 0; r < SLOW.perPhase; r++) {
          const a = stacks[(p - 1) * SLOW.perPhase + r];
          const b = stacks[p * SLOW.perPhase + r];
          // another leaf function, as the trace prints it
          expect(kernel.printFrame(b[0]).split('+')[0]).not.toBe(kernel.printFrame(a[0]).split('+')[0]);
        }
      }
    }
  });

  it('v7 reads an old id back as the stack that took its slot; v8 refuses the old cookie', () => {
    for (const mode of ['v7', 'v8'] as const) {
      const m = newMap(mode);
      const script = new SlowMotionScript(mode, stackOf);
      let ms = 0;
      const type = mode === 'v8' ? REC.COOKIE : REC.ID;
      stacks.slice(0, SLOW.perPhase).forEach((s, i) => script.write({ cpu: i % 2, type, slot: insert(m, s), generation: m.generation, stack: i, ms: ms++ }));
      expect(script.phaseWritten).toBe(true);
      expect(m.reset()).toBe('ok');
      script.reset(ms++, m.generation);
      script.look(m, ms++); // nothing refilled yet
      expect(script.beats.filter((b) => b.kind === 'wrong' || b.kind === 'refused')).toHaveLength(0);
      const b0 = SLOW.perPhase;
      script.write({ cpu: 0, type, slot: insert(m, stacks[b0]), generation: m.generation, stack: b0, ms: ms++ });
      script.look(m, ms++);
      const read = script.beats.filter((b) => b.kind === 'wrong' || b.kind === 'refused');
      expect(read).toHaveLength(1);
      expect(read[0]).toMatchObject({ kind: mode === 'v7' ? 'wrong' : 'refused', stack: 0, other: b0, slot: script.beats[0].slot });
      expect(script.beats.some((b) => b.kind === 'refilled' && b.stack === b0)).toBe(true);
      expect(script.roundOver).toBe(false);
    }
  });

  it('a Simulation built from the options replays the stacks in phases, with the seed’s hash seed', () => {
    const sim = new Simulation(slowMotionOptions('v7', SEED), true, true);
    expect(sim.config.hashSeed).toBe(hashSeed);
    expect(sim.config.phase).toEqual({ size: SLOW.perPhase, shift: SLOW.perPhase });
    expect(sim.population.ips).toHaveLength(SLOW.perPhase * MAX_PHASES);
    expect(sim.population.ips.slice(0, 3 * SLOW.perPhase).map(stackKey)).toEqual(keys);
  });
});

describe('one clock', () => {
  it('the log’s milliseconds since the start print as the records’ trace seconds (recordClock)', async () => {
    const { traceSeconds } = await import('./live.ts');
    const { recordClock } = await import('./cpu-loop.ts');
    const t0 = performance.timeOrigin + performance.now() - 12_345;
    const ms = performance.timeOrigin + performance.now() - t0;
    expect(traceSeconds(ms)).toBeCloseTo(recordClock(t0), 2);
  });
});
