import { RECORD_BYTES } from './derived.ts';
import type { ExplorerData } from './explorer-data.ts';
import type { Selection, TopStackRow, TopStacksRequest, TopStacksResult } from './query-types.ts';
import { genValue, isOccurrence, SelectionFilter } from './selection.ts';
import { dumpSlotsOf, stackHashOf } from './stack-hash.ts';
import { matchMask } from './text-match.ts';
import { RecordKind, RecordStatus } from './trace-columns.ts';

/** local copies: an imported binding can cost a getter call per access under module transforms (tsx, vitest) */
const { CookieV7: COOKIE_V7, CookieV8: COOKIE_V8 } = RecordKind;
const { Full: FULL, Resolved: RESOLVED, Unverified: UNVERIFIED } = RecordStatus;

/** Does any frame of the stack have a function the mask marks? */
export function stackMatches(d: ExplorerData, stack: number, fnMask: Uint8Array): boolean {
  for (let n = stack; n > 0; n = d.node.parent[n]) if (fnMask[d.fnOfFrame[d.node.frame[n]]]) return true;
  return false;
}

/** Ring-buffer bytes a record of this kind saved against writing its stack in full. */
export function bytesSaved(kind: number, depth: number): number {
  if (kind === COOKIE_V7) return RECORD_BYTES.full(depth) - RECORD_BYTES.v7Id;
  if (kind === COOKIE_V8) return RECORD_BYTES.full(depth) - RECORD_BYTES.v8Cookie;
  return 0;
}

/**
 * Stacks by occurrences among the selection's records (resolved and unverified cookies, full
 * kernel stacks), most frequent first, ties by first occurrence in the file. `filter` keeps the
 * stacks with a frame whose function matches (substring, or /regex/flags). `total` is every
 * occurrence of the selection (the denominator of `share`), `matching` the stacks that pass the filter.
 */
export function topStacks(d: ExplorerData, req: TopStacksRequest): TopStacksResult {
  const f = new SelectionFilter(req.selection);
  const occ = d.occurrences(f);
  const mask = req.filter.trim() ? matchMask(d.fnNames, req.filter) : null;
  // positions into occ, which is in first-seen order: a stable sort by count breaks ties by it
  const matched: number[] = [];
  for (let i = 0; i < occ.stacks.length; i++) if (!mask || stackMatches(d, occ.stacks[i], mask)) matched.push(i);
  matched.sort((a, b) => occ.counts[b] - occ.counts[a] || a - b);
  const top = matched.slice(0, Math.max(0, req.limit));

  // generations of the rows' occurrences: a second pass, only for the rows kept
  const gens = top.map(() => new Set<number>());
  if (top.length) {
    const rowOf = new Int32Array(d.node.parent.length).fill(-1);
    top.forEach((i, row) => (rowOf[occ.stacks[i]] = row));
    const lastGen = new Float64Array(top.length).fill(NaN);
    const { status, stack } = d.rec;
    const recGen = d.recGen;
    const scan = d.recordScan(f);
    for (let p = scan.p0; p < scan.p1; p++) {
      const r = scan.order === null ? p : scan.order[p];
      const s = stack[r];
      if (s < 0) continue;
      const row = rowOf[s];
      if (row < 0 || (scan.check && !d.recordIn(f, r))) continue;
      const st = status[r];
      if (st !== RESOLVED && st !== UNVERIFIED && st !== FULL) continue;
      const g = recGen[r];
      if (lastGen[row] !== g) {
        lastGen[row] = g;
        gens[row].add(g);
      }
    }
  }
  const refGens = req.selection.generation === null ? null : [f.gen!];
  const rows: TopStackRow[] = top.map((i, row) => {
    const s = occ.stacks[i];
    const depth = d.node.depth[s];
    return {
      stack: s,
      stackHash: stackHashOf(d, s),
      slots: dumpSlotsOf(d, s),
      count: occ.counts[i],
      share: occ.total ? occ.counts[i] / occ.total : 0,
      refCount: d.refCount(s, refGens),
      generations: [...gens[row]].sort((a, b) => a - b).map(genValue),
      leaf: s > 0 ? d.stacks.frames.strings[d.node.frame[s]] : '',
      depth,
      bytesSaved: occ.v7[i] * bytesSaved(COOKIE_V7, depth) + occ.v8[i] * bytesSaved(COOKIE_V8, depth),
    };
  });
  return { rows, matching: matched.length, total: occ.total };
}

/** Timestamps of the selection's occurrences of one stack, ascending. */
export function stackOccurrences(d: ExplorerData, stack: number, sel: Selection): Float64Array {
  const out: number[] = [];
  d.eachRecord(sel, (r) => {
    if (d.rec.stack[r] === stack && isOccurrence(d.rec.status[r])) out.push(d.rec.ts[r]);
  });
  return Float64Array.from(out).sort();
}
