import { useMemo } from 'react';
import type { FlameMode, FlameRequest, FlameTree } from '../../core/model/query-types.ts';
import { flameMatch } from '../../state/flame.ts';
import { useFlame } from '../../state/queries.ts';
import { useSelection, useViewStore } from '../../state/view-store.ts';
import { fmtPct } from '../common/format.ts';
import { FlameCanvas } from './FlameCanvas.tsx';
import { nodeByPath, pathTo } from './layout.ts';

const MODES: [FlameMode, string, string][] = [
  ['top-down', 'Top-down', 'icicle: callers above callees'],
  ['bottom-up', 'Bottom-up', 'leaves first: who calls the functions the stacks end in'],
  ['sandwich', 'Sandwich', 'callers and callees of one function'],
];

/** The selection's stacks merged into a call tree, weighted by occurrences or ref_count. */
export function FlameGraph() {
  const selection = useSelection();
  const v = useViewStore();
  const req: FlameRequest = { selection, mode: v.flameMode, weight: v.flameWeight, focus: v.flameMode === 'sandwich' ? v.flameFocus : null, highlightStack: v.stack };
  const { data, pending, error } = useFlame(req);
  const tree = data?.tree ?? null;
  const zoom = useMemo(() => (tree && v.flameZoom.length ? nodeByPath(tree, v.flameZoom) : -1), [tree, v.flameZoom]);
  const search = useMemo(() => (tree && v.flameSearch.trim() ? flameMatch(tree, v.flameSearch) : null), [tree, v.flameSearch]);
  const callerSearch = useMemo(
    () => (data?.callers && v.flameSearch.trim() ? flameMatch(data.callers, v.flameSearch) : null),
    [data, v.flameSearch],
  );
  const weightLabel = v.flameWeight === 'refcount' ? 'refs' : 'occurrences';
  const zoomTo = (t: FlameTree, n: number) => v.set({ flameZoom: pathTo(t, n).map((i) => t.names[t.name[i]]) });
  const crumbs = !tree || tree.parent.length === 0 ? [] : zoom >= 0 ? pathTo(tree, zoom) : [0];
  const zoomedName = tree && zoom >= 0 ? tree.names[tree.name[zoom]] : null;

  return (
    <section className="panel pane flame-pane" aria-label="flame graph">
      <div className="pane-head">
        <h2>Flame graph</h2>
        <div className="toolbar">
          <div className="segmented" role="group" aria-label="flame graph mode">
            {MODES.map(([m, label, title]) => (
              <button key={m} type="button" title={title} aria-pressed={v.flameMode === m} onClick={() => v.set({ flameMode: m, flameZoom: [] })}>
                {label}
              </button>
            ))}
          </div>
          <label title="weight each stack by its occurrences in the trace, or by the dump's ref_count">
            weight{' '}
            <select value={v.flameWeight} onChange={(e) => v.set({ flameWeight: e.target.value as FlameRequest['weight'] })} data-testid="flame-weight">
              <option value="occurrences">occurrences</option>
              <option value="refcount">ref_count</option>
            </select>
          </label>
          <input
            type="search"
            className="search"
            placeholder="highlight function or /regex/"
            value={v.flameSearch}
            onChange={(e) => v.set({ flameSearch: e.target.value })}
            data-testid="flame-search"
          />
          {search && (
            <span className="quiet" data-testid="flame-match">
              {fmtPct(search.share)} match
            </span>
          )}
        </div>
      </div>
      <nav className="breadcrumb" aria-label="flame graph zoom">
        {tree &&
          crumbs.map((n, i) => (
            <span key={n}>
              {i > 0 && ' › '}
              <button type="button" disabled={i === crumbs.length - 1} onClick={() => (i === 0 ? v.set({ flameZoom: [] }) : zoomTo(tree, n))}>
                {tree.names[tree.name[n]]}
              </button>
            </span>
          ))}
        {zoomedName && v.flameMode !== 'sandwich' && (
          <button type="button" className="link" onClick={() => v.set({ flameMode: 'sandwich', flameFocus: zoomedName, flameZoom: [] })}>
            sandwich on {zoomedName}
          </button>
        )}
        {v.flameMode === 'sandwich' && <SandwichFocus />}
      </nav>
      <div className="flame-body" data-testid="flamegraph" data-mode={v.flameMode} data-ready={tree ? 'true' : 'false'} data-highlight-nodes={tree?.highlight.length ?? 0} aria-busy={pending}>
        {error && <p className="error">{error}</p>}
        {tree && tree.total === 0 && <p className="quiet">No resolved stacks in this selection.</p>}
        {data?.callers && data.callers.total > 0 && (
          <>
            <div className="quiet sub">callers of {v.flameFocus}</div>
            <FlameCanvas
              tree={data.callers}
              zoom={-1}
              inverted
              match={callerSearch?.mask ?? null}
              weightLabel={weightLabel}
              onZoom={(n) => n > 0 && v.set({ flameFocus: data.callers!.names[data.callers!.name[n]], flameZoom: [] })}
              clickHint="click: sandwich on it"
            />
            <div className="quiet sub">callees of {v.flameFocus}</div>
          </>
        )}
        {tree && tree.total > 0 && (
          <FlameCanvas tree={tree} zoom={zoom} match={search?.mask ?? null} weightLabel={weightLabel} onZoom={(n) => zoomTo(tree, n)} testId="flame-main" />
        )}
      </div>
    </section>
  );
}

function SandwichFocus() {
  const focus = useViewStore((v) => v.flameFocus);
  const set = useViewStore((v) => v.set);
  return (
    <label className="sandwich-focus">
      function{' '}
      <input
        className="search"
        value={focus ?? ''}
        placeholder="function name"
        onChange={(e) => set({ flameFocus: e.target.value || null })}
        data-testid="sandwich-focus"
      />
    </label>
  );
}
