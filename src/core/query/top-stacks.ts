import { firstK } from '../base/first-k.ts';
import { IntPositions } from '../base/int-positions.ts';
import { RECORD_BYTES } from '../capture/ring-bytes.ts';
import type { ExplorerData, Occurrences } from './explorer-data.ts';
import type { Selection, TopStackRow, TopStacksRequest, TopStacksResult } from './api.ts';
import { genValue, isOccurrence, SelectionFilter } from './selection.ts';
import { dumpSlotsOfStacks, isStackHash, stackByHash, stackHashOf } from './stack-hash.ts';
import { compilePattern, patternMessage } from '../base/text-match.ts';
import { RecordKind, RecordStatus } from '../capture/trace-columns-data.ts';

/** local copies: an imported binding can cost a getter call per access under module transforms (tsx, vitest) */
const { CookieV7: COOKIE_V7, CookieV8: COOKIE_V8 } = RecordKind;
const { Full: FULL, Resolved: RESOLVED, Unverified: UNVERIFIED } = RecordStatus;

/** Does any frame of the stack match? `frameMask` is per frame string (frameMatchMask). */
export function stackMatches(d: ExplorerData, stack: number, frameMask: Uint8Array): boolean {
  for (let n = stack; n > 0; n = d.node.parent[n]) if (frameMask[d.node.frame[n]]) return true;
  return false;
}

/**
 * `stack:<stack_hash>` (16 hex digits) keeps one stack, by the identity that holds across
 * captures ("filter to this stack"); returns the hash, or null for any other search.
 */
export function stackFilterHash(query: string): string | null {
  const q = query.trim();
  return q.startsWith('stack:') && isStackHash(q.slice(6)) ? q.slice(6) : null;
}

/**
 * Which stacks a search keeps: per stack node, through `has(stack)`. `stack:<hash>` keeps that
 * one stack; any other text keeps the stacks with a matching frame (frameMatchMask). Throws
 * PatternError as frameMatchMask does.
 */
export function stackMatcher(d: ExplorerData, query: string): (stack: number) => boolean {
  const hash = stackFilterHash(query);
  if (hash !== null) {
    const only = stackByHash(d, hash);
    return (s) => s === only;
  }
  const mask = frameMatchMask(d, query);
  return (s) => stackMatches(d, s, mask);
}

/**
 * The frames a search matches, per frame string: a frame matches when its text as shown
 * (`__kmalloc+0x294`) or its function (`__kmalloc`) does. Throws PatternError (text-match.ts)
 * for an invalid regex, or one RE2 cannot run (a backreference, a lookahead).
 */
export function frameMatchMask(d: ExplorerData, query: string): Uint8Array {
  const test = compilePattern(query);
  const frames = d.stacks.frames.strings;
  const fnHit = new Int8Array(d.fnNames.length).fill(-1);
  const mask = new Uint8Array(frames.length);
  for (let i = 0; i < frames.length; i++) {
    const fn = d.fnOfFrame[i];
    if (fnHit[fn] < 0) fnHit[fn] = test(d.fnNames[fn]) ? 1 : 0;
    if (fnHit[fn] === 1 || test(frames[i])) mask[i] = 1;
  }
  return mask;
}

/** Ring-buffer bytes a record of this kind saved against writing its stack in full. */
export function bytesSaved(kind: number, depth: number): number {
  if (kind === COOKIE_V7) return RECORD_BYTES.full(depth) - RECORD_BYTES.v7Id;
  if (kind === COOKIE_V8) return RECORD_BYTES.full(depth) - RECORD_BYTES.v8Cookie;
  return 0;
}

/** Columns the top stacks can be sorted by (share sorts as count). */
export type TopStacksSortKey = 'count' | 'weight' | 'refCount' | 'generations' | 'leaf' | 'depth' | 'bytesSaved';
export interface TopStacksSort {
  key: TopStacksSortKey;
  dir: 'asc' | 'desc';
}

/** The request with the optional sort (structurally a TopStacksRequest, so it travels the same way). */
export interface TopStacksQuery extends TopStacksRequest {
  /** default: count, descending */
  sort?: TopStacksSort;
}

export interface TopStacksAnswer extends TopStacksResult {
  /** occurrences of the stacks that pass the filter (all of them without a filter) */
  matchingOccurrences: number;
  /** the selection's records' weights summed (the denominator of `share` when weighed by period or a field) */
  totalWeight: number;
  /** the filter's error (an invalid regex, or one RE2 cannot run): then no row matches */
  error: string | null;
}

