import { useShallow } from 'zustand/react/shallow';
import { useMemo, useState } from 'react';
import type { DiffRow } from '../../core/export/diff.ts';
import { useBaselineStore, useComparedGenerations } from '../../state/load/baseline-store.ts';
import { useWorkerQuery } from '../../state/view/queries.ts';
import { useSelection, useViewStore } from '../../state/view/view-store.ts';
import { fmtInt, fmtPct } from '../common/format.ts';

const LIMIT = 200;

type Key = 'delta' | 'before' | 'after' | 'share' | 'leaf';
const COLUMNS: { key: Key; label: string; title: string; num: boolean }[] = [
  { key: 'before', label: 'before', title: 'the baseline’s weight of the stack (scaled to this capture’s total when normalised)', num: true },
  { key: 'after', label: 'after', title: 'this capture’s weight of the stack, in the selection', num: true },
  { key: 'delta', label: 'change', title: 'after − before', num: true },
  { key: 'share', label: 'share Δ', title: 'the change in the stack’s share of its side’s total', num: true },
  { key: 'leaf', label: 'stack (leaf first)', title: 'the folded export’s frames, the leaf first', num: false },
];

const value = (r: DiffRow, k: Key): number | string => (k === 'leaf' ? r.frames.slice().reverse().join(';') : k === 'delta' ? Math.abs(r.delta) : r[k]);

/**
 * Top stacks while comparing (issue 37): every stack of either capture with its weight before (the
 * baseline), after (this capture's selection) and the change, the largest change first, sortable;
 * a stack only one side has is marked. The numbers are `diff --json`'s for the same two captures.
 */
export function CompareTable() {
  const selection = useSelection();
  const v = useViewStore(useShallow((s) => ({ normalize: s.compareNormalize, weight: s.flameWeight, frames: s.flameFrames })));
  const baselineId = useBaselineStore((s) => s.baselineId);
  const generations = useComparedGenerations();
  const req = { selection, weight: v.weight, ...(v.frames ? { granularity: v.frames } : {}), normalize: v.normalize, ...(generations ? { generations } : {}) };
  const q = useWorkerQuery(`${baselineId}|${JSON.stringify(req)}`, (api) => api.compare(req), 60);
  const [sort, setSort] = useState<{ key: Key; dir: 'asc' | 'desc' }>({ key: 'delta', dir: 'desc' });
  const rows = useMemo(() => {
    const all = q.data?.rows ?? [];
    if (sort.key === 'delta' && sort.dir === 'desc') return all.slice(0, LIMIT);
    const sorted = all.slice().sort((a, b) => {
      const x = value(a, sort.key);
      const y = value(b, sort.key);
      const c = x < y ? -1 : x > y ? 1 : 0;
      return sort.dir === 'asc' ? c : -c;
    });
    return sorted.slice(0, LIMIT);
  }, [q.data, sort]);
  const total = q.data?.rows.length ?? 0;
  return (
    <section
      className="panel pane top-stacks compare-table"
      aria-label="top stacks, compared"
      data-testid="top-stacks"
      data-comparing="true"
      data-rows={total}
      aria-busy={q.pending}
    >
      <div className="pane-head">
        <h2>Top stacks: {generations ? `generation ${generations[0]} and ${generations[1]}` : 'before and after'}</h2>
        <span className="quiet">
          {fmtInt(total)} stacks of either capture{total > LIMIT ? `; the first ${fmtInt(LIMIT)} shown` : ''}
          {q.data?.normalized ? '; before scaled to after’s total' : ''}
        </span>
      </div>
      {q.error && <p className="error">{q.error}</p>}
      <div className="table-scroll">
        <table className="grid">
          <thead>
            <tr>
              {COLUMNS.map((c) => (
                <th
                  key={c.key}
                  className={c.num ? 'num' : undefined}
                  title={c.title}
                  aria-sort={sort.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
                  onClick={() => setSort((s) => ({ key: c.key, dir: s.key === c.key ? (s.dir === 'asc' ? 'desc' : 'asc') : c.num ? 'desc' : 'asc' }))}
                  data-testid={`compare-sort-${c.key}`}
                >
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const side = r.before === 0 ? 'after only' : r.after === 0 ? 'before only' : null;
              return (
                <tr
                  key={r.frames.join(';')}
                  data-testid="top-stack-row"
                  data-before={r.before}
                  data-after={r.after}
                  data-delta={r.delta}
                  data-count={r.after}
                  data-weight={r.after}
                  data-frames={r.frames.join(';')}
                  className={r.delta > 0 ? 'grew' : r.delta < 0 ? 'shrank' : undefined}
                >
                  <td className="num">{fmtInt(r.before)}</td>
                  <td className="num">{fmtInt(r.after)}</td>
                  <td className="num delta">{r.delta > 0 ? `+${fmtInt(r.delta)}` : fmtInt(r.delta)}</td>
                  <td className="num">
                    {r.share > 0 ? '+' : ''}
                    {fmtPct(r.share)}
                  </td>
                  <td className="mono frames-cell" title={r.frames.slice().reverse().join('\n')}>
                    {side && (
                      <span className="chip side-only" data-testid="compare-side-only">
                        {side}
                      </span>
                    )}{' '}
                    {r.frames.slice().reverse().slice(0, 3).join(' ← ')}
                    {r.frames.length > 3 ? ' ← …' : ''}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
