import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildLod, countRange, lodBytes, lodShift, MIN_SHIFT } from './timeline-lod.ts';

/** the plain count: every position of [p0, p1) looked at */
function plainCount(codes: number[], cells: number, p0: number, p1: number): number[] {
  const out = new Array<number>(cells).fill(0);
  for (let p = Math.max(0, p0); p < Math.min(codes.length, p1); p++) if (codes[p] >= 0) out[codes[p]]++;
  return out;
}

/** random codes (some -1), a number of counters, a block shift small enough to give several levels */
const capture = fc
  .record({ cells: fc.integer({ min: 1, max: 9 }), shift: fc.integer({ min: 0, max: 4 }), n: fc.integer({ min: 0, max: 700 }), seed: fc.integer() })
  .map(({ cells, shift, n, seed }) => {
    let x = seed | 1;
    const codes: number[] = [];
    for (let i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      // runs of one code, as bursts on one CPU give, and gaps of -1
      const r = (x >>> 0) % (cells + 2);
      codes.push(r >= cells ? (i > 0 && r === cells ? codes[i - 1] : -1) : r);
    }
    return { cells, shift, codes };
  });

describe('timeline level of detail', () => {
  it('every block of every level holds the plain count of its positions', () => {
    fc.assert(
      fc.property(capture, ({ cells, shift, codes }) => {
        const lod = buildLod(codes.length, cells, (p) => codes[p], shift);
        expect(lod.levels.length).toBeGreaterThanOrEqual(1);
        lod.levels.forEach((level, k) => {
          const size = 2 ** (shift + k);
          const blocks = level.length / cells;
          expect(blocks).toBe(Math.floor(codes.length / size));
          for (let b = 0; b < blocks; b++)
            expect(Array.from(level.subarray(b * cells, (b + 1) * cells))).toEqual(plainCount(codes, cells, b * size, (b + 1) * size));
        });
        // the top level has a single block (or none below one whole block)
        const top = lod.levels[lod.levels.length - 1];
        expect(top.length / cells).toBeLessThanOrEqual(1);
      }),
      { numRuns: 200 },
    );
  });

  it('counts any run of positions exactly as the plain loop does', () => {
    fc.assert(
      fc.property(
        capture,
        fc.array(fc.tuple(fc.integer({ min: -5, max: 720 }), fc.integer({ min: -5, max: 720 })), { minLength: 1, maxLength: 20 }),
        ({ cells, shift, codes }, runs) => {
          const lod = buildLod(codes.length, cells, (p) => codes[p], shift);
          for (const [a, b] of runs) {
            const [p0, p1] = a <= b ? [a, b] : [b, a];
            const acc = new Uint32Array(cells);
            countRange(lod, p0, p1, (p) => codes[p], acc);
            expect(Array.from(acc)).toEqual(plainCount(codes, cells, p0, p1));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('adjacent runs add up to the whole: columns split anywhere sum to the events', () => {
    fc.assert(
      fc.property(capture, fc.array(fc.integer({ min: 0, max: 700 }), { maxLength: 30 }), ({ cells, shift, codes }, cuts) => {
        const lod = buildLod(codes.length, cells, (p) => codes[p], shift);
        const bounds = [0, ...cuts.filter((c) => c <= codes.length).sort((x, y) => x - y), codes.length];
        const acc = new Uint32Array(cells);
        for (let i = 1; i < bounds.length; i++) countRange(lod, bounds[i - 1], bounds[i], (p) => codes[p], acc);
        expect(Array.from(acc)).toEqual(plainCount(codes, cells, 0, codes.length));
      }),
    );
  });

  it('reads whole blocks: a run over aligned blocks never asks for a position inside them', () => {
    const codes = Array.from({ length: 1 << 12 }, (_, i) => i % 3);
    const lod = buildLod(codes.length, 3, (p) => codes[p], 4);
    const asked: number[] = [];
    const acc = new Uint32Array(3);
    countRange(lod, 5, 4005, (p) => (asked.push(p), codes[p]), acc);
    expect(Array.from(acc)).toEqual(plainCount(codes, 3, 5, 4005));
    // only the ragged ends: up to the first block boundary (16) and from the last (4000)
    expect(asked).toEqual([...Array.from({ length: 11 }, (_, i) => 5 + i), ...Array.from({ length: 5 }, (_, i) => 4000 + i)]);
  });

  it('holds at most 2 bytes per position, and keeps its diagnostics for bad sizes', () => {
    for (const cells of [1, 8, 32, 264, 2048, 70000]) {
      const shift = lodShift(cells);
      expect(shift).toBeGreaterThanOrEqual(MIN_SHIFT);
      const n = (1 << shift) * 8 + 3;
      const lod = buildLod(n, cells, (p) => p % cells, shift);
      expect(lodBytes(lod) / n).toBeLessThanOrEqual(2);
    }
    expect(() => buildLod(-1, 4, () => 0)).toThrow(/positions/);
    expect(() => buildLod(10, 0, () => 0)).toThrow(/counters/);
    expect(() => buildLod(10, 4, () => 0, 40)).toThrow(/shift/);
  });
});
