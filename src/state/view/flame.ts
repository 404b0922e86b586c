import type { FlameTree } from '../../core/query/api.ts';
import { searchFlame } from '../../core/query/flame-layout.ts';

/** Pure flame graph helpers of the core, for the UI (rectangles; search). */
export { layoutFlame, subtreeEnds, visibleFlame, type FlameLayout, type VisibleFlame } from '../../core/query/flame-layout.ts';

/** Search hits as a per-node mask, and the share of the weight beneath them. */
export function flameMatch(tree: FlameTree, query: string): { mask: Uint8Array; share: number; hits: number } {
  const s = searchFlame(tree, query);
  const mask = new Uint8Array(tree.parent.length);
  for (const n of s.nodes) mask[n] = 1;
  return { mask, share: s.share, hits: s.nodes.length };
}
