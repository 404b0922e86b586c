import type { FlameTree } from '../../core/model/query-types.ts';
import type { FlameLayout } from '../../state/flame.ts';
import { frameColor } from '../common/colors.ts';
import { cssVar } from '../common/useCanvas.ts';
import { clip, withAlpha } from '../timeline/draw.ts';

export const ROW_H = 18;

export interface FlameView {
  tree: FlameTree;
  layout: FlameLayout;
  width: number;
  height: number;
  /** the node zoomed into, -1 for none */
  zoom: number;
  /** rows grow upwards (callers above a sandwich's function) */
  inverted: boolean;
  /** nodes on the selected stack's path */
  highlight: Set<number>;
  /** per node: matches the search; null without a search */
  match: Uint8Array | null;
  hover: number;
  dark: boolean;
}

/** The visible window of the tree, as shares of its total. */
function span(v: FlameView): [number, number] {
  if (v.zoom < 0) return [0, 1];
  return [v.layout.x0[v.zoom], v.layout.x1[v.zoom]];
}

/** Rectangle of node i in CSS pixels, null when outside the view or narrower than a pixel's fraction. */
export function rectOf(v: FlameView, i: number): { x: number; y: number; w: number } | null {
  const t = v.tree;
  const [a, b] = span(v);
  let x: number;
  let w: number;
  if (v.zoom >= 0 && t.depth[i] < t.depth[v.zoom]) {
    // an ancestor of the zoomed node: drawn across
    x = 0;
    w = v.width;
  } else {
    const s = v.layout.x0[i];
    const e = v.layout.x1[i];
    if (e <= a + 1e-12 || s >= b - 1e-12) return null;
    x = ((s - a) / (b - a)) * v.width;
    w = ((e - s) / (b - a)) * v.width;
  }
  const row = t.depth[i];
  const y = v.inverted ? v.height - (row + 1) * ROW_H : row * ROW_H;
  return { x, y, w };
}

/** Nodes that can be on screen: ancestors of the zoomed node, then its subtree. */
export function* visibleNodes(v: FlameView): Generator<number> {
  const t = v.tree;
  if (v.zoom < 0) {
    for (let i = 0; i < t.parent.length; i++) yield i;
    return;
  }
  for (let n = t.parent[v.zoom]; n >= 0; n = t.parent[n]) yield n;
  yield v.zoom;
  for (let i = v.zoom + 1; i < t.parent.length && t.depth[i] > t.depth[v.zoom]; i++) yield i;
}

/** Draws the view; returns how many rectangles it drew. */
export function drawFlame(ctx: CanvasRenderingContext2D, v: FlameView): number {
  const panel = cssVar('--panel');
  const accent = cssVar('--accent');
  const fg = cssVar('--fg');
  ctx.clearRect(0, 0, v.width, v.height);
  ctx.fillStyle = panel;
  ctx.fillRect(0, 0, v.width, v.height);
  ctx.font = '11px ui-monospace, SFMono-Regular, Menlo, monospace';
  ctx.textBaseline = 'middle';
  const t = v.tree;
  const text = v.dark ? '#f3f3f3' : '#1d1f23';
  let drawn = 0;
  for (const i of visibleNodes(v)) {
    const r = rectOf(v, i);
    if (!r || r.w < 0.4) continue;
    drawn++;
    const name = t.names[t.name[i]];
    const zoomedAbove = v.zoom >= 0 && t.depth[i] < t.depth[v.zoom];
    let fill = frameColor(name, v.dark);
    if (v.match && !v.match[i]) fill = withAlpha(fill, 0.25);
    if (v.highlight.size && !v.highlight.has(i)) fill = withAlpha(fill, v.match ? 0.25 : 0.55);
    if (zoomedAbove) fill = withAlpha(fill, 0.45);
    ctx.fillStyle = fill;
    ctx.fillRect(r.x, r.y + 1, Math.max(0.5, r.w - (r.w > 3 ? 1 : 0)), ROW_H - 2);
    if (v.highlight.has(i)) {
      ctx.strokeStyle = accent;
      ctx.lineWidth = 2;
      ctx.strokeRect(r.x + 1, r.y + 2, Math.max(1, r.w - 3), ROW_H - 4);
    }
    if (i === v.hover) {
      ctx.strokeStyle = fg;
      ctx.lineWidth = 1;
      ctx.strokeRect(r.x + 0.5, r.y + 1.5, Math.max(1, r.w - 2), ROW_H - 3);
    }
    if (r.w > 28) {
      ctx.fillStyle = text;
      ctx.fillText(clip(ctx, name, r.w - 8), r.x + 4, r.y + ROW_H / 2);
    }
  }
  return drawn;
}

export function nodeAt(v: FlameView, x: number, y: number): number {
  for (const i of visibleNodes(v)) {
    const r = rectOf(v, i);
    if (r && x >= r.x && x < r.x + Math.max(r.w, 1) && y >= r.y && y < r.y + ROW_H) return i;
  }
  return -1;
}
