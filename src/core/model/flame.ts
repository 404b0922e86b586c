import type { ExplorerData } from './explorer-data.ts';
import type { FlameRequest, FlameResult, FlameTree, FlameWeight, Selection } from './query-types.ts';
import { SelectionFilter } from './selection.ts';

/** The name of the synthetic root of top-down and bottom-up trees (sandwich: the focus function). */
export const ROOT_NAME = 'all';

/** Distinct stacks of a selection and their weights. */
export interface StackWeights {
  stacks: Int32Array;
  weights: Float64Array;
  total: number;
}

/**
 * 'occurrences': each stack by its occurrences in the selection (resolved and unverified
 * cookies, full stacks). 'refcount': each distinct stack of the selection once, weighted by
 * the dumps' ref_count summed over the dumps of the generations its occurrences in the
 * selection fall in (a stack no dump holds, e.g. one only written in full, weighs 0).
 */
export function stackWeights(d: ExplorerData, sel: Selection, weight: FlameWeight): StackWeights {
  const f = new SelectionFilter(sel);
  const occ = d.occurrences(f);
  if (weight === 'occurrences') return { stacks: occ.stacks, weights: occ.counts, total: occ.total };
  const gens = [...d.generationsOf(f)];
  const weights = new Float64Array(occ.stacks.length);
  let total = 0;
  for (let i = 0; i < occ.stacks.length; i++) {
    weights[i] = d.refCount(occ.stacks[i], gens) ?? 0;
    total += weights[i];
  }
  return { stacks: occ.stacks, weights, total };
}

/** Builds a merged call tree from paths of function indices; node 0 is the root. */
export class TreeBuilder {
  private fn: number[] = [-1];
  private parent: number[] = [-1];
  private value: number[] = [0];
  private self: number[] = [0];
  private child = new Map<number, number>();
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
      this.child.set(key, c);
    }
    return c ?? -1;
  }

  /** Adds weight w along path (function indices, from the root's child down). */
  add(path: readonly number[], w: number): void {
    let node = 0;
    this.value[0] += w;
    for (const fn of path) {
      node = this.step(node, fn, true);
      this.value[node] += w;
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
    return tree;
  }
}

/** Paths of one stack (function indices, leaf first) for each mode; null: the stack does not take part. */
export function topDownPath(leafFirst: number[]): number[] {
  return leafFirst.slice().reverse();
}
export function bottomUpPath(leafFirst: number[]): number[] {
  return leafFirst;
}
/** callees of the outermost call of focus (recursion counted once), from focus down to the leaf */
export function calleePath(leafFirst: number[], focus: number): number[] | null {
  const k = leafFirst.lastIndexOf(focus);
  return k < 0 ? null : leafFirst.slice(0, k).reverse();
}
/** callers of the innermost call of focus, from focus up to the outermost caller */
export function callerPath(leafFirst: number[], focus: number): number[] | null {
  const k = leafFirst.indexOf(focus);
  return k < 0 ? null : leafFirst.slice(k + 1);
}

function buildTree(
  d: ExplorerData,
  w: StackWeights,
  path: (leafFirst: number[]) => number[] | null,
  rootName: string,
  highlightStack: number | null,
): FlameTree {
  const b = new TreeBuilder(Math.max(1, d.fnNames.length));
  for (let i = 0; i < w.stacks.length; i++) {
    if (w.weights[i] === 0) continue;
    const p = path(d.functionsOf(w.stacks[i]));
    if (p) b.add(p, w.weights[i]);
  }
  const hp = highlightStack !== null && highlightStack >= 0 && highlightStack < d.stacks.nodeCount ? path(d.functionsOf(highlightStack)) : null;
  return b.build(d.fnNames, rootName, hp);
}

/**
 * The selection's stacks merged by function name. top-down: root = outermost caller (an icicle);
 * bottom-up: root's children = leaf functions, their children = callers; sandwich: `tree` holds
 * the callees of `focus` (root = focus) merged from every place it occurs, `callers` its callers
 * (root = focus, children = direct callers), each stack counted once however often it recurses.
 */
export function flame(d: ExplorerData, req: FlameRequest): FlameResult {
  const w = stackWeights(d, req.selection, req.weight);
  if (req.mode === 'top-down') return { tree: buildTree(d, w, topDownPath, ROOT_NAME, req.highlightStack), callers: null };
  if (req.mode === 'bottom-up') return { tree: buildTree(d, w, bottomUpPath, ROOT_NAME, req.highlightStack), callers: null };
  const focusName = req.focus ?? '';
  const focus = d.fnNames.indexOf(focusName);
  const callee = (lf: number[]) => (focus < 0 ? null : calleePath(lf, focus));
  const caller = (lf: number[]) => (focus < 0 ? null : callerPath(lf, focus));
  return {
    tree: buildTree(d, w, callee, focusName, req.highlightStack),
    callers: buildTree(d, w, caller, focusName, req.highlightStack),
  };
}
