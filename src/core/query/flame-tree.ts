/**
 * The merged call tree behind every flame graph: `TreeBuilder` merges paths of function indices
 * into one tree, remembers the frames (sym+0xoff) merged into each node, and lays it out in
 * pre-order with children by descending value. What the paths are (top-down, bottom-up, a
 * sandwich's callees and callers) is flame.ts's business.
 *
 * Everything is typed arrays: nodes in growing columns, (node, function) -> child and
 * (node, frame) -> weight in open-addressing integer hashes, so a tree of millions of nodes
 * costs no object per node or per step.
 */

import { grow } from '../base/growable.ts';
import { pairSlot, PROCESS_KEY } from '../base/keyed-hash.ts';
import type { FlameTree } from './api.ts';
import type { NodeFrames } from './flame-frames.ts';

/**
 * Slot of the pair (a, b) in a table of 2^(32 - shift) slots, keyed (keyed-hash.ts): function and
 * frame ids are numbered in the order a file first names them, so with a fixed hash a file could
 * give one node children that all share a chain.
 */
const slotOf = (a: number, b: number, shift: number) => pairSlot(a, b, PROCESS_KEY[0], PROCESS_KEY[1], shift);

/**
 * (a, b) -> an int (never 0: 0 marks a free slot), open addressing with linear probing over an
 * Int32Array of triples, at most half full.
 */
class PairMap {
  private t = new Int32Array(3 * 1024);
  private shift = 22;
  private count = 0;
  get(a: number, b: number): number {
    const t = this.t;
    const mask = t.length / 3 - 1;
    for (let h = slotOf(a, b, this.shift); ; h = (h + 1) & mask) {
      const v = t[3 * h + 2];
      if (v === 0 || (t[3 * h] === a && t[3 * h + 1] === b)) return v;
    }
  }
  /** stores v for a pair known to be absent */
  add(a: number, b: number, v: number): void {
    let t = this.t;
    if (2 * (this.count + 1) > t.length / 3) {
      const old = t;
      t = this.t = new Int32Array(old.length * 2);
      this.shift--;
      const mask = t.length / 3 - 1;
      for (let i = 0; i < old.length; i += 3) {
        if (old[i + 2] === 0) continue;
        let h = slotOf(old[i], old[i + 1], this.shift);
        while (t[3 * h + 2] !== 0) h = (h + 1) & mask;
        t.set(old.subarray(i, i + 3), 3 * h);
      }
    }
    const mask = t.length / 3 - 1;
    let h = slotOf(a, b, this.shift);
    while (t[3 * h + 2] !== 0) h = (h + 1) & mask;
    t[3 * h] = a;
    t[3 * h + 1] = b;
    t[3 * h + 2] = v;
    this.count++;
  }
}

/** Per function name: its rank in name order (as JS compares strings), made once per name list. */
const ranks = new WeakMap<readonly string[], Int32Array>();
export function nameRanks(fnNames: readonly string[]): Int32Array {
  let r = ranks.get(fnNames);
  if (!r) {
    const order = Array.from(fnNames.keys()).sort((a, b) => (fnNames[a] < fnNames[b] ? -1 : fnNames[a] > fnNames[b] ? 1 : a - b));
    r = new Int32Array(fnNames.length);
    order.forEach((f, k) => (r![f] = k));
    ranks.set(fnNames, r);
  }
  return r;
}

/**
 * Depth-first pre-order of a tree of `n` nodes whose node 0 is the root and node i's children,
 * in order, are kids[kidStart[i] .. kidEnd[i]): each node's pre-order id (`pre`), the node at
 * each id (`ofPre`), and per id its parent's id and depth written into `parent` and `depth`. An
 * explicit stack, each entry carrying its parent's id: independent loads rather than a chain.
 */
export function preOrder(
  n: number,
  kidStart: ArrayLike<number>,
  kidEnd: ArrayLike<number>,
  kids: ArrayLike<number>,
  parent: Int32Array,
  depth: Int32Array,
): { pre: Int32Array<ArrayBuffer>; ofPre: Int32Array<ArrayBuffer> } {
  const pre = new Int32Array(n);
  const ofPre = new Int32Array(n);
  const stack = new Int32Array(n);
  const stackParent = new Int32Array(n);
  let top = 0;
  if (n > 0) {
    stack[top] = 0;
    stackParent[top++] = -1;
  }
  let next = 0;
  while (top) {
    const b = stack[--top];
    const p = stackParent[top];
    const id = next++;
    pre[b] = id;
    ofPre[id] = b;
    parent[id] = p;
    depth[id] = p < 0 ? 0 : depth[p] + 1;
    for (let j = kidEnd[b] - 1; j >= kidStart[b]; j--) {
      stack[top] = kids[j];
      stackParent[top++] = id;
    }
  }
  return { pre, ofPre };
}

