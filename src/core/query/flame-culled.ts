import { functionTree, type Granularity } from '../capture/function-tree.ts';
import type { ExplorerData } from './explorer-data.ts';
import { lazyFrames, preOrder, type FlameTreeFrames } from './flame-tree.ts';
import type { FlameTree } from './api.ts';

/**
 * The top-down flame graph of what a view can show, built from the prefix trees the capture
 * already has instead of merged stack by stack. At call-site granularity the flame tree is the
 * stack table itself (a node's children have distinct frames); by function it is the capture's
 * function tree (function-tree.ts: one node per distinct function path). Either way the weights
 * go to the stacks' nodes and one backward pass (parents come before children) sums them into
 * every ancestor: exact totals for every node, in typed arrays, in the tree's node count.
 *
 * Only the nodes at least `minShare` of the view's top (the zoomed node, or the root) are made
 * into the answer, with the view top's ancestors: a node's value is at least each child's, so
 * those are a subtree, and what a 4,096-pixel canvas cannot draw is never named, sorted or sent.
 * A dump whose every stack is in view has millions of nodes and a view draws a few thousand.
 */
export interface CulledLevel {
  /** per tree node: parent (-1 for the root), label (a frame or a function) */
  parent: Int32Array;
  label: Int32Array;
  /** per stack-table node: its node here (function granularity) */
  ofTable: Int32Array | null;
  name(label: number): string;
  /** each node's children, [start[i], start[i + 1]) of list, made on first use */
  children: Csr | null;
  /** function granularity: each node's stack-table nodes, made on first use */
  members: Csr | null;
}

interface Csr {
  start: Int32Array;
  list: Int32Array;
}

/** `of[k]`'s groups: the k of each group in increasing order (a counting sort). */
function groups(of: Int32Array, count: number, from: number): Csr {
  const start = new Int32Array(count + 1);
  for (let k = from; k < of.length; k++) start[of[k] + 1]++;
  for (let i = 0; i < count; i++) start[i + 1] += start[i];
  const list = new Int32Array(start[count]);
  const fill = start.slice(0, count);
  for (let k = from; k < of.length; k++) list[fill[of[k]]++] = k;
  return { start, list };
}

const levels = new WeakMap<ExplorerData, Map<Granularity, CulledLevel>>();

/** The tree a granularity's flame graph is cut from (one per capture and granularity: its child lists are kept). */
export function culledLevel(d: ExplorerData, granularity: Granularity): CulledLevel {
  let byG = levels.get(d);
  if (!byG) levels.set(d, (byG = new Map()));
  let level = byG.get(granularity);
  if (!level) byG.set(granularity, (level = makeLevel(d, granularity)));
  return level;
}

function makeLevel(d: ExplorerData, granularity: Granularity): CulledLevel {
  if (granularity === 'site') {
    const frames = d.stacks.frames;
    return { parent: d.node.parent, label: d.node.frame, ofTable: null, name: (f) => frames.name(f), children: null, members: null };
  }
  const ft = functionTree(d.stacks);
  return { parent: ft.parent, label: ft.fn, ofTable: ft.ofNode, name: (f) => ft.fnNames[f], children: null, members: null };
}

/** Totals of every node of a level's tree for one set of stack weights (what zooming reuses). */
export interface LevelTotals {
  value: Float64Array;
  /** weight of the stacks ending at each node that has any (a Map: most nodes end none) */
  self: Map<number, number>;
  /** per stack-table node at function granularity: its inclusive weight (its frame's share of a function node) */
  tableValue: Float64Array | null;
}

/** Distinct stacks and their weights (flame.ts StackWeights). */
export interface WeightedStacks {
  stacks: Int32Array;
  weights: Float64Array;
}

