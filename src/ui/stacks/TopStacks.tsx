import { useEffect, useRef } from 'react';
import { useTopStacks } from '../../state/queries.ts';
import { useSelection, useViewStore } from '../../state/view-store.ts';
import { fmtBytes, fmtInt, fmtPct } from '../common/format.ts';
import { StackFrames } from './StackFrames.tsx';

const LIMIT = 200;

/** Stacks ranked by occurrences in the selection; a row selects its stack in every pane. */
export function TopStacks() {
  const selection = useSelection();
  const filter = useViewStore((v) => v.filter);
  const stack = useViewStore((v) => v.stack);
  const set = useViewStore((v) => v.set);
  const selectStack = useViewStore((v) => v.selectStack);
  const { data, pending, error } = useTopStacks({ selection, filter, limit: LIMIT });
  const input = useRef<HTMLInputElement>(null);

  // `/` focuses the filter, as in most viewers
  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (e.key !== '/' || (t && ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
      e.preventDefault();
      input.current?.focus();
      input.current?.select();
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, []);

  const maxShare = data?.rows[0]?.share ?? 1;
  return (
    <section className="panel pane stacks-pane" aria-label="top stacks">
      <div className="pane-head">
        <h2>Top stacks</h2>
        <div className="toolbar">
          <input
            ref={input}
            type="search"
            className="search"
            placeholder="filter: function or /regex/   ( / )"
            value={filter}
            onChange={(e) => set({ filter: e.target.value })}
            onKeyDown={(e) => e.key === 'Escape' && e.currentTarget.blur()}
            data-testid="stack-filter"
          />
          <span className="quiet" data-testid="top-stacks-count" data-total={data?.total}>
            {data
              ? `${fmtInt(data.matching)} ${data.matching === 1 ? 'stack' : 'stacks'}${filter.trim() ? (data.matching === 1 ? ' matches' : ' match') : ''} · ${fmtInt(data.total)} ${data.total === 1 ? 'occurrence' : 'occurrences'}`
              : ''}
          </span>
        </div>
      </div>
      <div className="table-scroll" data-testid="top-stacks" aria-busy={pending} data-rows={data?.rows.length ?? 0}>
        {error && <p className="error">{error}</p>}
        <table className="grid">
          <thead>
            <tr>
              <th title="occurrences in the selection: resolved cookies and full stacks">count</th>
              <th title="share of all occurrences in the selection">share</th>
              <th title="ref_count from the dumps of the generations it is in">ref_count</th>
              <th title="generations it occurs in">gens</th>
              <th>leaf function</th>
              <th title="frames">depth</th>
              <th title="ring-buffer bytes the map saved for these occurrences: full stack bytes minus the cookie bytes recorded">saved</th>
            </tr>
          </thead>
          <tbody>
            {data?.rows.map((r) => (
              <tr
                key={r.stack}
                data-testid="top-stack-row"
                data-stack={r.stack}
                data-count={r.count}
                aria-selected={stack === r.stack}
                className={stack === r.stack ? 'selected' : ''}
                onClick={() => selectStack(r.stack)}
              >
                <td className="num">{fmtInt(r.count)}</td>
                <td className="num share">
                  <span className="bar" style={{ width: `${(100 * r.share) / (maxShare || 1)}%` }} />
                  {fmtPct(r.share)}
                </td>
                <td className="num">{r.refCount === null ? '–' : fmtInt(r.refCount)}</td>
                <td>{r.generations.join(', ')}</td>
                <td className="mono leaf" title={r.leaf}>
                  {r.leaf || '(empty)'}
                </td>
                <td className="num">{r.depth}</td>
                <td className="num">{fmtBytes(r.bytesSaved)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {data && data.rows.length === 0 && <p className="quiet">No stack in this selection{filter ? ' matches the filter' : ''}.</p>}
      </div>
      {stack !== null && <StackFrames stack={stack} />}
    </section>
  );
}
