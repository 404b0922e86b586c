import { diffColor, diffRatio, type DiffDraw } from './diff-color.ts';
import { layoutFlame } from '../query/flame-layout.ts';
import type { FlameMode, FlameResult, FlameTree } from '../query/api.ts';

export interface SvgOptions {
  width?: number;
  title?: string;
  mode?: FlameMode;
  /** a differential (the tree's `other` set): coloured by the change, as the page draws it */
  diff?: DiffDraw | null;
}

const ROW = 17;
const CHAR = 7;
const PAD = 6;
const HEAD = 28;

/** Text for XML content and attributes: markup escaped, characters XML 1.0 forbids dropped. */
export function xmlEscape(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** A warm flame-graph colour, stable per name. */
function color(name: string, highlighted: boolean): string {
  if (highlighted) return 'rgb(80,140,230)';
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (Math.imul(h, 31) + name.charCodeAt(i)) | 0;
  const u = (h >>> 0) / 4294967296;
  const v = ((h >>> 8) & 0xff) / 255;
  return `rgb(${205 + Math.round(50 * v)},${Math.round(80 + 150 * u)},${Math.round(40 * v)})`;
}

const fmt = (x: number) => (Math.round(x * 100) / 100).toString();

/** One tree's rectangles, rows at y0 + row(depth) * ROW. */
function drawTree(tree: FlameTree, width: number, y0: number, row: (depth: number) => number, out: string[], diff: DiffDraw | null = null): void {
  const lay = layoutFlame(tree);
  const total = tree.value.length ? tree.value[0] : 0;
  const hl = new Set(tree.highlight);
  const inner = width - 2 * 10;
  for (let i = 0; i < tree.value.length; i++) {
    const w = (lay.x1[i] - lay.x0[i]) * inner;
    if (w < 0.1) continue;
    const x = 10 + lay.x0[i] * inner;
    const y = y0 + row(lay.depth[i]) * ROW;
    const name = tree.names[tree.name[i]];
    const pct = total > 0 ? (100 * tree.value[i]) / total : 0;
    const other = tree.other ? tree.other[i] : null;
    const [b, a] = diff?.widths === 'before' ? [tree.value[i], other] : [other, tree.value[i]];
    const tip = other === null ? `${name} (${tree.value[i]}, ${pct.toFixed(2)}%)` : `${name} (before ${b}, after ${a})`;
    const fill = other === null ? color(name, hl.has(i)) : diffColor(diffRatio(tree, i, diff));
    let g = `<g><title>${xmlEscape(tip)}</title><rect x="${fmt(x)}" y="${y}" width="${fmt(w)}" height="${ROW - 1}" rx="2" fill="${fill}"/>`;
    const chars = Math.floor((w - PAD) / CHAR);
    if (chars >= 3) {
      const label = name.length <= chars ? name : name.slice(0, chars - 2) + '..';
      g += `<text x="${fmt(x + 3)}" y="${y + ROW - 5}">${xmlEscape(label)}</text>`;
    }
    out.push(g + '</g>');
  }
}

function rowsOf(t: FlameTree): number {
  let rows = 0;
  for (let i = 0; i < t.depth.length; i++) if (t.depth[i] + 1 > rows) rows = t.depth[i] + 1;
  return rows;
}

/**
 * The flame graph as a standalone SVG document: a rectangle per node with a <title> tooltip
 * (name, weight, share) and a clipped label, all text escaped. Top-down and bottom-up are
 * drawn root at the top (icicle); sandwich draws the callers above the focus (growing up) and
 * the callees below it.
 */
export function flameSvg(r: FlameResult, opts: SvgOptions = {}): string {
  const width = Math.max(200, Math.round(opts.width ?? 1200));
  const body: string[] = [];
  let height = HEAD;
  if (r.callers) {
    const cr = rowsOf(r.callers);
    drawTree(r.callers, width, height, (dep) => cr - 1 - dep, body);
    height += cr * ROW + 4;
  }
  const tr = rowsOf(r.tree);
  drawTree(r.tree, width, height, (dep) => dep, body, opts.diff ?? null);
  height += tr * ROW + 10;
  const title = xmlEscape(opts.title ?? 'flame graph');
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' +
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Verdana, sans-serif" font-size="11">\n` +
    `<title>${title}</title>\n` +
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>\n` +
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14">${title}</text>\n` +
    body.join('\n') +
    (body.length ? '\n' : '') +
    '</svg>\n'
  );
}