/** Builds a merged call tree from paths of function indices; node 0 is the root. */
export class TreeBuilder {
  private n = 1;
  private fn = new Int32Array(1024).fill(-1, 0, 1);
  private parent = new Int32Array(1024).fill(-1, 0, 1);
  /** inclusive and self weight per builder node */
  value = new Float64Array(1024);
  self = new Float64Array(1024);
  /** each node's first child (0: none): most nodes have one, found without the hash */
  private firstChild = new Int32Array(1024);
  /** (node, function) -> child for the other children */
  private child = new PairMap();
  /**
   * The frame (sym+0xoff) the first path through a node came by; most nodes only ever see one,
   * so only the others are kept (`others`: (node, frame) -> entry + 1, weight per entry): the
   * first one's weight is the rest of the value.
   */
  private firstFrame = new Int32Array(1024).fill(-1);
  private others = new PairMap();
  private otherCount = 0;
  private otherNode = new Int32Array(256);
  private otherFrame = new Int32Array(256);
  private otherWeight = new Float64Array(256);
  /** builder node -> pre-order id of the last build(), and back */
  private pre = new Int32Array(0);
  private builderOf = new Int32Array(0);
  constructor(private readonly nFn: number) {}

  get size(): number {
    return this.n;
  }

  /** Room for `nodes` nodes in all, so a build that knows its size does not grow the columns step by step. */
  reserve(nodes: number): void {
    if (nodes <= this.fn.length) return;
    this.fn = grow(this.fn, nodes);
    this.parent = grow(this.parent, nodes);
    this.value = grow(this.value, nodes);
    this.self = grow(this.self, nodes);
    this.firstChild = grow(this.firstChild, nodes);
    const len = this.firstFrame.length;
    this.firstFrame = grow(this.firstFrame, nodes);
    this.firstFrame.fill(-1, len);
  }

  /** The child of node with function fn, made when there is none (create) or -1. */
  step(node: number, fn: number, create: boolean): number {
    const first = this.firstChild[node];
    if (first !== 0 && this.fn[first] === fn) return first;
    const c = first === 0 ? 0 : this.child.get(node, fn);
    if (c !== 0 || !create) return c === 0 ? -1 : c;
    const id = this.n++;
    if (id >= this.fn.length) {
      this.fn = grow(this.fn, id + 1);
      this.parent = grow(this.parent, id + 1);
      this.value = grow(this.value, id + 1);
      this.self = grow(this.self, id + 1);
      this.firstChild = grow(this.firstChild, id + 1);
      const len = this.firstFrame.length;
      this.firstFrame = grow(this.firstFrame, id + 1);
      this.firstFrame.fill(-1, len);
    }
    this.fn[id] = fn;
    this.parent[id] = node;
    if (first === 0) this.firstChild[node] = id;
    else this.child.add(node, fn, id);
    return id;
  }

  /** Counts weight w of `frame` (a frame string index) as merged into node. */
  addFrame(node: number, frame: number, w: number): void {
    const first = this.firstFrame[node];
    if (first < 0) this.firstFrame[node] = frame;
    else if (frame !== first) {
      const e = this.others.get(node, frame);
      if (e !== 0) this.otherWeight[e - 1] += w;
      else {
        const k = this.otherCount++;
        if (k >= this.otherNode.length) {
          this.otherNode = grow(this.otherNode, k + 1);
          this.otherFrame = grow(this.otherFrame, k + 1);
          this.otherWeight = grow(this.otherWeight, k + 1);
        }
        this.otherNode[k] = node;
        this.otherFrame[k] = frame;
        this.otherWeight[k] = w;
        this.others.add(node, frame, k + 1);
      }
    }
  }

  /** Adds weight w along path (function indices, from the root's child down). */
  add(path: readonly number[], w: number): void {
    this.addAt(
      path,
      path.map((_, i) => i),
      null,
      w,
    );
  }

  /**
   * Adds weight w along the path fns[at[0]], fns[at[1]], … from the root's child down; frames
   * (parallel to fns: frame strings, sym+0xoff) are remembered per node.
   */
  addAt(fns: readonly number[], at: readonly number[], frames: readonly number[] | null, w: number): void {
    let node = 0;
    this.value[0] += w;
    for (let i = 0; i < at.length; i++) {
      node = this.step(node, fns[at[i]], true);
      this.value[node] += w;
      if (frames) this.addFrame(node, frames[at[i]], w);
    }
    this.self[node] += w;
  }

  /** Builder nodes along a path as far as it exists. */
  find(path: readonly number[]): number[] {
    const out = [0];
    let node = 0;
    for (const fn of path) {
      node = this.step(node, fn, false);
      if (node < 0) break;
      out.push(node);
    }
    return out;
  }

