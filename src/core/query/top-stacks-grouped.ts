import type { TopStackRow } from './api.ts';
import type { ExplorerData } from './explorer-data.ts';
import { topStacks, type TopStacksAnswer, type TopStacksQuery } from './top-stacks.ts';
import { weighStacks, type EventGroups } from './weigh.ts';

/**
 * Top stacks with a row per group and stack (`perf report --sort comm,sym`): each record counts
 * in its event's group (weigh.ts), summed per group and per row of the ungrouped table (its stack
 * at call-site granularity, its function path at 'function'), whose stack-level columns (ref_count,
 * generations, leaf, depth) the grouped row keeps; its bytes saved are the stack's share by count.
 * Sorted by count, or by weight when that is the sort; ties by the ungrouped order. The text
 * filter and the selection apply as they do ungrouped.
 */
export function groupedTopStacks(d: ExplorerData, req: TopStacksQuery, groups: EventGroups): TopStacksAnswer {
  const base = topStacks(d, { ...req, limit: Number.MAX_SAFE_INTEGER, sort: undefined });
  if (base.error) return base;
  const byFunction = base.granularity === 'function';
  const keyOf = (stack: number) => (byFunction ? d.functions.ofNode[stack] : stack);
  const order = new Map<number, number>();
  const rowOf = new Map<number, TopStackRow>();
  base.rows.forEach((r, i) => {
    rowOf.set(keyOf(r.stack), r);
    order.set(keyOf(r.stack), i);
  });
  // 'period' sums the records' own weights: perf's period, or a field the worker's view weighs by (1 a record otherwise)
  const w = weighStacks(d, { selection: req.selection, weight: 'period', groups });
  const rows = new Map<string, { group: number; key: number; count: number; weight: number }>();
  for (const r of w.rows) {
    const key = keyOf(r.stack);
    if (!rowOf.has(key)) continue;
    const k = `${r.group}|${key}`;
    const x = rows.get(k);
    if (x) {
      x.count += r.count;
      x.weight += r.weight;
    } else rows.set(k, { group: r.group, key, count: r.count, weight: r.weight });
  }
  const byWeight = req.sort?.key === 'weight';
  const sign = req.sort?.dir === 'asc' ? -1 : 1;
  const list = [...rows.values()].sort(
    (a, b) => sign * (byWeight ? b.weight - a.weight : b.count - a.count) || order.get(a.key)! - order.get(b.key)! || a.group - b.group,
  );
  const total = base.total;
  const weighed = req.weight === 'period' || (req.weight?.startsWith('field:') ?? false);
  const out: TopStackRow[] = list.slice(0, Math.max(0, req.limit)).map((x) => {
    const r = rowOf.get(x.key)!;
    return {
      ...r,
      count: x.count,
      weight: x.weight,
      share: weighed ? (base.totalWeight > 0 ? x.weight / base.totalWeight : 0) : total > 0 ? x.count / total : 0,
      bytesSaved: r.count > 0 ? (r.bytesSaved * x.count) / r.count : 0,
      group: x.group >= 0 ? groups.names[x.group] : '[no event]',
    };
  });
  return { ...base, rows: out, matching: rows.size };
}
