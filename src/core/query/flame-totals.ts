import type { ExplorerData } from './explorer-data.ts';
import { IntPositions } from '../base/int-positions.ts';
import { zeroed } from '../base/zeroed.ts';

/**
 * The stack table's totals for one set of stack weights (what the culled flame graph cuts, and
 * what zooming and either granularity reuse): the weights go to the stacks' nodes and one backward
 * pass (parents come before children) sums them into every ancestor, exact for every node.
 * Where the weighed stacks are few beside the table's nodes, only the nodes on their paths are
 * summed and nothing node-sized is made (SparseTotals); a node's self weight is summed when a
 * view asks for its nodes (selfOf).
 */

/** Totals of every stack-table node for one set of stack weights (what zooming and either granularity reuse). */
export interface TableTotals {
  /** inclusive weight of table node `k` */
  at(k: number): number;
  /** the stacks weighed (a node's self weight: theirs that end at it, summed when a view asks: selfOf) */
  w: WeightedStacks;
  /** the only nodes that can have weight, ascending, the root left out, where few stacks are weighed (sparse); null: any node */
  touched: Int32Array | null;
  /**
   * Sparse only (null when dense): table node `k`'s children that can have weight, ascending,
   * appended to `kids` with their totals appended to `values`; `k` must be the root or touched.
   */
  childrenOf: ((k: number, kids: number[], values: number[]) => void) | null;
}

/** Distinct stacks and their weights (flame.ts StackWeights). */
export interface WeightedStacks {
  stacks: Int32Array;
  weights: Float64Array;
}

/**
 * The sparse way is taken where the weighed stacks are under this share of the table's nodes: a
 * trace's selection cites a few hundred stacks of a dump of 262,144 (8.9M nodes), and passes over
 * every node (a backward one here, a forward one for the first view) took 63 + 116 ms of a 162 ms
 * answer for a tree of 19,676 nodes. Nothing node-sized is made then: in Chromium a fresh 71 MB
 * array touched at a few thousand places cost ~20 ms in zeroing and page faults.
 */
const SPARSE_STACKS = 1 / 64;
/** ...and the sparse walk gives up past this share of the nodes (the dense passes cost about as much). */
const SPARSE_NODES = 1 / 4;

/** Every node's total in a node-sized array. */
class DenseTotals implements TableTotals {
  readonly touched = null;
  readonly childrenOf = null;
  constructor(
    private readonly value: Float64Array | Uint32Array,
    readonly w: WeightedStacks,
  ) {}
  at(k: number): number {
    return this.value[k];
  }
}

/**
 * The totals of the few nodes that can have any: `nodes` ascending (the root first), `value` and
 * `up` (the parent's position; the root's -1) by position. Each node's children are listed by
 * position once a view first asks (a counting sort by parent over the few nodes, not a Map of
 * lists), so a cut reads a child's total beside it instead of searching for it.
 */
class SparseTotals implements TableTotals {
  readonly touched: Int32Array;
  /** per position: where its children start in `kidPos` (n + 1 entries); made on first use */
  private kidStart: Int32Array | null = null;
  private kidPos: Int32Array | null = null;
  constructor(
    private readonly nodes: Int32Array,
    private readonly value: Float64Array,
    private readonly up: Int32Array,
    readonly w: WeightedStacks,
  ) {
    this.touched = nodes.subarray(1);
  }
  at(k: number): number {
    const i = positionOf(this.nodes, k, this.nodes.length);
    return i < 0 ? 0 : this.value[i];
  }
  readonly childrenOf = (k: number, kids: number[], values: number[]): void => {
    const p = positionOf(this.nodes, k, this.nodes.length);
    if (p < 0) return;
    if (this.kidStart === null) this.listChildren();
    const start = this.kidStart!;
    const pos = this.kidPos!;
    for (let q = start[p]; q < start[p + 1]; q++) {
      const c = pos[q];
      kids.push(this.nodes[c]);
      values.push(this.value[c]);
    }
  };
  /** every position's children by parent position, ascending (positions ascend with the nodes) */
  private listChildren(): void {
    const n = this.nodes.length;
    const up = this.up;
    const start = new Int32Array(n + 1);
    for (let j = 1; j < n; j++) start[up[j] + 1]++;
    for (let p = 0; p < n; p++) start[p + 1] += start[p];
    const fill = start.slice(0, n);
    const pos = new Int32Array(Math.max(0, n - 1));
    for (let j = 1; j < n; j++) pos[fill[up[j]]++] = j;
    this.kidStart = start;
    this.kidPos = pos;
  }
}

