// The differential flame graph: one side's tree drawn, each node carrying the other side's weight
// on the same path of names, for two sides (two captures, or two generations of one).
import type { FlameRequest, FlameResult, FlameTree, Selection } from './api.ts';
import type { ExplorerData } from './explorer-data.ts';
import { flame } from './flame.ts';

/** One side of a comparison: the data it reads and the selection within it. */
export interface ComparisonSide {
  data: ExplorerData;
  sel: Selection;
}

/** Each node's weight in `other` on the same path of names (0 where `other` has no such path). */
export function otherOnPaths(tree: FlameTree, other: FlameTree): Float64Array {
  const byPath = new Map<string, number>();
  const keys: string[] = new Array(other.name.length);
  for (let i = 0; i < other.name.length; i++) {
    const p = other.parent[i];
    keys[i] = (p >= 0 ? keys[p] + '\u001f' : '') + other.names[other.name[i]];
    byPath.set(keys[i], other.value[i]);
  }
  const out = new Float64Array(tree.name.length);
  const mine: string[] = new Array(tree.name.length);
  for (let i = 0; i < tree.name.length; i++) {
    const p = tree.parent[i];
    mine[i] = (p >= 0 ? mine[p] + '\u001f' : '') + tree.names[tree.name[i]];
    out[i] = byPath.get(mine[i]) ?? 0;
  }
  return out;
}

/**
 * The differential, top-down: the `widths` side's tree drawn, each node with the other side's
 * weight on its path. `req`'s highlighted stack is kept on the before side only when both sides
 * are of one capture (`sameCapture`: a stack id means nothing in another capture).
 */
export function differentialFlame(
  sides: { before: ComparisonSide; after: ComparisonSide },
  req: FlameRequest,
  widths: 'after' | 'before',
  sameCapture: boolean,
): FlameResult {
  const { before, after } = sides;
  const base = { ...req, compare: undefined };
  const beforeReq = { ...base, selection: before.sel, highlightStack: sameCapture ? req.highlightStack : null };
  const afterReq = { ...base, selection: after.sel };
  const [drawn, other] =
    widths === 'before'
      ? [flame(before.data, beforeReq), flame(after.data, { ...afterReq, cull: undefined })]
      : [flame(after.data, afterReq), flame(before.data, { ...beforeReq, cull: undefined })];
  drawn.tree.other = otherOnPaths(drawn.tree, other.tree);
  drawn.tree.otherTotal = other.tree.total;
  return drawn;
}
