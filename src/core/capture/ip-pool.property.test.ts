import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from '../formats/diagnostics.ts';
import { createKallsymsParser } from '../formats/kallsyms.ts';
import { Symbolizer } from '../formats/symbolizer.ts';
import { createStackMapBinParser } from '../formats/stack-map-bin.ts';
import { writeStackMapBin } from '../formats/stack-map-write.ts';
import { kernel, kernelSpec, plainSymbolizer, stacks, type Shape } from '../testing/kernels.ts';
import { IpPool, tooManyAddresses } from './ip-pool.ts';
import { StackTable } from './stack-table.ts';

const symbolFile = (text: string) => {
  const p = createKallsymsParser({ file: 'kallsyms', diagnostics: new DiagnosticLog('kallsyms') });
  p.push(new TextEncoder().encode(text));
  return p.end();
};

const columnsOf = (ips: bigint[][]) => {
  const p = createStackMapBinParser({ file: 'b', diagnostics: new DiagnosticLog('b') });
  p.push(writeStackMapBin({ version: 2, generation: 1, littleEndian: true, records: ips.map((x, i) => ({ slot: i, refCount: 1, ips: x })) }));
  return p.end().columns!;
};

/**
 * IpPool.addColumns, both ways (the address table; the two passes over address keys, from the
 * start or after the table gave up partway), against the plain symbolizer: each ip's frame
 * named as the BigInt search names it, one frame per distinct name (through the address table
 * made in the order the names first appear), hits and misses counted per ip. Several dumps through one pool, and a frame
 * table that already holds some of the sites (a trace's full stacks read first).
 */
describe("IpPool against a BigInt binary search, on both generators' shapes (property)", () => {
  const ways = [
    ['the address table', undefined],
    ['two passes', 0],
    ['the table giving up partway', 5],
  ] as const;
  for (const shape of ['callgraph', 'random'] as Shape[]) {
    it.each(ways)(`${shape}: %s`, (_, hashLimitForTests) => {
      fc.assert(
        fc.property(kernelSpec(300), fc.integer(), fc.integer({ min: 1, max: 3 }), fc.nat({ max: 6 }), (spec, seed, dumps, known) => {
          const k = kernel(spec);
          const plain = plainSymbolizer(k.lines);
          const table = new StackTable();
          const frames = table.frames;
          // some sites and addresses already there, as a trace's full stacks would leave them
          const before = stacks(k, shape, known, seed + 1, 6)
            .flat()
            .map(plain.key);
          for (const key of before) frames.intern(key);
          const counted = { ...plain.counts };
          const s = new Symbolizer(symbolFile(k.text));
          const pool = new IpPool(table, s, { hashLimitForTests });
          const names = new Set(Array.from({ length: frames.size }, (_, f) => frames.name(f)));
          const order = Array.from({ length: frames.size }, (_, f) => frames.name(f));
          const want: string[] = [];
          for (let d = 0; d < dumps; d++) {
            const ips = stacks(k, shape, 25, seed + 100 * d);
            const start = pool.addColumns(columnsOf(ips));
            const flat = ips.flat();
            const keys = flat.map(plain.key);
            for (const key of keys) if (!names.has(key)) (names.add(key), order.push(key));
            want.push(...keys);
            expect(Array.from(pool.ids.subarray(start, start + flat.length), (f) => frames.name(f))).toEqual(keys);
          }
          // one frame per distinct name: through the address table in the order the names first
          // came; the key pass makes a dump's new frames in address order instead
          const made = Array.from({ length: frames.size }, (_, f) => frames.name(f));
          if (hashLimitForTests === undefined) expect(made).toEqual(order);
          else expect([...made].sort()).toEqual([...order].sort());
          expect([s.hits, s.misses]).toEqual([plain.counts.hits - counted.hits, plain.counts.misses - counted.misses]);
          // the frames appended without the index are found by value afterwards
          for (const key of new Set(want)) expect(frames.lookup(key)).toBe(made.indexOf(key));
        }),
        { numRuns: 25 },
      );
    });
  }
});

/**
 * The sample that skips the address table (tooManyAddresses) against the dump's distinct
 * addresses counted exactly (a Set of every ip): on both generators' shapes, dumps of ~2^17 ips
 * and more, with the limit a factor of 8 either side of the exact count, and any hash key.
 */
describe('tooManyAddresses against an exact count of distinct addresses', () => {
  for (const shape of ['callgraph', 'random'] as Shape[]) {
    it(`${shape}: says more than the limit when there are 8x as many, not when there are 8x fewer`, () => {
      fc.assert(
        fc.property(fc.integer(), fc.integer(), fc.integer(), (seed, k0, k1) => {
          const k = kernel({ seed, functions: 2000, modules: 10, repeatEvery: 17, aliasEvery: 29 });
          const ips = stacks(k, shape, 8000, seed, 40);
          const c = columnsOf(ips);
          const distinct = new Set(ips.flat()).size;
          expect(c.ips).toBeGreaterThanOrEqual(1 << 16);
          expect(tooManyAddresses(c, Math.floor(distinct / 8), k0, k1)).toBe(true);
          expect(tooManyAddresses(c, distinct * 8, k0, k1)).toBe(false);
        }),
        { numRuns: 6 },
      );
    });
  }
});
