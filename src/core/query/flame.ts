import type { ExplorerData, FrameView } from './explorer-data.ts';
import type { Granularity } from '../capture/function-tree.ts';
import { culledTree } from './flame-culled.ts';
import { tableTotals, type TableTotals } from './flame-totals.ts';
import { type FlameTreeFrames, lazyFrames } from './flame-frames.ts';
import { TreeBuilder } from './flame-tree.ts';
import type { FlameRequest, FlameResult, FlameWeight, Selection } from './api.ts';
import { SelectionFilter } from './selection.ts';
import { compilePattern, patternMessage } from '../base/text-match.ts';
import { frameMatchMask, stackFilterHash, stackMatches } from './top-stacks.ts';
import { stackByHash } from './stack-hash.ts';
import { compileTransforms, type StackFrames } from './flame-transforms.ts';
import { weighStacks, type EventGroups } from './weigh.ts';

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
 * cookies, full stacks). 'period': by the records' own weights (perf's sample period, as
 * stackcollapse-perf.pl sums it; 1 for a record without one). 'refcount': each distinct stack of the selection once, weighted by
 * the dumps' ref_count summed over the dumps of the generations its occurrences in the
 * selection fall in (a stack no dump holds, e.g. one only written in full, weighs 0).
 */
export function stackWeights(d: ExplorerData, sel: Selection, weight: FlameWeight): StackWeights {
  const f = new SelectionFilter(sel);
  const occ = d.occurrences(f);
  if (weight === 'occurrences') return { stacks: occ.stacks, weights: occ.counts, total: occ.total };
  // a field's weights are the record weights of the view made for it (weighted-view.ts)
  if (weight === 'period' || weight.startsWith('field:')) {
    let total = 0;
    for (const w of occ.weights) total += w;
    return { stacks: occ.stacks, weights: occ.weights, total };
  }
  const gens = [...d.generationsOf(f)];
  const weights = new Float64Array(occ.stacks.length);
  let total = 0;
  for (let i = 0; i < occ.stacks.length; i++) {
    weights[i] = d.refs.count(occ.stacks[i], gens) ?? 0;
    total += weights[i];
  }
  return { stacks: occ.stacks, weights, total };
}

/** The request with a search (structurally a FlameRequest, so it travels the same way). */
export interface FlameQuery extends FlameRequest {
  /** highlight what matches: substring or /regex/, against frames as shown and their functions */
  search?: string;
}

export interface FlameSearchAnswer {
  /** per node of `tree`: 1 when its function or one of its frames matches */
  mask: Uint8Array;
  /** the same for `callers` (sandwich) */
  callerMask: Uint8Array | null;
  /** distinct stacks of the tree with a matching frame, and their weight */
  stacks: number;
  value: number;
  /** value / the tree's total */
  share: number;
  /** the pattern's error (invalid, or one RE2 cannot run): then nothing is marked */
  error: string | null;
}

/** A function of the selection by weight: for choosing a sandwich's function. */
export interface FunctionWeight {
  name: string;
  /** weight of the stacks that end in it */
  self: number;
  /** weight of the stacks it is in, each counted once */
  total: number;
}

export interface FlameAnswer extends FlameResult {
  tree: FlameTreeFrames;
  callers: FlameTreeFrames | null;
  search: FlameSearchAnswer | null;
  /** sandwich without a known function: the functions to offer, busiest leaves first */
  suggestions: FunctionWeight[] | null;
  /** the granularity the tree was built at (the request's, or the capture's default) */
  granularity: Granularity;
}

/**
 * Positions (into the stack's leaf-first frames) of one stack's path for each mode, from the
 * tree's root down; null: the stack does not take part.
 */
export function topDownPath(leafFirst: readonly number[]): number[] {
  return leafFirst.map((_, i) => leafFirst.length - 1 - i);
}
export function bottomUpPath(leafFirst: readonly number[]): number[] {
  return leafFirst.map((_, i) => i);
}
/** callees of the outermost call of focus (recursion counted once), from focus down to the leaf */
export function calleePath(leafFirst: readonly number[], focus: number): number[] | null {
  const k = leafFirst.lastIndexOf(focus);
  return k < 0 ? null : Array.from({ length: k }, (_, i) => k - 1 - i);
}
/** callers of the innermost call of focus, from focus up to the outermost caller */
export function callerPath(leafFirst: readonly number[], focus: number): number[] | null {
  const k = leafFirst.indexOf(focus);
  return k < 0 ? null : Array.from({ length: leafFirst.length - k - 1 }, (_, i) => k + 1 + i);
}

