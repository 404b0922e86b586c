import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstK } from './first-k.ts';

// held to the platform's sort: the first k of the whole list sorted by the same total order
describe('firstK against a full sort (property)', () => {
  it('gives the first k of the sorted list, for any k, keys with many ties broken by position', () => {
    let heaps = 0;
    fc.assert(
      // k mostly under a quarter of the items (the heap), sometimes past it (the sort) or none
      fc.property(
        fc.integer({ min: 0, max: 400 }).chain((n) => fc.array(fc.integer({ min: 0, max: 5 }), { minLength: n, maxLength: n })),
        fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: -2, max: 420 })),
        fc.boolean(),
        (keys, k, asc) => {
          if (4 * k < keys.length && k > 0) heaps++;
          const items = keys.map((_, i) => i);
          // the top stacks' order: the key (either way), then the position
          const cmp = (a: number, b: number) => (asc ? keys[a] - keys[b] : keys[b] - keys[a]) || a - b;
          const want = items.slice().sort(cmp).slice(0, Math.max(0, k));
          expect(firstK(items, k, cmp)).toEqual(want);
        },
      ),
      { numRuns: 300 },
    );
    expect(heaps).toBeGreaterThan(100);
  });

  it('reads k as slice(0, k) does: a fraction cut down, NaN none', () => {
    const items = Array.from({ length: 40 }, (_, i) => 39 - i);
    expect(firstK(items, 2.7, (a, b) => a - b)).toEqual([0, 1]);
    expect(firstK(items, NaN, (a, b) => a - b)).toEqual([]);
    expect(firstK(items, Infinity, (a, b) => a - b)).toEqual(items.slice().sort((a, b) => a - b));
  });

  it('leaves the list it is given as it was', () => {
    const items = [5, 3, 9, 1, 7, 2, 8, 6, 4, 0, 11, 10];
    const copy = items.slice();
    expect(firstK(items, 2, (a, b) => a - b)).toEqual([0, 1]);
    expect(items).toEqual(copy);
  });
});