export function levelTotals(d: ExplorerData, level: CulledLevel, w: WeightedStacks): LevelTotals {
  const n = level.parent.length;
  const map = level.ofTable;
  const tableN = d.node.parent.length;
  // the weights on the stack table's nodes, summed up the table (a function node's value is the
  // sum of its table nodes': two of them are never one another's ancestor, their paths differ in length)
  const table = new Float64Array(tableN);
  const self = new Map<number, number>();
  for (let i = 0; i < w.stacks.length; i++) {
    const x = w.weights[i];
    if (x === 0) continue;
    table[w.stacks[i]] += x;
    const k = map ? map[w.stacks[i]] : w.stacks[i];
    self.set(k, (self.get(k) ?? 0) + x);
  }
  const parent = d.node.parent;
  for (let k = tableN - 1; k > 0; k--) {
    const x = table[k];
    if (x !== 0) table[parent[k]] += x;
  }
  if (!map) return { value: table, self, tableValue: null };
  const value = new Float64Array(n);
  for (let k = 0; k < tableN; k++) {
    const x = table[k];
    if (x !== 0) value[map[k]] += x;
  }
  return { value, self, tableValue: table };
}

export interface CulledRequest {
  /** the smallest node made, as a share of the view top's value */
  minShare: number;
  /** the zoomed node as names from the root (the root's own name first, as the page keeps it); empty: the root */
  zoom: readonly string[];
  rootName: string;
  highlightStack: number | null;
  /** per frame: 1 where a search matches (frameMatchMask), for the answer's mask */
  frameMask: Uint8Array | null;
}

export interface CulledTree {
  /** a stack's nodes in this tree (pre-order ids, root first), as far as they were made */
  pathOf(stack: number | null): Int32Array;
  tree: FlameTreeFrames;
  /** per node: 1 where a frame of it matches the search */
  mask: Uint8Array | null;
}