/**
 * Stacks by occurrences among the selection's records (resolved and unverified cookies, full
 * kernel stacks), most frequent first, ties by first occurrence in the file; or by another
 * column (`sort`), over every matching stack before the limit. `filter` keeps the stacks with a
 * frame that matches as shown or by its function (substring, or /regex/flags; frameMatchMask),
 * or the one stack of `stack:<stack_hash>`.
 * `total` is every occurrence of the selection (the denominator of `share`), `matching` the
 * stacks that pass the filter and `matchingOccurrences` their occurrences.
 */
export function topStacks(d: ExplorerData, req: TopStacksQuery): TopStacksAnswer {
  const f = new SelectionFilter(req.selection);
  const granularity = d.granularityOf(req.granularity);
  let occ: Occurrences & { variants?: Int32Array } = d.occurrences(f);
  // weighed by period or a field: a row's share is of the selection's weight, as top --json's is
  const weighed = req.weight === 'period' || (req.weight?.startsWith('field:') ?? false);
  let totalWeight = 0;
  for (let i = 0; i < occ.weights.length; i++) totalWeight += occ.weights[i];
  let keep: ((stack: number) => boolean) | null = null;
  try {
    keep = req.filter.trim() ? stackMatcher(d, req.filter) : null;
  } catch (e) {
    // a pattern's failure is an answer, shown under the field, not a failed query
    const error = patternMessage(e);
    if (error === null) throw e;
    return { granularity, rows: [], matching: 0, total: occ.total, totalWeight, matchingOccurrences: 0, error };
  }
  if (granularity === 'function') {
    // the filter picks call-site stacks; what passes is merged by function path
    if (keep) occ = keepOccurrences(occ, keep);
    occ = d.byFunction(occ);
    keep = null;
  }
  // positions into occ, which is in first-seen order: a stable sort breaks ties by it
  const matched: number[] = [];
  let matchingOccurrences = 0;
  for (let i = 0; i < occ.stacks.length; i++) {
    if (keep && !keep(occ.stacks[i])) continue;
    matched.push(i);
    matchingOccurrences += occ.counts[i];
  }
  const refGens = req.selection.generation === null ? null : [f.gen!];
  const sort = req.sort ?? { key: 'count', dir: 'desc' };
  // generations are only needed for every matched stack when they are the sort key
  const gens = generationsOf(d, f, sort.key === 'generations' ? matched.map((i) => occ.stacks[i]) : []);
  const sign = sort.dir === 'asc' ? 1 : -1;
  const keyOf = sortKey(d, occ, sort.key, refGens, gens);
  // the page's rows only, not every matched stack sorted (ties end on the position: a total order)
  const top = firstK(matched, req.limit, (a, b) => {
    const ka = keyOf(a);
    const kb = keyOf(b);
    const c = ka < kb ? -1 : ka > kb ? 1 : 0;
    return sign * c || occ.counts[b] - occ.counts[a] || a - b;
  });
  const rowGens =
    sort.key === 'generations'
      ? gens
      : generationsOf(
          d,
          f,
          top.map((i) => occ.stacks[i]),
        );
  const rowSlots = dumpSlotsOfStacks(
    d,
    top.map((i) => occ.stacks[i]),
  );
  const rowRefs = d.refs.counts(
    top.map((i) => occ.stacks[i]),
    refGens,
  );
  const rows: TopStackRow[] = top.map((i, row) => {
    const s = occ.stacks[i];
    const depth = d.depthOf(s);
    return {
      stack: s,
      stackHash: stackHashOf(d, s),
      variants: occ.variants ? occ.variants[i] : 1,
      weight: occ.weights[i],
      slots: rowSlots.get(s)!,
      count: occ.counts[i],
      share: weighed ? (totalWeight ? occ.weights[i] / totalWeight : 0) : occ.total ? occ.counts[i] / occ.total : 0,
      refCount: rowRefs[row],
      generations: [...(rowGens.get(s) ?? [])].sort((a, b) => a - b).map(genValue),
      leaf: s > 0 ? (granularity === 'function' ? d.fnNames[d.fnOfFrame[d.node.frame[s]]] : d.stacks.frames.name(d.node.frame[s])) : '',
      depth,
      bytesSaved: occ.v7[i] * bytesSaved(COOKIE_V7, depth) + occ.v8[i] * bytesSaved(COOKIE_V8, depth),
    };
  });
  return { granularity, rows, matching: matched.length, total: occ.total, totalWeight, matchingOccurrences, error: null };
}

