import type { FlameTree } from '../../core/query/api.ts';

/** The nodes from a root down to `node`, root first. */
export function pathTo(tree: FlameTree, node: number): number[] {
  const out: number[] = [];
  for (let n = node; n >= 0; n = tree.parent[n]) out.push(n);
  return out.reverse();
}

/** The node reached by following function names from a root, or -1 (the tree changed under a saved zoom). */
export function nodeByPath(tree: FlameTree, names: readonly string[]): number {
  let node = -1;
  for (const want of names) {
    let found = -1;
    for (let i = node + 1; i < tree.parent.length; i++) {
      if (tree.parent[i] === node && tree.names[tree.name[i]] === want) {
        found = i;
        break;
      }
      if (node >= 0 && tree.depth[i] <= tree.depth[node]) break;
    }
    if (found < 0) return -1;
    node = found;
  }
  return node;
}
