import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capture, dumpsArb, recordsArb, treeLines } from '../testing/flame-captures.ts';
import { flame, stackWeights } from './flame.ts';
import { ALL, type FlameWeight, type Selection } from './api.ts';
import type { Granularity } from '../capture/function-tree.ts';
import { subtreeEnds, visibleFlame } from './flame-layout.ts';
import { stackHashOf } from './stack-hash.ts';
import type { FlameTree } from './api.ts';
import { ExplorerData } from './explorer-data.ts';
import { line } from '../testing/explorer-fixtures.ts';
import { kernel, kernelSpec, stacks, type Shape } from '../testing/kernels.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { writeStackMapBin } from '../formats/stack-map-write.ts';

/** The node reached by names from the root (the page's nodeByPath). */
function nodeByNames(t: FlameTree, names: readonly string[]): number {
  let node = 0;
  for (const want of names.slice(1)) {
    let found = -1;
    for (let i = node + 1; i < t.parent.length && found < 0; i++) if (t.parent[i] === node && t.names[t.name[i]] === want) found = i;
    if (found < 0) return -1;
    node = found;
  }
  return node;
}

// The culled top-down tree (flame-culled.ts) held to the whole tree TreeBuilder merges stack by
// stack (itself held to a plain Map tree in flame-aggregate.test.ts): with nothing culled the
// same tree node for node; culled, the whole tree's nodes that are wide enough under the zoomed
// node, and the zoomed node's ancestors, in the same order with the same totals.

const base = { mode: 'top-down' as const, focus: null };

