import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { IntPositions } from './int-positions.ts';

describe('IntPositions', () => {
  it("answers as a Map of each key's first position does, for keys in and out of the list", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 300 }),
        fc.array(fc.integer(), { maxLength: 50 }),
        (keys, others) => {
          // the second method: a Map filled front to back, keeping the first position of a repeat
          const first = new Map<number, number>();
          keys.forEach((k, i) => {
            if (!first.has(k)) first.set(k, i);
          });
          const p = new IntPositions(keys);
          for (const k of [...keys, ...others.map((x) => x | 0)]) expect(p.of(k)).toBe(first.get(k) ?? -1);
        },
      ),
    );
  });

  it('holds keys that share their low bits (node numbers a stride of the table apart) and an empty list', () => {
    const keys = Array.from({ length: 256 }, (_, i) => i << 12);
    const p = new IntPositions(keys);
    keys.forEach((k, i) => expect(p.of(k)).toBe(i));
    expect(p.of((1 << 12) | 1)).toBe(-1);
    expect(new IntPositions([]).of(0)).toBe(-1);
  });
});
