import * as d3 from 'd3';
import type { Overview, TimelineRequest, TimelineResult } from '../../core/query/api.ts';
import { TIMELINE_STATUSES } from '../../core/query/api.ts';
import { STATUS_COLORS } from '../common/colors.ts';
import { cssVar } from '../common/useCanvas.ts';
import { LABEL_W, laneHeight, RULER_H, type SegmentAxis } from './geometry.ts';

export interface TimelineFrame {
  width: number;
  height: number;
  window: [number, number];
  /** the segments side by side (one part for a single capture) */
  axis: SegmentAxis;
  overview: Overview;
  /** the last answer and the request it answers (its window may lag the current one while zooming) */
  data: { req: TimelineRequest; result: TimelineResult } | null;
  range: [number, number] | null;
  /** a brush being dragged, in trace seconds */
  brushing: [number, number] | null;
  generation: number | 'none' | null;
  /** one event singled out (an id's story: the record written), marked on its CPU's lane */
  pin: { ts: number; cpu: number } | null;
}

/** Draws the whole timeline: generation bands, lanes of events by status, highlights, resets, lost events, segment breaks, ruler, brush. */
export function drawTimeline(ctx: CanvasRenderingContext2D, f: TimelineFrame) {
  const fg = cssVar('--fg');
  const muted = cssVar('--muted');
  const line = cssVar('--line');
  const panel = cssVar('--panel');
  const accent = cssVar('--accent');
  const bad = cssVar('--bad');
  const x = f.axis.scale(f.window, f.width);
  const lanes = f.data?.result.lanes ?? [];
  const LANE_H = laneHeight(lanes.length);
  const plotBottom = RULER_H + Math.max(1, lanes.length) * LANE_H;
  ctx.clearRect(0, 0, f.width, f.height);
  ctx.fillStyle = panel;
  ctx.fillRect(0, 0, f.width, f.height);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';

  // generation bands, alternately shaded, labelled in the ruler: one per segment it appears in
  f.overview.generations.forEach((g, i) => {
    for (const span of g.segments) {
      const x0 = Math.max(LABEL_W, x(span.firstTs));
      const x1 = Math.min(f.width, Math.max(x(span.lastTs), x0 + 1));
      if (x1 < LABEL_W || x0 > f.width) continue;
      const chosen = f.generation !== null && f.generation === g.generation;
      ctx.fillStyle = chosen ? withAlpha(accent, 0.14) : i % 2 ? withAlpha(muted, 0.1) : withAlpha(muted, 0.03);
      ctx.fillRect(x0, RULER_H, x1 - x0, plotBottom - RULER_H);
      ctx.fillStyle = chosen ? accent : muted;
      const label = g.generation === 'none' ? 'no gen' : `gen ${g.generation}`;
      if (x1 - x0 > ctx.measureText(label).width + 6) ctx.fillText(label, x0 + 3, RULER_H - 9);
    }
  });

  // lanes
  ctx.strokeStyle = line;
  ctx.lineWidth = 1;
  lanes.forEach((lane, i) => {
    const y = RULER_H + i * LANE_H;
    ctx.beginPath();
    ctx.moveTo(0, y + LANE_H + 0.5);
    ctx.lineTo(f.width, y + LANE_H + 0.5);
    ctx.stroke();
    ctx.fillStyle = fg;
    ctx.fillText(clip(ctx, lane.label, LABEL_W - 10), 6, y + LANE_H / 2);
  });
  if (f.data) drawBars(ctx, f, x, accent);

  // resets: where one generation ends and the next begins
  ctx.setLineDash([4, 3]);
  ctx.strokeStyle = bad;
  for (const r of f.overview.resets) {
    const rx = Math.round(x(r.ts)) + 0.5;
    if (rx < LABEL_W || rx > f.width) continue;
    ctx.beginPath();
    ctx.moveTo(rx, RULER_H - 4);
    ctx.lineTo(rx, plotBottom);
    ctx.stroke();
  }
  ctx.setLineDash([]);

  // lost events: a red triangle on the CPU's lane (on the ruler in task lanes)
  ctx.fillStyle = bad;
  const laneOfCpu = new Map(lanes.map((l, i) => [l.key, i]));
  for (const l of f.overview.lost) {
    const lx = x(l.ts);
    if (!Number.isFinite(lx) || lx < LABEL_W || lx > f.width) continue;
    const li = f.data?.req.lanes === 'cpu' ? laneOfCpu.get(l.cpu) : undefined;
    const ly = li === undefined ? RULER_H - 2 : RULER_H + li * LANE_H + 1;
    ctx.beginPath();
    ctx.moveTo(lx - 5, ly);
    ctx.lineTo(lx + 5, ly);
    ctx.lineTo(lx, ly + 8);
    ctx.fill();
  }

  drawBreaks(ctx, f, x, plotBottom, panel, muted);
  drawRuler(ctx, f, muted, line);
  if (f.pin) drawPin(ctx, f, x, lanes, plotBottom, fg, accent);

  // the brushed range (or the one being dragged): the outside dimmed
  const r = f.brushing ?? f.range;
  if (r) {
    const x0 = Math.max(LABEL_W, x(r[0]));
    const x1 = Math.min(f.width, x(r[1]));
    ctx.fillStyle = withAlpha(fg, 0.12);
    if (x0 > LABEL_W) ctx.fillRect(LABEL_W, RULER_H, x0 - LABEL_W, plotBottom - RULER_H);
    if (x1 < f.width) ctx.fillRect(x1, RULER_H, f.width - x1, plotBottom - RULER_H);
    ctx.strokeStyle = accent;
    ctx.lineWidth = 1.5;
    // just outside the range, so events on its edges stay visible
    if (x1 > x0) ctx.strokeRect(x0 - 1.5, RULER_H + 0.5, x1 - x0 + 3, plotBottom - RULER_H - 1);
    ctx.fillStyle = withAlpha(accent, 0.18);
    if (x1 > x0) ctx.fillRect(x0, 0, x1 - x0, RULER_H);
  }
}

