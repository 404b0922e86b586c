import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
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
import { TimelineAsker, type TimelineAnswer } from './timeline-asker.ts';

const EMPTY_WINDOW: [number, number] = [0, 1];

/**
 * One lane per CPU (or task), every event at its time, coloured by its stack record's status.
 * Unrelated time ranges (segments: trace files, or runs quoted in a prose file, far apart) are
 * laid side by side with a break between them, each with its own time axis.
 *
 * A zoom or pan does not render React: the canvas follows the view store's window through a
 * subscription, drawn in the next animation frame (the last answer stretched to the new window
 * until the worker's answer for it comes, TimelineAsker), and only the window label and the
 * segment strip, components of their own, re-render. React renders this pane when what it
 * shows otherwise changes (lanes, selection, the capture, the size, a brush).
 */
export function Timeline() {
  const overview = useLoadStore((s) => s.overview);
  const capture = useLoadStore((s) => (s.status === 'done' ? s.captureId : 0));
  const v = useViewStore(
    useShallow((s) => ({
      lanes: s.lanes,
      generation: s.generation,
      cpus: s.cpus,
      stack: s.stack,
      range: s.range,
      pin: s.pin,
      zoomed: s.window !== null,
      set: s.set,
      selectStack: s.selectStack,
    })),
  );
  const axis = useMemo(() => {
    if (!overview) return null;
    const segs = overview.segments?.length ? overview.segments : Number.isFinite(overview.t0) ? [{ firstTs: overview.t0, lastTs: overview.t1 }] : [];
    return new SegmentAxis(segs);
  }, [overview]);
  /**
   * The window shown: the store's, or the whole trace. Read through `live` (this render's axis):
   * the asker's callbacks are made once, so a closure over this render's axis would draw a new
   * capture's answer across the old capture's span, a blank plot, until the next zoom.
   */
  const windowNow = (): [number, number] => useViewStore.getState().window ?? live.current.axis?.full ?? EMPTY_WINDOW;
  const [laneCount, setLaneCount] = useState(v.lanes === 'cpu' ? (overview?.cpus.length ?? 1) : (overview?.tasks.length ?? 1));
  const { ref, size, context } = useCanvas(canvasHeight(laneCount));
  useResolvedTheme(); // redraw in the other theme's colours
  const wrap = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);

  /** the last answer (of this capture only), read when drawing and hovering */
  const data = useRef<TimelineAnswer | null>(null);
  // what the drawing and the questions read between renders: this render's values
  const live = useRef({ axis, overview, size, context, capture, v, brushing: null as [number, number] | null });
  live.current = { axis, overview, size, context, capture, v, brushing: live.current.brushing };

  /** The question for a window: each visible segment with its own pixel columns, nothing for the breaks. */
  const requestFor = (win: [number, number]): TimelineRequest | null => {
    const { axis, overview, size, v } = live.current;
    if (!overview || !axis || size.width <= 0) return null;
    const base = { lanes: v.lanes, selection: { range: null, generation: v.generation, cpus: v.cpus }, highlightStack: v.stack };
    if (!axis.segmented) return { ...base, t0: win[0], t1: win[1], buckets: Math.max(1, Math.round(size.width - LABEL_W)) };
    const pieces = axis.visible(win, size.width).map((p) => ({ t0: p.t0, t1: p.t1, buckets: Math.max(1, Math.round(p.x1 - p.x0)) }));
    if (pieces.length === 0) return null;
    return { ...base, t0: pieces[0].t0, t1: pieces[pieces.length - 1].t1, buckets: pieces.reduce((n, p) => n + p.buckets, 0), pieces };
  };

  const draw = () => {
    const { axis, overview, size, context, capture, v, brushing } = live.current;
    const ctx = context();
    if (!ctx || !overview || !axis) return;
    const d = data.current && data.current.capture === capture ? data.current : null;
    const win = windowNow();
    drawTimeline(ctx, {
      width: size.width,
      height: size.height,
      window: win,
      axis,
      overview,
      data: d,
      range: v.range,
      brushing,
      generation: v.generation,
      pin: v.pin,
    });
    // the span last drawn, for tests and tools (set here, not by React: a draw does not render)
    if (wrap.current) wrap.current.dataset.drawn = d ? `${win[0]},${win[1]}` : '';
  };
  const frame = useRef(0);
  const drawSoon = () => {
    if (frame.current === 0)
      frame.current = requestAnimationFrame(() => {
        frame.current = 0;
        draw();
      });
  };
  useEffect(() => () => cancelAnimationFrame(frame.current), []);

  /** the answer's numbers on the pane, for tests and tools: set here, not by React (answers do not render it) */
  const showAnswer = (d: TimelineAnswer | null) => {
    const el = wrap.current;
    if (!el) return;
    el.dataset.ready = d ? 'true' : 'false';
    el.dataset.lanes = String(d?.result.lanes.length ?? 0);
    el.dataset.highlightEvents = String(d ? d.result.highlight.reduce((a, b) => a + b, 0) : 0);
    // with an event filter: the events it left out in view, drawn dimmed
    el.dataset.restEvents = String(d?.result.rest ? d.result.rest.reduce((a, b) => a + b, 0) : 0);
  };

  /**
   * The asker lives from mount to unmount: made on first use, closed and dropped on teardown, so
   * a remount (StrictMode's double mount in development, a pane shown again) makes a new one. One
   * made during render and only closed would leave a remounted timeline asking nothing, for good.
   */
  const asker = useRef<TimelineAsker | null>(null);
  const askerNow = (): TimelineAsker =>
    (asker.current ??= new TimelineAsker(
      (a) => {
        if (a.capture !== live.current.capture) return;
        data.current = a;
        setError(null);
        showAnswer(a);
        if (a.result.lanes.length !== laneCountRef.current) setLaneCount(a.result.lanes.length);
        draw();
      },
      (message, c) => c === live.current.capture && setError(message),
    ));
  const laneCountRef = useRef(laneCount);
  laneCountRef.current = laneCount;
  useEffect(
    () => () => {
      asker.current?.close();
      asker.current = null;
    },
    [],
  );

  const [hover, setHover] = useState<{ x: number; y: number; info: EventInfo | null } | null>(null);
  const hoverSeq = useRef(0);
  const hoverShown = useRef(false);
  hoverShown.current = hover !== null;
  const eventAt = async (x: number, y: number) => {
    const { axis, size, v } = live.current;
    const lanes = data.current?.capture === live.current.capture ? data.current.result.lanes : [];
    const lane = laneAt(y, lanes.length);
    if (!axis || lane < 0 || x < LABEL_W) return null;
    const win = windowNow();
    // on a break between segments there is no time to ask about
    if (axis.segmented && !axis.visible(win, size.width).some((p) => x >= p.x0 - 2 && x <= p.x1 + 2)) return null;
    const scale = axis.scale(win, size.width);
    const t = scale.invert(x);
    const tolerance = Math.abs(scale.invert(x + 4) - t);
    return ask.eventNear(t, lanes[lane].key, v.lanes, tolerance, { range: null, generation: v.generation, cpus: v.cpus });
  };

  const input = useTimelineInput({
    canvas: ref,
    width: size.width,
    height: size.height,
    axis,
    getWindow: windowNow,
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
        // a simulated capture's wrong or detected id: its story in the panel below (ui/idstory)
        if (info?.truth && (info.truth.outcome === 'wrong' || info.truth.outcome === 'detected'))
          void ask.idStoryOfEvent(info.index).then((n) => n >= 0 && useViewStore.getState().set({ idStory: n }));
      });
    },
  });
  live.current.brushing = input.brushing;

  // a new capture: its answers only
  useEffect(() => {
    data.current = null;
    showAnswer(null);
  }, [capture]);

  // the window, followed outside React: a frame drawn, the question for it, the zoom kept in step
  useEffect(
    () =>
      useViewStore.subscribe((s, prev) => {
        if (s.window === prev.window) return;
        // a zoom or pan moves the events under a still pointer: the old answer is stale
        hoverSeq.current++;
        if (hoverShown.current) setHover(null);
        input.sync(windowNow());
        askerNow().want(requestFor(windowNow()), live.current.capture);
        drawSoon();
      }),
    [axis, input.sync],
  );

  // anything else React rendered for: asked and drawn now
  useLayoutEffect(() => {
    askerNow().want(requestFor(windowNow()), capture);
    draw();
  });

  const segments = overview?.segments ?? [];
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
          <WindowLabel axis={axis} width={size.width} segments={segments.length} />
          <button type="button" onClick={() => v.set({ window: null })} disabled={!v.zoomed} title="show the whole trace">
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
          axis={axis}
          width={size.width}
          onZoom={(s) => {
            // zoom to it and select its range: every pane then counts this segment alone
            v.set({ window: axis.around(s.index), range: [s.firstTs, s.lastTs] });
          }}
        />
      )}
      <div
        ref={wrap}
        className="canvas-wrap"
        data-testid="timeline"
        data-segments={segments.length}
        data-pin-ts={v.pin?.ts ?? ''}
        data-pin-cpu={v.pin?.cpu ?? ''}
        data-resets={overview?.resets.length ?? 0}
        title={error ?? undefined}
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

