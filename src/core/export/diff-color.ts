import type { FlameTree } from '../query/api.ts';
/** How a differential flame graph is drawn: the baseline scaled to the open capture's total or not, and whose widths. */
export interface DiffDraw {
  normalize: boolean;
  widths: 'after' | 'before';
}

/**
 * A differential node's change (its tree's `other` set: the other side's weight on the node's
 * path): after - before over the larger of the two, the before scaled to the after's total when
 * normalised; -1..1.
 */
export function diffRatio(t: FlameTree, i: number, draw: DiffDraw | null): number {
  const other = t.other![i];
  const byBefore = draw?.widths === 'before';
  const after = byBefore ? other : t.value[i];
  const beforeRaw = byBefore ? t.value[i] : other;
  const afterTotal = byBefore ? (t.otherTotal ?? 0) : t.total;
  const beforeTotal = byBefore ? t.total : (t.otherTotal ?? 0);
  const before = draw?.normalize && beforeTotal > 0 ? (beforeRaw * afterTotal) / beforeTotal : beforeRaw;
  return (after - before) / Math.max(after, before, 1e-12);
}

/**
 * The colour of a change, as FlameGraph's differential flame graphs colour theirs: red where the
 * path grew, blue where it shrank, the deeper the larger the change; grey where equal.
 */
export function diffColor(ratio: number, dark = false): string {
  if (Math.abs(ratio) < 1e-9) return dark ? 'rgb(175,175,175)' : 'rgb(225,225,225)';
  const c = Math.round(225 * (1 - Math.min(1, Math.abs(ratio))));
  return ratio > 0 ? `rgb(255,${c},${c})` : `rgb(${c},${c},255)`;
}