/** The occurrences of the stacks `keep` keeps (total unchanged: it stays the selection's). */
function keepOccurrences(occ: Occurrences, keep: (stack: number) => boolean): Occurrences {
  const at: number[] = [];
  for (let i = 0; i < occ.stacks.length; i++) if (keep(occ.stacks[i])) at.push(i);
  const ints = (a: Int32Array) => Int32Array.from(at, (i) => a[i]);
  const nums = (a: Float64Array) => Float64Array.from(at, (i) => a[i]);
  return {
    stacks: ints(occ.stacks),
    counts: nums(occ.counts),
    first: ints(occ.first),
    weights: nums(occ.weights),
    v7: nums(occ.v7),
    v8: nums(occ.v8),
    total: occ.total,
  };
}

/** A sort key per position into occ: a number, or a string for the leaf. */
function sortKey(
  d: ExplorerData,
  occ: Occurrences,
  key: TopStacksSortKey,
  refGens: number[] | null,
  gens: Map<number, Set<number>>,
): (i: number) => number | string {
  switch (key) {
    case 'count':
      return (i) => occ.counts[i];
    case 'weight':
      // the records' own weights summed (perf's period, or a field the page's worker weighs by)
      return (i) => occ.weights[i];
    case 'refCount': {
      // a stack no dump holds sorts below every ref_count
      const cache = new Map<number, number>();
      return (i) => {
        let v = cache.get(i);
        if (v === undefined) cache.set(i, (v = d.refs.count(occ.stacks[i], refGens) ?? -1));
        return v;
      };
    }
    case 'generations':
      // by the first generation it occurs in, then the number of generations
      return (i) => {
        const g = [...(gens.get(occ.stacks[i]) ?? [])].sort((a, b) => a - b);
        return g.length ? g[0] * 1024 + g.length : -1;
      };
    case 'leaf':
      return (i) => (occ.stacks[i] > 0 ? d.stacks.frames.name(d.node.frame[occ.stacks[i]]) : '');
    case 'depth':
      return (i) => d.depthOf(occ.stacks[i]);
    case 'bytesSaved':
      return (i) => {
        const depth = d.depthOf(occ.stacks[i]);
        return occ.v7[i] * bytesSaved(COOKIE_V7, depth) + occ.v8[i] * bytesSaved(COOKIE_V8, depth);
      };
  }
}

/** The generations each of `stacks` occurs in within the selection (effective generation keys): one pass over the records. */
function generationsOf(d: ExplorerData, f: SelectionFilter, stacks: number[]): Map<number, Set<number>> {
  const out = new Map<number, Set<number>>();
  if (!stacks.length) return out;
  const gens = stacks.map(() => new Set<number>());
  stacks.forEach((s, row) => out.set(s, gens[row]));
  // the row of each stack asked: a node-sized array when they are many (sorting by generations),
  // a keyed table of int positions for a page of rows (zeroing an array of every node was 117 ms
  // at 8.9M nodes; a Map's lookup per record, 1M of them, ~20 ms)
  const few = stacks.length * 64 < d.node.parent.length;
  const rowIndex = few ? new IntPositions(stacks) : null;
  const rowArray = few ? null : new Int32Array(d.node.parent.length).fill(-1);
  if (rowArray) stacks.forEach((s, row) => (rowArray[s] = row));
  const lastGen = new Float64Array(stacks.length).fill(NaN);
  const { status, stack } = d.rec;
  const recGen = d.recGen;
  const scan = d.recordScan(f);
  for (let p = scan.p0; p < scan.p1; p++) {
    const r = scan.order === null ? p : scan.order[p];
    const s = stack[r];
    if (s < 0) continue;
    const row = rowArray ? rowArray[s] : rowIndex!.of(s);
    if (row < 0 || (scan.check && !d.recordIn(f, r))) continue;
    const st = status[r];
    if (st !== RESOLVED && st !== UNVERIFIED && st !== FULL) continue;
    const g = recGen[r];
    if (lastGen[row] !== g) {
      lastGen[row] = g;
      gens[row].add(g);
    }
  }
  return out;
}

/** Timestamps of the selection's occurrences of one stack, ascending. */
export function stackOccurrences(d: ExplorerData, stack: number, sel: Selection): Float64Array {
  const out: number[] = [];
  d.eachRecord(sel, (r) => {
    if (d.rec.stack[r] === stack && isOccurrence(d.rec.status[r])) out.push(d.rec.ts[r]);
  });
  return Float64Array.from(out).sort();
}
