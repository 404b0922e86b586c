import type { FileKind } from '../formats/types.ts';
import { pairSlot, randomWords } from '../base/keyed-hash.ts';
import type { StackTable } from './stack-table.ts';

/**
 * Frames at two granularities. The stack table keys a frame by its call site (`sym+0xoff`, DESIGN
 * 2.2): for an ftrace stack that address is the stack map's identity. Every profiler (perf
 * report, stackcollapse-perf.pl, speedscope, Firefox Profiler) aggregates samples by function:
 * `vfs_read+0x10` and `vfs_read+0x14` are one frame, `vfs_read`. 'function' drops the offset,
 * 'site' keeps it.
 */
export type Granularity = 'function' | 'site';
export const GRANULARITIES: readonly Granularity[] = ['function', 'site'];

/**
 * The default: 'function' when every trace file of the capture is `perf script` output (samples,
 * whose sampled address is a position inside a function, not a call site the map keyed), else
 * 'site' (ftrace stacks, whose frames are return addresses: the map's identity).
 */
export function defaultGranularity(files: readonly { kind: FileKind }[]): Granularity {
  return isPerfOnly(files) ? 'function' : 'site';
}

/** Whether the capture's trace files are all `perf script` output (and there is one). */
export function isPerfOnly(files: readonly { kind: FileKind }[]): boolean {
  let perf = false;
  for (const f of files) {
    if (f.kind === 'perf_script') perf = true;
    else if (f.kind === 'trace_text' || f.kind === 'trace_cmd_dat' || f.kind === 'systrace_html') return false;
  }
  return perf;
}

/**
 * The stack table's prefix tree with each frame replaced by its function and equal paths merged:
 * one node per distinct function path. Made in one pass over the table's nodes (parents come
 * before their children): each node's first child beside it, a keyed hash of (parent, function)
 * -> node for the rest; typed arrays throughout.
 */
export interface FunctionTree {
  /** function names (the frame table's: see FrameTable.functionOf) */
  fnNames: string[];
  /** frame string index -> function index */
  fnOfFrame: Int32Array;
  /** per stack-table node: its function-path node (0: the root) */
  ofNode: Int32Array;
  /** per function-path node: parent and function (the root's are -1) */
  parent: Int32Array;
  fn: Int32Array;
  depth: Int32Array;
}

const trees = new WeakMap<StackTable, FunctionTree>();

/** The function tree of a stack table, made once per table (a snapshot's table does not change). */
export function functionTree(stacks: StackTable): FunctionTree {
  let t = trees.get(stacks);
  if (!t) trees.set(stacks, (t = makeFunctionTree(stacks)));
  return t;
}

function makeFunctionTree(stacks: StackTable): FunctionTree {
  const cols = stacks.columns();
  // a site frame knows its function; the others are read as their key without `+0xoff` (frameFunction)
  const fnOfFrame = stacks.frames.functionIds().slice();
  const fnNames = stacks.frames.functionNames();
  const n = cols.parent.length;
  const ofNode = new Int32Array(n);
  // at most one function-path node per table node
  const parent = new Int32Array(Math.max(1, n)).fill(-1);
  const fn = new Int32Array(Math.max(1, n)).fill(-1);
  const depth = new Int32Array(Math.max(1, n));
  let count = 1;
  // (parent, function) -> child: each node's first child kept beside it (a walk down a dump's
  // tree mostly meets nodes with one child), the others in an open-addressing table of
  // (parent, function, child) triples, keyed (pairSlot: the functions come from files)
  const firstChild = new Int32Array(Math.max(1, n));
  const key = randomWords(2);
  const k0 = key[0] | 0;
  const k1 = key[1] | 0;
  let bits = 10;
  let table = new Int32Array(3 << bits);
  let used = 0;
  const place = (t: Int32Array, b: number, p: number, f: number, c: number) => {
    const mask = (1 << b) - 1;
    let h = pairSlot(p, f, k0, k1, 32 - b);
    while (t[3 * h + 2] !== 0) h = (h + 1) & mask;
    t[3 * h] = p;
    t[3 * h + 1] = f;
    t[3 * h + 2] = c;
  };
  for (let k = 1; k < n; k++) {
    const p = ofNode[cols.parent[k]];
    const f = fnOfFrame[cols.frame[k]];
    let c = 0;
    const first = firstChild[p];
    if (first !== 0 && fn[first] === f) c = first;
    else if (first !== 0) {
      const mask = (1 << bits) - 1;
      for (let h = pairSlot(p, f, k0, k1, 32 - bits); ; h = (h + 1) & mask) {
        const e = table[3 * h + 2];
        if (e === 0) break;
        if (table[3 * h] === p && table[3 * h + 1] === f) {
          c = e;
          break;
        }
      }
    }
    if (c === 0) {
      c = count++;
      parent[c] = p;
      fn[c] = f;
      depth[c] = depth[p] + 1;
      if (first === 0) firstChild[p] = c;
      else {
        if (2 * (used + 1) > 1 << bits) {
          const old = table;
          table = new Int32Array(3 << ++bits);
          for (let q = 0; q < old.length; q += 3) if (old[q + 2] !== 0) place(table, bits, old[q], old[q + 1], old[q + 2]);
        }
        place(table, bits, p, f, c);
        used++;
      }
    }
    ofNode[k] = c;
  }
  // most of a dump's table nodes are function paths of their own: a view of the arrays, not a copy, unless much is unused
  const trim = (a: Int32Array) => (count > n / 2 ? a.subarray(0, count) : a.slice(0, count));
  return { fnNames, fnOfFrame, ofNode, parent: trim(parent), fn: trim(fn), depth: trim(depth) };
}

/** The function names of a function-path node, leaf first. */
export function functionPath(t: FunctionTree, node: number): string[] {
  const out: string[] = [];
  for (let n = node; n > 0; n = t.parent[n]) out.push(t.fnNames[t.fn[n]]);
  return out;
}