/** Where `k` is in `sorted[0, end)`, or -1. */
function positionOf(sorted: Int32Array, k: number, end: number): number {
  let lo = 0;
  let hi = end - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const x = sorted[mid];
    if (x === k) return mid;
    if (x < k) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export function tableTotals(d: ExplorerData, w: WeightedStacks): TableTotals {
  const parent = d.node.parent;
  const nodes = w.stacks.length < parent.length * SPARSE_STACKS ? ancestors(parent, w) : null;
  // the stacks' own weights, then one pass from the last node to the first adding each into its
  // parent (a parent comes before its children); sparse, the same additions in the same order
  // over the only nodes that have any, so the sums are the same to the bit
  if (nodes) {
    const value = new Float64Array(nodes.length);
    const up = new Int32Array(nodes.length);
    up[0] = -1;
    for (let i = 0; i < w.stacks.length; i++) {
      const x = w.weights[i];
      if (x === 0) continue;
      const s = w.stacks[i];
      value[positionOf(nodes, s, nodes.length)] += x;
    }
    for (let j = nodes.length - 1; j > 0; j--) {
      const u = (up[j] = positionOf(nodes, parent[nodes[j]], j));
      const x = value[j];
      if (x !== 0) value[u] += x;
    }
    return new SparseTotals(nodes, value, up, w);
  }
  // whole weights whose sum fits 32 bits are summed in a Uint32Array, exactly as in doubles: half
  // the memory to fault in and walk (a table of 7.7M nodes: 31 MB, not 62)
  let whole = true;
  let sum = 0;
  for (let i = 0; i < w.weights.length && whole; i++) {
    const x = w.weights[i];
    whole = x >= 0 && Number.isInteger(x);
    sum += x;
  }
  const value = whole && sum <= 0xffffffff ? zeroed(Uint32Array, parent.length, w.stacks.length) : zeroed(Float64Array, parent.length, w.stacks.length);
  for (let i = 0; i < w.stacks.length; i++) {
    const x = w.weights[i];
    if (x === 0) continue;
    const s = w.stacks[i];
    value[s] += x;
  }
  for (let k = value.length - 1; k > 0; k--) {
    const x = value[k];
    if (x !== 0) value[parent[k]] += x;
  }
  return new DenseTotals(value, w);
}

/**
 * The self weight of each of `nodes` (distinct table nodes), by position: the weights of the
 * stacks ending at it. Whichever side is fewer, the nodes or the weighed stacks, is put in a keyed
 * table of positions (IntPositions) and the other looked up in it: a Map of the stacks' self
 * weights read once per node was 24% of a culled view's assembly (29,916 nodes, 1,000 stacks),
 * and a table of its 30k table nodes to look 1,000 stacks up in, 12% of a cold first view.
 */
export function selfOf(w: WeightedStacks, nodes: ArrayLike<number>): Float64Array {
  const self = new Float64Array(nodes.length);
  if (w.stacks.length <= nodes.length) {
    // a stack listed twice (none is) is summed at its first position, as a Map would
    const stacks = new IntPositions(w.stacks);
    const sum = new Float64Array(w.stacks.length);
    for (let i = 0; i < w.stacks.length; i++) if (w.weights[i] !== 0) sum[stacks.of(w.stacks[i])] += w.weights[i];
    for (let i = 0; i < nodes.length; i++) {
      const p = stacks.of(nodes[i]);
      if (p >= 0) self[i] = sum[p];
    }
    return self;
  }
  const at = new IntPositions(nodes);
  for (let i = 0; i < w.stacks.length; i++) {
    const x = w.weights[i];
    if (x === 0) continue;
    const p = at.of(w.stacks[i]);
    if (p >= 0) self[p] += x;
  }
  return self;
}

/** The root and every node on the path of a weighed stack, ascending; null once they pass SPARSE_NODES of the table. */
function ancestors(parent: Int32Array, w: WeightedStacks): Int32Array | null {
  const limit = Math.floor(parent.length * SPARSE_NODES);
  const seen = new Set<number>([0]);
  const out: number[] = [0];
  for (let i = 0; i < w.stacks.length; i++) {
    if (w.weights[i] === 0) continue;
    for (let k = w.stacks[i]; !seen.has(k); k = parent[k]) {
      if (out.length > limit) return null;
      seen.add(k);
      out.push(k);
    }
  }
  return Int32Array.from(out).sort();
}