/** frame string index of every frame of a stack, leaf first */
function framesOfStack(d: ExplorerData, stack: number): number[] {
  const out: number[] = [];
  for (let n = stack; n > 0; n = d.node.parent[n]) out.push(d.node.frame[n]);
  return out;
}

/** How a top-down or bottom-up tree is aggregated; 'auto' picks by the work each takes (tests force one). */
export type FlameStrategy = 'auto' | 'paths' | 'prefix';
let strategy: FlameStrategy = 'auto';
/** for tests and benchmarks: force one way of aggregating (returns the previous one) */
export function setFlameStrategyForTests(s: FlameStrategy): FlameStrategy {
  const old = strategy;
  strategy = s;
  return old;
}

/**
 * Top-down over the stack table itself: it is a prefix tree (parents before children), so the
 * weights go to their stacks' nodes in a Float64Array, one backward pass sums them into every
 * ancestor, and one forward pass maps each weighted node to the flame node of its parent's flame
 * node and its function. Work: the table's nodes, not stacks x depth.
 */
function addPrefixTree(d: ExplorerData, view: FrameView, b: TreeBuilder, stacks: Int32Array, weights: Float64Array, taking: number[]): void {
  const { parent, frame } = d.node;
  const fnOf = view.of;
  const n = parent.length;
  const inc = new Float64Array(n);
  for (const i of taking) inc[stacks[i]] += weights[i];
  let weighted = 1;
  for (let k = n - 1; k > 0; k--) {
    if (inc[k] === 0) continue;
    inc[parent[k]] += inc[k];
    weighted++;
  }
  // at most one flame node per weighted table node
  b.reserve(weighted);
  const flameNode = new Int32Array(n);
  b.value[0] += inc[0];
  for (let k = 1; k < n; k++) {
    const w = inc[k];
    if (w === 0) continue;
    const f = frame[k];
    const c = b.step(flameNode[parent[k]], fnOf[f], true);
    flameNode[k] = c;
    b.value[c] += w;
    b.addFrame(c, f, w);
  }
  for (const i of taking) b.self[flameNode[stacks[i]]] += weights[i];
}

/** Bottom-up, stack by stack from the leaf up, without an array per stack. */
function addBottomUp(d: ExplorerData, view: FrameView, b: TreeBuilder, stacks: Int32Array, weights: Float64Array, taking: number[]): void {
  const { parent, frame } = d.node;
  const fnOf = view.of;
  for (const i of taking) {
    const w = weights[i];
    let node = 0;
    b.value[0] += w;
    for (let k = stacks[i]; k > 0; k = parent[k]) {
      const f = frame[k];
      node = b.step(node, fnOf[f], true);
      b.value[node] += w;
      b.addFrame(node, f, w);
    }
    b.self[node] += w;
  }
}

