import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REC, RECORD_SIZE, Ring } from '../sim/ring.ts';
import { CountRing } from './whatif-ring.ts';

describe('CountRing', () => {
  it("property: keeps the same event records as the simulator's seed Ring after every record, any sizes and sequence", () => {
    const record = fc.oneof(
      fc.constant([REC.EVENT, 56] as const),
      fc.constant([REC.ID, RECORD_SIZE.id] as const),
      fc.constant([REC.COOKIE, RECORD_SIZE.cookie] as const),
      fc.integer({ min: 1, max: 127 }).map((d) => [REC.FULL, RECORD_SIZE.full(d)] as const),
      fc.integer({ min: 1, max: 64 }).map((w) => [REC.EVENT, 8 * w] as const),
    );
    fc.assert(
      fc.property(fc.integer({ min: 128, max: 1024 }), fc.array(record, { minLength: 1, maxLength: 600 }), (k, recs) => {
        const size = 8 * k;
        const ring = new Ring(null, size, 'seed');
        const fast = new CountRing(size);
        for (const [type, bytes] of recs) {
          if (bytes > size) continue;
          ring.reserve(type, bytes, -1, -1, 0);
          fast.reserve(type, bytes);
          expect(fast.eventsIn).toBe(ring.eventsIn);
        }
      }),
      { numRuns: 200, seed: 1201 },
    );
  });

  it('a record larger than the whole buffer is not written, and what the buffer holds stays', () => {
    const r = new CountRing(1024);
    r.reserve(REC.EVENT, 56);
    r.reserve(REC.FULL, RECORD_SIZE.full(200));
    expect([r.eventsIn, r.tooLarge]).toEqual([1, 1]);
  });

  it('refuses a size the simulator refuses', () => {
    expect(() => new CountRing(1000)).toThrow(RangeError);
    expect(() => new CountRing(1028)).toThrow(RangeError);
  });
});