describe('culled flame graph against the whole tree (property)', () => {
  it('with nothing culled, is the whole tree: nodes, totals, frames, highlight and search marks', () => {
    fc.assert(
      fc.property(
        recordsArb,
        dumpsArb,
        fc.constantFrom<FlameWeight>('occurrences', 'refcount'),
        fc.constantFrom<Selection>(ALL, { ...ALL, cpus: [0, 2] }),
        fc.constantFrom<Granularity>('function', 'site'),
        fc.nat(),
        fc.constantFrom('', 'g', '/^h/', 'f+0x2', 'zz', 'stack:'),
        (recs, dumps, weight, selection, granularity, pick, term) => {
          const d = capture(recs, dumps);
          const w = stackWeights(d, selection, weight);
          const highlightStack = w.stacks.length ? w.stacks[pick % w.stacks.length] : null;
          // `stack:` searches for one stack by its hash (the highlighted one's, or one of the root's)
          const search = term === 'stack:' ? `stack:${stackHashOf(d, highlightStack ?? 0)}` : term;
          const req = { ...base, selection, weight, granularity, highlightStack, ...(search ? { search } : {}) };
          const whole = flame(d, req);
          const culled = flame(d, { ...req, cull: { minShare: 0, zoom: [] } });
          expect(treeLines(culled.tree)).toEqual(treeLines(whole.tree));
          expect(culled.tree.names.length).toBeLessThanOrEqual(culled.tree.parent.length);
          expect(new Set(culled.tree.names).size).toBe(culled.tree.names.length);
          expect(Array.from(culled.tree.highlight)).toEqual(Array.from(whole.tree.highlight));
          expect(culled.tree.total).toBe(whole.tree.total);
          if (search) {
            expect(Array.from(culled.search!.mask)).toEqual(Array.from(whole.search!.mask));
            expect([culled.search!.stacks, culled.search!.value, culled.search!.error]).toEqual([
              whole.search!.stacks,
              whole.search!.value,
              whole.search!.error,
            ]);
          }
        },
      ),
      { numRuns: 120 },
    );
  });

  it("culled at a share under a zoomed node, keeps exactly the whole tree's nodes that wide there, and the ancestors", () => {
    fc.assert(
      fc.property(
        recordsArb,
        dumpsArb,
        fc.constantFrom<Granularity>('function', 'site'),
        fc.constantFrom(0.01, 0.1, 0.3, 0.5, 0.9, 1),
        fc.nat(),
        (recs, dumps, granularity, minShare, pick) => {
          const d = capture(recs, dumps);
          const req = { ...base, selection: ALL, weight: 'occurrences' as const, granularity, highlightStack: null };
          const t = flame(d, req).tree;
          // zoom into any node of the whole tree, by its names from the root
          const z = pick % t.parent.length;
          const path: number[] = [];
          for (let n = z; n >= 0; n = t.parent[n]) path.unshift(n);
          const zoom = path.map((n) => t.names[t.name[n]]);
          const inZoom = (i: number) => {
            for (let n = i; n >= 0; n = t.parent[n]) if (n === z) return true;
            return false;
          };
          const keep = (i: number) => path.includes(i) || (inZoom(i) && t.value[i] > 0 && t.value[i] >= minShare * t.value[z]);
          const want = treeLines(t).filter((_, i) => keep(i));
          const culled = flame(d, { ...req, cull: { minShare, zoom } }).tree;
          expect(treeLines(culled)).toEqual(want);
          // parents as the whole tree has them, over the kept nodes
          const ids = Array.from(t.value.keys()).filter(keep);
          expect(Array.from(culled.parent, (p) => (p < 0 ? -1 : ids[p]))).toEqual(ids.map((i) => t.parent[i]));
          // under the zoomed node, what was not made: the weight and count of each node's dropped children
          ids.forEach((i, at) => {
            if (!inZoom(i)) return;
            const dropped = Array.from(t.value.keys()).filter((c) => t.parent[c] === i && !keep(c) && t.value[c] > 0);
            expect([culled.hidden![at], culled.hiddenCount![at]]).toEqual([dropped.reduce((x, c) => x + t.value[c], 0), dropped.length]);
          });
          // and a view at least as coarse as the cut draws the same as from the whole tree
          const zc = culled.parent.length ? nodeByNames(culled, zoom) : -1;
          for (const width of [minShare, Math.min(1, 2 * minShare), Math.max(minShare, 0.5)]) {
            const a = visibleFlame(t, subtreeEnds(t), z, width);
            const b = visibleFlame(culled, subtreeEnds(culled), zc, width);
            expect(Array.from(b.nodes, (n) => ids[n])).toEqual(Array.from(a.nodes));
            expect([Array.from(b.x0), Array.from(b.x1)]).toEqual([Array.from(a.x0), Array.from(a.x1)]);
            expect(Array.from(b.moreParent, (n) => ids[n])).toEqual(Array.from(a.moreParent));
            expect([Array.from(b.moreValue), Array.from(b.moreCount), Array.from(b.moreX0)]).toEqual([
              Array.from(a.moreValue),
              Array.from(a.moreCount),
              Array.from(a.moreX0),
            ]);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("names each string once: a function called as the root is given the root's name index", () => {
    const d = capture(
      [
        {
          cpu: 0,
          stack: [
            ['g', 1],
            ['all', 2],
          ],
        },
        { cpu: 1, stack: [['all', 1]] },
      ],
      [[['h', 1]]],
    );
    for (const granularity of ['function', 'site'] as Granularity[]) {
      const req = { ...base, selection: ALL, weight: 'occurrences' as const, granularity, highlightStack: null };
      const whole = flame(d, req).tree;
      const t = flame(d, { ...req, cull: { minShare: 0, zoom: [] } }).tree;
      expect(treeLines(t)).toEqual(treeLines(whole));
      expect(new Set(t.names).size, granularity).toBe(t.names.length);
      const named = (s: string) => Array.from(t.name).filter((x) => t.names[x] === s).length;
      // by function the root and function `all` are one string; by site the frame is `all+0x2`
      expect(named('all')).toBe(granularity === 'function' ? 2 : 1);
    }
  });

  it('unknown zoom names stop at the deepest node found', () => {
    const d = capture(
      [
        {
          cpu: 0,
          stack: [
            ['f', 1],
            ['g', 2],
          ],
        },
      ],
      [[['h', 1]], [['k', 1]], [['m', 1]]],
    );
    const req = { ...base, selection: ALL, weight: 'occurrences' as const, granularity: 'function' as const, highlightStack: null };
    const t = flame(d, { ...req, cull: { minShare: 0, zoom: ['all', 'g', 'nosuch'] } }).tree;
    expect(treeLines(t)).toEqual(treeLines(flame(d, { ...req, cull: { minShare: 0, zoom: ['all', 'g'] } }).tree));
  });

  // the two generators' shapes (testing/kernels.ts): a dump of call-graph walks (callers shared
  // near the root) or of random frames (hardly a node shared), symbolized by its kallsyms, every
  // stack cited once by the trace with its ref_count as weight
  for (const shape of ['callgraph', 'random'] as Shape[]) {
    it(`on ${shape} stacks from a stack_map_bin and kallsyms: each share's cut is the whole tree's wide nodes, with their totals`, () => {
      fc.assert(
        fc.property(
          kernelSpec(120),
          fc.integer(),
          fc.integer({ min: 1, max: 60 }),
          fc.constantFrom<Granularity>('function', 'site'),
          fc.constantFrom<FlameWeight>('occurrences', 'refcount'),
          fc.constantFrom(0, 1 / 4096, 0.01, 0.1, 0.5),
          // the trace's first few stacks only: fewer than 1/64 of the table's nodes, the sparse totals
          fc.constantFrom(0, 1, 3),
          fc.nat(),
          (spec, seed, count, granularity, weight, minShare, few, pick) => {
            const k = kernel(spec);
            const ips = stacks(k, shape, count, seed, 24);
            const bin = writeStackMapBin({
              version: 2,
              generation: 1,
              littleEndian: true,
              records: ips.map((x, slot) => ({ slot, refCount: 1 + (slot % 5), ips: x })),
            });
            const trace =
              [
                '# tracer: nop',
                ...ips.flatMap((_, slot) => {
                  const ts = (10 + slot * 0.001).toFixed(6);
                  return [line('p-1', slot % 3, ts, 'ev: x'), line('p-1', slot % 3, ts, `<stack_id ${slot} gen 1>`)];
                }),
              ].join('\n') + '\n';
            const d = new ExplorerData(
              ingestFiles([
                ['kallsyms', k.text],
                ['stack_map_bin', bin],
                ['trace', trace],
              ]),
            );
            const selection: Selection = few === 0 ? ALL : { ...ALL, range: [10, 10 + (few - 1) * 0.001 + 0.0005] };
            // a highlighted stack of the dump, in the selection or not: marked as far as its path goes in the tree
            const highlightStack = 1 + (pick % (d.node.parent.length - 1));
            const req = { ...base, selection, weight, granularity, highlightStack };
            const t = flame(d, req).tree;
            const keep = (i: number) => i === 0 || (t.value[i] > 0 && t.value[i] >= minShare * t.value[0]);
            const culled = flame(d, { ...req, cull: { minShare, zoom: [] } }).tree;
            expect(treeLines(culled)).toEqual(treeLines(t).filter((_, i) => keep(i)));
            if (minShare === 0) expect(Array.from(culled.highlight)).toEqual(Array.from(t.highlight));
            expect(culled.total).toBe(t.total);
            expect(t.total).toBeGreaterThan(0);
            // nothing is lost: at every made node, made children + what was not made + self = the node
            for (let i = 0; i < culled.parent.length; i++) {
              let kids = 0;
              for (let c = i + 1; c < culled.parent.length; c++) if (culled.parent[c] === i) kids += culled.value[c];
              expect(kids + culled.hidden![i] + culled.self[i]).toBeCloseTo(culled.value[i], 6);
            }
          },
        ),
        { numRuns: 40 },
      );
    });
  }
});