function buildTree(
  d: ExplorerData,
  view: FrameView,
  w: StackWeights,
  path: (leafFirst: number[]) => number[] | null,
  rootName: string,
  highlightStack: number | null,
  whole: 'top-down' | 'bottom-up' | null = null,
  xf: ((s: StackFrames) => StackFrames | null) | null = null,
): { tree: FlameTreeFrames; stacks: number[]; nodesOf(stack: number): number[] } {
  const frames = d.stacks.frames;
  const b = new TreeBuilder(Math.max(1, view.names.length));
  const taking: number[] = [];
  /** a stack's frames, leaf first, as the transforms leave them (null: it drops out) */
  const framesOf = (stack: number): StackFrames | null => {
    const sf = { fns: d.functionsOf(stack, view), frames: framesOfStack(d, stack) };
    return xf ? xf(sf) : sf;
  };
  if (xf) {
    // transformed stacks share no prefix with the table's: each is added along its own path
    for (let i = 0; i < w.stacks.length; i++) {
      if (w.weights[i] === 0) continue;
      const sf = framesOf(w.stacks[i]);
      const p = sf && path(sf.fns);
      if (!sf || !p) continue;
      b.addAt(sf.fns, p, sf.frames, w.weights[i]);
      taking.push(i);
    }
  } else if (whole) {
    // every stack of weight takes part, along its whole path
    let steps = 0;
    for (let i = 0; i < w.stacks.length; i++) {
      if (w.weights[i] === 0) continue;
      taking.push(i);
      steps += d.depthOf(w.stacks[i]);
    }
    // the prefix pass reads every node of the table: worth it once the paths are longer than that
    const prefix = whole === 'top-down' && (strategy === 'prefix' || (strategy === 'auto' && steps > d.node.parent.length / 4));
    if (prefix) addPrefixTree(d, view, b, w.stacks, w.weights, taking);
    else if (whole === 'bottom-up') addBottomUp(d, view, b, w.stacks, w.weights, taking);
    else {
      for (const i of taking) {
        const fns = d.functionsOf(w.stacks[i], view);
        b.addAt(fns, topDownPath(fns), framesOfStack(d, w.stacks[i]), w.weights[i]);
      }
    }
  } else {
    for (let i = 0; i < w.stacks.length; i++) {
      if (w.weights[i] === 0) continue;
      const fns = d.functionsOf(w.stacks[i], view);
      const p = path(fns);
      if (!p) continue;
      b.addAt(fns, p, framesOfStack(d, w.stacks[i]), w.weights[i]);
      taking.push(i);
    }
  }
  let hp: number[] | null = null;
  if (highlightStack !== null && highlightStack >= 0 && highlightStack < d.stacks.nodeCount) {
    const fns = framesOf(highlightStack)?.fns;
    hp = (fns && path(fns)?.map((k) => fns[k])) ?? null;
  }
  const tree = b.build(view.names as string[], rootName, hp);
  const nodesOf = (stack: number) => {
    const fns = framesOf(stack)?.fns;
    const p = fns && path(fns);
    return fns && p ? b.nodesOnPath(p.map((k) => fns[k])) : [];
  };
  return { tree: lazyFrames(tree, () => b.nodeFrames(frames.size, (f) => frames.name(f))), stacks: taking, nodesOf };
}

/**
 * What a search marks in a tree: the nodes with a matching frame (or function; the root only
 * when it is a sandwich's function and that matches), and the stacks of the tree with a matching
 * frame, counted once each, with their weight.
 */
function searchTree(
  d: ExplorerData,
  w: StackWeights,
  built: { tree: FlameTreeFrames; stacks: number[]; nodesOf(stack: number): number[] },
  callers: { tree: FlameTreeFrames; nodesOf(stack: number): number[] } | null,
  query: string,
  rootFunction: string | null,
): FlameSearchAnswer {
  const { tree } = built;
  const empty = (error: string | null): FlameSearchAnswer => ({
    mask: new Uint8Array(tree.parent.length),
    callerMask: callers ? new Uint8Array(callers.tree.parent.length) : null,
    stacks: 0,
    value: 0,
    share: 0,
    error,
  });
  // `stack:<hash>`: the one stack, and the nodes on its path
  const hash = stackFilterHash(query);
  if (hash !== null) {
    const only = stackByHash(d, hash);
    const r = empty(null);
    const i = only === null ? -1 : (built.stacks.find((k) => w.stacks[k] === only) ?? -1);
    if (i < 0 || only === null) return r;
    for (const n of built.nodesOf(only)) r.mask[n] = 1;
    if (callers && r.callerMask) for (const n of callers.nodesOf(only)) r.callerMask[n] = 1;
    return { ...r, stacks: 1, value: w.weights[i], share: tree.total > 0 ? w.weights[i] / tree.total : 0 };
  }
  let frameMask: Uint8Array;
  let rootHit = false;
  try {
    frameMask = frameMatchMask(d, query);
    if (rootFunction !== null) rootHit = compilePattern(query)(rootFunction);
  } catch (e) {
    const message = patternMessage(e);
    if (message === null) throw e;
    return empty(message);
  }
  // node frames are indexed into the tree's own frameNames; map them back through the frame table
  const frameIndex = new Map<string, number>();
  d.stacks.frames.strings.forEach((f, i) => frameIndex.set(f, i));
  const markNodes = (t: FlameTreeFrames) => {
    const mask = new Uint8Array(t.parent.length);
    const hitName = t.frameNames.map((f) => frameMask[frameIndex.get(f) ?? -1] === 1);
    for (let i = 0; i < t.parent.length; i++) {
      for (let j = t.frameStart[i]; j < t.frameStart[i + 1]; j++) {
        if (hitName[t.frameOf[j]]) {
          mask[i] = 1;
          break;
        }
      }
    }
    if (rootHit && mask.length) mask[0] = 1;
    return mask;
  };
  let stacks = 0;
  let value = 0;
  for (const i of built.stacks) {
    if (!rootHit && !stackMatches(d, w.stacks[i], frameMask)) continue;
    stacks++;
    value += w.weights[i];
  }
  return {
    mask: markNodes(tree),
    callerMask: callers ? markNodes(callers.tree) : null,
    stacks,
    value,
    share: tree.total > 0 ? value / tree.total : 0,
    error: null,
  };
}

