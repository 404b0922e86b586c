import { fmix32, randomWords } from '../base/keyed-hash.ts';

/**
 * The stack table's children lists, read from its parent column without a node-sized index.
 *
 * The table makes a stack's new tail node after node, each its parent's first child, so most
 * nodes come right after their parent (`parent[k] === k - 1`). The others, the branches (at most
 * one per stack interned: where a walk down left the nodes that existed), are few beside the
 * nodes: 262,144 of 7.7M for a dump whose every stack is in view. A node's children, ascending,
 * are the node after it when that is its child, then its branches; the branches are kept by
 * parent in a keyed open-addressing table, each parent's in a chain in ascending order.
 *
 * A counting sort of every node by parent (two node-sized arrays, 62 MB at 7.7M nodes) took
 * 150-160 ms of a 360 ms flame graph of every stack in Node; this is one pass over the parent
 * column and tables the size of the branches.
 */
export class TableChildren {
  private readonly n: number;
  /** the branch nodes, ascending */
  private readonly branch: Int32Array;
  /** per branch: the next branch of the same parent (its index), -1 after the last */
  private readonly next: Int32Array;
  /** (parent, first branch index + 1) pairs; 0 in the second word: free */
  private readonly heads: Int32Array;
  private readonly mask: number;
  private readonly key = randomWords(1)[0] | 0;

  constructor(private readonly parent: Int32Array) {
    const n = (this.n = parent.length);
    let branch = new Int32Array(1024);
    let b = 0;
    for (let k = 2; k < n; k++) {
      if (parent[k] === k - 1) continue;
      if (b === branch.length) {
        const grown = new Int32Array(2 * b);
        grown.set(branch);
        branch = grown;
      }
      branch[b++] = k;
    }
    this.branch = branch.subarray(0, b);
    this.next = new Int32Array(b);
    let slots = 16;
    while (slots < 2 * b) slots *= 2;
    const heads = (this.heads = new Int32Array(2 * slots));
    const mask = (this.mask = slots - 1);
    // from the last branch down, each put at the front of its parent's chain: chains ascend
    for (let j = b - 1; j >= 0; j--) {
      const p = parent[branch[j]];
      let h = fmix32(p ^ this.key) & mask;
      while (heads[2 * h + 1] !== 0 && heads[2 * h] !== p) h = (h + 1) & mask;
      this.next[j] = heads[2 * h + 1] - 1;
      heads[2 * h] = p;
      heads[2 * h + 1] = j + 1;
    }
  }

  /** Node `t`'s children, ascending, into `out` (emptied first); returns `out`. */
  of(t: number, out: number[]): number[] {
    out.length = 0;
    if (t + 1 < this.n && this.parent[t + 1] === t) out.push(t + 1);
    const heads = this.heads;
    const mask = this.mask;
    let h = fmix32(t ^ this.key) & mask;
    for (;;) {
      const j = heads[2 * h + 1];
      if (j === 0) return out;
      if (heads[2 * h] === t) {
        for (let x = j - 1; x >= 0; x = this.next[x]) out.push(this.branch[x]);
        return out;
      }
      h = (h + 1) & mask;
    }
  }
}
