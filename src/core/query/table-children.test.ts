import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StackTable } from '../capture/stack-table.ts';
import { kernel, kernelSpec, stacks, type Shape } from '../testing/kernels.ts';
import { TableChildren } from './table-children.ts';

/** The second method: every node pushed onto its parent's list, in node order (what the counting sort over parents gave). */
function plainChildren(parent: Int32Array): number[][] {
  const out: number[][] = Array.from({ length: parent.length }, () => []);
  for (let k = 1; k < parent.length; k++) out[parent[k]].push(k);
  return out;
}

function expectSame(parent: Int32Array): void {
  const want = plainChildren(parent);
  const kids = new TableChildren(parent);
  const scratch: number[] = [];
  for (let t = 0; t < parent.length; t++) expect(kids.of(t, scratch)).toEqual(want[t]);
}

describe('TableChildren against a plain list per parent (property)', () => {
  it('any parent column whose parents come before their children', () => {
    fc.assert(
      fc.property(
        // each node's parent: often the node before it (a tail), else any earlier node
        fc.array(fc.tuple(fc.boolean(), fc.nat()), { maxLength: 300 }),
        (picks) => {
          const parent = new Int32Array(picks.length + 1);
          parent[0] = -1;
          picks.forEach(([tail, x], i) => (parent[i + 1] = tail ? i : x % (i + 1)));
          expectSame(parent);
        },
      ),
    );
  });

  it('a parent column of no node but the root, and of one chain', () => {
    expectSame(Int32Array.of(-1));
    expectSame(Int32Array.of(-1, 0, 1, 2, 3));
    expectSame(Int32Array.of(-1, 0, 0, 0, 0));
  });

  // the stack table's own column, from the two generators' shapes (testing/kernels.ts): call-graph
  // walks share callers near the root (branches few, deep), random frames hardly share a node
  // (every stack a branch of the root)
  for (const shape of ['callgraph', 'random'] as Shape[]) {
    it(`the stack table's parent column, ${shape} stacks`, () => {
      fc.assert(
        fc.property(kernelSpec(120), fc.integer(), fc.integer({ min: 1, max: 200 }), (spec, seed, count) => {
          const table = new StackTable();
          for (const ips of stacks(kernel(spec), shape, count, seed, 24)) table.intern(ips.map((ip) => ip.toString(16)));
          expectSame(table.columns().parent);
        }),
        { numRuns: 40 },
      );
    });
  }
});