/** The selection's functions by self weight (then total), those containing `text` when given. */
export function functionWeights(d: ExplorerData, w: StackWeights, text: string, limit: number, view: FrameView = d.frameView('function')): FunctionWeight[] {
  const names = view.names;
  const self = new Float64Array(names.length);
  const total = new Float64Array(names.length);
  const seen = new Int32Array(names.length).fill(-1);
  for (let i = 0; i < w.stacks.length; i++) {
    const wt = w.weights[i];
    if (wt === 0) continue;
    const fns = d.functionsOf(w.stacks[i], view);
    if (fns.length) self[fns[0]] += wt;
    for (const f of fns) {
      if (seen[f] === i) continue;
      seen[f] = i;
      total[f] += wt;
    }
  }
  const needle = text.trim().toLowerCase();
  const out: FunctionWeight[] = [];
  for (let f = 0; f < names.length; f++) {
    if (total[f] === 0 || (needle && !names[f].toLowerCase().includes(needle))) continue;
    out.push({ name: names[f], self: self[f], total: total[f] });
  }
  out.sort((a, b) => b.self - a.self || b.total - a.total || (a.name < b.name ? -1 : 1));
  return out.slice(0, limit);
}

/** The last culled view's totals, by what they depend on: zooming, re-rooting and the other granularity reuse them. */
let lastTotals: { d: ExplorerData; key: string; totals: TableTotals } | null = null;

/** Top-down, only what a view shows (flame-culled.ts), searched the way searchTree does. */
function culledFlame(
  d: ExplorerData,
  req: FlameQuery,
  cull: { minShare: number; zoom: string[] },
  w: StackWeights,
  granularity: Granularity,
  search: string | null,
): FlameAnswer {
  const key = JSON.stringify([req.selection, req.weight]);
  if (!lastTotals || lastTotals.d !== d || lastTotals.key !== key) lastTotals = { d, key, totals: tableTotals(d, w) };
  const { totals } = lastTotals;
  let frameMask: Uint8Array | null = null;
  let error: string | null = null;
  let only: number | null = null;
  const hash = search ? stackFilterHash(search) : null;
  if (search && hash === null) {
    try {
      frameMask = frameMatchMask(d, search);
    } catch (e) {
      const message = patternMessage(e);
      if (message === null) throw e;
      error = message;
    }
  } else if (hash !== null) only = stackByHash(d, hash);
  const minShare = Math.max(0, cull.minShare);
  const culled = culledTree(d, totals, { granularity, minShare, zoom: cull.zoom, rootName: ROOT_NAME, highlightStack: req.highlightStack, frameMask });
  const tree = culled.tree;
  let answer: FlameSearchAnswer | null = null;
  if (search) {
    const mask = culled.mask ?? new Uint8Array(tree.parent.length);
    let stacks = 0;
    let value = 0;
    if (hash !== null) {
      const i = only === null ? -1 : w.stacks.indexOf(only);
      if (i >= 0 && w.weights[i] > 0) {
        for (const n of culled.pathOf(only)) mask[n] = 1;
        stacks = 1;
        value = w.weights[i];
      }
    } else if (frameMask) {
      for (let i = 0; i < w.stacks.length; i++) {
        if (w.weights[i] === 0 || !stackMatches(d, w.stacks[i], frameMask)) continue;
        stacks++;
        value += w.weights[i];
      }
    }
    answer = { mask, callerMask: null, stacks, value, share: tree.total > 0 ? value / tree.total : 0, error };
  }
  return { tree, callers: null, search: answer, suggestions: null, granularity };
}

