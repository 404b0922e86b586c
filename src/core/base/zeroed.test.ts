import { describe, expect, it } from 'vitest';
import { zeroed } from './zeroed.ts';

describe('zeroed', () => {
  it('gives zeros of the asked length and type, with or without the fill', () => {
    for (const writes of [0, 10, 1_000_000]) {
      const f = zeroed(Float64Array, 100_000, writes);
      const i = zeroed(Int32Array, 100_000, writes);
      expect([f instanceof Float64Array, i instanceof Int32Array, f.length, i.length]).toEqual([true, true, 100_000, 100_000]);
      expect(f.every((x) => x === 0) && i.every((x) => x === 0)).toBe(true);
    }
  });
});
