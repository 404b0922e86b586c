import type { ExplorerData } from '../query/explorer-data.ts';
import { stackWeights } from '../query/flame.ts';
import type { FlameWeight, Granularity, Selection } from '../query/api.ts';
import { foldedLine, foldedPaths, type FoldedBy } from './exports.ts';

/**
 * Two captures compared stack by stack (issue 37): each side is its folded export (the same
 * lines `export --format folded` prints, so two boots with other KASLR offsets, ids and slots
 * meet on the frames they symbolize to), joined on the line's stack text. The differential as
 * FlameGraph's difffolded.pl writes it (`STACK COUNT_BEFORE COUNT_AFTER`, `-n` scaling BEFORE
 * to AFTER's total with its integer truncation), and as rows sorted by the size of the change.
 */

/** One capture's side: what was counted (records), their weight, and the weight per folded stack. */
export interface DiffSide {
  /** stack records counted */
  total: number;
  totalWeight: number;
  /** folded stack text (root first, `;`-joined) -> weight */
  stacks: Map<string, number>;
}

export interface DiffRow {
  /** root first, as the folded export names them */
  frames: string[];
  before: number;
  after: number;
  /** after - before (before as scaled with normalize) */
  delta: number;
  /** the change in the stack's share of its side's weight: after / after's total - before / before's total */
  share: number;
}

export interface DiffResult {
  before: { total: number; totalWeight: number };
  after: { total: number; totalWeight: number };
  /** before was scaled to after's total (difffolded.pl -n) */
  normalized: boolean;
  /** by the size of the change, largest first; ties by frames */
  rows: DiffRow[];
}

/** A capture's side: its selection's folded stacks, weighed and grouped as the folded export does. */
export function diffSide(d: ExplorerData, sel: Selection, weight: FlameWeight = 'occurrences', granularity?: Granularity, by: FoldedBy = {}): DiffSide {
  let counted: { total: number; totalWeight: number } | null = null;
  const { names, paths } = foldedPaths(d, sel, weight, granularity, { ...by, onWeighed: (w) => ((counted = w), by.onWeighed?.(w)) });
  const stacks = new Map<string, number>();
  let totalWeight = 0;
  for (const p of paths) {
    const key = foldedLine(names, p);
    stacks.set(key, (stacks.get(key) ?? 0) + p.weight);
    totalWeight += p.weight;
  }
  let total: number;
  if (counted) total = (counted as { total: number }).total;
  else {
    const occ = stackWeights(d, sel, 'occurrences');
    total = 0;
    for (let i = 0; i < occ.weights.length; i++) total += occ.weights[i];
  }
  return { total, totalWeight, stacks };
}

/** difffolded.pl -n: a BEFORE count scaled to AFTER's total, truncated as Perl's int() does. */
export const scaled = (count: number, total1: number, total2: number): number => (total1 > 0 ? Math.trunc((count * total2) / total1) : count);

/** The two sides joined on their stacks (either side's), before scaled to after's total with `normalize`. */
export function diffSides(before: DiffSide, after: DiffSide, opts: { normalize?: boolean } = {}): DiffResult {
  const normalize = !!opts.normalize;
  const keys = new Set([...before.stacks.keys(), ...after.stacks.keys()]);
  const rows: (DiffRow & { key: string })[] = [];
  for (const key of keys) {
    const b0 = before.stacks.get(key) ?? 0;
    const b = normalize ? scaled(b0, before.totalWeight, after.totalWeight) : b0;
    const a = after.stacks.get(key) ?? 0;
    const share = (after.totalWeight > 0 ? a / after.totalWeight : 0) - (before.totalWeight > 0 ? b0 / before.totalWeight : 0);
    rows.push({ key, frames: key.split(';'), before: b, after: a, delta: a - b, share });
  }
  rows.sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta) || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  return {
    before: { total: before.total, totalWeight: before.totalWeight },
    after: { total: after.total, totalWeight: after.totalWeight },
    normalized: normalize,
    rows: rows.map(({ key: _k, ...r }) => r),
  };
}

/** difffolded.pl's output: `STACK COUNT_BEFORE COUNT_AFTER` per stack of either side, sorted by stack (flamegraph.pl draws it as a differential). */
export function diffFolded(r: DiffResult): string {
  const lines = r.rows.map((x) => `${x.frames.join(';')} ${x.before} ${x.after}`).sort();
  return lines.length ? lines.join('\n') + '\n' : '';
}
