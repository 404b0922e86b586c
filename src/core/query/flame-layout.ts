import { ROOT_NAME } from './flame.ts';
import type { FlameTree } from './api.ts';
import { compileMatcher } from '../base/text-match.ts';

/** Rectangles of a flame tree: node i spans [x0[i], x1[i]) of the width (0..1) at row depth[i]. */
export interface FlameLayout {
  x0: Float64Array;
  x1: Float64Array;
  depth: Int32Array;
  /** rows: the deepest depth + 1 */
  rows: number;
}

/**
 * Lays a tree out as nested intervals: the root spans [0, 1], each child a slice of its parent
 * proportional to its value, left to right in the tree's (descending value) order. Pure: the UI's
 * canvas and the SVG export draw from the same numbers. Rows grow downward for an icicle; flip
 * with `rows - 1 - depth` for a classic flame graph.
 */
export function layoutFlame(tree: FlameTree): FlameLayout {
  const n = tree.value.length;
  const x0 = new Float64Array(n);
  const x1 = new Float64Array(n);
  const cursor = new Float64Array(n);
  const total = n ? tree.value[0] : 0;
  let rows = 0;
  for (let i = 0; i < n; i++) {
    const p = tree.parent[i];
    if (p < 0) {
      x0[i] = 0;
      x1[i] = total > 0 ? 1 : 0;
    } else {
      x0[i] = cursor[p];
      x1[i] = total > 0 ? Math.min(x1[p], x0[i] + tree.value[i] / total) : x0[i];
      cursor[p] = x1[i];
    }
    cursor[i] = x0[i];
    if (tree.depth[i] + 1 > rows) rows = tree.depth[i] + 1;
  }
  return { x0, x1, depth: tree.depth, rows };
}

export interface FlameSearch {
  /** matching nodes, pre-order */
  nodes: Int32Array;
  /** share of the total weight under matching frames, nested matches counted once */
  share: number;
  /** that weight */
  value: number;
}

/**
 * Nodes whose function matches `query` (case-insensitive substring or /regex/flags; an invalid
 * regex matches nothing), and the share of the tree's weight beneath them: a match inside another
 * match adds nothing, since its weight is already under the outer one. The synthetic root
 * (named ROOT_NAME) never matches; a blank query matches nothing.
 */
export function searchFlame(tree: FlameTree, query: string): FlameSearch {
  const n = tree.value.length;
  if (!query.trim() || n === 0) return { nodes: new Int32Array(0), share: 0, value: 0 };
  const test = compileMatcher(query);
  const nameHit = tree.names.map((s) => test(s));
  const skipRoot = tree.names[tree.name[0]] === ROOT_NAME;
  const inside = new Uint8Array(n);
  const hits: number[] = [];
  let value = 0;
  for (let i = 0; i < n; i++) {
    const p = tree.parent[i];
    const under = p >= 0 && inside[p] === 1;
    const hit = nameHit[tree.name[i]] && !(i === 0 && skipRoot);
    if (hit) {
      hits.push(i);
      if (!under) value += tree.value[i];
    }
    inside[i] = under || hit ? 1 : 0;
  }
  const total = tree.value[0];
  return { nodes: Int32Array.from(hits), share: total > 0 ? value / total : 0, value };
}

/** Per node: the end (exclusive) of its subtree in the tree's pre-order, so a walk can skip it. */
export function subtreeEnds(tree: FlameTree): Int32Array {
  const n = tree.parent.length;
  const end = new Int32Array(n);
  for (let i = n - 1; i >= 0; i--) {
    if (end[i] < i + 1) end[i] = i + 1;
    const p = tree.parent[i];
    if (p >= 0 && end[p] < end[i]) end[p] = end[i];
  }
  return end;
}

/**
 * What a view of a tree draws: the nodes at least `minWidth` wide (as a share of the view), with
 * their spans in view units (0..1), and per parent one "..." span standing for its children too
 * narrow to draw (children run by descending value, so those are the last ones). A zoomed view
 * spans the zoomed node; its ancestors are drawn across.
 */
export interface VisibleFlame {
  nodes: Int32Array;
  x0: Float64Array;
  x1: Float64Array;
  /** the "..." spans: their parent (drawn on the row below it), span and summed value */
  moreParent: Int32Array;
  moreX0: Float64Array;
  moreX1: Float64Array;
  moreValue: Float64Array;
  /** how many children each "..." stands for */
  moreCount: Int32Array;
}

/**
 * Lays out only what a view shows: a walk from the zoomed node (or the root) that stops at the
 * first child narrower than `minWidth` (a share of the view: one pixel / the width) and sums
 * it and its later siblings into the parent's "...". Its cost follows what is drawn, not the tree.
 */
export function visibleFlame(tree: FlameTree, ends: Int32Array, zoom: number, minWidth: number): VisibleFlame {
  const nodes: number[] = [];
  const x0: number[] = [];
  const x1: number[] = [];
  const mp: number[] = [];
  const m0: number[] = [];
  const m1: number[] = [];
  const mv: number[] = [];
  const mc: number[] = [];
  const n = tree.parent.length;
  const total = n ? tree.value[0] : 0;
  if (n && total > 0) {
    const top = zoom >= 0 && zoom < n ? zoom : 0;
    const scale = total / tree.value[top] || 0;
    for (let p = tree.parent[top]; p >= 0; p = tree.parent[p]) {
      nodes.push(p);
      x0.push(0);
      x1.push(1);
    }
    // an explicit stack of (node, start in view units): rows are at most a stack's depth + 1 deep
    const stack: number[] = [top, 0];
    while (stack.length) {
      const start = stack.pop()!;
      const i = stack.pop()!;
      const w = (tree.value[i] / total) * scale;
      nodes.push(i);
      x0.push(start);
      x1.push(Math.min(1, start + w));
      let cursor = start;
      const kids: number[] = [];
      // a cut tree's children that were never made (too narrow) join the "..." of those too narrow here
      let rest = tree.hidden ? tree.hidden[i] : 0;
      let count = tree.hiddenCount ? tree.hiddenCount[i] : 0;
      for (let c = i + 1; c < ends[i]; c = ends[c]) {
        const cw = (tree.value[c] / total) * scale;
        if (cw < minWidth) {
          for (let d = c; d < ends[i]; d = ends[d]) {
            rest += tree.value[d];
            count++;
          }
          break;
        }
        kids.push(c, cursor);
        cursor += cw;
      }
      if (count > 0) {
        mp.push(i);
        m0.push(cursor);
        m1.push(Math.min(1, cursor + (rest / total) * scale));
        mv.push(rest);
        mc.push(count);
      }
      // pushed in reverse so they come off the stack left to right (pre-order)
      for (let k = kids.length - 2; k >= 0; k -= 2) stack.push(kids[k], kids[k + 1]);
    }
  }
  return {
    nodes: Int32Array.from(nodes),
    x0: Float64Array.from(x0),
    x1: Float64Array.from(x1),
    moreParent: Int32Array.from(mp),
    moreX0: Float64Array.from(m0),
    moreX1: Float64Array.from(m1),
    moreValue: Float64Array.from(mv),
    moreCount: Int32Array.from(mc),
  };
}
