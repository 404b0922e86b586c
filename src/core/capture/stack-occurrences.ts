import { RecordKind, RecordStatus } from './trace-columns-data.ts';

/** local copies: an imported binding can cost a getter call per access under module transforms (tsx, vitest) */
const { Full: FULL, Resolved: RESOLVED, Unverified: UNVERIFIED } = RecordStatus;
const { CookieV7: COOKIE_V7, CookieV8: COOKIE_V8 } = RecordKind;

/** A stack's occurrences among some records: distinct stacks in first-seen (file) order. */
export interface Occurrences {
  stacks: Int32Array;
  counts: Float64Array;
  /** record index of the first occurrence */
  first: Int32Array;
  /** of counts, weighted by each record's weight (perf's period; 1 where none was printed) */
  weights: Float64Array;
  /** of counts: v7 ids and v8 cookies (the rest are full stacks) */
  v7: Float64Array;
  v8: Float64Array;
  /** sum of counts */
  total: number;
}

/** The record columns a count reads. */
export interface OccurrenceColumns {
  status: Uint8Array;
  stack: Int32Array;
  kind: Uint8Array;
  /** each record's weight; null: every record weighs 1 (no column of ones made) */
  weight: Float64Array | Int32Array | null;
}

/**
 * Which records a count walks: positions [p0, p1), record `order[p]` at p (null: record p, file
 * order), each kept when `keep` says so (null: every one).
 */
export interface RecordWalk {
  p0: number;
  p1: number;
  order: Int32Array | null;
  keep: ((r: number) => boolean) | null;
}

/**
 * Each stack's occurrences among the walked records that stand for a known stack (a resolved or
 * unverified cookie, a full kernel stack): the one count the summary (summary.ts) and every
 * selection of the explorer (ExplorerData.occurrences) make. `at` is an index by stack node, every
 * entry 0, as long as the table's nodes, left all 0 again: each distinct stack's place + 1 while
 * the walk goes (a caller that asks many times keeps one, since a fresh node-sized array is that
 * much memory to fault in each time: zeroed.ts).
 */
export function countOccurrences(c: OccurrenceColumns, walk: RecordWalk, at: Int32Array): Occurrences {
  const room = Math.max(0, walk.p1 - walk.p0);
  // at most one distinct stack per record walked
  const order = new Int32Array(room);
  const first = new Int32Array(room);
  // per distinct stack its count, weight, v7 and v8 side by side (acc[4i..4i+3]): one cache line
  // a record, not four arrays' (a stack's entries are met in no order: 1M records over 262,144
  // stacks spent ~400 ms here, most of it in misses)
  const acc = new Float64Array(4 * room);
  let n = 0;
  // in file order a stack's first record is the one that made its entry: no other read of it
  const ranged = walk.order !== null;
  const { status, stack, kind, weight } = c;
  const { p1, order: walkOrder, keep } = walk;
  let total = 0;
  try {
    for (let p = walk.p0; p < p1; p++) {
      const r = walkOrder === null ? p : walkOrder[p];
      if (keep !== null && !keep(r)) continue;
      const st = status[r];
      if (st !== RESOLVED && st !== UNVERIFIED && st !== FULL) continue;
      const s = stack[r];
      if (s < 0) continue;
      let i = at[s] - 1;
      if (i < 0) {
        i = n++;
        at[s] = n;
        order[i] = s;
        first[i] = r;
      } else if (ranged && r < first[i]) first[i] = r;
      const a = 4 * i;
      acc[a]++;
      acc[a + 1] += weight === null ? 1 : weight[r];
      const k = kind[r];
      if (k === COOKIE_V7) acc[a + 2]++;
      else if (k === COOKIE_V8) acc[a + 3]++;
      total++;
    }
  } finally {
    for (let i = 0; i < n; i++) at[order[i]] = 0;
  }
  // first-seen order in the file, whatever order the walk took (a walk in file order met them so)
  let byFirst: Int32Array | null = null;
  if (ranged) {
    byFirst = new Int32Array(n);
    for (let i = 0; i < n; i++) byFirst[i] = i;
    byFirst.sort((a, b) => first[a] - first[b]);
  }
  const column = (field: number) => {
    const out = new Float64Array(n);
    if (byFirst === null) for (let j = 0; j < n; j++) out[j] = acc[4 * j + field];
    else for (let j = 0; j < n; j++) out[j] = acc[4 * byFirst[j] + field];
    return out;
  };
  const ints = (src: Int32Array) => (byFirst === null ? src.slice(0, n) : Int32Array.from(byFirst, (i) => src[i]));
  return { stacks: ints(order), counts: column(0), first: ints(first), weights: column(1), v7: column(2), v8: column(3), total };
}
