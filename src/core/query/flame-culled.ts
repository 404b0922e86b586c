import type { ExplorerData } from './explorer-data.ts';
import { assemble, type CulledRequest, type CulledTree, type Made } from './flame-assemble.ts';
import type { TableTotals } from './flame-totals.ts';
import { TableChildren } from './table-children.ts';
import { grow } from '../base/growable.ts';

export type { CulledRequest, CulledTree } from './flame-assemble.ts';

/**
 * The top-down flame graph of what a view can show, built from the prefix tree the capture
 * already has instead of merged stack by stack, over the table's totals for the view's weights
 * (`flame-totals.ts`: exact for every node, or for the few on the weighed stacks' paths).
 *
 * Only the nodes at least `minShare` of the view's top (the zoomed node, or the root) are made
 * into the answer, with the view top's ancestors: a node's value is at least each child's, so
 * those are a subtree, and what a 4,096-pixel canvas cannot draw is never named, sorted or sent.
 * A dump whose every stack is in view has millions of nodes and a view draws a few thousand.
 *
 * At call-site granularity the flame tree is the stack table itself (a node's children have
 * distinct frames). By function, a node is a function path: the table nodes whose path reads the
 * same functions. Those are made from the top down, only where the cut goes: a made node's
 * children are its table nodes' children grouped by function, each group's value the sum of its
 * table nodes' (two of them are never one another's ancestor: their paths differ in length). The
 * whole function tree (function-tree.ts) is never built for the view: at 4.7M table nodes it took
 * 420 ms, where a cut of a dump of random frames makes a few nodes.
 *
 * What is made goes into flat arrays, a number or a run of one a node (Made), not an object, an
 * array of table nodes, a Map of children lists or a name each: the page's first view of a
 * capture of 1,000 stacks makes ~30k nodes, and those allocations, not the sums, were most of its
 * time. In Node, by function and by site: warm 43 and 38 ms before, 9.6 and 8.4 after; the first
 * call of a process 93 and 69 ms before, 53 and 44 after (medians of 8 processes).
 */

/** Each capture's stack-table children lists, made when a view first needs them (a zoom, or a view by function). */
const tableKids = new WeakMap<ExplorerData, TableChildren>();
function kidsOf(d: ExplorerData): TableChildren {
  let c = tableKids.get(d);
  if (!c) tableKids.set(d, (c = new TableChildren(d.node.parent)));
  return c;
}

export function culledTree(d: ExplorerData, totals: TableTotals, req: CulledRequest): CulledTree {
  const byFunction = req.granularity === 'function';
  const frames = d.stacks.frames;
  const nameOf = (label: number) => (label < 0 ? req.rootName : byFunction ? d.fnNames[label] : frames.name(label));
  if (!totals.childrenOf && !byFunction && req.zoom.length <= 1 && !tableKids.has(d))
    return assemble(d, totals, firstSiteView(d, totals, req.minShare), req, nameOf);
  return assemble(d, totals, cut(d, totals, req, nameOf), req, nameOf);
}

/**
 * The first view by site (the root its top): the table nodes made are those at least `minShare`
 * of the root whose parent is made, so one forward pass over the table (parents come before
 * children) makes them, in table order, touching no node-sized array but a mask. A made node's
 * parent is nearly always the last one made (a stack's nodes follow one another); the others are
 * found by a binary search of the made nodes, which ascend. The children are then listed by
 * parent in one counting sort: no children list a parent (a Map of arrays was 15% of the cut).
 */
