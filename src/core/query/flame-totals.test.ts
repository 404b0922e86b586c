import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExplorerData } from './explorer-data.ts';
import { selfOf, tableTotals } from './flame-totals.ts';
import { kernel, kernelSpec, stacks, type Shape } from '../testing/kernels.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { writeStackMapBin } from '../formats/stack-map-write.ts';

describe('the stack table totals', () => {
  // tableTotals against a walk up each weighed stack, its weight added to every node on the way (a
  // Map): few stacks take the sparse walk (touched), many the dense pass, both shapes
  for (const shape of ['callgraph', 'random'] as Shape[]) {
    it(`tableTotals on ${shape} stacks: each node's total is the weight of the stacks through it, sparse and dense`, () => {
      let sparse = 0;
      let dense = 0;
      fc.assert(
        fc.property(
          kernelSpec(120),
          fc.integer(),
          fc.integer({ min: 20, max: 80 }),
          fc.integer({ min: 1, max: 80 }),
          // whole weights are summed in 32 bits (dense), halves and sums past 2^32 in doubles
          fc.constantFrom(0, 0.5, 2 ** 31),
          (spec, seed, count, weighed, extra) => {
            const k = kernel(spec);
            const ips = stacks(k, shape, count, seed, 24);
            const bin = writeStackMapBin({ version: 2, generation: 1, littleEndian: true, records: ips.map((x, slot) => ({ slot, refCount: 1, ips: x })) });
            const d = new ExplorerData(
              ingestFiles([
                ['kallsyms', k.text],
                ['stack_map_bin', bin],
                ['trace', '# tracer: nop\n'],
              ]),
            );
            const parent = d.node.parent;
            // every other stack of the first `weighed` ones of the table, weights 1, 2, 3, ... (a zero among them)
            const ids: number[] = [];
            for (let s = 1; s < parent.length && ids.length < weighed; s += 2) ids.push(s);
            const weights = Float64Array.from(ids, (_, i) => (i === 1 ? 0 : i + 1 + extra));
            const want = new Map<number, number>();
            ids.forEach((s, i) => {
              if (weights[i] === 0) return;
              for (let n = s; ; n = parent[n]) {
                want.set(n, (want.get(n) ?? 0) + weights[i]);
                if (n === 0) break;
              }
            });
            const t = tableTotals(d, { stacks: Int32Array.from(ids), weights });
            for (let n = 0; n < parent.length; n++) expect(t.at(n)).toBe(want.get(n) ?? 0);
            if (t.touched) {
              sparse++;
              expect(Array.from(t.touched)).toEqual([...want.keys()].filter((n) => n > 0).sort((a, b) => a - b));
              // each walked node's children: those walked too, ascending, each with its total
              for (const n of want.keys()) {
                const kids: number[] = [];
                const values: number[] = [];
                t.childrenOf!(n, kids, values);
                const expected = [...want.keys()].filter((c) => c > 0 && parent[c] === n).sort((a, b) => a - b);
                expect(kids, `children of ${n}`).toEqual(expected);
                expect(values).toEqual(expected.map((c) => want.get(c)));
              }
            } else {
              dense++;
              expect(t.childrenOf).toBeNull();
            }
          },
        ),
        { numRuns: 90 },
      );
      expect(sparse).toBeGreaterThan(0);
      expect(dense).toBeGreaterThan(0);
    });
  }
});

describe('self weights', () => {
  // selfOf against a Map of each stack's summed weights read at each node, with fewer nodes than
  // stacks and more (the two ways it takes), stacks listed twice and weights of 0 among them
  it('selfOf: each node the weights of the stacks ending at it, by position', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 200 }), { maxLength: 60 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 200 }), fc.constantFrom(0, 1, 2.5, 7, -3)), { maxLength: 60 }),
        (nodes, weighed) => {
          const want = new Map<number, number>();
          for (const [s, x] of weighed) if (x !== 0) want.set(s, (want.get(s) ?? 0) + x);
          const w = { stacks: Int32Array.from(weighed, ([s]) => s), weights: Float64Array.from(weighed, ([, x]) => x) };
          expect(Array.from(selfOf(w, nodes))).toEqual(nodes.map((k) => want.get(k) ?? 0));
        },
      ),
      { numRuns: 300 },
    );
  });
});