/** The window in words: the only text a zoom or pan changes, rendered on its own. */
function WindowLabel({ axis, width, segments }: { axis: SegmentAxis | null; width: number; segments: number }) {
  const stored = useViewStore((s) => s.window);
  const win = stored ?? axis?.full ?? EMPTY_WINDOW;
  const visible = axis && width > 0 ? axis.visible(win, width) : [];
  const shown = visible.reduce((n, p) => n + (p.t1 - p.t0), 0);
  return (
    <span className="quiet" data-testid="timeline-window">
      {fmtTs(win[0])} – {fmtTs(win[1])} (
      {axis?.segmented ? `${fmtDuration(shown)} of trace in ${fmtInt(visible.length)} of ${fmtInt(segments)} segments` : fmtDuration(win[1] - win[0])})
    </span>
  );
}

const rate = (s: Segment) => (s.eventsPerSecond === null ? 'all at one instant' : `${fmtInt(Math.round(s.eventsPerSecond))} events/s`);

/**
 * A label over each segment's part of the timeline: its file and events. Every segment has one (data-testid=timeline-segment, with its first and last timestamp and its
 * events, the numbers `summary --json` prints under segments); those out of the window are hidden.
 * A click zooms to the segment and selects its range, so every pane counts it alone (what
 * `summary --segments` prints under segments[i].counts).
 */
function SegmentStrip({ segments, axis, width, onZoom }: { segments: Segment[]; axis: SegmentAxis; width: number; onZoom: (s: Segment) => void }) {
  const stored = useViewStore((s) => s.window);
  const visible: VisiblePart[] = width > 0 ? axis.visible(stored ?? axis.full, width) : [];
  return (
    <div
      style={{ position: 'relative', height: 22, marginBottom: 2 }}
      role="group"
      aria-label="segments: unrelated time ranges, side by side; click one to zoom to it and select it"
    >
      <span
        className="quiet"
        style={{ position: 'absolute', left: 6, top: 3, fontSize: 11 }}
        title="unrelated time ranges (trace files, or runs quoted in one file, far apart in time), side by side"
      >
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
