import * as d3 from 'd3';
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import { LABEL_W, RULER_H, type SegmentAxis } from './geometry.ts';

interface Input {
  canvas: RefObject<HTMLCanvasElement | null>;
  width: number;
  height: number;
  /** the segments side by side; null before a capture */
  axis: SegmentAxis | null;
  /** the window shown now (read when an input needs it: a zoom or pan does not render) */
  getWindow(): [number, number];
  setWindow(w: [number, number] | null): void;
  setRange(r: [number, number]): void;
  onHover(p: { x: number; y: number } | null): void;
  onClick(p: { x: number; y: number }): void;
}

const typing = (e: KeyboardEvent) => {
  const t = e.target as HTMLElement | null;
  return !!t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName));
};

/**
 * The timeline's hands: wheel zooms and drag on the ruler (or shift-drag anywhere) pans, both
 * through d3-zoom; a plain drag over the lanes brushes a range; WASD (by KeyboardEvent.code, so
 * any keyboard layout) and the arrows zoom and pan. Zoom and pan work in the axis' units (the
 * segments side by side), the window they set is in trace seconds. Returns the brush being dragged, and `sync`, which
 * puts d3-zoom's transform in step with a window set elsewhere (keys, a button, the URL).
 */
export function useTimelineInput(p: Input): { brushing: [number, number] | null; sync(w: [number, number]): void } {
  const [brushing, setBrushing] = useState<[number, number] | null>(null);
  const latest = useRef(p);
  latest.current = p;
  const zoomRef = useRef<d3.ZoomBehavior<HTMLCanvasElement, unknown> | null>(null);
  const syncing = useRef(false);
  /** inside d3-zoom's own handler: a sync waits until it returns */
  const inZoom = useRef(false);
  const hovered = useRef(false);

  // d3-zoom for wheel and pan; its transform is kept in step with the store's window
  useEffect(() => {
    const canvas = p.canvas.current;
    if (!canvas || !p.axis || p.width === 0) return;
    const axis = p.axis;
    const xFull = unitScale(axis, p.width);
    const maxK = Math.max(1, axis.length / Math.max(axis.length * 1e-6, 1e-9));
    const zoom = d3
      .zoom<HTMLCanvasElement, unknown>()
      .scaleExtent([1, maxK])
      .extent([
        [LABEL_W, 0],
        [p.width, p.height],
      ])
      .translateExtent([
        [LABEL_W, 0],
        [p.width, p.height],
      ])
      .filter((e: MouseEvent | WheelEvent) => (e.type === 'wheel' ? true : e.button === 0 && (e.shiftKey || e.offsetY < RULER_H)))
      .on('zoom', (e: d3.D3ZoomEvent<HTMLCanvasElement, unknown>) => {
        if (syncing.current) return;
        const d = e.transform.rescaleX(xFull).domain() as [number, number];
        inZoom.current = true;
        try {
          latest.current.setWindow(axis.normalise(axis.fromUnits(d)));
        } finally {
          inZoom.current = false;
        }
      });
    const sel = d3.select(canvas);
    sel.call(zoom).on('dblclick.zoom', null);
    zoomRef.current = zoom;
    return () => {
      sel.on('.zoom', null);
      zoomRef.current = null;
    };
  }, [p.canvas, p.axis, p.width, p.height]);

  const sync = useCallback(
    (w: [number, number]) => {
      if (inZoom.current) {
        queueMicrotask(() => sync(latest.current.getWindow()));
        return;
      }
      const canvas = p.canvas.current;
      const zoom = zoomRef.current;
      if (!canvas || !zoom || !p.axis || p.width === 0) return;
      const xFull = unitScale(p.axis, p.width);
      const [u0, u1] = p.axis.units(w);
      const k = p.axis.length / (u1 - u0);
      const t = d3.zoomIdentity.translate(LABEL_W - k * xFull(u0), 0).scale(k);
      syncing.current = true;
      d3.select(canvas).call(zoom.transform, t);
      syncing.current = false;
    },
    [p.canvas, p.axis, p.width, p.height],
  );
  // in step once the zoom is made (a new axis or size)
  useEffect(() => sync(latest.current.getWindow()), [sync]);

  // brush and hover
  useEffect(() => {
    const canvas = p.canvas.current;
    if (!canvas) return;
    let start: number | null = null;
    let startX = 0;
    const pos = (e: PointerEvent) => {
      const r = canvas.getBoundingClientRect();
      return { x: e.clientX - r.left, y: e.clientY - r.top };
    };
    const timeAt = (x: number) => {
      const { width, axis } = latest.current;
      const w = latest.current.getWindow();
      if (!axis) return NaN;
      return axis.scale(w, width).invert(Math.max(LABEL_W, Math.min(width, x)));
    };
    const down = (e: PointerEvent) => {
      const { x, y } = pos(e);
      if (e.button !== 0 || e.shiftKey || y < RULER_H || x < LABEL_W) return;
      start = timeAt(x);
      startX = x;
      canvas.setPointerCapture(e.pointerId);
      latest.current.onHover(null);
    };
    const move = (e: PointerEvent) => {
      const { x, y } = pos(e);
      if (start === null) {
        if (e.buttons === 0) latest.current.onHover({ x, y });
        return;
      }
      if (Math.abs(x - startX) > 3) {
        const t = timeAt(x);
        setBrushing([Math.min(start, t), Math.max(start, t)]);
      }
    };
    const up = (e: PointerEvent) => {
      if (start === null) return;
      const { x, y } = pos(e);
      const t = timeAt(x);
      if (Math.abs(x - startX) > 3) latest.current.setRange([Math.min(start, t), Math.max(start, t)]);
      else latest.current.onClick({ x, y });
      start = null;
      setBrushing(null);
    };
    const enter = () => (hovered.current = true);
    const leave = () => {
      hovered.current = false;
      latest.current.onHover(null);
    };
    canvas.addEventListener('pointerdown', down);
    canvas.addEventListener('pointermove', move);
    canvas.addEventListener('pointerup', up);
    canvas.addEventListener('pointerenter', enter);
    canvas.addEventListener('pointerleave', leave);
    return () => {
      canvas.removeEventListener('pointerdown', down);
      canvas.removeEventListener('pointermove', move);
      canvas.removeEventListener('pointerup', up);
      canvas.removeEventListener('pointerenter', enter);
      canvas.removeEventListener('pointerleave', leave);
    };
  }, [p.canvas]);

  // keyboard: WASD anywhere but in a text field; arrows when the timeline has the pointer or focus
  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      // a key another pane took (arrows moving a table's selection) is not also a zoom or pan
      if (e.defaultPrevented || typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      const { axis, setWindow } = latest.current;
      if (!axis) return;
      const w = latest.current.getWindow();
      const onTimeline = hovered.current || document.activeElement === latest.current.canvas.current;
      const arrows = onTimeline && e.code.startsWith('Arrow');
      let next: [number, number] | null = null;
      if (e.code === 'KeyW' || (arrows && e.code === 'ArrowUp')) next = axis.zoom(w, 0.7);
      else if (e.code === 'KeyS' || (arrows && e.code === 'ArrowDown')) next = axis.zoom(w, 1 / 0.7);
      else if (e.code === 'KeyA' || (arrows && e.code === 'ArrowLeft')) next = axis.pan(w, -0.2);
      else if (e.code === 'KeyD' || (arrows && e.code === 'ArrowRight')) next = axis.pan(w, 0.2);
      if (!next) return;
      e.preventDefault();
      setWindow(axis.normalise(next));
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, []);

  return { brushing, sync };
}

/** axis units -> x over the plot, for the whole axis (what d3-zoom's transform is relative to) */
const unitScale = (axis: SegmentAxis, width: number) =>
  d3
    .scaleLinear()
    .domain([0, axis.length])
    .range([LABEL_W, Math.max(LABEL_W + 1, width)]);
