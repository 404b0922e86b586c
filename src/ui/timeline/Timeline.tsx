import { useEffect, useMemo, useRef, useState } from 'react';
import type { EventInfo, TimelineRequest } from '../../core/model/query-types.ts';
import { useLoadStore } from '../../state/load-store.ts';
import { ask, useTimeline } from '../../state/queries.ts';
import { useResolvedTheme } from '../../state/theme.ts';
import { useViewStore } from '../../state/view-store.ts';
import { fmtDuration, fmtTs } from '../common/format.ts';
import { useCanvas } from '../common/useCanvas.ts';
import { drawTimeline } from './draw.ts';
import { canvasHeight, laneAt, LABEL_W, timeScale } from './geometry.ts';
import { CpuPicker } from './CpuPicker.tsx';
import { StatusLegend } from './StatusLegend.tsx';
import { EventTooltip } from './EventTooltip.tsx';
import { useTimelineInput } from './useTimelineInput.ts';

/** One lane per CPU (or task), every event at its time, coloured by its stack record's status. */
export function Timeline() {
  const overview = useLoadStore((s) => s.overview);
  const v = useViewStore();
  const full = useMemo<[number, number] | null>(() => (overview && overview.t1 >= overview.t0 ? [overview.t0, overview.t1 > overview.t0 ? overview.t1 : overview.t0 + 1e-6] : null), [overview]);
  const win: [number, number] = v.window ?? full ?? [0, 1];
  const [laneCount, setLaneCount] = useState(v.lanes === 'cpu' ? (overview?.cpus.length ?? 1) : (overview?.tasks.length ?? 1));
  const { ref, size, context } = useCanvas(canvasHeight(laneCount));
  useResolvedTheme(); // redraw in the other theme's colours
  const buckets = Math.max(1, Math.round(size.width - LABEL_W));
  // the timeline shows the generation and CPUs chosen, and the brushed range as an overlay (not a cut)
  const req = useMemo<TimelineRequest | null>(
    () =>
      overview && size.width > 0
        ? { t0: win[0], t1: win[1], buckets, lanes: v.lanes, selection: { range: null, generation: v.generation, cpus: v.cpus }, highlightStack: v.stack }
        : null,
    [overview, size.width, win[0], win[1], buckets, v.lanes, v.generation, v.cpus, v.stack],
  );
  const data = useTimeline(req).data;
  // the canvas is as tall as the lanes of the last answer (a CPU filter or task lanes change them)
  useEffect(() => {
    if (data && data.result.lanes.length !== laneCount) setLaneCount(data.result.lanes.length);
  }, [data, laneCount]);
  const highlighted = useMemo(() => (data ? data.result.highlight.reduce((a, b) => a + b, 0) : 0), [data]);

  const [hover, setHover] = useState<{ x: number; y: number; info: EventInfo | null } | null>(null);
  const hoverSeq = useRef(0);
  const lanesShown = data?.result.lanes ?? [];
  const eventAt = async (x: number, y: number) => {
    const lane = laneAt(y, lanesShown.length);
    if (lane < 0 || x < LABEL_W) return null;
    const scale = timeScale(win, size.width);
    const t = scale.invert(x);
    const tolerance = Math.abs(scale.invert(x + 4) - t);
    return ask.eventNear(t, lanesShown[lane].key, v.lanes, tolerance, { range: null, generation: v.generation, cpus: v.cpus });
  };

  const brushing = useTimelineInput({
    canvas: ref,
    width: size.width,
    height: size.height,
    full,
    window: win,
    setWindow: (w) => v.set({ window: w }),
    setRange: (r) => v.set({ range: r }),
    onHover: (p) => {
      const seq = ++hoverSeq.current;
      if (!p) return setHover(null);
      setTimeout(() => {
        if (seq !== hoverSeq.current) return;
        void eventAt(p.x, p.y).then((info) => seq === hoverSeq.current && setHover({ ...p, info }));
      }, 30);
    },
    onClick: (p) => {
      void eventAt(p.x, p.y).then((info) => {
        if (info && info.stack >= 0) v.selectStack(info.stack);
      });
    },
  });

  useEffect(() => {
    const ctx = context();
    if (!ctx || !overview) return;
    drawTimeline(ctx, { width: size.width, height: size.height, window: win, overview, data, range: v.range, brushing, generation: v.generation });
  });

  return (
    <section className="panel pane timeline-pane" aria-label="timeline">
      <div className="pane-head">
        <h2>Timeline</h2>
        <div className="toolbar">
          <label>
            lanes{' '}
            <select value={v.lanes} onChange={(e) => v.set({ lanes: e.target.value as 'cpu' | 'task' })} data-testid="lanes-select">
              <option value="cpu">per CPU</option>
              <option value="task">per task</option>
            </select>
          </label>
          <CpuPicker />
          <span className="quiet">
            {fmtTs(win[0])} – {fmtTs(win[1])} ({fmtDuration(win[1] - win[0])})
          </span>
          <button type="button" onClick={() => v.set({ window: null })} disabled={!v.window} title="show the whole trace">
            Zoom out
          </button>
          {v.range && (
            <span className="range-chip" data-testid="range-chip">
              range {fmtTs(v.range[0])} – {fmtTs(v.range[1])}
              <button type="button" onClick={() => v.set({ window: v.range })} title="zoom to the range">
                zoom
              </button>
              <button type="button" onClick={() => v.set({ range: null })} title="clear the range (Esc)" aria-label="clear range">
                ×
              </button>
            </span>
          )}
        </div>
      </div>
      <div className="canvas-wrap" data-testid="timeline" data-lanes={lanesShown.length} data-ready={data ? 'true' : 'false'} data-highlight-events={highlighted}>
        <canvas ref={ref} tabIndex={0} aria-label="timeline: drag to select a range, wheel to zoom, drag the ruler or shift-drag to pan, WASD" />
        {hover?.info && <EventTooltip x={hover.x} y={hover.y} width={size.width} height={size.height} info={hover.info} />}
      </div>
      <div className="pane-foot">
        <StatusLegend />
        <span className="quiet hint">drag: select range · click: select stack · wheel / W S: zoom · ruler drag, shift-drag / A D: pan</span>
      </div>
    </section>
  );
}
