import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from './sim-settings.ts';
import { formatSimSettings, parseSimSettings } from './sim-url.ts';

describe('simulator settings <-> query string', () => {
  it('leaves the defaults out, and keeps the keys it does not own', () => {
    expect(formatSimSettings(DEFAULT_SETTINGS)).toBe('');
    expect(formatSimSettings(DEFAULT_SETTINGS, '?view=simulator&cpus=0,2&sim.mode=v7')).toBe('?view=simulator&cpus=0%2C2');
    expect(parseSimSettings('', 8)).toEqual({});
  });

  it('round-trips every setting', () => {
    const o = { ...DEFAULT_SETTINGS, mode: 'v7' as const, workload: 'replay' as const, bits: 12, cpus: 6, stacks: 40, zipf: 1.3, depthMin: 4, depthMax: 64, speed: 0, windowUs: 20_000, ringKb: 8192, seed: 7, v8Variant: 'posted' as const };
    const qs = formatSimSettings(o, '?view=simulator');
    expect(qs).toContain('view=simulator');
    expect({ ...DEFAULT_SETTINGS, ...parseSimSettings(qs, 8) }).toEqual(o);
  });

  it('ignores unknown and invalid values', () => {
    const q = '?sim.mode=v9&sim.bits=9&sim.cpus=99&sim.stacks=x&sim.zipf=-1&sim.depth=30-10&sim.speed=1234&sim.window=5&sim.ring=100&sim.seed=-3&sim.workload=all&sim.v8=yes&sim.extra=1';
    expect(parseSimSettings(q, 8)).toEqual({});
    expect(parseSimSettings('?sim.cpus=8&sim.ring=64&sim.speed=2', 8)).toEqual({ cpus: 8, ringKb: 64, speed: 2 });
    expect(parseSimSettings('?sim.cpus=9', 8)).toEqual({});
  });
});
