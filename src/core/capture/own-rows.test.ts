import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OwnRows } from './own-rows.ts';

describe('OwnRows against indexOf (property)', () => {
  it('gives each record its own row, or -1, asked in ascending order with gaps and repeats', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(200)), fc.array(fc.nat(220), { maxLength: 80 }), (rows, asks) => {
        const sorted = Int32Array.from(rows.sort((a, b) => a - b));
        const own = new OwnRows(sorted);
        for (const r of asks.sort((a, b) => a - b)) expect(own.rowOf(r)).toBe(Array.from(sorted).indexOf(r));
      }),
      { numRuns: 300 },
    );
  });
});
