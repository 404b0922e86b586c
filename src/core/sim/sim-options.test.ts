import { describe, expect, it } from 'vitest';
import { SCENARIOS } from './scenarios.ts';
import { checkOptions, DEFAULT_OPTIONS, LIMITS, raceWindowSeconds, validate, type SimOptions } from './sim-options.ts';

const opts = (o: Partial<SimOptions>): SimOptions => ({ ...DEFAULT_OPTIONS, ...o });
const refused = (o: Partial<SimOptions>) => {
  try {
    checkOptions(opts(o));
  } catch (e) {
    expect(e).toBeInstanceOf(RangeError);
    return (e as Error).message;
  }
  return null;
};

// Issue 18 point 11: options the simulator cannot do in reasonable time or memory are refused
// with their bounds (each case here ran for 150 s without ending, or took 5.1 GB, before).
describe('simulator option limits', () => {
  it('refuses what never ended or ran out of memory, naming the bound', () => {
    expect(refused({ raceWindowUs: 1e300 })).toBe('race window (µs) must be 0..1,000,000');
    expect(refused({ resets: 100000, events: 1e6 })).toBe('resets must be 0..1,000');
    expect(refused({ stacks: 1_000_000, depthMin: 80, depthMax: 80 })).toMatch(
      /^stacks x the deepest depth must be at most 8,000,000 frames, not 1,000,000 x 80 = 80,000,000/,
    );
    expect(refused({ events: 1e9 })).toBe('events must be 4..100,000,000');
    expect(refused({ ringKb: 65536 })).toBe('ring KiB must be 1..8,192');
    expect(refused({ ringKb: 8192, cpus: 4 })).toMatch(/^ring KiB x cpus must be at most 16,384 KiB, not 8,192 x 4 = 32,768/);
    expect(refused({ ringKb: 4096, cpus: 4 })).toBeNull();
    // 101 generations of min(200,000 stacks, 2^18, 20M / 101 events) = 198,020 entries, of 20 frames
    expect(refused({ mode: 'v7', bits: 18, stacks: 200_000, resets: 100, events: 20_000_000 })).toMatch(
      /^\(resets \+ 1\) generations x 198,020 entries each x 20 frames = 400,000,400 frames/,
    );
    // a new population per phase: 4 phases (3 resets) of 100,000 stacks, at depth 30
    expect(refused({ stacks: 100_000, depthMin: 30, depthMax: 30, phaseShift: 1 })).toMatch(
      /\(400,000 stacks over the phases phase shift makes\) must be at most 8,000,000 frames, not 400,000 x 30 = 12,000,000/,
    );
    expect(refused({ raceWindowUs: 1_000_000 })).toMatch(/^the race window would hold the run for up to 509 s/);
  });

  it('estimates the race windows as counted by hand: each claim once over the CPUs side by side, 3 waits a reset', () => {
    // the defaults: 4 generations x 500 stacks = 2,000 claims (under 40,000 events), 500 a CPU; 3 resets x 3 steps
    expect(raceWindowSeconds(opts({ raceWindowUs: 10_000 }))).toBeCloseTo((500 + 9) * 0.01, 9);
    // CPU resets: 4 x floor(10,000 / 100) = 400 more generations; claims capped by the 40,000 events
    expect(raceWindowSeconds(opts({ raceWindowUs: 1000, cpuResetEvery: 100 }))).toBeCloseTo((40_000 / 4 + 3 * (3 + 400 / 4)) * 0.001, 9);
    expect(raceWindowSeconds(opts({}))).toBe(0);
  });

  it('takes the defaults, every scenario, runs measured within the limits, and a live run', () => {
    expect(refused({})).toBeNull();
    for (const sc of Object.values(SCENARIOS)) expect(refused(sc.options)).toBeNull();
    // measured: 14.5 s, 0.93 GB; 8.4 s, 0.83 GB; 11 s, 375 MB; 39 s, 825 MB; 24 s, 266 MB
    expect(refused({ mode: 'v7', bits: 18, stacks: 200_000, resets: 10, events: 2_000_000 })).toBeNull();
    expect(refused({ stacks: 100_000, depthMin: 80, depthMax: 80 })).toBeNull();
    expect(refused({ resets: LIMITS.resets })).toBeNull();
    expect(refused({ mode: 'v7', bits: 18, resets: 1000, events: 2_500_000, stacks: 2400 })).toBeNull();
    expect(refused({ events: 40_000_000 })).toBeNull();
    expect(refused({ raceWindowUs: 100_000 })).toBeNull();
    // a live run goes on until stopped (1e9 events); its ring buffers are the pane's choices (up to
    // 8 MB) times its CPUs, not bounded together here
    expect(() => validate(opts({ events: 1e9 - (1e9 % 8), cpus: 8, ringKb: 8192 }))).not.toThrow();
    expect(() => validate(opts({ events: 1e9 + 8, cpus: 8 }))).toThrow(/events must be 8..1,000,000,000/);
    expect(() => validate(opts({ raceWindowUs: 2e6 }))).toThrow(/race window/);
  });
});
