import { describe, expect, it } from 'vitest';
import { formatRetention, RETENTION_SCENARIOS, retentionArithmetic, retentionExperiment } from './retention.ts';
import { runNode } from './run-node.ts';

// The letter-shaped scenario with one stack depth against what its sizes give by hand: the
// simulator's retention is the buffer arithmetic, nothing else (no stack falls back).

describe('retention experiment', () => {
  it('gives by arithmetic what a full 512 KB buffer holds in both ring models', () => {
    const a = retentionArithmetic(512 * 1024, 56, 172);
    expect(a.seed.off).toBe('524,288 / 228 = 2299.5');
    expect(a.seed.v8).toBe('524,288 / 72 = 7281.8');
    // 129 pages; (56 + 4) + (172 + 8) = 240 B a pair, 17 in 4080 B; 60 + 16 = 76, 53; 60 + 20 = 80, 51
    expect(a.kernel.off).toBe('17/page (4080 / 240), x 128..129 pages = 2,176..2,193');
    expect(a.kernel.v7).toBe('53/page (4080 / 76), x 128..129 pages = 6,784..6,837');
    expect(a.kernel.v8).toBe('51/page (4080 / 80), x 128..129 pages = 6,528..6,579');
  });

  it('the letter-shaped run (56 B events, 20-frame stacks, one CPU) keeps what the arithmetic says', async () => {
    const scenario = RETENTION_SCENARIOS.find((s) => s.kind === 'letter-shaped' && s.options.depthMin === 20)!;
    const r = await retentionExperiment({ ...scenario, options: { ...scenario.options, events: 12_000 } }, runNode);
    const [seed, kernel] = r.models;
    expect(seed.rows.map((x) => [x.run, x.events, x.bytesPerEvent])).toEqual([
      ['off', 2299, 228], // floor(524288 / 228)
      ['v7', 7710, 68], // floor(524288 / 68)
      ['v8', 7281, 72], // floor(524288 / 72)
    ]);
    expect(kernel.rows.map((x) => x.bytesPerEvent)).toEqual([228, 68, 72]); // data only, headers apart
    const within = (n: number, perPage: number) => n >= 128 * perPage && n <= 129 * perPage;
    expect(within(kernel.rows[0].events, 17)).toBe(true);
    expect(within(kernel.rows[1].events, 53)).toBe(true);
    expect(within(kernel.rows[2].events, 51)).toBe(true);
    for (const m of r.models) {
      expect(m.offAgree).toBe(true);
      expect(m.fullWithMap).toEqual({ v7: 0, v8: 0 });
      expect(m.v8OverV7).toBeLessThan(1);
    }
    const md = formatRetention([r]);
    expect(md).toContain('| 4,867 | 107.4 | 1.00 |');
    expect(md).toContain('| 10,552 | 49.8 | 2.17 |');
    expect(md).not.toContain('fitted, not a reproduction');
  }, 60_000);

  it('labels every row of a fitted scenario', () => {
    const fitted = RETENTION_SCENARIOS.filter((s) => s.kind === 'fitted');
    expect(fitted.length).toBeGreaterThan(0);
    for (const s of fitted) expect(s.sizes.some((x) => x.source === 'fitted')).toBe(true);
    for (const s of RETENTION_SCENARIOS.filter((x) => x.kind !== 'fitted')) expect(s.sizes.some((x) => x.source === 'fitted')).toBe(false);
    const row = { label: 'stackmap off', ringModel: 'seed' as const, run: 'off' as const, events: 1, bytesPerEvent: 1, gain: 1 };
    const md = formatRetention([
      { scenario: fitted[0], models: [{ ringModel: 'seed', rows: [row, row], v8OverV7: 1, fullWithMap: { v7: 0, v8: 0 }, offAgree: true }], arithmetic: null },
    ]);
    const rows = md.split('\n').filter((l) => l.startsWith(`| ${fitted[0].name}`));
    expect(rows.length).toBe(2);
    for (const l of rows) expect(l).toContain('fitted, not a reproduction');
  });
});
