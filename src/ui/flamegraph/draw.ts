import type { FlameTree } from '../../core/query/api.ts';
import type { VisibleFlame } from '../../state/view/flame.ts';
import { frameColor } from '../common/colors.ts';
import { diffColor, diffRatio, type DiffDraw } from '../../core/export/diff-color.ts';
import { cssVar } from '../common/useCanvas.ts';
import { clip, withAlpha } from '../timeline/draw.ts';

export const ROW_H = 18;

/** the opacities a node is drawn at: plain, off the search, off the selected path (no search), above the zoom */
const ALPHAS = [1, 0.25, 0.55, 0.45] as const;

/**
 * Fill colours of a tree's functions (by name index), one list per opacity, made on first use
 * and kept for the tree and theme: a draw looks them up instead of parsing colours per node.
 */
export class FlamePalette {
  private readonly fills: (string | undefined)[][] = ALPHAS.map(() => []);
  constructor(
    private readonly names: readonly string[],
    readonly dark: boolean,
  ) {}
  /** alpha: index into ALPHAS */
  fill(name: number, alpha: number): string {
    const list = this.fills[alpha];
    let c = list[name];
    if (c === undefined) {
      const base = this.fills[0][name] ?? (this.fills[0][name] = frameColor(this.names[name], this.dark));
      c = alpha === 0 ? base : withAlpha(base, ALPHAS[alpha]);
      list[name] = c;
    }
    return c;
  }
}

export interface FlameView {
  tree: FlameTree;
  /** what is drawn: the nodes wide enough and one "..." per parent for the rest (core/query/flame-layout.ts) */
  visible: VisibleFlame;
  palette: FlamePalette;
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
  /** a differential (tree.other present): whether the baseline is scaled to this capture's total, and whose widths are drawn */
  diff?: DiffDraw | null;
}

/** A differential node's colour (core/export/diff.ts: red grew, blue shrank). */
export const diffFill = (v: FlameView, i: number): string => diffColor(diffRatio(v.tree, i, v.diff ?? null), v.dark);

const rowY = (v: FlameView, row: number) => (v.inverted ? v.height - (row + 1) * ROW_H : row * ROW_H);

/** Rectangle of the k-th drawn node in CSS pixels. */
function rectAt(v: FlameView, k: number): { x: number; y: number; w: number } {
  const x = v.visible.x0[k] * v.width;
  return { x, y: rowY(v, v.tree.depth[v.visible.nodes[k]]), w: v.visible.x1[k] * v.width - x };
}

/** Draws the view; returns how many rectangles it drew ("..." ones included). */
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
  // a differential's fills are light in either theme
  const text = v.dark && !t.other ? '#f3f3f3' : '#1d1f23';
  const zoomDepth = v.zoom >= 0 ? t.depth[v.zoom] : -1;
  const { nodes } = v.visible;
  let drawn = 0;
  for (let k = 0; k < nodes.length; k++) {
    const i = nodes[k];
    const r = rectAt(v, k);
    if (r.w < 0.4) continue;
    drawn++;
    const name = t.names[t.name[i]];
    const zoomedAbove = t.depth[i] < zoomDepth;
    // the last opacity applied wins, as withAlpha sets it
    let alpha = 0;
    if (v.match && !v.match[i]) alpha = 1;
    if (v.highlight.size && !v.highlight.has(i)) alpha = v.match ? 1 : 2;
    if (zoomedAbove) alpha = 3;
    ctx.fillStyle = t.other ? (alpha === 0 ? diffFill(v, i) : withAlpha(diffFill(v, i), ALPHAS[alpha])) : v.palette.fill(t.name[i], alpha);
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
  drawn += drawMore(ctx, v);
  return drawn;
}

/** The "..." spans: a quiet grey block per parent, labelled with how many callees it stands for when there is room. */
function drawMore(ctx: CanvasRenderingContext2D, v: FlameView): number {
  const m = v.visible;
  const fill = v.dark ? 'rgba(154, 160, 168, 0.28)' : 'rgba(102, 107, 115, 0.18)';
  const label = v.dark ? '#9aa0a8' : '#666b73';
  let drawn = 0;
  for (let k = 0; k < m.moreParent.length; k++) {
    const x = m.moreX0[k] * v.width;
    const w = m.moreX1[k] * v.width - x;
    if (w < 0.4) continue;
    drawn++;
    const y = rowY(v, v.tree.depth[m.moreParent[k]] + 1);
    ctx.fillStyle = fill;
    ctx.fillRect(x, y + 1, Math.max(0.5, w - (w > 3 ? 1 : 0)), ROW_H - 2);
    // the whole label or a bare "…": a clipped one would read "… 4…"
    const full = `… ${m.moreCount[k]} more`;
    const text = ctx.measureText(full).width <= w - 6 ? full : w > 12 ? '…' : '';
    if (text) {
      ctx.fillStyle = label;
      ctx.fillText(text, x + 3, y + ROW_H / 2);
    }
  }
  return drawn;
}

/** The drawn node under (x, y) in CSS pixels, or -1 (a "..." span is no node). */
export function nodeAt(v: FlameView, x: number, y: number): number {
  const { nodes } = v.visible;
  for (let k = 0; k < nodes.length; k++) {
    const r = rectAt(v, k);
    if (r.w >= 0.4 && x >= r.x && x < r.x + Math.max(r.w, 1) && y >= r.y && y < r.y + ROW_H) return nodes[k];
  }
  return -1;
}