  /** The tree in pre-order, children by descending value (ties by name). */
  build(fnNames: readonly string[], rootName: string, highlightPath: readonly number[] | null): FlameTree {
    const n = this.n;
    const { fn, parent, value, self } = this;
    // children of each node, contiguous (CSR), then sorted
    const start = new Int32Array(n + 1);
    for (let i = 1; i < n; i++) start[parent[i] + 1]++;
    for (let i = 0; i < n; i++) start[i + 1] += start[i];
    const kids = new Int32Array(Math.max(0, n - 1));
    const fill = start.slice(0, n);
    for (let i = 1; i < n; i++) kids[fill[parent[i]]++] = i;
    const rank = nameRanks(fnNames);
    const order = (a: number, b: number) => value[b] - value[a] || rank[fn[a]] - rank[fn[b]] || a - b;
    for (let i = 0; i < n; i++) {
      const s0 = start[i];
      const s1 = start[i + 1];
      if (s1 - s0 < 2) continue;
      if (s1 - s0 > 12) {
        kids.subarray(s0, s1).sort(order);
        continue;
      }
      for (let j = s0 + 1; j < s1; j++) {
        const x = kids[j];
        let k = j - 1;
        while (k >= s0 && order(kids[k], x) > 0) {
          kids[k + 1] = kids[k];
          k--;
        }
        kids[k + 1] = x;
      }
    }
    const names: string[] = [];
    const nFn = this.nFn;
    const nameOfFn = new Int32Array(nFn + 1).fill(-1);
    const tName = new Int32Array(n);
    const tParent = new Int32Array(n);
    const tDepth = new Int32Array(n);
    const tValue = new Float64Array(n);
    const tSelf = new Float64Array(n);
    const tree: FlameTree = { names, name: tName, parent: tParent, depth: tDepth, value: tValue, self: tSelf, total: value[0], highlight: new Int32Array(0) };
    // the order first (only the child lists read), then the columns gathered in that order
    const { pre, ofPre: builderOf } = preOrder(n, start, start.subarray(1), kids, tParent, tDepth);
    for (let id = 0; id < n; id++) {
      const b = builderOf[id];
      tValue[id] = value[b];
      tSelf[id] = self[b];
      // the root's name sits at nameOfFn[nFn]; a function's at its index
      const key = b === 0 ? nFn : fn[b];
      let ni = nameOfFn[key];
      if (ni < 0) {
        ni = nameOfFn[key] = names.length;
        names.push(b === 0 ? rootName : fnNames[fn[b]]);
      }
      tName[id] = ni;
    }
    this.builderOf = builderOf;
    if (highlightPath) tree.highlight = Int32Array.from(this.find(highlightPath), (b) => pre[b]);
    this.pre = pre;
    return tree;
  }

  /** Pre-order ids of the nodes along a path (as far as it exists) in the tree the last build() made. */
  nodesOnPath(path: readonly number[]): number[] {
    return this.find(path).map((b) => this.pre[b]);
  }

  /** The frames merged into each node of the tree build() made (pre-order ids), heaviest first. */
  nodeFrames(frameCount: number, frameName: (f: number) => string): NodeFrames {
    const n = this.pre.length;
    const builderOf = this.builderOf;
    // each node's other frames, contiguous
    const oStart = new Int32Array(n + 1);
    for (let k = 0; k < this.otherCount; k++) oStart[this.otherNode[k] + 1]++;
    for (let b = 0; b < n; b++) oStart[b + 1] += oStart[b];
    const oList = new Int32Array(this.otherCount);
    const oFill = oStart.slice(0, n);
    for (let k = 0; k < this.otherCount; k++) oList[oFill[this.otherNode[k]]++] = k;
    let entries = 0;
    for (let b = 0; b < n; b++) if (this.firstFrame[b] >= 0) entries += 1 + oStart[b + 1] - oStart[b];
    const names: string[] = [];
    // frame string index -> index into names (-1: not yet)
    const nameIndex = new Int32Array(frameCount).fill(-1);
    const frameStart = new Int32Array(n + 1);
    const frameOf = new Int32Array(entries);
    const frameValue = new Float64Array(entries);
    const nameOf = (f: number) => {
      let k = nameIndex[f];
      if (k < 0) {
        k = nameIndex[f] = names.length;
        names.push(frameName(f));
      }
      return k;
    };
    let at = 0;
    for (let i = 0; i < n; i++) {
      frameStart[i] = at;
      const b = builderOf[i];
      const first = this.firstFrame[b];
      if (first < 0) continue;
      if (oStart[b + 1] === oStart[b]) {
        frameOf[at] = nameOf(first);
        frameValue[at++] = this.value[b];
        continue;
      }
      let rest = this.value[b];
      const list: [number, number][] = [];
      for (let j = oStart[b]; j < oStart[b + 1]; j++) {
        const k = oList[j];
        rest -= this.otherWeight[k];
        list.push([this.otherFrame[k], this.otherWeight[k]]);
      }
      list.unshift([first, rest]);
      list.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
      for (const [f, w] of list) {
        frameOf[at] = nameOf(f);
        frameValue[at++] = w;
      }
    }
    frameStart[n] = at;
    return { frameNames: names, frameStart, frameOf, frameValue };
  }
}