/**
 * The pinned event: a line down the plot at its time, and on its CPU's lane (per-CPU lanes) a ring
 * around the spot and a pointer from the ruler, so one event stands out among its neighbours.
 */
function drawPin(
  ctx: CanvasRenderingContext2D,
  f: TimelineFrame,
  x: d3.ScaleLinear<number, number>,
  lanes: { key: number }[],
  plotBottom: number,
  fg: string,
  accent: string,
) {
  const pin = f.pin!;
  const px = Math.round(x(pin.ts)) + 0.5;
  if (!Number.isFinite(px) || px < LABEL_W || px > f.width) return;
  ctx.strokeStyle = fg;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(px, RULER_H);
  ctx.lineTo(px, plotBottom);
  ctx.stroke();
  // the pointer on the ruler
  ctx.fillStyle = accent;
  ctx.beginPath();
  ctx.moveTo(px - 6, 2);
  ctx.lineTo(px + 6, 2);
  ctx.lineTo(px, RULER_H - 2);
  ctx.fill();
  const lane = f.data?.req.lanes === 'cpu' ? lanes.findIndex((l) => l.key === pin.cpu) : -1;
  if (lane < 0) return;
  const laneH = laneHeight(lanes.length);
  const cy = RULER_H + lane * laneH + laneH / 2;
  ctx.lineWidth = 2.5;
  ctx.strokeStyle = accent;
  ctx.beginPath();
  ctx.arc(px, cy, Math.max(3, laneH / 2 - 1), 0, Math.PI * 2);
  ctx.stroke();
  ctx.lineWidth = 1;
}

/** Where each column of an answer starts in trace seconds (its pieces side by side), and the column's width in seconds. */
export function bucketTimes(req: TimelineRequest, buckets: number): { t: Float64Array; dt: Float64Array } {
  const pieces = req.pieces?.length ? req.pieces : [{ t0: req.t0, t1: req.t1, buckets }];
  const t = new Float64Array(buckets);
  const dt = new Float64Array(buckets);
  let b = 0;
  for (const p of pieces) {
    const n = Math.max(1, Math.floor(p.buckets) || 1);
    const w = (p.t1 - p.t0) / n;
    for (let j = 0; j < n && b < buckets; j++, b++) {
      t[b] = p.t0 + j * w;
      dt[b] = w;
    }
  }
  return { t, dt };
}

