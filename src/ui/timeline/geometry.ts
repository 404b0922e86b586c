import * as d3 from 'd3';

/** Where things are on the timeline canvas, in CSS pixels. */
export const LABEL_W = 96;
export const RULER_H = 34;
export const BOTTOM_PAD = 4;

/** Lane height: roomy for a few CPUs, compact for many tasks. */
export const laneHeight = (lanes: number) => (lanes > 12 ? 15 : lanes > 6 ? 18 : 22);

export const canvasHeight = (lanes: number) => RULER_H + Math.max(1, lanes) * laneHeight(lanes) + BOTTOM_PAD;

/** The lane under y, or -1 (ruler, padding). */
export const laneAt = (y: number, lanes: number) => {
  const i = Math.floor((y - RULER_H) / laneHeight(lanes));
  return i >= 0 && i < lanes ? i : -1;
};

/** A segment's place on the axis: trace seconds [t0, t1] drawn over axis units [u0, u1]. */
export interface AxisPart {
  index: number;
  t0: number;
  t1: number;
  u0: number;
  u1: number;
}

/** What is visible of one part in a window: its time range and pixel columns. */
export interface VisiblePart {
  index: number;
  t0: number;
  t1: number;
  x0: number;
  x1: number;
}

/** the least share of the axis a segment gets (of n segments: min(8%, 50% / n)) */
const MIN_SHARE = 0.08;
/** the break between two segments, as a share of the segments' total */
export const BREAK_SHARE = 0.025;

/**
 * The timeline's horizontal axis over the capture's segments (core/capture/segments.ts): each
 * segment's time range laid side by side, apart by a break, each as wide as its share of the
 * events (of the time when none has events), at least MIN_SHARE, so a run of a few events next
 * to a capture of thousands stays visible and a long idle snippet does not crowd a busy one. Trace seconds map to axis units monotonically and continuously (the gap between two
 * segments maps onto the break), so a window stays a pair of trace seconds (in the URL too) and
 * zoom and pan work in axis units. With one segment, axis units are trace seconds from its start.
 */
export class SegmentAxis {
  readonly parts: AxisPart[];
  /** the axis' length in its units */
  readonly length: number;
  /** the trace seconds the whole axis shows */
  readonly full: [number, number];

  constructor(segments: readonly { firstTs: number; lastTs: number; events?: number }[]) {
    const segs = segments.filter((s) => Number.isFinite(s.firstTs) && Number.isFinite(s.lastTs));
    if (segs.length === 0) segs.push({ firstTs: 0, lastTs: 1 });
    const ranges = segs.map((s, i): [number, number] => {
      if (segs.length === 1) return s.lastTs > s.firstTs ? [s.firstTs, s.lastTs] : [s.firstTs, s.firstTs + 1e-6];
      // side by side, a margin of 1.5% of its span (half a microsecond for an instant) keeps the
      // first and last events off the break; less than a quarter of the gap to either neighbour
      const gaps = [i > 0 ? s.firstTs - segs[i - 1].lastTs : Infinity, i + 1 < segs.length ? segs[i + 1].firstTs - s.lastTs : Infinity];
      const pad = Math.min(Math.max((s.lastTs - s.firstTs) * 0.015, 5e-7), ...gaps.map((g) => g / 4));
      return [s.firstTs - pad, s.lastTs + pad];
    });
    if (ranges.length === 1) {
      const [t0, t1] = ranges[0];
      this.parts = [{ index: 0, t0, t1, u0: 0, u1: t1 - t0 }];
    } else {
      const events = segs.map((s) => s.events ?? 0);
      const weights = events.some((n) => n > 0) ? events : ranges.map(([a, b]) => b - a);
      const total = weights.reduce((x, y) => x + y, 0);
      const least = Math.min(MIN_SHARE, 0.5 / ranges.length);
      const raw = weights.map((w) => Math.max(w / total, least));
      const sum = raw.reduce((x, y) => x + y, 0);
      let u = 0;
      this.parts = ranges.map(([t0, t1], index) => {
        const part = { index, t0, t1, u0: u, u1: u + raw[index] / sum };
        u = part.u1 + BREAK_SHARE;
        return part;
      });
    }
    this.length = this.parts[this.parts.length - 1].u1;
    this.full = [this.parts[0].t0, this.parts[this.parts.length - 1].t1];
  }

  get segmented(): boolean {
    return this.parts.length > 1;
  }

  /** trace seconds -> axis units */
  u(t: number): number {
    const p = this.parts;
    const k = this.partBefore(t, (q) => q.t0);
    if (k < 0) return p[0].u0 + ((t - p[0].t0) * (p[0].u1 - p[0].u0)) / (p[0].t1 - p[0].t0);
    const q = p[k];
    if (t <= q.t1 || k === p.length - 1) return q.u0 + ((t - q.t0) * (q.u1 - q.u0)) / (q.t1 - q.t0);
    const n = p[k + 1];
    return q.u1 + ((t - q.t1) * (n.u0 - q.u1)) / (n.t0 - q.t1);
  }