/** how many functions a sandwich without one offers */
export const SUGGESTIONS = 12;

/**
 * The selection's stacks merged by function name. top-down: root = outermost caller (an icicle);
 * bottom-up: root's children = leaf functions, their children = callers; sandwich: `tree` holds
 * the callees of `focus` (root = focus) merged from every place it occurs, `callers` its callers
 * (root = focus, children = direct callers), each stack counted once however often it recurses.
 * Each node lists the frames (sym+0xoff) merged into it. With `search`, what matches is marked
 * and counted; a sandwich whose function is not in the selection offers the busiest ones.
 */
export function flame(d: ExplorerData, req: FlameQuery, groups: EventGroups | null = null): FlameAnswer {
  if (groups && req.mode !== 'sandwich') return groupedFlame(d, req, groups);
  const w = stackWeights(d, req.selection, req.weight);
  const granularity = d.granularityOf(req.granularity);
  const search = req.search?.trim() ? req.search : null;
  const transforms = req.transforms?.length ? req.transforms : null;
  // the culled tree's totals come from the stack table's own prefixes, which transforms change: the whole tree then
  if (req.mode === 'top-down' && req.cull && !transforms) return culledFlame(d, req, req.cull, w, granularity, search);
  const view = d.frameView(granularity);
  const xf = transforms ? compileTransforms(transforms, view) : null;
  if (req.mode === 'top-down' || req.mode === 'bottom-up') {
    const built = buildTree(d, view, w, req.mode === 'top-down' ? topDownPath : bottomUpPath, ROOT_NAME, req.highlightStack, req.mode, xf);
    return { tree: built.tree, callers: null, search: search ? searchTree(d, w, built, null, search, null) : null, suggestions: null, granularity };
  }
  const focusName = req.focus ?? '';
  const focus = view.names.indexOf(focusName);
  const callee = (lf: number[]) => (focus < 0 ? null : calleePath(lf, focus));
  const caller = (lf: number[]) => (focus < 0 ? null : callerPath(lf, focus));
  const built = buildTree(d, view, w, callee, focusName, req.highlightStack, null, xf);
  const callers = buildTree(d, view, w, caller, focusName, req.highlightStack, null, xf);
  return {
    tree: built.tree,
    callers: callers.tree,
    search: search ? searchTree(d, w, built, callers, search, focusName) : null,
    suggestions: built.tree.total > 0 ? null : functionWeights(d, w, focus < 0 ? focusName : '', SUGGESTIONS, view),
    granularity,
  };
}

/**
 * Top-down or bottom-up with a root frame per group (`perf report --sort comm`): each group's
 * stacks merged under it, weighed per record (weigh.ts weighStacks, so a record counts in its
 * event's group), transformed as the request says. Groups are names after the view's functions.
 */
function groupedFlame(d: ExplorerData, req: FlameQuery, groups: EventGroups): FlameAnswer {
  const granularity = d.granularityOf(req.granularity);
  const view = d.frameView(granularity);
  const xf = req.transforms?.length ? compileTransforms(req.transforms, view) : null;
  const weighed = weighStacks(d, { selection: req.selection, weight: req.weight.startsWith('field:') ? 'period' : req.weight, groups });
  const base = view.names.length;
  const names = [...view.names, ...groups.names, '[no event]'];
  const noGroup = base + groups.names.length;
  const b = new TreeBuilder(names.length);
  const topDown = req.mode === 'top-down';
  for (const row of weighed.rows) {
    if (row.weight === 0) continue;
    let sf: StackFrames | null = { fns: d.functionsOf(row.stack, view), frames: framesOfStack(d, row.stack) };
    if (xf) sf = xf(sf);
    if (!sf) continue;
    // leaf first, the group as the outermost frame (it has no frame string of its own)
    const fns = [...sf.fns, row.group >= 0 ? base + row.group : noGroup];
    const frames = [...sf.frames, -1];
    b.addAt(fns, topDown ? topDownPath(fns) : [fns.length - 1, ...bottomUpPath(sf.fns)], frames, row.weight);
  }
  const tree = b.build(names, ROOT_NAME, null);
  const frames = d.stacks.frames;
  return { tree: lazyFrames(tree, () => b.nodeFrames(frames.size, (f) => frames.name(f))), callers: null, search: null, suggestions: null, granularity };
}
