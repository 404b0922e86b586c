import { useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { FlameAnswer, FlameQuery, FunctionWeight } from '../../core/query/flame.ts';
import type { FlameMode, FlameRequest, FlameTree } from '../../core/query/api.ts';
import { useFlame, useFlameFrames } from '../../state/view/queries.ts';
import { useSelection, useViewStore } from '../../state/view/view-store.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { fmtInt, fmtPct } from '../common/format.ts';
import { FlameCanvas } from './FlameCanvas.tsx';
import { diffRatio } from '../../core/export/diff-color.ts';
import { nodeByPath, pathTo } from './layout.ts';
import { TransformCrumbs } from './TransformCrumbs.tsx';
import { useNumericFields } from '../../state/view/numeric-fields.ts';
import { useBaselineStore, useComparedGenerations, useComparing } from '../../state/load/baseline-store.ts';

const MODES: [FlameMode, string, string][] = [
  ['top-down', 'Top-down', 'icicle: callers above callees'],
  ['bottom-up', 'Bottom-up', 'leaves first: who calls the functions the stacks end in'],
  ['sandwich', 'Sandwich', 'callers and callees of one function'],
];

/**
 * The smallest node the worker makes, as a share of the zoomed node: narrower than a pixel on a
 * canvas up to 4,096 pixels wide. A zoom asks again (the totals stay in the worker), so what a
 * zoom shows is as fine as the first view.
 */
const CULL_SHARE = 1 / 4096;

/** The selection's stacks merged into a call tree, weighted by occurrences or ref_count. */
export function FlameGraph() {
  const selection = useSelection();
  // its own slice of the view: a timeline zoom or a hover elsewhere renders nothing here
  const v = useViewStore(
    useShallow((s) => ({
      compareNormalize: s.compareNormalize,
      compareWidths: s.compareWidths,
      flameMode: s.flameMode,
      flameWeight: s.flameWeight,
      flameFrames: s.flameFrames,
      flameFocus: s.flameFocus,
      flameZoom: s.flameZoom,
      flameSearch: s.flameSearch,
      flameTransforms: s.flameTransforms,
      flameGroup: s.flameGroup,
      stack: s.stack,
      set: s.set,
    })),
  );
  const search = v.flameSearch.trim() ? v.flameSearch : '';
  // comparing: top-down draws the differential (not grouped, not weighed by a field)
  const comparing = useComparing();
  const baselineId = useBaselineStore((s) => s.baselineId);
  const generations = useComparedGenerations();
  const differential = comparing && v.flameMode === 'top-down' && !v.flameGroup && !v.flameWeight.startsWith('field:');
  // the search runs in the worker, over every stack's frames: the count says stacks and occurrences
  const req: FlameQuery = {
    selection,
    mode: v.flameMode,
    weight: v.flameWeight,
    ...(v.flameFrames ? { granularity: v.flameFrames } : {}),
    focus: v.flameMode === 'sandwich' ? v.flameFocus : null,
    highlightStack: v.stack,
    ...(search ? { search } : {}),
    ...(v.flameTransforms.length ? { transforms: v.flameTransforms } : {}),
    ...(v.flameGroup && v.flameMode !== 'sandwich' ? { group: v.flameGroup } : {}),
    // top-down: the worker makes only what a canvas can draw under the zoomed node (flame-culled.ts)
    ...(v.flameMode === 'top-down' ? { cull: { minShare: CULL_SHARE, zoom: v.flameZoom } } : {}),
    ...(differential ? { compare: { widths: v.compareWidths, baseline: baselineId, ...(generations ? { generations } : {}) } } : {}),
  };
  const q = useFlame(req);
  // the worker answers with the fields of FlameAnswer (core/query/flame.ts)
  const data = q.data as FlameAnswer | null;
  const tree = data?.tree ?? null;
  // each node's frames, for the tooltip and the menu: asked once the tree is drawn, not on its way
  const frames = useFlameFrames(data?.framesId).data;
  const zoom = useMemo(() => (tree && v.flameZoom.length ? nodeByPath(tree, v.flameZoom) : -1), [tree, v.flameZoom]);
  // a differential's nodes that grew and shrank, as drawn (for the tests and the colour's sense)
  const signs = useMemo(() => {
    let grew = 0;
    let shrank = 0;
    if (tree?.other)
      for (let i = 0; i < tree.name.length; i++) {
        const r = diffRatio(tree, i, { normalize: v.compareNormalize, widths: v.compareWidths });
        if (r > 1e-9) grew++;
        else if (r < -1e-9) shrank++;
      }
    return { grew, shrank };
  }, [tree, v.compareNormalize, v.compareWidths]);
  const found = search && data?.search && !data.search.error ? data.search : null;
  const searchError = search && data?.search?.error ? data.search.error : null;
  const fieldWeight = v.flameWeight.startsWith('field:') ? v.flameWeight.slice('field:'.length) : null;
  const weightLabel = v.flameWeight === 'refcount' ? 'refs' : v.flameWeight === 'period' ? 'period' : (fieldWeight ?? 'occurrences');
  // the payload fields a weight can be: asked once the menu is first opened (or a field is the weight)
  const [menuOpened, setMenuOpened] = useState(false);
  const fields = useNumericFields(menuOpened || fieldWeight !== null || (v.flameGroup?.startsWith('field:') ?? false));
  const hasWeights = useLoadStore((s) => s.overview?.hasWeights ?? false);
  // without a choice in the URL: the capture's (function for perf script input, call site for ftrace stacks)
  const capFrames = useLoadStore((s) => s.overview?.granularity ?? 'site');
  const zoomTo = (t: FlameTree, n: number) => v.set({ flameZoom: pathTo(t, n).map((i) => t.names[t.name[i]]) });
  const crumbs = !tree || tree.parent.length === 0 || tree.total === 0 ? [] : zoom >= 0 ? pathTo(tree, zoom) : [0];
  const zoomedName = tree && zoom >= 0 ? tree.names[tree.name[zoom]] : null;
  const sandwich = v.flameMode === 'sandwich';

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
          <label title="weight each stack by its occurrences in the trace, by the dump's ref_count, by perf's period, or by a numeric field of its events (bytes_alloc: a memory flame graph); an event without the field weighs 0">
            weight{' '}
            <select
              value={v.flameWeight}
              onChange={(e) => v.set({ flameWeight: e.target.value as FlameRequest['weight'] })}
              onFocus={() => setMenuOpened(true)}
              onPointerDown={() => setMenuOpened(true)}
              data-testid="flame-weight"
            >
              <option value="occurrences">occurrences</option>
              <option value="refcount">ref_count</option>
              {(hasWeights || v.flameWeight === 'period') && <option value="period">period</option>}
              {fieldWeight !== null && !fields.some((f) => f.name === fieldWeight) && <option value={v.flameWeight}>{fieldWeight}</option>}
              {fields.length > 0 && (
                <optgroup label="a field of the events (summed)">
                  {fields.map((f) => (
                    <option key={f.name} value={`field:${f.name}`}>
                      {f.name} ({fmtInt(f.events)} events)
                    </option>
                  ))}
                </optgroup>
              )}
            </select>
          </label>
          <label title="a root frame per task (comm), process (TGID, where the trace prints it), event or value of a field, as perf report --sort comm; top-down and bottom-up">
            group{' '}
            <select
              value={v.flameGroup ?? ''}
              onChange={(e) => v.set({ flameGroup: e.target.value || null, flameZoom: [] })}
              onFocus={() => setMenuOpened(true)}
              onPointerDown={() => setMenuOpened(true)}
              disabled={sandwich}
              data-testid="flame-group"
            >
              <option value="">none</option>
              <option value="task">task</option>
              <option value="process">process</option>
              <option value="event">event</option>
              {v.flameGroup?.startsWith('field:') && !fields.some((f) => `field:${f.name}` === v.flameGroup) && (
                <option value={v.flameGroup}>{v.flameGroup.slice(6)}</option>
              )}
              {fields.length > 0 && (
                <optgroup label="a field's value">
                  {fields.map((f) => (
                    <option key={f.name} value={`field:${f.name}`}>
                      {f.name}
                    </option>
                  ))}
                </optgroup>
              )}
            </select>
          </label>
          <label title="merge frames by function (offsets dropped, as perf report and speedscope do; each node lists its call sites), or keep each call site sym+0xoff apart (the stack map's identity). Default: function for perf script input, call site for ftrace stacks">
            frames{' '}
            <select
              value={v.flameFrames ?? capFrames}
              onChange={(e) => v.set({ flameFrames: e.target.value as 'function' | 'site', flameZoom: [], flameFocus: null })}
              data-testid="flame-frames"
            >
              <option value="function">function</option>
              <option value="site">call site</option>
            </select>
          </label>
          <input
            type="search"
            className={searchError ? 'search invalid' : 'search'}
            placeholder="highlight: frame, function, /regex/"
            value={v.flameSearch}
            onChange={(e) => v.set({ flameSearch: e.target.value })}
            onKeyDown={(e) => e.key === 'Escape' && e.currentTarget.blur()}
            aria-invalid={searchError ? true : undefined}
            aria-describedby="flame-search-error"
            data-testid="flame-search"
            spellCheck={false}
          />
          {found && (
            <span
              className="quiet count-line"
              data-testid="flame-match"
              data-stacks={found.stacks}
              data-value={found.value}
              title="stacks of the graph with a matching frame (as shown, or its function), and their weight"
            >
              {fmtInt(found.stacks)} {found.stacks === 1 ? 'stack' : 'stacks'} · {fmtInt(found.value)}{' '}
              {found.value === 1 && weightLabel === 'occurrences' ? 'occurrence' : weightLabel} match ({fmtPct(found.share)})
            </span>
          )}
        </div>
      </div>
      {data?.unweighed && data.unweighed.records > 0 && (
        <p className="quiet sub" data-testid="flame-unweighed" data-records={data.unweighed.records}>
          {fmtInt(data.unweighed.records)} of {fmtInt(data.unweighed.of)} stack records belong to events without a number in {data.unweighed.field}: they weigh
          0.
        </p>
      )}
      {searchError && (
        <p className="field-error" id="flame-search-error" role="alert" data-testid="flame-search-error">
          {searchError}
        </p>
      )}
      {comparing && (
        <p
          className="quiet sub compare-flame-note"
          data-testid="flame-compare"
          data-differential={tree?.other ? 'true' : 'false'}
          data-grew={signs.grew}
          data-shrank={signs.shrank}
        >
          {differential ? (
            <>
              Differential against the baseline: red grew, blue shrank (against the larger side
              {v.compareNormalize ? ', the baseline scaled to this capture’s total' : ''}); widths from{' '}
              <select value={v.compareWidths} onChange={(e) => v.set({ compareWidths: e.target.value as 'after' | 'before' })} data-testid="compare-widths">
                <option value="after">{generations ? `generation ${generations[1]}` : 'this capture'} (after)</option>
                <option value="before">{generations ? `generation ${generations[0]}` : 'the baseline'} (before)</option>
              </select>
            </>
          ) : (
            'The differential is drawn top-down, ungrouped, weighed by occurrences, ref_count or period.'
          )}
        </p>
      )}
      <TransformCrumbs />
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
        {zoomedName && !sandwich && (
          <button type="button" className="link" onClick={() => v.set({ flameMode: 'sandwich', flameFocus: zoomedName, flameZoom: [] })}>
            sandwich on {zoomedName}
          </button>
        )}
        {sandwich && <SandwichFocus />}
      </nav>
      <div
        className="flame-body"
        data-testid="flamegraph"
        data-mode={v.flameMode}
        data-ready={tree ? 'true' : 'false'}
        data-highlight-nodes={tree?.highlight.length ?? 0}
        aria-busy={q.pending}
      >
        {q.error && <p className="error">{q.error}</p>}
        {tree &&
          tree.total === 0 &&
          (sandwich && data?.suggestions ? (
            <SandwichPrompt focus={v.flameFocus} suggestions={data.suggestions} />
          ) : (
            <p className="quiet">No resolved stacks in this selection.</p>
          ))}
        {data?.callers && data.callers.total > 0 && (
          <>
            <div className="quiet sub">callers of {v.flameFocus}</div>
            <FlameCanvas
              tree={data.callers}
              frames={frames?.callers ?? null}
              zoom={-1}
              kind="callers"
              match={found?.callerMask ?? null}
              weightLabel={weightLabel}
              onZoom={(n) => n > 0 && v.set({ flameFocus: data.callers!.names[data.callers!.name[n]], flameZoom: [] })}
              clickHint="click: sandwich on it"
            />
            <div className="quiet sub">callees of {v.flameFocus}</div>
          </>
        )}
        {tree && tree.total > 0 && (
          <FlameCanvas
            tree={tree}
            frames={frames?.tree ?? null}
            zoom={zoom}
            kind={sandwich ? 'callees' : v.flameMode === 'bottom-up' ? 'bottom-up' : 'top-down'}
            match={found?.mask ?? null}
            weightLabel={weightLabel}
            onZoom={(n) => zoomTo(tree, n)}
            testId="flame-main"
            diff={tree.other ? { normalize: v.compareNormalize, widths: v.compareWidths } : null}
          />
        )}
      </div>
    </section>
  );
}

