import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { layoutFlame, subtreeEnds, visibleFlame } from './flame-layout.ts';
import { TreeBuilder } from './flame-tree.ts';
import type { FlameTree } from './api.ts';

/** random trees: paths of up to 6 functions out of 5, weights 1..1000 (so some nodes are narrow) */
const paths = fc.array(fc.tuple(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 0, maxLength: 6 }), fc.integer({ min: 1, max: 1000 })), {
  minLength: 1,
  maxLength: 60,
});
const NAMES = ['a', 'b', 'c', 'd', 'e'];

function treeOf(ps: [number[], number][]): FlameTree {
  const b = new TreeBuilder(NAMES.length);
  for (const [p, w] of ps) b.add(p, w);
  return b.build(NAMES, 'all', null);
}

/** the reference: every node's full layout, kept when it and all its ancestors up to the view's top are wide enough */
function reference(t: FlameTree, zoom: number, minWidth: number) {
  const l = layoutFlame(t);
  const top = zoom >= 0 ? zoom : 0;
  const a = l.x0[top];
  const span = l.x1[top] - a;
  const inView = (i: number) => {
    for (let n = i; n >= 0; n = t.parent[n]) if (n === top) return true;
    return false;
  };
  const out = new Map<number, [number, number]>();
  for (let n = t.parent[top]; n >= 0; n = t.parent[n]) out.set(n, [0, 1]);
  for (let i = 0; i < t.parent.length; i++) {
    if (!inView(i)) continue;
    let wide = true;
    for (let n = i; n !== t.parent[top]; n = t.parent[n]) if ((l.x1[n] - l.x0[n]) / span < minWidth && n !== top) wide = false;
    if (wide) out.set(i, [(l.x0[i] - a) / span, (l.x1[i] - a) / span]);
  }
  return out;
}

describe('flame layout of what is visible', () => {
  it("property: the drawn nodes and their spans are the full layout's nodes wide enough, in view units", () => {
    fc.assert(
      fc.property(paths, fc.double({ min: 0.001, max: 0.3, noNaN: true }), fc.nat(), (ps, minWidth, z) => {
        const t = treeOf(ps);
        const zoom = z % 3 === 0 ? -1 : z % t.parent.length;
        const v = visibleFlame(t, subtreeEnds(t), zoom, minWidth);
        const want = reference(t, zoom, minWidth);
        expect([...v.nodes].sort((x, y) => x - y)).toEqual([...want.keys()].sort((x, y) => x - y));
        v.nodes.forEach((n, k) => {
          expect(v.x0[k]).toBeCloseTo(want.get(n)![0], 9);
          expect(v.x1[k]).toBeCloseTo(want.get(n)![1], 9);
        });
      }),
    );
  });

  it('property: culling loses no weight: drawn children + "..." + self = the parent', () => {
    fc.assert(
      fc.property(paths, fc.double({ min: 0.001, max: 0.5, noNaN: true }), (ps, minWidth) => {
        const t = treeOf(ps);
        const v = visibleFlame(t, subtreeEnds(t), -1, minWidth);
        const drawn = new Set(v.nodes);
        const sum = new Map<number, number>();
        for (const n of v.nodes) if (t.parent[n] >= 0) sum.set(t.parent[n], (sum.get(t.parent[n]) ?? 0) + t.value[n]);
        v.moreParent.forEach((p, k) => {
          expect(drawn.has(p)).toBe(true);
          sum.set(p, (sum.get(p) ?? 0) + v.moreValue[k]);
          // the "..." span is its weight's share
          expect(v.moreX1[k] - v.moreX0[k]).toBeCloseTo(v.moreValue[k] / t.value[0], 9);
          expect(v.moreCount[k]).toBeGreaterThan(0);
        });
        for (const n of v.nodes) {
          // a drawn node's children are all either drawn or in its "..."
          let children = 0;
          for (let i = 0; i < t.parent.length; i++) if (t.parent[i] === n) children += t.value[i];
          expect(children).toBe(t.value[n] - t.self[n]);
          expect(sum.get(n) ?? 0).toBe(children);
        }
        // and the "..." of a parent counts exactly its children that are not drawn
        v.moreParent.forEach((p, k) => {
          let missing = 0;
          for (let i = 0; i < t.parent.length; i++) if (t.parent[i] === p && !drawn.has(i)) missing++;
          expect(v.moreCount[k]).toBe(missing);
        });
      }),
    );
  });

  it('an empty tree draws nothing; a subtree end skips exactly the subtree', () => {
    const t = treeOf([
      [[0, 1], 5],
      [[0], 2],
      [[2], 1],
    ]);
    expect([...subtreeEnds(t)]).toEqual([4, 3, 3, 4]);
    const empty = new TreeBuilder(1).build(['x'], 'all', null);
    expect(visibleFlame(empty, subtreeEnds(empty), -1, 0.01).nodes.length).toBe(0);
  });
});
