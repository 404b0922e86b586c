import { describe, expect, it } from 'vitest';
import { makeCase, Prng, runCase } from './fuzz.ts';
import { fuzzSeeds, regressionCases } from './fuzz-seeds.ts';

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

  it.each(regressionCases().map((c) => [c.label, c] as const))('regression %s still holds', async (_label, c) => {
    expect(await runCase(c, MAX_MS)).toBeNull();
  }, 60_000);
});
