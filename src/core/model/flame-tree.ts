/**
 * The merged call tree behind every flame graph: `TreeBuilder` merges paths of function indices
 * into one tree, remembers the frames (sym+0xoff) merged into each node, and lays it out in
 * pre-order with children by descending value. What the paths are (top-down, bottom-up, a
 * sandwich's callees and callers) is flame.ts's business.
 */

import type { FlameTree } from './query-types.ts';

/** Builds a merged call tree from paths of function indices; node 0 is the root. */
export class TreeBuilder {
  private fn: number[] = [-1];
  private parent: number[] = [-1];
  private value: number[] = [0];
  private self: number[] = [0];
  private child = new Map<number, number>();
  /**
   * The frame (sym+0xoff) the first path through a node came by; most nodes only ever see one,
   * so only the others are counted (`otherFrames`): the first one's weight is the rest of the value.
   */
  private firstFrame: number[] = [-1];
  private otherFrames = new Map<number, Map<number, number>>();
  /** builder node -> pre-order id of the last build() */
  private pre = new Int32Array(0);
  constructor(private readonly nFn: number) {}

  private step(node: number, fn: number, create: boolean): number {
    const key = node * this.nFn + fn;
    let c = this.child.get(key);
    if (c === undefined && create) {
      c = this.fn.length;
      this.fn.push(fn);
      this.parent.push(node);
      this.value.push(0);
      this.self.push(0);
      this.firstFrame.push(-1);
      this.child.set(key, c);
    }
    return c ?? -1;
  }

  /** Adds weight w along path (function indices, from the root's child down). */
  add(path: readonly number[], w: number): void {
    this.addAt(path, path.map((_, i) => i), null, w);
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
      if (!frames) continue;
      const f = frames[at[i]];
      const first = this.firstFrame[node];
      if (first < 0) this.firstFrame[node] = f;
      else if (f !== first) {
        let m = this.otherFrames.get(node);
        if (!m) this.otherFrames.set(node, (m = new Map()));
        m.set(f, (m.get(f) ?? 0) + w);
      }
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
    const n = this.fn.length;
    const kids: number[][] = Array.from({ length: n }, () => []);
    for (let i = 1; i < n; i++) kids[this.parent[i]].push(i);
    const nameOf = (i: number) => (i === 0 ? rootName : fnNames[this.fn[i]]);
    for (const k of kids) {
      if (k.length > 1) k.sort((a, b) => this.value[b] - this.value[a] || (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : a - b));
    }
    const names: string[] = [];
    const nameIndex = new Map<string, number>();
    const tree: FlameTree = {
      names,
      name: new Int32Array(n),
      parent: new Int32Array(n),
      depth: new Int32Array(n),
      value: new Float64Array(n),
      self: new Float64Array(n),
      total: this.value[0],
      highlight: new Int32Array(0),
    };
    const pre = new Int32Array(n);
    const stack: number[] = [0];
    let next = 0;
    while (stack.length) {
      const b = stack.pop()!;
      const id = next++;
      pre[b] = id;
      const nm = nameOf(b);
      let ni = nameIndex.get(nm);
      if (ni === undefined) {
        ni = names.length;
        names.push(nm);
        nameIndex.set(nm, ni);
      }
      tree.name[id] = ni;
      tree.parent[id] = b === 0 ? -1 : pre[this.parent[b]];
      tree.depth[id] = b === 0 ? 0 : tree.depth[tree.parent[id]] + 1;
      tree.value[id] = this.value[b];
      tree.self[id] = this.self[b];
      const k = kids[b];
      for (let j = k.length - 1; j >= 0; j--) stack.push(k[j]);
    }
    if (highlightPath) tree.highlight = Int32Array.from(this.find(highlightPath), (b) => pre[b]);
    this.pre = pre;
    return tree;
  }

  /** Pre-order ids of the nodes along a path (as far as it exists) in the tree the last build() made. */
  nodesOnPath(path: readonly number[]): number[] {
    return this.find(path).map((b) => this.pre[b]);
  }

  /** The frames merged into each node of the tree build() made (pre-order ids), heaviest first. */
  nodeFrames(frameStrings: readonly string[]): NodeFrames {
    const pre = this.pre;
    const n = pre.length;
    // pre-order id -> builder node
    const builderOf = new Int32Array(n);
    for (let b = 0; b < n; b++) builderOf[pre[b]] = b;
    let entries = 0;
    for (let b = 0; b < n; b++) if (this.firstFrame[b] >= 0) entries += 1 + (this.otherFrames.get(b)?.size ?? 0);
    const names: string[] = [];
    const nameIndex = new Map<number, number>();
    const frameStart = new Int32Array(n + 1);
    const frameOf = new Int32Array(entries);
    const frameValue = new Float64Array(entries);
    const nameOf = (f: number) => {
      let k = nameIndex.get(f);
      if (k === undefined) {
        k = names.length;
        names.push(frameStrings[f]);
        nameIndex.set(f, k);
      }
      return k;
    };
    let at = 0;
    for (let i = 0; i < n; i++) {
      frameStart[i] = at;
      const b = builderOf[i];
      const first = this.firstFrame[b];
      if (first < 0) continue;
      const others = this.otherFrames.get(b);
      if (!others) {
        frameOf[at] = nameOf(first);
        frameValue[at++] = this.value[b];
        continue;
      }
      let rest = this.value[b];
      for (const w of others.values()) rest -= w;
      const list: [number, number][] = [[first, rest], ...others];
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

/** The frames merged into each node (by function name), as sym+0xoff with the weight through each. */
export interface NodeFrames {
  frameNames: string[];
  /** node i's frames: frameOf[frameStart[i] .. frameStart[i + 1]) into frameNames, heaviest first */
  frameStart: Int32Array;
  frameOf: Int32Array;
  frameValue: Float64Array;
}

/** A flame tree that also says which frames (sym+0xoff) each node merges. */
export type FlameTreeFrames = FlameTree & NodeFrames;
