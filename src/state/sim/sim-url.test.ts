import { describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS, validate } from '../../core/sim/sim-options.ts';
import { DEFAULT_SETTINGS, liveStacksOf, simOptionsOf } from './sim-settings.ts';
import { formatSimSettings, ignoredNotice, parseSimSettings, parseSimSettingsNoted, URL_MAX_STACKS } from './sim-url.ts';

describe('simulator settings <-> query string', () => {
  it('leaves the defaults out, and keeps the keys it does not own', () => {
    expect(formatSimSettings(DEFAULT_SETTINGS)).toBe('');
    expect(formatSimSettings(DEFAULT_SETTINGS, '?view=simulator&cpus=0,2&sim.mode=v7')).toBe('?view=simulator&cpus=0%2C2');
    expect(parseSimSettings('', 8)).toEqual({});
  });

  it('round-trips every setting', () => {
    const o = {
      ...DEFAULT_SETTINGS,
      mode: 'v7' as const,
      workload: 'replay' as const,
      bits: 12,
      cpus: 6,
      stacks: 40,
      zipf: 1.3,
      depthMin: 4,
      depthMax: 80,
      speed: 0,
      windowUs: 20_000,
      ringKb: 8192,
      seed: 7,
      v8Variant: 'bin' as const,
      rcuOffShare: 0.05,
      phaseShift: 1,
    };
    const qs = formatSimSettings(o, '?view=simulator');
    expect(qs).toContain('view=simulator');
    expect(qs).toContain('sim.rcu=0.05');
    expect(qs).toContain('sim.phase=1');
    expect(qs).toContain('sim.depth=4-80');
    expect({ ...DEFAULT_SETTINGS, ...parseSimSettings(qs, 8) }).toEqual(o);
  });

  it('ignores unknown and invalid values', () => {
    const q =
      '?sim.mode=v9&sim.bits=9&sim.cpus=99&sim.stacks=x&sim.zipf=-1&sim.depth=30-10&sim.speed=1234&sim.window=5&sim.ring=100&sim.seed=-3&sim.workload=all&sim.v8=yes&sim.rcu=0.3&sim.phase=2&sim.extra=1';
    expect(parseSimSettings(q, 8)).toEqual({});
    expect(parseSimSettings('?sim.cpus=8&sim.ring=64&sim.speed=2', 8)).toEqual({ cpus: 8, ringKb: 64, speed: 2 });
    expect(parseSimSettings('?sim.cpus=9', 8)).toEqual({});
    // depth up to 80 (deeper than 64: recorded in full, never reaching the map), not beyond
    expect(parseSimSettings('?sim.depth=60-80', 8)).toEqual({ depthMin: 60, depthMax: 80 });
    expect(parseSimSettings('?sim.depth=60-81', 8)).toEqual({});
    expect(parseSimSettings('?sim.rcu=0&sim.phase=0.25', 8)).toEqual({ rcuOffShare: 0, phaseShift: 0.25 });
  });

  // Issue 18 point 11: the URL reaches the simulator's options; what it may not give is named in
  // the pane's notice with what the key takes, and the default stands (nothing clamped silently).
  it("keeps the interrupt rates and a contention scenario's 2 ms race window (issue 22: the URL dropped the window)", () => {
    const o = { ...DEFAULT_SETTINGS, irqRate: 0.05, nmiRate: 0.2, windowUs: 2000 };
    const q = formatSimSettings(o);
    expect(q).toContain('sim.irq=0.05');
    expect(q).toContain('sim.nmi=0.2');
    expect(q).toContain('sim.window=2000');
    expect(parseSimSettings(q, 8)).toMatchObject({ irqRate: 0.05, nmiRate: 0.2, windowUs: 2000 });
  });

  it('names every value it did not take, with what the key takes', () => {
    const q = '?sim.stacks=1000000&sim.depth=80-80&sim.window=1e300&sim.bits=99&sim.cpus=0&sim.zipf=1e300&sim.speed=1&sim.extra=1&view=simulator';
    const { settings, ignored } = parseSimSettingsNoted(q, 8);
    expect(settings).toEqual({ depthMin: 80, depthMax: 80 });
    expect(ignored).toEqual([
      { key: 'sim.bits', value: '99', takes: '10..18' },
      { key: 'sim.cpus', value: '0', takes: '1..8' },
      { key: 'sim.stacks', value: '1000000', takes: '1..100,000' },
      { key: 'sim.zipf', value: '1e300', takes: '0..4' },
      { key: 'sim.speed', value: '1', takes: '2, 5, 20, 200, 2000, 20000, 0' },
      { key: 'sim.window', value: '1e300', takes: '0, 20, 1000, 2000, 20000, 100000, 300000, 1000000' },
      { key: 'sim.extra', value: '1', takes: 'nothing (not a setting)' },
    ]);
    const notice = ignoredNotice(ignored)!;
    expect(notice).toMatch(/^Not taken from the address \(the defaults stand\): sim\.bits=99 \(takes 10\.\.18\); /);
    expect(notice).toContain('sim.stacks=1000000 (takes 1..100,000)');
    expect(ignoredNotice([])).toBeNull();
    // a long or odd value is cut in the notice
    expect(ignoredNotice(parseSimSettingsNoted(`?sim.mode=${'x'.repeat(500)}`, 8).ignored)).toBe(
      `Not taken from the address (the defaults stand): sim.mode=${'x'.repeat(40)}… (takes v4, v7, v8)`,
    );
  });

  it("the largest population the URL gives is within the simulator's limit (100,000 stacks x 80 frames)", () => {
    expect(URL_MAX_STACKS).toBe(100_000);
    const o = { ...DEFAULT_OPTIONS, ...simOptionsOf({ ...DEFAULT_SETTINGS, ...parseSimSettings('?sim.stacks=100000&sim.depth=80-80', 8) }, 4, null) };
    expect([o.stacks, o.depthMax]).toEqual([100_000, 80]);
    expect(() => validate(o)).not.toThrow();
    expect(() => validate({ ...o, stacks: 100_001 })).toThrow(/must be at most 8,000,000 frames/);
  });

  it('defaults to v8 as posted, with 0.1% of stacks taken while RCU is not watching', () => {
    expect(DEFAULT_SETTINGS.v8Variant).toBe('posted');
    expect(DEFAULT_SETTINGS.rcuOffShare).toBe(0.001);
    expect(DEFAULT_SETTINGS.phaseShift).toBe(0);
    expect(formatSimSettings({ ...DEFAULT_SETTINGS, v8Variant: 'bin' })).toBe('?sim.v8=bin');
  });
});