function firstSiteView(d: ExplorerData, totals: TableTotals, minShare: number): Made {
  const parent = d.node.parent;
  const frame = d.node.frame;
  const theta = minShare * totals.at(0);
  const made = new Uint8Array(parent.length);
  made[0] = 1;
  // per made node: its table node, value, frame, parent (made index), and its children's not made
  let cap = 1024;
  let site = new Int32Array(cap);
  let value = new Float64Array(cap);
  let label = new Int32Array(cap);
  let up = new Int32Array(cap);
  let hiddenOf = new Float64Array(cap);
  let hiddenN = new Int32Array(cap);
  value[0] = totals.at(0);
  label[0] = up[0] = -1;
  let m = 1;
  let at = 0;
  for (let k = 1; k < parent.length; k++) {
    const p = parent[k];
    if (made[p] === 0) continue;
    const v = totals.at(k);
    if (!(v > 0)) continue;
    if (site[at] !== p) at = site[m - 1] === p ? m - 1 : positionIn(site, m, p);
    if (v >= theta) {
      if (m === cap) {
        cap *= 2;
        site = grow(site, cap);
        value = grow(value, cap);
        label = grow(label, cap);
        up = grow(up, cap);
        hiddenOf = grow(hiddenOf, cap);
        hiddenN = grow(hiddenN, cap);
      }
      made[k] = 1;
      site[m] = k;
      value[m] = v;
      label[m] = frame[k];
      up[m++] = at;
    } else {
      // each parent's children in table order (ascending), as the table's children lists give them
      hiddenOf[at] += v;
      hiddenN[at]++;
    }
  }
  const kidStart = new Int32Array(m + 1);
  for (let i = 1; i < m; i++) kidStart[up[i] + 1]++;
  for (let i = 0; i < m; i++) kidStart[i + 1] += kidStart[i];
  const fill = kidStart.slice(0, m);
  const kids = new Int32Array(m);
  for (let i = 1; i < m; i++) kids[fill[up[i]]++] = i;
  return {
    value: value.subarray(0, m),
    first: site.subarray(0, m),
    label: label.subarray(0, m),
    members: null,
    kids,
    kidStart,
    kidEnd: kidStart.subarray(1),
    hiddenOf: hiddenOf.subarray(0, m),
    hiddenN: hiddenN.subarray(0, m),
  };
}

