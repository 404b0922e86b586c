import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { FlameWeight, TopStackRow } from '../../core/query/api.ts';
import type { TopStacksAnswer, TopStacksQuery, TopStacksSort, TopStacksSortKey } from '../../core/query/top-stacks.ts';
import { useTopStacks } from '../../state/view/queries.ts';
import { useSelection, useViewStore } from '../../state/view/view-store.ts';
import { fmtBytes, fmtInt, fmtPct } from '../common/format.ts';
import { stackMenu } from '../menu/actions.ts';
import { useMenuStore } from '../menu/menu-store.ts';
import { useContextMenu } from '../menu/useContextMenu.ts';
import { StackFrames } from './StackFrames.tsx';
import { CompareTable } from '../compare/CompareTable.tsx';
import { useComparing } from '../../state/load/baseline-store.ts';

const LIMIT = 200;

/** Columns: the sort key each header sorts by, and which way a first click sorts. */
type Column = { id: string; key: TopStacksSortKey; label: string; title: string; first: 'asc' | 'desc'; num: boolean; className: string };
const COLUMNS: Column[] = [
  {
    id: 'count',
    key: 'count',
    label: 'count',
    title: 'occurrences in the selection: resolved cookies and full stacks',
    first: 'desc',
    num: true,
    className: 'c-count',
  },
  { id: 'share', key: 'count', label: 'share', title: 'share of all occurrences in the selection', first: 'desc', num: true, className: 'c-share' },
  {
    id: 'ref_count',
    key: 'refCount',
    label: 'ref_count',
    title: 'ref_count from the dumps of the generations it is in',
    first: 'desc',
    num: true,
    className: 'c-ref',
  },
  { id: 'gens', key: 'generations', label: 'gens', title: 'generations it occurs in', first: 'asc', num: false, className: 'c-gens' },
  { id: 'leaf', key: 'leaf', label: 'leaf frame', title: 'the frame the stack ends in, as the trace prints it', first: 'asc', num: false, className: 'c-leaf' },
  { id: 'depth', key: 'depth', label: 'depth', title: 'frames', first: 'desc', num: true, className: 'c-depth' },
  {
    id: 'saved',
    key: 'bytesSaved',
    label: 'saved',
    title: 'ring-buffer bytes the map saved for these occurrences: full stack bytes minus the cookie bytes recorded',
    first: 'desc',
    num: true,
    className: 'c-saved',
  },
];

/** the columns a grouped table leaves out */
const STACK_ONLY = new Set(['ref_count', 'gens', 'depth', 'saved']);

const DEFAULT_SORT: TopStacksSort = { key: 'count', dir: 'desc' };

/** The columns, with a weight column after the count when the flame graph weighs by period or a field (its weight is the rows' `weight`). */
function columnsFor(weight: FlameWeight, group: string | null): Column[] {
  const cols = weightColumns(weight);
  if (!group) return cols;
  // a group's row keeps its stack's ref_count, generations, depth and bytes saved, which say
  // nothing of the group: left out for the leaf frame's room (with a group and a weight it was cut
  // to a glyph at 1280 px), as perf report --sort comm,sym shows overhead, comm and symbol
  const kept = cols.filter((c) => !STACK_ONLY.has(c.id));
  // grouped: the group first (sorted as its rows come: by count)
  const col: Column = {
    id: 'group',
    key: 'count',
    label: group.startsWith('field:') ? group.slice(6) : group,
    title: 'the row’s group: a root frame per group in the flame graph too',
    first: 'desc',
    num: false,
    className: 'c-group',
  };
  return [col, ...kept];
}

function weightColumns(weight: FlameWeight): Column[] {
  if (weight !== 'period' && !weight.startsWith('field:')) return COLUMNS;
  const name = weight === 'period' ? 'period' : weight.slice('field:'.length);
  const col: Column = {
    id: 'weight',
    key: 'weight',
    label: name,
    title: weight === 'period' ? 'the records’ sample periods summed' : `${name} summed over the stack’s events (an event without it weighs 0)`,
    first: 'desc',
    num: true,
    className: 'c-weight',
  };
  return [COLUMNS[0], col, ...COLUMNS.slice(1)];
}

/** Top stacks: while comparing with a baseline, before, after and the change (compare/CompareTable.tsx). */
export function TopStacks() {
  return useComparing() ? <CompareTable /> : <TopStacksTable />;
}

