import { ROOT_NAME } from './flame.ts';
import type { FlameTree } from './query-types.ts';
import { compileMatcher } from './text-match.ts';

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