function drawBars(ctx: CanvasRenderingContext2D, f: TimelineFrame, x: d3.ScaleLinear<number, number>, accent: string) {
  const { req, result } = f.data!;
  const B = result.buckets;
  const LANE_H = laneHeight(result.lanes.length);
  const cols = bucketTimes(req, B);
  const bx0s = Float64Array.from(cols.t, (t) => x(t));
  const bx1s = Float64Array.from(cols.t, (t, b) => x(t + cols.dt[b]));
  let max = 1;
  const totals = new Uint32Array(result.lanes.length * B);
  const rest = result.rest ?? null;
  for (let i = 0; i < totals.length; i++) {
    let n = 0;
    for (let s = 0; s < TIMELINE_STATUSES; s++) n += result.counts[i * TIMELINE_STATUSES + s];
    totals[i] = n;
    // with a filter, the scale is the whole capture's: the kept events stand in the height of all
    if (n + (rest ? rest[i] : 0) > max) max = n + (rest ? rest[i] : 0);
  }
  // sqrt: a lone event stays visible beside a busy burst
  const h = d3
    .scaleSqrt()
    .domain([0, max])
    .range([0, LANE_H - 4]);
  // what an event filter left out, dimmed: a grey bar of every event, the kept ones drawn over it
  if (rest) {
    ctx.globalAlpha = 0.22;
    ctx.fillStyle = cssVar('--muted');
    for (let lane = 0; lane < result.lanes.length; lane++) {
      const floorY = RULER_H + (lane + 1) * LANE_H - 1;
      for (let b = 0; b < B; b++) {
        const i = lane * B + b;
        const all = totals[i] + rest[i];
        if (rest[i] === 0) continue;
        const bx0 = bx0s[b];
        const bx1 = bx1s[b];
        if (bx1 < LABEL_W || bx0 > f.width) continue;
        const hh = Math.max(2, h(all));
        ctx.fillRect(Math.max(LABEL_W, bx0), floorY - hh, Math.max(1, bx1 - bx0), hh);
      }
    }
    ctx.globalAlpha = 1;
  }
  const highlighting = req.highlightStack !== null;
  ctx.globalAlpha = highlighting ? 0.35 : 1;
  // each cell's bar: where it starts and how tall it is (0: nothing to draw)
  const cells = result.lanes.length * B;
  const left = new Float64Array(cells);
  const width = new Float64Array(cells);
  const scale = new Float64Array(cells);
  for (let lane = 0; lane < result.lanes.length; lane++) {
    for (let b = 0; b < B; b++) {
      const i = lane * B + b;
      const total = totals[i];
      if (total === 0) continue;
      const bx0 = bx0s[b];
      const bx1 = bx1s[b];
      if (bx1 < LABEL_W || bx0 > f.width) continue;
      left[i] = Math.max(LABEL_W, bx0);
      width[i] = Math.max(1, bx1 - bx0);
      scale[i] = Math.max(2, h(total)) / total;
    }
  }
  // statuses stacked from the lane's floor up, in status order: one fillStyle per status (setting
  // it parses a colour), then a fillRect per cell holding that status (the rasteriser's rect path)
  const floor = new Float64Array(cells);
  for (let lane = 0; lane < result.lanes.length; lane++) floor.fill(RULER_H + (lane + 1) * LANE_H - 1, lane * B, (lane + 1) * B);
  for (let s = 0; s < TIMELINE_STATUSES; s++) {
    let styled = false;
    for (let i = 0; i < cells; i++) {
      const k = scale[i];
      if (k === 0) continue;
      const n = result.counts[i * TIMELINE_STATUSES + s];
      if (n === 0) continue;
      if (!styled) {
        ctx.fillStyle = STATUS_COLORS[s];
        styled = true;
      }
      const sh = k * n;
      const y = floor[i] - sh;
      ctx.fillRect(left[i], y, width[i], sh);
      floor[i] = y;
    }
  }
  ctx.globalAlpha = 1;
  if (!highlighting) return;
  // the selected stack's occurrences, on top at full strength
  ctx.fillStyle = accent;
  for (let lane = 0; lane < result.lanes.length; lane++) {
    const top = RULER_H + lane * LANE_H + 2;
    for (let b = 0; b < B; b++) {
      if (result.highlight[lane * B + b] === 0) continue;
      const bx0 = bx0s[b];
      const bx1 = bx1s[b];
      if (bx1 < LABEL_W || bx0 > f.width) continue;
      ctx.fillRect(Math.max(LABEL_W, bx0), top, Math.max(2, bx1 - bx0), LANE_H - 4);
    }
  }
}