export function culledTree(d: ExplorerData, level: CulledLevel, totals: LevelTotals, req: CulledRequest): CulledTree {
  const { parent, label } = level;
  const { value, self } = totals;
  const n = parent.length;
  const nameOf = (k: number) => level.name(label[k]);
  // each node's children: the level's child lists once a zoom has asked for them (kept for the
  // next zoom), else for the first view one forward pass collecting the children of the nodes
  // kept so far (parents come before children), which touches no node-sized array but a mask
  let childrenOf: (k: number) => ArrayLike<number>;
  const path = [0];
  if (level.children || req.zoom.length > 1) {
    const ch = (level.children ??= groups(parent, n, 1));
    childrenOf = (k) => ch.list.subarray(ch.start[k], ch.start[k + 1]);
    // the view's top: follow the zoom's names down the children with weight (siblings have distinct labels)
    for (let j = 1; j < req.zoom.length; j++) {
      const kids = childrenOf(path[path.length - 1]);
      let found = -1;
      for (let c = 0; c < kids.length && found < 0; c++) if (value[kids[c]] !== 0 && nameOf(kids[c]) === req.zoom[j]) found = kids[c];
      if (found < 0) break;
      path.push(found);
    }
  } else {
    const theta0 = req.minShare * value[0];
    const keepMask = new Uint8Array(n);
    keepMask[0] = 1;
    const lists = new Map<number, number[]>();
    for (let k = 1; k < n; k++) {
      const p = parent[k];
      if (keepMask[p] === 0 || value[k] === 0) continue;
      if (value[k] >= theta0) keepMask[k] = 1;
      const l = lists.get(p);
      if (l) l.push(k);
      else lists.set(p, [k]);
    }
    childrenOf = (k) => lists.get(k) ?? [];
  }
  const top = path[path.length - 1];
  const theta = req.minShare * value[top];
  // made: the path above the top (each with its one child on the path), then the top's subtree
  // breadth first, each node's children wide enough appended together: [kidStart[i], kidEnd[i])
  const nodes: number[] = path.slice();
  const kidStart: number[] = [];
  const kidEnd: number[] = [];
  for (let i = 0; i + 1 < path.length; i++) {
    kidStart.push(i + 1);
    kidEnd.push(i + 2);
  }
  // and each node's children not made: their weight and count
  const hiddenOf: number[] = path.slice(0, -1).map(() => 0);
  const hiddenN: number[] = path.slice(0, -1).map(() => 0);
  for (let i = path.length - 1; i < nodes.length; i++) {
    const kids = childrenOf(nodes[i]);
    kidStart.push(nodes.length);
    let hw = 0;
    let hn = 0;
    for (let c = 0; c < kids.length; c++) {
      const x = kids[c];
      if (value[x] >= theta && value[x] > 0) nodes.push(x);
      else if (value[x] > 0) {
        hw += value[x];
        hn++;
      }
    }
    kidEnd.push(nodes.length);
    hiddenOf.push(hw);
    hiddenN.push(hn);
  }
  const m = nodes.length;
  const slot = new Map<number, number>();
  for (let i = 0; i < m; i++) slot.set(nodes[i], i);
  const names = nodes.map((k) => (k === 0 ? req.rootName : nameOf(k)));
  // children by descending value, then name, then first seen (TreeBuilder.build's order)
  const kids = Int32Array.from(nodes.keys());
  const order = (a: number, b: number) => value[nodes[b]] - value[nodes[a]] || (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : nodes[a] - nodes[b]);
  for (let i = 0; i < m; i++) if (kidEnd[i] - kidStart[i] > 1) kids.subarray(kidStart[i], kidEnd[i]).sort(order);
  const tParent = new Int32Array(m);
  const tDepth = new Int32Array(m);
  const { pre, ofPre } = preOrder(m, kidStart, kidEnd, kids, tParent, tDepth);
  const nameIndex = new Map<string, number>();
  const treeNames: string[] = [];
  const tName = new Int32Array(m);
  const tValue = new Float64Array(m);
  const tSelf = new Float64Array(m);
  const tHidden = new Float64Array(m);
  const tHiddenCount = new Int32Array(m);
  for (let id = 0; id < m; id++) {
    const i = ofPre[id];
    tHidden[id] = hiddenOf[i];
    tHiddenCount[id] = hiddenN[i];
    const s = names[i];
    let x = nameIndex.get(s);
    if (x === undefined) nameIndex.set(s, (x = treeNames.push(s) - 1));
    tName[id] = x;
    tValue[id] = value[nodes[i]];
    tSelf[id] = self.get(nodes[i]) ?? 0;
  }
  // a stack's path (pre-order ids, root first), as far as it was made: the highlight, and a
  // `stack:<hash>` search's marks
  const pathOf = (stack: number | null): Int32Array => {
    if (stack === null || stack < 0 || stack >= d.node.parent.length) return new Int32Array(0);
    const on: number[] = [];
    const map = level.ofTable;
    for (let t = stack; t > 0; t = d.node.parent[t]) {
      const i = slot.get(map ? map[t] : t);
      if (i !== undefined) on.push(pre[i]);
    }
    on.push(0);
    return Int32Array.from(on.reverse());
  };
  const highlight = pathOf(req.highlightStack);
  // each node's frames, made when first read (a search's marks, or the page asking after its paint)
  let made: ReturnType<typeof nodeFramesOf> | null = null;
  const zoomed = req.zoom.length > 1;
  const framesNow = () => (made ??= nodeFramesOf(d, level, totals, nodes, pre, zoomed));
  let mask: Uint8Array | null = null;
  if (req.frameMask) {
    const frames = framesNow();
    const fm = req.frameMask;
    mask = new Uint8Array(m);
    for (let id = 0; id < m; id++) {
      for (let j = frames.frameStart[id]; j < frames.frameStart[id + 1]; j++) {
        if (fm[frames.frameIds[frames.frameOf[j]]]) {
          mask[id] = 1;
          break;
        }
      }
    }
  }
  const tree: FlameTree = {
    names: treeNames,
    name: tName,
    parent: tParent,
    depth: tDepth,
    value: tValue,
    self: tSelf,
    total: value[0],
    highlight,
    hidden: tHidden,
    hiddenCount: tHiddenCount,
  };
  return { tree: lazyFrames(tree, framesNow), mask, pathOf };
}

/**
 * Each made node's frames (sym+0xoff), heaviest first: at call-site granularity its own; by
 * function, those of the stack-table nodes it merges, each frame's weight summed.
 */
