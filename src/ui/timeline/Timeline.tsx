import { useEffect, useMemo, useRef, useState } from 'react';
import type { EventInfo, TimelineRequest } from '../../core/query/api.ts';
import type { Segment } from '../../core/capture/segments.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { ask } from '../../state/view/queries.ts';
import { useResolvedTheme } from '../../state/view/theme.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { fmtDuration, fmtInt, fmtTs } from '../common/format.ts';
import { useCanvas } from '../common/useCanvas.ts';
import { drawTimeline } from './draw.ts';
import { canvasHeight, laneAt, LABEL_W, SegmentAxis, type VisiblePart } from './geometry.ts';
import { CpuPicker } from './CpuPicker.tsx';
import { StatusLegend } from './StatusLegend.tsx';
import { EventTooltip } from './EventTooltip.tsx';
import { useTimelineInput } from './useTimelineInput.ts';
import { useTimelineQuery } from './useTimelineQuery.ts';

/**
 * One lane per CPU (or task), every event at its time, coloured by its stack record's status.
 * Unrelated time ranges (segments: trace files, or runs quoted in a prose file, far apart) are
 * laid side by side with a break between them, each with its own time axis.
 */
export function Timeline() {
  const overview = useLoadStore((s) => s.overview);
  const v = useViewStore();
  const axis = useMemo(() => {
    if (!overview) return null;
    const segs = overview.segments?.length ? overview.segments : Number.isFinite(overview.t0) ? [{ firstTs: overview.t0, lastTs: overview.t1 }] : [];
    return new SegmentAxis(segs);
  }, [overview]);
  const full = axis?.full ?? null;
  const win: [number, number] = v.window ?? full ?? [0, 1];
  const [laneCount, setLaneCount] = useState(v.lanes === 'cpu' ? (overview?.cpus.length ?? 1) : (overview?.tasks.length ?? 1));
  const { ref, size, context } = useCanvas(canvasHeight(laneCount));
  useResolvedTheme(); // redraw in the other theme's colours
  const visible = useMemo(() => (axis && size.width > 0 ? axis.visible(win, size.width) : []), [axis, size.width, win[0], win[1]]);
  // the timeline shows the generation and CPUs chosen, and the brushed range as an overlay (not a cut)
  const req = useMemo<TimelineRequest | null>(() => {
    if (!overview || !axis || size.width <= 0) return null;
    const base = { lanes: v.lanes, selection: { range: null, generation: v.generation, cpus: v.cpus }, highlightStack: v.stack };
    if (!axis.segmented) return { ...base, t0: win[0], t1: win[1], buckets: Math.max(1, Math.round(size.width - LABEL_W)) };
    // each visible segment with its own pixel columns; nothing is asked for the breaks
    const pieces = visible.map((p) => ({ t0: p.t0, t1: p.t1, buckets: Math.max(1, Math.round(p.x1 - p.x0)) }));
    if (pieces.length === 0) return null;
    return { ...base, t0: pieces[0].t0, t1: pieces[pieces.length - 1].t1, buckets: pieces.reduce((n, p) => n + p.buckets, 0), pieces };
  }, [overview, axis, size.width, visible, win[0], win[1], v.lanes, v.generation, v.cpus, v.stack]);
  const data = useTimelineQuery(req).data;
  // the canvas is as tall as the lanes of the last answer (a CPU filter or task lanes change them)
  useEffect(() => {
    if (data && data.result.lanes.length !== laneCount) setLaneCount(data.result.lanes.length);
  }, [data, laneCount]);
  const highlighted = useMemo(() => (data ? data.result.highlight.reduce((a, b) => a + b, 0) : 0), [data]);

  const [hover, setHover] = useState<{ x: number; y: number; info: EventInfo | null } | null>(null);
  const hoverSeq = useRef(0);
  // a zoom or pan (wheel, keys) moves the events under a still pointer: the old answer is stale
  useEffect(() => {
    hoverSeq.current++;
    setHover(null);
  }, [win[0], win[1]]);
  const lanesShown = data?.result.lanes ?? [];
  const eventAt = async (x: number, y: number) => {
    const lane = laneAt(y, lanesShown.length);
    if (!axis || lane < 0 || x < LABEL_W) return null;
    // on a break between segments there is no time to ask about
    if (axis.segmented && !visible.some((p) => x >= p.x0 - 2 && x <= p.x1 + 2)) return null;
    const scale = axis.scale(win, size.width);
    const t = scale.invert(x);
    const tolerance = Math.abs(scale.invert(x + 4) - t);
    return ask.eventNear(t, lanesShown[lane].key, v.lanes, tolerance, { range: null, generation: v.generation, cpus: v.cpus });
  };

  const brushing = useTimelineInput({
    canvas: ref,
    width: size.width,
    height: size.height,
    axis,
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
    if (!ctx || !overview || !axis) return;
    drawTimeline(ctx, { width: size.width, height: size.height, window: win, axis, overview, data, range: v.range, brushing, generation: v.generation });
  });

  const segments = overview?.segments ?? [];
  const shown = visible.reduce((n, p) => n + (p.t1 - p.t0), 0);
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
          <span className="quiet" data-testid="timeline-window">
            {fmtTs(win[0])} – {fmtTs(win[1])} (
            {axis?.segmented ? `${fmtDuration(shown)} of trace in ${fmtInt(visible.length)} of ${fmtInt(segments.length)} segments` : fmtDuration(win[1] - win[0])})
          </span>
          <button type="button" onClick={() => v.set({ window: null })} disabled={!v.window} title="show the whole trace">
            Zoom out
          </button>
          {v.range && (
            <span className="range-chip" data-testid="range-chip" data-range={v.range.join(',')}>
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
      {axis?.segmented && (
        <SegmentStrip
          segments={segments}
          visible={visible}
          width={size.width}
          onZoom={(s) => {
            // zoom to it and select its range: every pane then counts this segment alone
            v.set({ window: axis.around(s.index), range: [s.firstTs, s.lastTs] });
          }}
        />
      )}
      <div
        className="canvas-wrap"
        data-testid="timeline"
        data-lanes={lanesShown.length}
        data-segments={segments.length}
        data-ready={data ? 'true' : 'false'}
        data-highlight-events={highlighted}
      >
        <canvas ref={ref} tabIndex={0} aria-label="timeline: drag to select a range, wheel to zoom, drag the ruler or shift-drag to pan, WASD" />
        {hover?.info && <EventTooltip x={hover.x} y={hover.y} width={size.width} height={size.height} info={hover.info} />}
      </div>
      <div className="pane-foot">
        <StatusLegend segmented={axis?.segmented ?? false} />
        <span className="quiet hint">drag: select range · click: select stack · wheel / W S: zoom · ruler drag, shift-drag / A D: pan</span>
      </div>
    </section>
  );
}

const rate = (s: Segment) => (s.eventsPerSecond === null ? 'all at one instant' : `${fmtInt(Math.round(s.eventsPerSecond))} events/s`);

/**
 * A label over each segment's part of the timeline: its file and events. Every segment has one (data-testid=timeline-segment, with its first and last timestamp and its
 * events, the numbers `summary --json` prints under segments); those out of the window are hidden.
 * A click zooms to the segment and selects its range, so every pane counts it alone (what
 * `summary --segments` prints under segments[i].counts).
 */
function SegmentStrip({ segments, visible, width, onZoom }: { segments: Segment[]; visible: VisiblePart[]; width: number; onZoom: (s: Segment) => void }) {
  return (
    <div style={{ position: 'relative', height: 22, marginBottom: 2 }} role="group" aria-label="segments: unrelated time ranges, side by side; click one to zoom to it and select it">
      <span className="quiet" style={{ position: 'absolute', left: 6, top: 3, fontSize: 11 }} title="unrelated time ranges (trace files, or runs quoted in one file, far apart in time), side by side">
        {fmtInt(segments.length)} segments
      </span>
      {segments.map((s) => {
        const p = visible.find((x) => x.index === s.index);
        const left = p ? Math.max(LABEL_W, p.x0) : 0;
        const w = p ? Math.min(width, p.x1) - left : 0;
        const span = s.lastTs - s.firstTs;
        return (
          <button
            key={s.index}
            type="button"
            data-testid="timeline-segment"
            data-index={s.index}
            data-file={s.file}
            data-first={String(s.firstTs)}
            data-last={String(s.lastTs)}
            data-events={String(s.events)}
            data-visible={p ? 'true' : 'false'}
            aria-hidden={p ? undefined : true}
            tabIndex={p ? 0 : -1}
            title={`${s.file}: ${fmtTs(s.firstTs)} – ${fmtTs(s.lastTs)} s (${fmtDuration(span)}), ${fmtInt(s.events)} events, ${rate(s)}. Click to zoom to it and select its range.`}
            onClick={() => onZoom(s)}
            style={{
              position: 'absolute',
              left,
              width: Math.max(0, w - 2),
              top: 0,
              height: 20,
              padding: '0 4px',
              fontSize: 11,
              lineHeight: '18px',
              overflow: 'hidden',
              whiteSpace: 'nowrap',
              textOverflow: 'ellipsis',
              textAlign: 'left',
              visibility: p && w >= 6 ? 'visible' : 'hidden',
            }}
          >
            {s.file} · {fmtInt(s.events)} events
          </button>
        );
      })}
    </div>
  );
}
