import type { Granularity } from '../capture/function-tree.ts';
import type { ExplorerData } from './explorer-data.ts';
import { lazyFrames, type FlameTreeFrames, type NodeFrames } from './flame-frames.ts';
import { preOrder } from './flame-tree.ts';
import { selfOf, type TableTotals } from './flame-totals.ts';
import { IntPositions } from '../base/int-positions.ts';
import type { FlameTree } from './api.ts';

/**
 * The culled flame graph's answer from what its cut made (flame-culled.ts): the made nodes put in
 * pre-order, each node's children by value then name then first seen, names interned, each
 * node's self weight, the highlighted stack's path, a search's marks, and each node's frames made
 * when first read.
 */

export interface CulledRequest {
  granularity: Granularity;
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

/**
 * What a cut made, a node an index: the root first, then in whatever order the cut made them
 * (the answer's order is its own), node i's children kids[kidStart[i], kidEnd[i]), and per node
 * the weight and count of its children not made. Flat arrays, a value a node, not a node object
 * or an array each (the first view of 1,000 stacks makes 29,916 nodes).
 */
export interface Made {
  value: ArrayLike<number>;
  /** ties between siblings of one value and name: the first table node (the whole tree's first-seen order); by site the node itself */
  first: ArrayLike<number>;
  /** its function (by function) or frame (by site); -1 for the root */
  label: ArrayLike<number>;
  /** by function: node i's table nodes, of[start[i], start[i + 1]); null by site, where a node's one table node is its `first` */
  members: { start: ArrayLike<number>; of: ArrayLike<number> } | null;
  /** sorted in place by the answer (a permutation of the nodes, each parent's children together) */
  kids: Int32Array;
  kidStart: ArrayLike<number>;
  kidEnd: ArrayLike<number>;
  hiddenOf: ArrayLike<number>;
  hiddenN: ArrayLike<number>;
}

/**
 * The answer from what a cut made: pre-order ids, children by value then name, names interned,
 * each node's frames made on first read. `nameOf` names a label (-1: the root).
 */
export function assemble(d: ExplorerData, totals: TableTotals, made: Made, req: CulledRequest, nameOf: (label: number) => string): CulledTree {
  const { value, first, label, kids, kidStart, kidEnd, hiddenOf, hiddenN, members } = made;
  const m = value.length;
  // each label named once, at its first node, the label's first node found in a keyed table of
  // positions: the frame and function tables hold each key once, so two labels never name one
  // string (a Map of labels, read and written a node, was 30% of this function; a string per
  // frame, 16% of the cut by site). key: the label's place among the distinct ones, root's 0.
  const firstOfLabel = new IntPositions(label);
  const key = new Int32Array(m);
  const labelName: string[] = [];
  for (let i = 0; i < m; i++) {
    const p = firstOfLabel.of(label[i]);
    key[i] = p === i ? labelName.push(nameOf(label[i])) - 1 : key[p];
  }
  // children by descending value, then name, then first seen (TreeBuilder.build's order)
  const order = (a: number, b: number) => {
    const na = labelName[key[a]];
    const nb = labelName[key[b]];
    return value[b] - value[a] || (na < nb ? -1 : na > nb ? 1 : first[a] - first[b]);
  };
  for (let i = 0; i < m; i++) if (kidEnd[i] - kidStart[i] > 1) kids.subarray(kidStart[i], kidEnd[i]).sort(order);
  const tParent = new Int32Array(m);
  const tDepth = new Int32Array(m);
  const { pre, ofPre } = preOrder(m, kidStart, kidEnd, kids, tParent, tDepth);
  // names interned in pre-order by label; only the root's name is not a label's, and a label
  // named as the root shares its index (the root is first in pre-order)
  const nameIndex = new Int32Array(labelName.length).fill(-1);
  const treeNames: string[] = [];
  const rootName = labelName[0];
  const tName = new Int32Array(m);
  const tValue = new Float64Array(m);
  const tSelf = new Float64Array(m);
  const tHidden = new Float64Array(m);
  const tHiddenCount = new Int32Array(m);
  // the self weight of each table node a node stands for, by its place in `of`
  const start = members?.start;
  const of = members ? members.of : first;
  const selves = selfOf(totals.w, of);
  for (let id = 0; id < m; id++) {
    const i = ofPre[id];
    tHidden[id] = hiddenOf[i];
    tHiddenCount[id] = hiddenN[i];
    const k = key[i];
    let x = nameIndex[k];
    if (x < 0) {
      const s = labelName[k];
      x = nameIndex[k] = k !== 0 && s === rootName ? nameIndex[0] : treeNames.push(s) - 1;
    }
    tName[id] = x;
    tValue[id] = value[i];
    if (start) {
      let self = 0;
      for (let a = start[i]; a < start[i + 1]; a++) self += selves[a];
      tSelf[id] = self;
    } else tSelf[id] = selves[i];
  }
  // a stack's path (pre-order ids, root first), as far as it was made: the highlight, and a
  // `stack:<hash>` search's marks. Down from the root, the made child of each table node's
  // function (by site: the table node itself), as the whole tree finds a function path: a stack
  // outside the selection is marked as far as its functions go (its own table nodes weigh nothing)
  const byFunction = req.granularity === 'function';
  const pathOf = (stack: number | null): Int32Array => {
    if (stack === null || stack < 0 || stack >= d.node.parent.length) return new Int32Array(0);
    const up: number[] = [];
    for (let t = stack; t > 0; t = d.node.parent[t]) up.push(t);
    const on = [0];
    for (let j = up.length - 1, cur = 0; j >= 0; j--) {
      const want = byFunction ? d.fnOfFrame[d.node.frame[up[j]]] : up[j];
      let next = -1;
      for (let q = kidStart[cur]; q < kidEnd[cur] && next < 0; q++) if ((byFunction ? label[kids[q]] : first[kids[q]]) === want) next = kids[q];
      if (next < 0) break;
      on.push(pre[next]);
      cur = next;
    }
    return Int32Array.from(on);
  };
  const highlight = pathOf(req.highlightStack);
  // each node's frames, made when first read (a search's marks, or the page asking after its paint)
  let framesMade: ReturnType<typeof nodeFramesOf> | null = null;
  const framesNow = () => (framesMade ??= nodeFramesOf(d, totals, start ?? null, of, ofPre));
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
 * Each made node's frames (sym+0xoff), heaviest first: those of the table nodes it stands for
 * (at call-site granularity its own), each frame's weight summed.
 */
function nodeFramesOf(
  d: ExplorerData,
  totals: TableTotals,
  start: ArrayLike<number> | null,
  of: ArrayLike<number>,
  ofPre: Int32Array,
): NodeFrames & { frameIds: number[] } {
  const m = ofPre.length;
  const frame = d.node.frame;
  const frames = d.stacks.frames;

  // per made node (pre-order id): its frames as (frame, weight) entries, contiguous
  const frameStart = new Int32Array(m + 1);
  const entryFrame: number[] = [];
  const entryValue: number[] = [];
  const merged = new Map<number, number>();
  for (let id = 0; id < m; id++) {
    frameStart[id] = entryFrame.length;
    const from = entryFrame.length;
    const i = ofPre[id];
    const end = start ? start[i + 1] : i + 1;
    for (let a = start ? start[i] : i; a < end; a++) {
      const t = of[a];
      const x = totals.at(t);
      if (t === 0 || x === 0) continue;
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
      const idx = Array.from({ length: entryFrame.length - from }, (_, q) => from + q).sort(
        (a, b) => entryValue[b] - entryValue[a] || entryFrame[a] - entryFrame[b],
      );
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