function nodeFramesOf(d: ExplorerData, level: CulledLevel, totals: LevelTotals, nodes: readonly number[], pre: Int32Array, zoomed: boolean) {
  const m = nodes.length;
  const frame = d.node.frame;
  const frames = d.stacks.frames;
  // per made node (pre-order id): its frames as (frame, weight) entries, contiguous
  const frameStart = new Int32Array(m + 1);
  const ofPre = new Int32Array(m);
  for (let i = 0; i < m; i++) ofPre[pre[i]] = i;
  const entryFrame: number[] = [];
  const entryValue: number[] = [];
  // a function node's table nodes: the level's lists once a zoom has asked (kept for the next),
  // else one pass over the table's nodes for the nodes made (a mask, then their positions)
  let memberList: Int32Array = new Int32Array(0);
  let memberStart: (i: number, k: number) => number = () => 0;
  let memberEnd: (i: number, k: number) => number = () => 0;
  if (level.ofTable && (level.members || zoomed)) {
    const mem = (level.members ??= groups(level.ofTable, level.parent.length, 0));
    memberList = mem.list;
    memberStart = (_, k) => mem.start[k];
    memberEnd = (_, k) => mem.start[k + 1];
  } else if (level.ofTable) {
    const map = level.ofTable;
    const mask = new Uint8Array(level.parent.length);
    const madeAt = new Map<number, number>();
    for (let i = 0; i < m; i++) {
      mask[nodes[i]] = 1;
      madeAt.set(nodes[i], i);
    }
    const count = new Int32Array(m + 1);
    for (let t = 1; t < map.length; t++) if (mask[map[t]] !== 0) count[madeAt.get(map[t])! + 1]++;
    for (let i = 0; i < m; i++) count[i + 1] += count[i];
    memberList = new Int32Array(count[m]);
    const fill = count.slice(0, m);
    for (let t = 1; t < map.length; t++) if (mask[map[t]] !== 0) memberList[fill[madeAt.get(map[t])!]++] = t;
    memberStart = (i) => count[i];
    memberEnd = (i) => count[i + 1];
  }
  const tv = totals.tableValue;
  const merged = new Map<number, number>();
  for (let id = 0; id < m; id++) {
    frameStart[id] = entryFrame.length;
    const k = nodes[ofPre[id]];
    if (k === 0) continue;
    if (!level.ofTable) {
      entryFrame.push(frame[k]);
      entryValue.push(totals.value[k]);
      continue;
    }
    const from = entryFrame.length;
    const i = ofPre[id];
    for (let j = memberStart(i, k); j < memberEnd(i, k); j++) {
      const t = memberList[j];
      const x = tv![t];
      if (x === 0) continue;
      const f = frame[t];
      const at = merged.get(f);
      if (at === undefined) {
        merged.set(f, entryFrame.length);
        entryFrame.push(f);
        entryValue.push(x);
      } else entryValue[at] += x;
    }
    merged.clear();
    // heaviest first, then the frame table's order
    if (entryFrame.length - from > 1) {
      const idx = Array.from({ length: entryFrame.length - from }, (_, q) => from + q).sort((a, b) => entryValue[b] - entryValue[a] || entryFrame[a] - entryFrame[b]);
      const f2 = idx.map((q) => entryFrame[q]);
      const v2 = idx.map((q) => entryValue[q]);
      for (let q = 0; q < idx.length; q++) {
        entryFrame[from + q] = f2[q];
        entryValue[from + q] = v2[q];
      }
    }
  }
  frameStart[m] = entryFrame.length;
  const frameNames: string[] = [];
  const frameIds: number[] = [];
  const index = new Map<number, number>();
  const frameOf = new Int32Array(entryFrame.length);
  for (let e = 0; e < entryFrame.length; e++) {
    const f = entryFrame[e];
    let k = index.get(f);
    if (k === undefined) {
      index.set(f, (k = frameNames.length));
      frameNames.push(frames.name(f));
      frameIds.push(f);
    }
    frameOf[e] = k;
  }
  return { frameNames, frameIds, frameStart, frameOf, frameValue: Float64Array.from(entryValue) };
}
