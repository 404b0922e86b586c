import * as d3 from 'd3';

/** Where things are on the timeline canvas, in CSS pixels. */
export const LABEL_W = 96;
export const RULER_H = 34;
export const BOTTOM_PAD = 4;

/** Lane height: roomy for a few CPUs, compact for many tasks. */
export const laneHeight = (lanes: number) => (lanes > 12 ? 15 : lanes > 6 ? 18 : 22);

export const canvasHeight = (lanes: number) => RULER_H + Math.max(1, lanes) * laneHeight(lanes) + BOTTOM_PAD;

/** Trace seconds -> x over the plot area (right of the lane labels). */
export const timeScale = (window: [number, number], width: number) =>
  d3.scaleLinear().domain(window).range([LABEL_W, Math.max(LABEL_W + 1, width)]);

/** The lane under y, or -1 (ruler, padding). */
export const laneAt = (y: number, lanes: number) => {
  const i = Math.floor((y - RULER_H) / laneHeight(lanes));
  return i >= 0 && i < lanes ? i : -1;
};

/** A window zoomed by `factor` (< 1 zooms in) around time `at`, kept inside the trace. */
export function zoomWindow(w: [number, number], full: [number, number], factor: number, at = (w[0] + w[1]) / 2): [number, number] {
  const minSpan = Math.max((full[1] - full[0]) * 1e-6, 1e-9);
  const span = Math.min(full[1] - full[0], Math.max(minSpan, (w[1] - w[0]) * factor));
  const left = at - ((at - w[0]) / (w[1] - w[0])) * span;
  return clampWindow([left, left + span], full);
}

/** A window moved by `frac` of its span, kept inside the trace. */
export const panWindow = (w: [number, number], full: [number, number], frac: number): [number, number] =>
  clampWindow([w[0] + frac * (w[1] - w[0]), w[1] + frac * (w[1] - w[0])], full);

export function clampWindow(w: [number, number], full: [number, number]): [number, number] {
  const span = Math.min(w[1] - w[0], full[1] - full[0]);
  let a = Math.max(full[0], w[0]);
  if (a + span > full[1]) a = full[1] - span;
  return [a, a + span];
}

/** null when the window is (nearly) the whole trace, so the URL stays short. */
export const normaliseWindow = (w: [number, number], full: [number, number]): [number, number] | null =>
  w[1] - w[0] >= (full[1] - full[0]) * 0.9999 ? null : w;