/**
 * Between two segments: the panel's background over the lanes, crossed by two slanted strokes
 * (the break of an axis that skips unrelated time).
 */
function drawBreaks(ctx: CanvasRenderingContext2D, f: TimelineFrame, x: d3.ScaleLinear<number, number>, plotBottom: number, panel: string, muted: string) {
  const parts = f.axis.parts;
  for (let i = 1; i < parts.length; i++) {
    const x0 = Math.max(LABEL_W, x(parts[i - 1].t1));
    const x1 = Math.min(f.width, x(parts[i].t0));
    if (x1 <= LABEL_W || x0 >= f.width || x1 - x0 < 1) continue;
    ctx.fillStyle = panel;
    ctx.fillRect(x0, 0, x1 - x0, plotBottom + 2);
    const mid = (x0 + x1) / 2;
    const lean = Math.min(5, (x1 - x0) / 3);
    ctx.strokeStyle = muted;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    for (const dx of [-2.5, 2.5]) {
      ctx.moveTo(mid + dx - lean, plotBottom);
      ctx.lineTo(mid + dx + lean, 0);
    }
    ctx.stroke();
    ctx.lineWidth = 1;
  }
}

/** Each visible segment's own time axis: ticks from a linear scale over its visible part. */
function drawRuler(ctx: CanvasRenderingContext2D, f: TimelineFrame, muted: string, line: string) {
  ctx.strokeStyle = line;
  ctx.beginPath();
  ctx.moveTo(0, RULER_H + 0.5);
  ctx.lineTo(f.width, RULER_H + 0.5);
  ctx.stroke();
  ctx.fillStyle = muted;
  ctx.textBaseline = 'top';
  for (const p of f.axis.visible(f.window, f.width)) {
    const px = d3.scaleLinear().domain([p.t0, p.t1]).range([p.x0, p.x1]);
    const room = p.x1 - p.x0;
    if (room < 12) continue;
    // as many ticks as their labels leave room for (ftrace timestamps run to 7 digits before the point)
    let n = Math.max(2, Math.floor(room / 90));
    let ticks = px.ticks(n);
    let fmt = px.tickFormat(n, '.9~f');
    for (let tries = 0; tries < 4 && ticks.length > 1; tries++) {
      const widest = Math.max(...ticks.map((t) => ctx.measureText(fmt(t)).width));
      const needed = (widest + 18) * ticks.length;
      if (needed <= room) break;
      n = Math.max(1, Math.floor((n * room) / needed));
      ticks = px.ticks(n);
      fmt = px.tickFormat(n, '.9~f');
    }
    for (const t of ticks) {
      const tx = Math.round(px(t)) + 0.5;
      ctx.fillRect(tx, RULER_H - 5, 1, 5);
      const label = fmt(t);
      // a label stays inside its own segment
      if (tx + 3 + ctx.measureText(label).width <= Math.min(f.width, p.x1 + 2)) ctx.fillText(label, tx + 3, 2);
    }
  }
  ctx.textBaseline = 'middle';
  ctx.fillText('time (s)', 6, 8);
}

export function withAlpha(color: string, alpha: number): string {
  const c = d3.color(color);
  if (!c) return color;
  c.opacity = alpha;
  return c.formatRgb();
}

export function clip(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(text.slice(0, mid) + '…').width <= width) lo = mid;
    else hi = mid - 1;
  }
  return lo > 0 ? text.slice(0, lo) + '…' : '';
}
