import { describe, expect, it } from 'vitest';
import { makeCase, Prng, runCase } from './fuzz.ts';
import { fuzzSeeds, REAL_SEEDS, regressionCases } from './fuzz-seeds.ts';
import { realIt } from './real-traces.ts';

// A bounded fuzz run in npm test (a longer one: npm run fuzz). A case holds when loadFiles does
// not throw, ends within the bound, and every file's lines and bytes add up.

const CASES = 1200;
const MAX_MS = 15_000;

describe('fuzzing whole captures', () => {
  it(`${CASES} mutated captures load, in bounded time, with every line and byte accounted`, async () => {
    const seeds = fuzzSeeds();
    const r = new Prng(0x5eed);
    const failures: string[] = [];
    for (let i = 0; i < CASES; i++) {
      const c = makeCase(r.pick(seeds), r);
      const why = await runCase(c, MAX_MS);
      if (why) failures.push(`${c.label}: ${why}`);
    }
    expect(failures).toEqual([]);
  }, 240_000);

  realIt('the real traces are among the seeds (without them the run above starts from the sample and fixtures alone)', () => {
    const names = fuzzSeeds().flatMap((s) => s.map((f) => f.name));
    expect(REAL_SEEDS.filter((f) => !names.includes(f))).toEqual([]);
  });

  it.each(regressionCases().map((c) => [c.label, c] as const))(
    'regression %s still holds',
    async (_label, c) => {
      expect(await runCase(c, MAX_MS)).toBeNull();
    },
    60_000,
  );
});