/** A sandwich without a function: what it is, and the selection's busiest functions to pick from. */
function SandwichPrompt({ focus, suggestions }: { focus: string | null; suggestions: FunctionWeight[] }) {
  const set = useViewStore((v) => v.set);
  const total = suggestions.reduce((m, s) => Math.max(m, s.total), 0) || 1;
  const typed = focus?.trim() ?? '';
  return (
    <div className="sandwich-prompt" data-testid="sandwich-prompt">
      <p>
        {typed ? (
          <>
            No function named <b className="mono">{typed}</b> in this selection.{' '}
          </>
        ) : null}
        Pick a function for the sandwich: its callers are drawn above it, its callees below, merged from every stack it is in.
      </p>
      {suggestions.length > 0 ? (
        <>
          <div className="quiet">{typed ? `Functions containing “${typed}”` : 'The functions the most stacks end in'} (by self weight, then total):</div>
          <ul className="suggestions">
            {suggestions.map((s) => (
              <li key={s.name}>
                <button
                  type="button"
                  className="link mono"
                  onClick={() => set({ flameFocus: s.name, flameZoom: [] })}
                  data-testid="sandwich-suggestion"
                  data-name={s.name}
                >
                  {s.name}
                </button>
                <span className="quiet" title="self: weight of the stacks that end in it; total: of the stacks it is in">
                  {' '}
                  self {fmtInt(s.self)} · total {fmtInt(s.total)}
                </span>
                <span className="meter">
                  <span style={{ width: `${(100 * s.total) / total}%` }} />
                </span>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p className="quiet">No function of this selection contains “{typed}”.</p>
      )}
    </div>
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
        spellCheck={false}
      />
    </label>
  );
}
