import { useMemo, useState, type KeyboardEvent } from 'react';
import type { GenerationInfo } from '../../core/query/api.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { fmtDuration, fmtInt, fmtPct, fmtTs, genLabel } from '../common/format.ts';
import { GenerationDiffView } from './GenerationDiff.tsx';

const key = (g: number | 'none' | null) => (g === null ? 'all' : String(g));
const parse = (s: string): number | 'none' | null => (s === 'all' ? null : s === 'none' ? 'none' : Number(s));

type SortKey = 'generation' | 'span' | 'records' | 'dump' | 'coverage';
interface Sort {
  key: SortKey;
  dir: 'asc' | 'desc';
}

/** 'none' (v7 ids) sorts after every number; NaN (no records, no cookies) below every value */
const genOrder = (g: number | 'none') => (g === 'none' ? Infinity : g);
const finite = (x: number) => (Number.isFinite(x) ? x : -Infinity);
const SORT_VALUE: Record<SortKey, (g: GenerationInfo) => number> = {
  generation: (g) => genOrder(g.generation),
  span: (g) => (g.firstTs <= g.lastTs ? g.lastTs - g.firstTs : -Infinity),
  records: (g) => g.records,
  dump: (g) => g.dumpSlots,
  coverage: (g) => finite(g.coverage),
};

const COLUMNS: { key: SortKey; label: string; title: string; num: boolean; className: string }[] = [
  { key: 'generation', label: 'gen', title: 'generation', num: false, className: 'g-gen' },
  { key: 'span', label: 'span', title: 'first stack record, and how long the generation lasted (sorts by duration)', num: false, className: 'g-span' },
  { key: 'records', label: 'records', title: 'stack records: cookies and full stacks', num: true, className: 'g-records' },
  { key: 'dump', label: 'dump', title: 'the dumps loaded for it and the slots they hold (sorts by slots)', num: false, className: 'g-dump' },
  { key: 'coverage', label: 'coverage', title: 'share of its cookies that resolved against its dump', num: true, className: 'g-coverage' },
];