/** Stacks ranked by occurrences (or a column) in the selection; a row selects its stack in every pane. */
function TopStacksTable() {
  const selection = useSelection();
  const filter = useViewStore((v) => v.filter);
  const stack = useViewStore((v) => v.stack);
  const set = useViewStore((v) => v.set);
  const selectStack = useViewStore((v) => v.selectStack);
  const [sort, setSort] = useState<TopStacksSort>(DEFAULT_SORT);
  // the flame graph's weight: by period or a field, a weight column beside the count
  const weight = useViewStore((v) => v.flameWeight);
  const group = useViewStore((v) => v.flameGroup);
  const weighing = weight === 'period' || weight.startsWith('field:');
  const columns = columnsFor(weight, group);
  const req: TopStacksQuery = {
    selection,
    filter,
    limit: LIMIT,
    ...(sort === DEFAULT_SORT ? {} : { sort }),
    ...(weight.startsWith('field:') ? { weight } : {}),
    // the flame graph's groups: a row per group and stack
    ...(group ? { group } : {}),
  };
  const q = useTopStacks(req);
  // the worker answers the query with the fields of TopStacksAnswer (core/query/top-stacks.ts)
  const data = q.data as TopStacksAnswer | null;
  // the filter's error (an invalid regex, one RE2 cannot run) comes as part of the answer
  const error = q.error ?? data?.error ?? null;
  const input = useRef<HTMLInputElement>(null);
  const table = useRef<HTMLDivElement>(null);

  // `/` focuses the filter, as in most viewers
  useEffect(() => {
    const key = (e: globalThis.KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (e.key !== '/' || (t && ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
      e.preventDefault();
      input.current?.focus();
      input.current?.select();
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, []);

  const rows = error ? [] : (data?.rows ?? []);
  const maxShare = rows.reduce((m, r) => Math.max(m, r.share), 0) || 1;
  const filtering = filter.trim() !== '';

  // arrows move the selected row; the row stays in view
  const moveSelection = (e: KeyboardEvent<HTMLDivElement>) => {
    if (!rows.length) return;
    const at = rows.findIndex((r) => r.stack === stack);
    let next = -1;
    if (e.key === 'ArrowDown') next = at < 0 ? 0 : Math.min(rows.length - 1, at + 1);
    else if (e.key === 'ArrowUp') next = at < 0 ? 0 : Math.max(0, at - 1);
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = rows.length - 1;
    else if ((e.key === 'ContextMenu' || (e.shiftKey && e.key === 'F10')) && at >= 0) {
      e.preventDefault();
      const el = table.current?.querySelector<HTMLElement>(`[data-testid=top-stack-row][data-stack="${rows[at].stack}"]`);
      const r = el?.getBoundingClientRect();
      if (r) openRowMenu(rows[at], r.left + 40, r.top + r.height / 2);
      return;
    } else if (e.key === 'Enter' && at >= 0) {
      useMenuStore.getState().revealStack(rows[at].stack);
      return;
    }
    if (next < 0) return;
    e.preventDefault();
    set({ stack: rows[next].stack });
  };
  useEffect(() => {
    table.current?.querySelector(`[data-testid=top-stack-row][data-stack="${stack}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [stack, rows.length]);

  const toggleSort = (c: Column) =>
    setSort((s) => {
      if (s.key !== c.key) return c.key === DEFAULT_SORT.key && c.first === DEFAULT_SORT.dir ? DEFAULT_SORT : { key: c.key, dir: c.first };
      const dir = s.dir === 'asc' ? 'desc' : 'asc';
      return c.key === DEFAULT_SORT.key && dir === DEFAULT_SORT.dir ? DEFAULT_SORT : { key: c.key, dir };
    });

  return (
    <section className="panel pane stacks-pane" aria-label="top stacks" style={{ contain: 'content' }}>
      <div className="pane-head">
        <h2>Top stacks</h2>
        <div className="toolbar">
          <div className="field">
            <input
              ref={input}
              type="search"
              className={error ? 'search invalid' : 'search'}
              placeholder="filter: frame or /regex/   ( / )"
              value={filter}
              onChange={(e) => set({ filter: e.target.value })}
              onKeyDown={(e) => e.key === 'Escape' && e.currentTarget.blur()}
              aria-invalid={error ? true : undefined}
              aria-describedby="stack-filter-error"
              data-testid="stack-filter"
              spellCheck={false}
            />
          </div>
          <CountLine data={data} filtering={filtering} error={error} pending={q.pending} />
        </div>
      </div>
      {error && (
        <p className="field-error" id="stack-filter-error" role="alert" data-testid="stack-filter-error">
          {error}
        </p>
      )}
      <div
        className="table-scroll"
        ref={table}
        tabIndex={0}
        onKeyDown={moveSelection}
        data-testid="top-stacks"
        aria-busy={q.pending}
        aria-label="top stacks table: arrows move the selection"
        data-rows={rows.length}
        data-sort={`${sort.key}:${sort.dir}`}
      >
        <table className="grid fixed">
          <colgroup>
            {columns.map((c) => (
              <col key={c.id} className={c.className} />
            ))}
          </colgroup>
          <thead>
            <tr>
              {columns.map((c) => {
                // share and group sort as count; count's header shows the order
                const active = sort.key === c.key;
                const primary = c.id !== 'share' && c.id !== 'group';
                return (
                  <th
                    key={c.id}
                    title={c.title}
                    aria-sort={active && primary ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
                    className={c.num ? 'num' : ''}
                  >
                    <button type="button" className="sort" onClick={() => toggleSort(c)} data-testid={`sort-${c.id}`}>
                      {c.label}
                      <span className="sort-mark" aria-hidden="true">
                        {active && primary ? (sort.dir === 'asc' ? '▲' : '▼') : ''}
                      </span>
                    </button>
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <Row
                key={`${r.group ?? ''}\u0000${r.stack}`}
                r={r}
                weighing={weighing}
                selected={stack === r.stack}
                maxShare={maxShare}
                onSelect={() => selectStack(r.stack)}
              />
            ))}
          </tbody>
        </table>
        {data && !error && rows.length === 0 && <p className="quiet">No stack in this selection{filtering ? ' matches the filter' : ''}.</p>}
      </div>
      {stack !== null && <StackFrames stack={stack} hash={rows.find((r) => r.stack === stack)?.stackHash ?? null} />}
    </section>
  );
}

function openRowMenu(r: TopStackRow, x: number, y: number) {
  const title = r.leaf || '(no frames)';
  useMenuStore.getState().show(x, y, title, stackMenu({ stack: r.stack, hash: r.stackHash ?? null, frame: r.leaf, frames: null }), r.stack);
}

function Row({ r, weighing, selected, maxShare, onSelect }: { r: TopStackRow; weighing: boolean; selected: boolean; maxShare: number; onSelect(): void }) {
  const menu = useContextMenu<HTMLTableRowElement>((x, y) => openRowMenu(r, x, y));
  const gens = useMemo(() => r.generations.map((g) => (g === 'none' ? 'none' : fmtInt(g))).join(', '), [r.generations]);
  // a grouped row: its group first, and no stack-only columns (STACK_ONLY)
  const grouped = r.group !== undefined;
  return (
    <tr
      data-testid="top-stack-row"
      data-stack={r.stack}
      data-stack-hash={r.stackHash ?? undefined}
      data-count={r.count}
      data-weight={r.weight}
      data-share={r.share}
      data-group={r.group}
      aria-selected={selected}
      className={selected ? 'selected' : ''}
      onClick={onSelect}
      onDoubleClick={() => useMenuStore.getState().revealStack(r.stack)}
      {...menu}
      onKeyDown={undefined}
    >
      {grouped && (
        <td className="ellipsis" title={r.group}>
          {r.group}
        </td>
      )}
      <td className="num">{fmtInt(r.count)}</td>
      {weighing && <td className="num">{fmtInt(r.weight)}</td>}
      <td className="num share">
        <span className="bar" style={{ width: `${(100 * r.share) / maxShare}%` }} />
        {fmtPct(r.share)}
      </td>
      {!grouped && <td className="num">{r.refCount === null ? '–' : fmtInt(r.refCount)}</td>}
      {!grouped && (
        <td className="ellipsis" title={gens}>
          {gens}
        </td>
      )}
      <td className="mono ellipsis" title={r.leaf}>
        {r.leaf || '(empty)'}
      </td>
      {!grouped && <td className="num">{fmtInt(r.depth)}</td>}
      {!grouped && <td className="num">{fmtBytes(r.bytesSaved)}</td>}
    </tr>
  );
}

/** "N stacks · M occurrences", or with a filter "N matching stacks · M matching occurrences (x% of T)". */
function CountLine({ data, filtering, error, pending }: { data: TopStacksAnswer | null; filtering: boolean; error: string | null; pending: boolean }) {
  if (!data || error) return <span className="quiet count-line" data-testid="top-stacks-count" />;
  const s = (n: number, one: string, many: string) => `${fmtInt(n)} ${n === 1 ? one : many}`;
  return (
    <span
      className="quiet count-line"
      data-testid="top-stacks-count"
      data-total={data.total}
      data-matching={data.matching}
      data-matching-occurrences={data.matchingOccurrences}
      aria-busy={pending}
    >
      {filtering
        ? `${s(data.matching, 'matching stack', 'matching stacks')} · ${s(data.matchingOccurrences, 'matching occurrence', 'matching occurrences')} (${fmtPct(data.matchingOccurrences / (data.total || 1))} of ${fmtInt(data.total)})`
        : `${s(data.matching, 'stack', 'stacks')} · ${s(data.total, 'occurrence', 'occurrences')}`}
      {data.matching > data.rows.length ? ` · the first ${fmtInt(data.rows.length)} shown` : ''}
    </span>
  );
}
