import type { ExplorerData } from './explorer-data.ts';
import type { GenerationDiff, GenerationDiffRow } from './query-types.ts';

/**
 * Stacks of generation a against b by their occurrences in the trace (resolved and unverified
 * cookies, full stacks, each in its effective generation): only in a (most frequent first), only
 * in b, and in both with different counts (largest change first); ties by stack order of first occurrence.
 */
export function generationDiff(d: ExplorerData, a: number | 'none', b: number | 'none'): GenerationDiff {
  const base = { range: null, cpus: null } as const;
  const oa = d.occurrences({ ...base, generation: a });
  const ob = d.occurrences({ ...base, generation: b });
  const rows = new Map<number, GenerationDiffRow & { order: number }>();
  const row = (s: number, order: number) => {
    let x = rows.get(s);
    if (!x) {
      x = { stack: s, leaf: s > 0 ? d.stacks.frames.strings[d.node.frame[s]] : '', a: 0, b: 0, order };
      rows.set(s, x);
    }
    return x;
  };
  oa.stacks.forEach((s, i) => (row(s, i).a = oa.counts[i]));
  ob.stacks.forEach((s, i) => (row(s, oa.stacks.length + i).b = ob.counts[i]));
  const strip = ({ stack, leaf, a, b }: GenerationDiffRow): GenerationDiffRow => ({ stack, leaf, a, b });
  const all = [...rows.values()];
  const onlyA = all.filter((r) => r.b === 0).sort((x, y) => y.a - x.a || x.order - y.order);
  const onlyB = all.filter((r) => r.a === 0).sort((x, y) => y.b - x.b || x.order - y.order);
  const changed = all
    .filter((r) => r.a > 0 && r.b > 0 && r.a !== r.b)
    .sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a) || x.order - y.order);
  return { a, b, onlyA: onlyA.map(strip), onlyB: onlyB.map(strip), changed: changed.map(strip) };
}