/** Every generation of the trace and the dumps; choosing one filters every pane. */
export function GenerationSwitcher() {
  const overview = useLoadStore((s) => s.overview);
  const generation = useViewStore((v) => v.generation);
  const set = useViewStore((v) => v.set);
  const [sort, setSort] = useState<Sort>({ key: 'generation', dir: 'asc' });
  const gens = overview?.generations;
  const rows = useMemo(() => {
    if (!gens) return [];
    const value = SORT_VALUE[sort.key];
    const sign = sort.dir === 'asc' ? 1 : -1;
    return gens
      .map((g, i) => ({ g, i }))
      .sort((a, b) => sign * (value(a.g) - value(b.g) || 0) || a.i - b.i)
      .map((x) => x.g);
  }, [gens, sort]);
  if (!overview || !gens) return null;
  const chosen = gens.find((g) => g.generation === generation);
  const spanOf = (g: GenerationInfo | undefined) => (g && g.firstTs < g.lastTs ? ([g.firstTs, g.lastTs] as [number, number]) : null);
  const span = spanOf(chosen);
  const choose = (g: GenerationInfo) => set({ generation: generation === g.generation ? null : g.generation });
  const moveSelection = (e: KeyboardEvent<HTMLDivElement>) => {
    if (!rows.length) return;
    const at = rows.findIndex((g) => g.generation === generation);
    let next = -1;
    if (e.key === 'ArrowDown') next = at < 0 ? 0 : Math.min(rows.length - 1, at + 1);
    else if (e.key === 'ArrowUp') next = at < 0 ? 0 : Math.max(0, at - 1);
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = rows.length - 1;
    if (next < 0) return;
    e.preventDefault();
    set({ generation: rows[next].generation });
  };
  const toggleSort = (k: SortKey) =>
    setSort((s) => (s.key === k ? { key: k, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { key: k, dir: k === 'generation' ? 'asc' : 'desc' }));
  return (
    <section className="panel pane gens-pane" aria-label="generations">
      <div className="pane-head">
        <h2>Generations</h2>
        <select
          data-testid="generation-select"
          value={key(generation)}
          onChange={(e) => set({ generation: parse(e.target.value) })}
          aria-label="generation filter"
        >
          <option value="all">all generations</option>
          {gens.map((g) => (
            <option key={key(g.generation)} value={key(g.generation)}>
              {genLabel(g.generation)}
            </option>
          ))}
        </select>
        {span && (
          <button type="button" onClick={() => set({ window: span })} title="zoom the timeline to this generation's span (or double-click its row)">
            Zoom timeline to it
          </button>
        )}
      </div>
      <div
        className="table-scroll short"
        tabIndex={0}
        onKeyDown={moveSelection}
        aria-label="generations table: arrows choose a generation"
        data-testid="generations-table"
        data-sort={`${sort.key}:${sort.dir}`}
      >
        <table className="grid fixed">
          <colgroup>
            {COLUMNS.map((c) => (
              <col key={c.key} className={c.className} />
            ))}
          </colgroup>
          <thead>
            <tr>
              {COLUMNS.map((c) => (
                <th
                  key={c.key}
                  title={c.title}
                  aria-sort={sort.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
                  className={c.num ? 'num' : ''}
                >
                  <button type="button" className="sort" onClick={() => toggleSort(c.key)} data-testid={`gen-sort-${c.key}`}>
                    {c.label}
                    <span className="sort-mark" aria-hidden="true">
                      {sort.key === c.key ? (sort.dir === 'asc' ? '▲' : '▼') : ''}
                    </span>
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((g) => (
              <GenRow
                key={key(g.generation)}
                g={g}
                chosen={generation === g.generation}
                onChoose={() => choose(g)}
                onZoom={() => {
                  const s = spanOf(g);
                  set({ generation: g.generation, ...(s ? { window: s } : {}) });
                }}
              />
            ))}
          </tbody>
        </table>
      </div>
      <GenerationDiffView gens={gens.map((g) => g.generation)} />
    </section>
  );
}

function GenRow({ g, chosen, onChoose, onZoom }: { g: GenerationInfo; chosen: boolean; onChoose(): void; onZoom(): void }) {
  const span = g.firstTs <= g.lastTs;
  const low = Number.isFinite(g.coverage) && g.coverage < 0.95;
  // the duration first: it is what tells generations apart; the start is in the title too
  const spanText = span ? `${fmtDuration(g.lastTs - g.firstTs)} from ${fmtTs(g.firstTs)}` : '–';
  const dump = g.dumpKinds.length ? `${g.dumpKinds.map((k) => k.replace('stack_map_', '')).join(' + ')} · ${fmtInt(g.dumpSlots)} slots` : 'no dump';
  return (
    <tr
      className={chosen ? 'selected' : ''}
      onClick={onChoose}
      onDoubleClick={onZoom}
      data-testid="generation-row"
      data-generation={String(g.generation)}
      aria-selected={chosen}
    >
      <td>{g.generation === 'none' ? 'none' : fmtInt(g.generation)}</td>
      <td
        className="g-span-cell"
        data-testid="generation-span"
        title={span ? `${fmtTs(g.firstTs)} – ${fmtTs(g.lastTs)} (double-click: zoom the timeline to it)` : 'no stack records'}
      >
        {spanText}
      </td>
      <td className="num">{fmtInt(g.records)}</td>
      <td className={g.dumpKinds.length ? 'ellipsis' : 'ellipsis warn'} title={dump}>
        {dump}
      </td>
      <td className={low ? 'num warn' : 'num'}>
        <span className="meter">
          <span style={{ width: `${Number.isFinite(g.coverage) ? 100 * g.coverage : 0}%` }} />
        </span>
        {fmtPct(g.coverage)}
      </td>
    </tr>
  );
}
