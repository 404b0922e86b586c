import type { ExplorerData } from './explorer-data.ts';
import { assemble, type CulledRequest, type CulledTree, type Made } from './flame-assemble.ts';
import type { TableTotals } from './flame-totals.ts';
import { TableChildren } from './table-children.ts';

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
 */

/** Each capture's stack-table children lists, made when a view first needs them (a zoom, or a view by function). */
const tableKids = new WeakMap<ExplorerData, TableChildren>();
function kidsOf(d: ExplorerData): TableChildren {
  let c = tableKids.get(d);
  if (!c) tableKids.set(d, (c = new TableChildren(d.node.parent)));
  return c;
}

/** A node to make: its table nodes, value, function (or frame) and first table node. */
interface Candidate {
  members: ArrayLike<number>;
  value: number;
  label: number;
  first: number;
}

export function culledTree(d: ExplorerData, totals: TableTotals, req: CulledRequest): CulledTree {
  const byFunction = req.granularity === 'function';
  const value = (k: number) => totals.at(k);
  const frame = d.node.frame;
  const frames = d.stacks.frames;
  const fnOf = d.fnOfFrame;
  const nameOf = (c: Candidate) => (byFunction ? d.fnNames[c.label] : frames.name(c.label));
  // a node's children as candidates: by site, its table children (every one with weight); by
  // function, its table nodes' children grouped by function. For the first view by site, one
  // forward pass over the table collects the children of the nodes kept so far (parents come
  // before children), which touches no node-sized array but a mask; otherwise the table's lists.
  // sparse totals list the children of the touched nodes (the others have no weight) with their totals
  const sparseKids = totals.childrenOf;
  let firstView: Map<number, number[]> | null = null;
  if (!sparseKids && !byFunction && req.zoom.length <= 1 && !tableKids.has(d)) {
    const theta0 = req.minShare * totals.at(0);
    const parent = d.node.parent;
    const view = (firstView = new Map());
    const keepMask = new Uint8Array(parent.length);
    keepMask[0] = 1;
    for (let k = 1; k < parent.length; k++) {
      const p = parent[k];
      if (keepMask[p] === 0) continue;
      const v = totals.at(k);
      if (v === 0) continue;
      if (v >= theta0) keepMask[k] = 1;
      const l = view.get(p);
      if (l) l.push(k);
      else view.set(p, [k]);
    }
  }
  const kids = firstView || sparseKids ? null : kidsOf(d);
  // a node's children and their totals: read before the next node's are asked for, so two arrays, refilled
  const scratch: number[] = [];
  const kidK: number[] = [];
  const kidV: number[] = [];
  const listKids = (t: number): void => {
    kidK.length = 0;
    kidV.length = 0;
    if (sparseKids) return sparseKids(t, kidK, kidV);
    const list = firstView ? (firstView.get(t) ?? []) : kids!.of(t, scratch);
    for (let j = 0; j < list.length; j++) {
      kidK.push(list[j]);
      kidV.push(value(list[j]));
    }
  };
  // per function, while one node's children are grouped (seen 0: not met; 1: met, not kept;
  // 2 + i: the i-th kept): arrays the size of the functions, made once a cut and reset after
  // each node, not a Map and a group object for each of the 156k functions a root's children
  // have in a dump whose every stack is in view (most of them too narrow to be made)
  let fns: { sum: Float64Array; first: Int32Array; seen: Int32Array } | null = null;
  const touchedFns: number[] = [];
  const flatKid: number[] = [];
  const flatFn: number[] = [];
  /** the weight and count of the last childrenOf's children with weight under its `keep` */
  const hidden = { weight: 0, count: 0 };
  const hide = (v: number) => {
    if (v > 0) {
      hidden.weight += v;
      hidden.count++;
    }
  };
  /**
   * Node `c`'s children with weight as candidates: those of at least `keep` (and above 0 when
   * `positive`); the others above 0 summed into `hidden`. By site, its table children; by
   * function, its table nodes' children grouped by function.
   */
  const childrenOf = (c: Candidate, keep: number, positive: boolean): Candidate[] => {
    hidden.weight = 0;
    hidden.count = 0;
    const kept = (v: number) => v !== 0 && v >= keep && (v > 0 || !positive);
    const out: Candidate[] = [];
    if (!byFunction) {
      listKids(c.first);
      for (let j = 0; j < kidK.length; j++) {
        const k = kidK[j];
        const v = kidV[j];
        if (kept(v)) out.push({ members: [k], value: v, label: frame[k], first: k });
        else hide(v);
      }
      return out;
    }
    const n = d.fnNames.length;
    const { sum, first, seen } = (fns ??= { sum: new Float64Array(n), first: new Int32Array(n), seen: new Int32Array(n) });
    touchedFns.length = 0;
    flatKid.length = 0;
    flatFn.length = 0;
    for (let a = 0; a < c.members.length; a++) {
      listKids(c.members[a]);
      for (let j = 0; j < kidK.length; j++) {
        const t = kidK[j];
        const f = fnOf[frame[t]];
        flatKid.push(t);
        flatFn.push(f);
        if (seen[f] === 0) {
          seen[f] = 1;
          touchedFns.push(f);
          sum[f] = 0;
          first[f] = t;
        } else if (t < first[f]) first[f] = t;
        sum[f] += kidV[j];
      }
    }
    // in the order the functions were first met, as the groups were made before
    for (let q = 0; q < touchedFns.length; q++) {
      const f = touchedFns[q];
      const v = sum[f];
      if (kept(v)) {
        seen[f] = 2 + out.length;
        out.push({ members: [], value: v, label: f, first: first[f] });
      } else hide(v);
    }
    if (out.length > 0) {
      for (let q = 0; q < flatKid.length; q++) {
        const g = seen[flatFn[q]];
        if (g >= 2) (out[g - 2].members as number[]).push(flatKid[q]);
      }
    }
    for (let q = 0; q < touchedFns.length; q++) seen[touchedFns[q]] = 0;
    return out;
  };
  // the view's top: follow the zoom's names down the children with weight (siblings have distinct labels)
  const root: Candidate = { members: [0], value: value(0), label: -1, first: 0 };
  const path = [root];
  for (let j = 1; j < req.zoom.length; j++) {
    const found = childrenOf(path[path.length - 1], -Infinity, false).find((c) => nameOf(c) === req.zoom[j]);
    if (!found) break;
    path.push(found);
  }
  const top = path[path.length - 1];
  const theta = req.minShare * top.value;
  const made: Made = { members: [], value: [], name: [], first: [], label: [], kidStart: [], kidEnd: [], hiddenOf: [], hiddenN: [] };
  const nodes: Candidate[] = path.slice();
  for (let i = 0; i + 1 < path.length; i++) {
    made.kidStart.push(i + 1);
    made.kidEnd.push(i + 2);
    made.hiddenOf.push(0);
    made.hiddenN.push(0);
  }
  if (!byFunction) {
    // by site a made node is a table node: breadth first over them in two arrays, no candidate
    // object a node (the first paint of a capture runs this code cold, where each costs)
    const site = nodes.map((c) => c.first);
    const val = nodes.map((c) => c.value);
    for (let i = path.length - 1; i < site.length; i++) {
      made.kidStart.push(site.length);
      listKids(site[i]);
      let weight = 0;
      let count = 0;
      for (let j = 0; j < kidK.length; j++) {
        const v = kidV[j];
        if (!(v > 0)) continue;
        if (v >= theta) {
          site.push(kidK[j]);
          val.push(v);
        } else {
          weight += v;
          count++;
        }
      }
      made.kidEnd.push(site.length);
      made.hiddenOf.push(weight);
      made.hiddenN.push(count);
    }
    // a frame's string made once (FrameTable.name builds it): nodes of one frame share it
    const names = new Map<number, string>();
    for (let i = 0; i < site.length; i++) {
      const k = site[i];
      made.members.push(i < nodes.length ? nodes[i].members : [k]);
      made.value.push(val[i]);
      const f = k === 0 ? -1 : frame[k];
      let name = k === 0 ? req.rootName : names.get(f);
      if (name === undefined) names.set(f, (name = frames.name(f)));
      made.name.push(name);
      made.first.push(k);
      made.label.push(f);
    }
    return assemble(d, totals, made, req);
  }
  for (let i = path.length - 1; i < nodes.length; i++) {
    made.kidStart.push(nodes.length);
    for (const c of childrenOf(nodes[i], theta, true)) nodes.push(c);
    made.kidEnd.push(nodes.length);
    made.hiddenOf.push(hidden.weight);
    made.hiddenN.push(hidden.count);
  }
  // by function a name is the function table's own string: nodes of one function share it
  for (const c of nodes) {
    made.members.push(c.members);
    made.value.push(c.value);
    made.name.push(c === root ? req.rootName : nameOf(c));
    made.first.push(c.first);
    made.label.push(c.label);
  }
  return assemble(d, totals, made, req);
}