  /** axis units -> trace seconds */
  t(u: number): number {
    const p = this.parts;
    const k = this.partBefore(u, (q) => q.u0);
    if (k < 0) return p[0].t0 + ((u - p[0].u0) * (p[0].t1 - p[0].t0)) / (p[0].u1 - p[0].u0);
    const q = p[k];
    if (u <= q.u1 || k === p.length - 1) return q.t0 + ((u - q.u0) * (q.t1 - q.t0)) / (q.u1 - q.u0);
    const n = p[k + 1];
    return q.t1 + ((u - q.u1) * (n.t0 - q.t1)) / (n.u0 - q.u1);
  }

  /** the last part whose start (by `key`) is at or before v, -1 before the first */
  private partBefore(v: number, key: (p: AxisPart) => number): number {
    let lo = 0;
    let hi = this.parts.length - 1;
    let k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (key(this.parts[mid]) <= v) {
        k = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return k;
  }

  /**
   * Trace seconds -> x over the plot area (right of the lane labels) for a window: a d3 scale,
   * piecewise linear between the part boundaries inside the window, so invert() works too.
   */
  scale(window: [number, number], width: number): d3.ScaleLinear<number, number> {
    const [w0, w1] = window;
    const u0 = this.u(w0);
    const du = this.u(w1) - u0 || 1;
    const right = Math.max(LABEL_W + 1, width);
    const px = (t: number) => LABEL_W + ((this.u(t) - u0) / du) * (right - LABEL_W);
    const domain = [w0];
    for (const p of this.parts) for (const b of [p.t0, p.t1]) if (b > domain[domain.length - 1] && b < w1) domain.push(b);
    domain.push(w1 > w0 ? w1 : w0 + 1e-9);
    return d3.scaleLinear().domain(domain).range(domain.map(px));
  }

  /** The parts visible in a window, with their pixel columns (clipped to the plot). */
  visible(window: [number, number], width: number): VisiblePart[] {
    const x = this.scale(window, width);
    const out: VisiblePart[] = [];
    for (const p of this.parts) {
      const t0 = Math.max(p.t0, window[0]);
      const t1 = Math.min(p.t1, window[1]);
      if (!(t0 < t1)) continue;
      out.push({ index: p.index, t0, t1, x0: x(t0), x1: x(t1) });
    }
    return out;
  }

  /** The window zoomed by `factor` (< 1 zooms in) around trace time `at`, kept inside the axis. */
  zoom(w: [number, number], factor: number, at = this.t((this.u(w[0]) + this.u(w[1])) / 2)): [number, number] {
    return this.fromUnits(zoomWindow(this.units(w), [0, this.length], factor, this.u(at)));
  }

  /** A window around one part, with a margin of `margin` of its width on either side (into the breaks). */
  around(index: number, margin = 0.02): [number, number] | null {
    const p = this.parts[index];
    const m = (p.u1 - p.u0) * margin;
    return this.normalise(this.fromUnits([Math.max(0, p.u0 - m), Math.min(this.length, p.u1 + m)]));
  }

  /** The window moved by `frac` of its width, kept inside the axis. */
  pan(w: [number, number], frac: number): [number, number] {
    return this.fromUnits(panWindow(this.units(w), [0, this.length], frac));
  }

  /** null when the window is (nearly) the whole axis, so the URL stays short. */
  normalise(w: [number, number]): [number, number] | null {
    const [a, b] = this.units(w);
    return b - a >= this.length * 0.9999 ? null : w;
  }

  units(w: [number, number]): [number, number] {
    return [this.u(w[0]), this.u(w[1])];
  }
  fromUnits(w: [number, number]): [number, number] {
    return [this.t(w[0]), this.t(w[1])];
  }
}

/** A window zoomed by `factor` (< 1 zooms in) around `at`, kept inside `full`. */
export function zoomWindow(w: [number, number], full: [number, number], factor: number, at = (w[0] + w[1]) / 2): [number, number] {
  const minSpan = Math.max((full[1] - full[0]) * 1e-6, 1e-9);
  const span = Math.min(full[1] - full[0], Math.max(minSpan, (w[1] - w[0]) * factor));
  const left = at - ((at - w[0]) / (w[1] - w[0])) * span;
  return clampWindow([left, left + span], full);
}

/** A window moved by `frac` of its span, kept inside `full`. */
export const panWindow = (w: [number, number], full: [number, number], frac: number): [number, number] =>
  clampWindow([w[0] + frac * (w[1] - w[0]), w[1] + frac * (w[1] - w[0])], full);

export function clampWindow(w: [number, number], full: [number, number]): [number, number] {
  const span = Math.min(w[1] - w[0], full[1] - full[0]);
  let a = Math.max(full[0], w[0]);
  if (a + span > full[1]) a = full[1] - span;
  return [a, a + span];
}