describe("a live run's options from the settings", () => {
  const opts = (o: Partial<typeof DEFAULT_SETTINGS>) => ({ ...DEFAULT_OPTIONS, ...simOptionsOf({ ...DEFAULT_SETTINGS, ...o }, 4, null) });

  it('runs v8 as posted by default: bits 14, no stack_map_bin, 0.1% of stacks discarded', () => {
    const o = opts({});
    expect(() => validate(o)).not.toThrow();
    expect([o.mode, o.v8Variant, o.bits, o.rcuOffShare]).toEqual(['v8', 'posted', 14, 0.001]);
    expect(opts({ v8Variant: 'bin' }).bits).toBe(DEFAULT_SETTINGS.bits);
  });

  it('asks only v8 to discard, and changes only a generated population per phase', () => {
    expect(opts({ mode: 'v7', rcuOffShare: 0.5 }).rcuOffShare).toBe(0);
    expect(opts({ phaseShift: 1 }).phaseShift).toBe(1);
    expect(opts({ workload: 'replay', phaseShift: 1 }).phaseShift).toBe(0);
    expect(() => validate(opts({ depthMin: 60, depthMax: 80 }))).not.toThrow();
    // every phase a live run can reach is built up front: 16 with a whole new population each
    expect(liveStacksOf({ ...DEFAULT_SETTINGS, stacks: 600, phaseShift: 1 })).toBe(16 * 600);
    expect(liveStacksOf({ ...DEFAULT_SETTINGS, stacks: 600, phaseShift: 0 })).toBe(600);
  });
});
