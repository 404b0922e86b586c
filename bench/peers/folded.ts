// The peers' input: the folded form of exactly the stacks and weights our flame graph shows for a
// generated capture, made once per capture and kept beside it in the cache.
//
// Our flame graph merges frames by function name (the frame key without `+0xoff`, core/query/api.ts
// FlameTree), top-down, weighted by occurrences. The folded text comes from the app's own export
// (`exportSelection(data, 'folded', ALL)`, frames as `sym+0xoff`) with each frame's offset cut and equal
// lines merged, so speedscope and d3-flame-graph build the same tree. Two checks before a peer
// sees it: a plain trie over the folded lines must give our flame tree's node count, leaves and
// total weight (from Explorer.flame in Node), and the total must equal the trace's events.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readFiles } from '../../src/cli/read-files.ts';
import { Explorer } from '../../src/core/query/explorer.ts';
import { ALL } from '../../src/core/query/api.ts';
import { exportSelection } from '../../src/core/export/exports.ts';
import { summarize } from '../../src/core/capture/summary.ts';
import type { Generated } from '../generated.ts';

export interface FoldedInput {
  path: string;
  bytes: number;
  /** distinct lines (stacks after merging by function name) */
  lines: number;
  /** sum of the weights: the capture's stack records */
  total: number;
  /** leaves of the merged tree (the trie below) */
  leaves: number;
  /** our whole flame tree's nodes, its root included */
  treeNodes: number;
  /** the nodes the page draws from: the tree cut to what a view shows (FlameGraph.tsx asks with a cull) */
  pageNodes: number;
  /** the summary's unique stacks (the page's summary-unique-stacks) */
  uniqueStacks: number;
  events: number;
}

/** A frame key without its offset: `fn+0x1c/0x80 [mod]` or `fn+0x1c` to `fn [mod]`, `fn`. */
export const functionOf = (frame: string) => frame.replace(/\+0x[0-9a-f]+(\/0x[0-9a-f]+)?/i, '');

/** The plain reference: a trie over folded lines, counting nodes (root included), leaves and weight. */
export function trieCounts(folded: string): { nodes: number; leaves: number; total: number } {
  const root = new Map<string, unknown>();
  let nodes = 1;
  let total = 0;
  for (const line of folded.split('\n')) {
    if (!line) continue;
    const sp = line.lastIndexOf(' ');
    total += Number(line.slice(sp + 1));
    let m = root;
    for (const f of line.slice(0, sp).split(';')) {
      let c = m.get(f) as Map<string, unknown> | undefined;
      if (!c) {
        m.set(f, (c = new Map()));
        nodes++;
      }
      m = c;
    }
  }
  let leaves = 0;
  const stack = [root];
  while (stack.length) {
    const m = stack.pop()!;
    if (m.size === 0) leaves++;
    for (const c of m.values()) stack.push(c as Map<string, unknown>);
  }
  return { nodes, leaves: root.size === 0 ? 0 : leaves, total };
}

/** Leaves of a FlameTree (nodes no other node names as parent), the root not counted. */
function treeLeaves(parent: Int32Array): number {
  const hasChild = new Uint8Array(parent.length);
  for (let i = 0; i < parent.length; i++) if (parent[i] >= 0) hasChild[parent[i]] = 1;
  let n = 0;
  for (let i = 1; i < parent.length; i++) if (!hasChild[i]) n++;
  return n;
}

/** The capture's folded file (made and checked on the first call, then read from the cache). */
export async function foldedInput(cap: Generated): Promise<FoldedInput> {
  const path = join(cap.dir, 'flame.folded');
  const meta = join(cap.dir, 'flame.folded.json');
  if (existsSync(meta) && existsSync(path)) {
    const saved = JSON.parse(readFileSync(meta, 'utf8')) as FoldedInput;
    if (saved.pageNodes !== undefined) return saved;
  }
  const { capture, failed } = await readFiles(cap.files);
  if (failed.length) throw new Error(`cannot read ${failed.map((f) => `${f.file}: ${f.reason}`).join(', ')}`);
  const ex = new Explorer(capture);
  const merged = new Map<string, number>();
  for (const line of exportSelection(ex.data, 'folded', ALL, { weight: 'occurrences' }).split('\n')) {
    if (!line) continue;
    const sp = line.lastIndexOf(' ');
    const key = line.slice(0, sp).split(';').map(functionOf).join(';');
    merged.set(key, (merged.get(key) ?? 0) + Number(line.slice(sp + 1)));
  }
  const text = [...merged].map(([k, w]) => `${k} ${w}`).join('\n') + '\n';
  // by function: the folded file above merges the frames by function for the peers
  const req = { selection: ALL, mode: 'top-down', weight: 'occurrences', focus: null, highlightStack: null, granularity: 'function' } as const;
  const { tree } = ex.flame(req);
  const pageNodes = ex.flame({ ...req, cull: { minShare: 1 / 4096, zoom: [] } }).tree.parent.length;
  const trie = trieCounts(text);
  const ours = { nodes: tree.parent.length, leaves: treeLeaves(tree.parent), total: tree.total };
  if (trie.nodes !== ours.nodes || trie.leaves !== ours.leaves || trie.total !== ours.total) {
    throw new Error(`the folded file and our flame tree disagree: folded ${JSON.stringify(trie)}, flame ${JSON.stringify(ours)}`);
  }
  if (trie.total !== cap.report.events) throw new Error(`folded total ${trie.total} is not the trace's ${cap.report.events} stack records`);
  writeFileSync(path, text);
  const out: FoldedInput = {
    path,
    bytes: Buffer.byteLength(text),
    lines: merged.size,
    total: trie.total,
    leaves: trie.leaves,
    treeNodes: ours.nodes,
    pageNodes,
    uniqueStacks: summarize(capture).uniqueStacks,
    events: cap.report.events,
  };
  writeFileSync(meta, JSON.stringify(out, null, 2) + '\n');
  return out;
}