/** Where `k` is in `sorted[0, end)` (it is there). */
function positionIn(sorted: Int32Array, end: number, k: number): number {
  let lo = 0;
  let hi = end - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The zoom's path down from the root, then the view top's subtree breadth first over the table's
 * children lists (or the sparse totals' own), each node's children appended together.
 */
function cut(d: ExplorerData, totals: TableTotals, req: CulledRequest, nameOf: (label: number) => string): Made {
  const byFunction = req.granularity === 'function';
  const frame = d.node.frame;
  const fnOf = d.fnOfFrame;
  // sparse totals list the children of the touched nodes (the others have no weight) with their totals
  const sparseKids = totals.childrenOf;
  const tk = sparseKids ? null : kidsOf(d);
  const scratch: number[] = [];
  // the children of the table nodes asked for since kidN was set to 0, with their totals: the
  // first kidN of each array, written over (an array's length set to 0 frees its store, and the
  // next pushes grow a new one: 15% of a warm view by function when done for each node)
  const kidK: number[] = [];
  const kidV: number[] = [];
  let kidN = 0;
  const listKids = (t: number): void => {
    if (sparseKids) {
      kidK.length = kidV.length = kidN;
      sparseKids(t, kidK, kidV);
      kidN = kidK.length;
      return;
    }
    const list = tk!.of(t, scratch);
    for (let j = 0; j < list.length; j++, kidN++) {
      kidK[kidN] = list[j];
      kidV[kidN] = totals.at(list[j]);
    }
  };
  // per made node, in the order made (n of them): its first table node, value and label; its
  // children's start (kidStart[i + 1]: its end, as each node's are appended after the last's) and
  // those not made; by function, its table nodes mem[memStart[i], memStart[i + 1]). Typed columns
  // that double when full: a push a column and node was 14% of a cold first view.
  let cap = 1024;
  let first = new Int32Array(cap);
  let value = new Float64Array(cap);
  let label = new Int32Array(cap);
  let kidStart = new Int32Array(cap + 1);
  let hiddenOf = new Float64Array(cap);
  let hiddenN = new Int32Array(cap);
  let memStart = new Int32Array(cap + 1);
  let n = 1;
  value[0] = totals.at(0);
  label[0] = -1;
  memStart[1] = 1;
  const room = () => {
    if (n < cap) return;
    cap *= 2;
    first = grow(first, cap);
    value = grow(value, cap);
    label = grow(label, cap);
    kidStart = grow(kidStart, cap + 1);
    hiddenOf = grow(hiddenOf, cap);
    hiddenN = grow(hiddenN, cap);
    memStart = grow(memStart, cap + 1);
  };
  let mem = new Int32Array(1024);
  let memLen = 1;
  const memRoom = (more: number) => {
    mem = grow(mem, memLen + more);
  };
  // per function, while one node's children are grouped (seen 0: not met; 1: met, not kept; 2:
  // kept, `at` then where its next table node goes in mem): arrays the size of the functions,
  // made once a cut and reset after each node, not a Map and a group for each of the 156k
  // functions a root's children have in a dump whose every stack is in view (most of them too
  // narrow to be made)
  let fns: { sum: Float64Array; first: Int32Array; seen: Int32Array; at: Int32Array } | null = null;
  const touchedFns: number[] = [];
  const kidF: number[] = [];
  /** the weight and count of the last appendChildren's children with weight under its `keep` */
  let hiddenW = 0;
  let hiddenC = 0;
  /**
   * Made node `i`'s children with weight appended as made nodes: those of at least `keep` (and
   * above 0 when `positive`); the others above 0 summed into hiddenW and hiddenC. By site, its
   * table children; by function, its table nodes' children grouped by function, in the order the
   * functions are first met, each group's table nodes in the order met.
   */
  const appendChildren = (i: number, keep: number, positive: boolean): void => {
    hiddenW = 0;
    hiddenC = 0;
    kidN = 0;
    if (!byFunction) {
      listKids(first[i]);
      for (let j = 0; j < kidN; j++) {
        const v = kidV[j];
        if (v !== 0 && v >= keep && (v > 0 || !positive)) {
          const k = kidK[j];
          room();
          first[n] = k;
          value[n] = v;
          label[n++] = frame[k];
        } else if (v > 0) {
          hiddenW += v;
          hiddenC++;
        }
      }
      return;
    }
    const g = (fns ??= {
      sum: new Float64Array(d.fnNames.length),
      first: new Int32Array(d.fnNames.length),
      seen: new Int32Array(d.fnNames.length),
      at: new Int32Array(d.fnNames.length),
    });
    const { sum, seen, at } = g;
    for (let a = memStart[i]; a < memStart[i + 1]; a++) listKids(mem[a]);
    let touched = 0;
    for (let j = 0; j < kidN; j++) {
      const t = kidK[j];
      const f = (kidF[j] = fnOf[frame[t]]);
      if (seen[f] === 0) {
        seen[f] = 1;
        touchedFns[touched++] = f;
        sum[f] = 0;
        at[f] = 0;
        g.first[f] = t;
      } else if (t < g.first[f]) g.first[f] = t;
      sum[f] += kidV[j];
      at[f]++;
    }
    // each kept function's run of table nodes, in the order the functions were first met
    let end = memLen;
    for (let q = 0; q < touched; q++) {
      const f = touchedFns[q];
      const v = sum[f];
      if (v !== 0 && v >= keep && (v > 0 || !positive)) {
        seen[f] = 2;
        room();
        first[n] = g.first[f];
        value[n] = v;
        label[n] = f;
        const count = at[f];
        at[f] = end;
        memStart[++n] = end += count;
      } else if (v > 0) {
        hiddenW += v;
        hiddenC++;
      }
    }
    if (end > memLen) {
      memRoom(end - memLen);
      for (let j = 0; j < kidN; j++) {
        const f = kidF[j];
        if (seen[f] === 2) mem[at[f]++] = kidK[j];
      }
      memLen = end;
    }
    for (let q = 0; q < touched; q++) seen[touchedFns[q]] = 0;
  };
  // the view's top: follow the zoom's names down the children with weight (siblings have distinct
  // labels); the node found takes the place after its parent, the other children are dropped
  for (let j = 1; j < req.zoom.length; j++) {
    const from = n;
    appendChildren(from - 1, -Infinity, false);
    let x = from;
    while (x < n && nameOf(label[x]) !== req.zoom[j]) x++;
    if (x === n) {
      n = from;
      memLen = memStart[n];
      break;
    }
    first[from] = first[x];
    value[from] = value[x];
    label[from] = label[x];
    if (byFunction) {
      mem.copyWithin(memStart[from], memStart[x], memStart[x + 1]);
      memStart[from + 1] = memStart[from] + memStart[x + 1] - memStart[x];
    }
    n = from + 1;
    memLen = memStart[n];
  }
  // the path above the top: each node's one child the next
  const top = n - 1;
  for (let i = 0; i < top; i++) kidStart[i] = i + 1;
  const theta = req.minShare * value[top];
  for (let i = top; i < n; i++) {
    kidStart[i] = n;
    appendChildren(i, theta, true);
    hiddenOf[i] = hiddenW;
    hiddenN[i] = hiddenC;
  }
  kidStart[n] = n;
  // children appended together: node i's are kids[kidStart[i], kidStart[i + 1]) with kids the identity
  const kids = new Int32Array(n);
  for (let i = 0; i < n; i++) kids[i] = i;
  return {
    value: value.subarray(0, n),
    first: first.subarray(0, n),
    label: label.subarray(0, n),
    members: byFunction ? { start: memStart.subarray(0, n + 1), of: mem.subarray(0, memLen) } : null,
    kids,
    kidStart: kidStart.subarray(0, n + 1),
    kidEnd: kidStart.subarray(1, n + 1),
    hiddenOf: hiddenOf.subarray(0, n),
    hiddenN: hiddenN.subarray(0, n),
  };
}
