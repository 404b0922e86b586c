import * as d3 from 'd3';
import type { Overview, TimelineRequest, TimelineResult } from '../../core/model/query-types.ts';
import { TIMELINE_STATUSES } from '../../core/model/query-types.ts';
import { STATUS_COLORS } from '../common/colors.ts';
import { cssVar } from '../common/useCanvas.ts';
import { LABEL_W, laneHeight, RULER_H, timeScale } from './geometry.ts';

export interface TimelineFrame {
  width: number;
  height: number;
  window: [number, number];
  overview: Overview;
  /** the last answer and the request it answers (its window may lag the current one while zooming) */
  data: { req: TimelineRequest; result: TimelineResult } | null;
  range: [number, number] | null;
  /** a brush being dragged, in trace seconds */
  brushing: [number, number] | null;
  generation: number | 'none' | null;
}

/** Draws the whole timeline: generation bands, lanes of events by status, highlights, resets, lost events, ruler, brush. */
export function drawTimeline(ctx: CanvasRenderingContext2D, f: TimelineFrame) {
  const fg = cssVar('--fg');
  const muted = cssVar('--muted');
  const line = cssVar('--line');
  const panel = cssVar('--panel');
  const accent = cssVar('--accent');
  const bad = cssVar('--bad');
  const x = timeScale(f.window, f.width);
  const lanes = f.data?.result.lanes ?? [];
  const LANE_H = laneHeight(lanes.length);
  const plotBottom = RULER_H + Math.max(1, lanes.length) * LANE_H;
  ctx.clearRect(0, 0, f.width, f.height);
  ctx.fillStyle = panel;
  ctx.fillRect(0, 0, f.width, f.height);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';

  // generation bands, alternately shaded, labelled in the ruler
  f.overview.generations.forEach((g, i) => {
    if (!(g.firstTs <= g.lastTs)) return;
    const x0 = Math.max(LABEL_W, x(g.firstTs));
    const x1 = Math.min(f.width, Math.max(x(g.lastTs), x0 + 1));
    if (x1 < LABEL_W || x0 > f.width) return;
    const chosen = f.generation !== null && f.generation === g.generation;
    ctx.fillStyle = chosen ? withAlpha(accent, 0.14) : i % 2 ? withAlpha(muted, 0.1) : withAlpha(muted, 0.03);
    ctx.fillRect(x0, RULER_H, x1 - x0, plotBottom - RULER_H);
    ctx.fillStyle = chosen ? accent : muted;
    const label = g.generation === 'none' ? 'no gen' : `gen ${g.generation}`;
    if (x1 - x0 > ctx.measureText(label).width + 6) ctx.fillText(label, x0 + 3, RULER_H - 9);
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

  drawRuler(ctx, f, x, muted, line);

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
    if (x1 > x0) ctx.strokeRect(x0, RULER_H + 0.5, x1 - x0, plotBottom - RULER_H - 1);
    ctx.fillStyle = withAlpha(accent, 0.18);
    if (x1 > x0) ctx.fillRect(x0, 0, x1 - x0, RULER_H);
  }
}

function drawBars(ctx: CanvasRenderingContext2D, f: TimelineFrame, x: d3.ScaleLinear<number, number>, accent: string) {
  const { req, result } = f.data!;
  const B = result.buckets;
  const LANE_H = laneHeight(result.lanes.length);
  const dt = (req.t1 - req.t0) / B;
  let max = 1;
  const totals = new Uint32Array(result.lanes.length * B);
  for (let i = 0; i < totals.length; i++) {
    let n = 0;
    for (let s = 0; s < TIMELINE_STATUSES; s++) n += result.counts[i * TIMELINE_STATUSES + s];
    totals[i] = n;
    if (n > max) max = n;
  }
  // sqrt: a lone event stays visible beside a busy burst
  const h = d3.scaleSqrt().domain([0, max]).range([0, LANE_H - 4]);
  const highlighting = req.highlightStack !== null;
  ctx.globalAlpha = highlighting ? 0.35 : 1;
  for (let lane = 0; lane < result.lanes.length; lane++) {
    const base = RULER_H + (lane + 1) * LANE_H - 1;
    for (let b = 0; b < B; b++) {
      const total = totals[lane * B + b];
      if (total === 0) continue;
      const bx0 = x(req.t0 + b * dt);
      const bx1 = x(req.t0 + (b + 1) * dt);
      if (bx1 < LABEL_W || bx0 > f.width) continue;
      const w = Math.max(1, bx1 - bx0);
      const height = Math.max(2, h(total));
      let y = base;
      for (let s = 0; s < TIMELINE_STATUSES; s++) {
        const n = result.counts[(lane * B + b) * TIMELINE_STATUSES + s];
        if (n === 0) continue;
        const sh = (height * n) / total;
        ctx.fillStyle = STATUS_COLORS[s];
        ctx.fillRect(Math.max(LABEL_W, bx0), y - sh, w, sh);
        y -= sh;
      }
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
      const bx0 = x(req.t0 + b * dt);
      const bx1 = x(req.t0 + (b + 1) * dt);
      if (bx1 < LABEL_W || bx0 > f.width) continue;
      ctx.fillRect(Math.max(LABEL_W, bx0), top, Math.max(2, bx1 - bx0), LANE_H - 4);
    }
  }
}

function drawRuler(ctx: CanvasRenderingContext2D, f: TimelineFrame, x: d3.ScaleLinear<number, number>, muted: string, line: string) {
  ctx.strokeStyle = line;
  ctx.beginPath();
  ctx.moveTo(0, RULER_H + 0.5);
  ctx.lineTo(f.width, RULER_H + 0.5);
  ctx.stroke();
  const ticks = x.ticks(Math.max(2, Math.floor((f.width - LABEL_W) / 110)));
  const fmt = x.tickFormat(ticks.length, '.9~f');
  ctx.fillStyle = muted;
  ctx.textBaseline = 'top';
  for (const t of ticks) {
    const tx = Math.round(x(t)) + 0.5;
    ctx.fillRect(tx, RULER_H - 5, 1, 5);
    const label = fmt(t);
    if (tx + 3 + ctx.measureText(label).width <= f.width) ctx.fillText(label, tx + 3, 2);
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
