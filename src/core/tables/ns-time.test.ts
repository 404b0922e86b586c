// ns-time.ts against decimal arithmetic in BigInt on the printed text (the second method): a time
// printed as `S.F` is what parseFloat makes of it, as the readers do.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nanosecondsOf } from './ns-time.ts';
import { printedNs } from '../testing/test-helpers.ts';

const printed = (sec: number, frac: number, digits: number) => `${sec}.${String(frac).padStart(digits, '0')}`;
const convert = (times: string[], micro: boolean) => Array.from(nanosecondsOf(Float64Array.from(times, parseFloat), [{ from: 0, to: times.length, micro }]));

describe('nanosecondsOf', () => {
  it('microseconds: exact below 2^32 s of uptime (136 years: half an ulp of the time, and of it times 1e6, stay under half a microsecond)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 999_999 })), { minLength: 1, maxLength: 50 }), (xs) => {
        const times = xs.map(([s, f]) => printed(s, f, 6));
        expect(convert(times, true)).toEqual(times.map(printedNs));
      }),
      { numRuns: 300 },
    );
  });

  it('nanoseconds: exact below 2^22 s of uptime (48 days: half an ulp of the time, and of it times 1e9, stay under half a nanosecond)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 ** 22 - 1 }), fc.integer({ min: 0, max: 999_999_999 })), { minLength: 1, maxLength: 50 }),
        (xs) => {
          const times = xs.map(([s, f]) => printed(s, f, 9));
          expect(convert(times, false)).toEqual(times.map(printedNs));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('spans: each its own precision; nothing outside a span is written', () => {
    const times = ['17280000.000001', '1.000000001', '2.5'];
    const out = nanosecondsOf(Float64Array.from(times, parseFloat), [
      { from: 0, to: 1, micro: true },
      { from: 1, to: 2, micro: false },
    ]);
    expect(Array.from(out)).toEqual([printedNs(times[0]), printedNs(times[1]), 0n]);
  });
});
