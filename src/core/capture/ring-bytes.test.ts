import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RingBytes } from './ring-bytes.ts';

describe("RingBytes' dedup rate against a count of distinct (generation, slot) pairs as strings (property)", () => {
  const cookie = fc.tuple(
    fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 5 }), fc.constantFrom(2 ** 32 - 1, 2 ** 31, 2 ** 21 + 3)),
    fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constantFrom(2 ** 22 - 1, 2 ** 22, 2 ** 32 - 1, 2 ** 18)),
  );
  it('every pair counted once, whatever its generation and slot, in runs or interleaved', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(cookie, fc.integer({ min: 1, max: 4 })), { minLength: 1, maxLength: 200 }), (runs) => {
        const r = new RingBytes();
        const seen = new Set<string>();
        let n = 0;
        for (const [[g, slot], times] of runs)
          for (let k = 0; k < times; k++) {
            r.cookie(g, slot, 3);
            seen.add(`${g ?? -1}/${slot}`);
            n++;
          }
        expect(r.dedupRate).toBe(1 - seen.size / n);
        expect(r.result(n).records.distinctSlots).toBe(seen.size);
      }),
      { numRuns: 300 },
    );
  });
  it('past the bits budget (slots near 2^22 in many generations) the rest are counted exactly too', () => {
    const r = new RingBytes();
    const seen = new Set<string>();
    let n = 0;
    for (let g = 0; g < 40; g++)
      for (const slot of [2 ** 22 - 1, 5, 2 ** 22 - 1, 2 ** 21, 5]) {
        r.cookie(g, slot, 1);
        seen.add(`${g}/${slot}`);
        n++;
      }
    expect(seen.size).toBe(120);
    expect(r.dedupRate).toBe(1 - seen.size / n);
    expect(r.result(n).records.distinctSlots).toBe(120);
  });
});
