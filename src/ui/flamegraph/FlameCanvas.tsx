import { useEffect, useMemo, useRef, useState, type MouseEvent } from 'react';
import type { FlameTree } from '../../core/query/api.ts';
import type { NodeFrames } from '../../core/query/flame-frames.ts';
import { useResolvedTheme } from '../../state/view/theme.ts';
import { fmtInt, fmtPct } from '../common/format.ts';
import { useCanvas } from '../common/useCanvas.ts';
import { flameNodeMenu } from '../menu/actions.ts';
import { useMenuStore, type MenuItem } from '../menu/menu-store.ts';
import { useContextMenu } from '../menu/useContextMenu.ts';
import { drawFlame, FlamePalette, nodeAt, ROW_H, type FlameView } from './draw.ts';
import { subtreeEnds, visibleFlame } from '../../state/view/flame.ts';
import { pathTo } from './layout.ts';

interface Props {
  tree: FlameTree;
  /** the frames merged into each node (the worker's flameFrames, asked after the paint); null until they come */
  frames: NodeFrames | null;
  zoom: number;
  /** what the tree is: its root, and which way its paths run (callers: rows grow upwards) */
  kind: 'top-down' | 'bottom-up' | 'callees' | 'callers';
  match: Uint8Array | null;
  weightLabel: string;
  onZoom(node: number): void;
  testId?: string;
  /** what a click does, for the tooltip */
  clickHint?: string;
  /** a differential against the baseline (tree.other set): normalised or not, whose widths */
  diff?: { normalize: boolean; widths: 'after' | 'before' } | null;
}

/** how many of a node's frames (sym+0xoff) the tooltip lists */
const TIP_FRAMES = 4;

/** The frames merged into node i, heaviest first: [frame, weight]. */
export function nodeFrames(f: NodeFrames | null, i: number): [string, number][] {
  const out: [string, number][] = [];
  if (!f || i + 1 >= f.frameStart.length) return out;
  for (let j = f.frameStart[i]; j < f.frameStart[i + 1]; j++) out.push([f.frameNames[f.frameOf[j]], f.frameValue[j]]);
  return out;
}

/**
 * One call tree as an icicle on a canvas (devicePixelRatio aware): hover for the node's numbers
 * and frames, click or double-click to zoom to fit, right-click or long-press for its menu.
 */
export function FlameCanvas({ tree, frames, zoom, kind, match, weightLabel, onZoom, testId, clickHint = 'click to zoom', diff = null }: Props) {
  const inverted = kind === 'callers';
  const ends = useMemo(() => subtreeEnds(tree), [tree]);
  const rows = useMemo(() => {
    let deepest = -1;
    for (let i = 0; i < tree.depth.length; i++) if (tree.depth[i] > deepest) deepest = tree.depth[i];
    return deepest + 1;
  }, [tree]);
  const { ref, size, context } = useCanvas(Math.max(1, rows) * ROW_H);
  const dark = useResolvedTheme() === 'dark';
  const highlight = useMemo(() => new Set(tree.highlight), [tree]);
  const palette = useMemo(() => new FlamePalette(tree.names, dark), [tree, dark]);
  // laid out for this width only: nodes under a pixel wide go into their parent's "..."
  const visible = useMemo(() => visibleFlame(tree, ends, zoom, size.width > 0 ? 1 / size.width : 1), [tree, ends, zoom, size.width]);
  const [hover, setHover] = useState<{ node: number; x: number; y: number } | null>(null);
  const hoverNode = hover?.node ?? -1;
  const view: FlameView = { tree, visible, palette, width: size.width, height: size.height, zoom, inverted, highlight, match, hover: hoverNode, dark, diff };
  const viewRef = useRef(view);
  viewRef.current = view;
  const wrapRef = useRef<HTMLDivElement>(null);
  const paints = useRef(0);

  // drawn in the next frame: a theme switch puts its colours on <html> in the app's effect,
  // which runs after this one, and the drawing reads them. Only when what it shows changed: a
  // render for another reason (the pointer moving within a node, a parent's) draws nothing.
  useEffect(() => {
    const frame = requestAnimationFrame(() => {
      const ctx = context();
      if (!ctx) return;
      const drawn = drawFlame(ctx, viewRef.current);
      // the paint signal the benchmarks wait for: attributes on the wrapper and a performance mark
      paints.current++;
      const wrap = wrapRef.current;
      if (wrap) {
        wrap.setAttribute('data-paint-count', String(paints.current));
        wrap.setAttribute('data-painted-nodes', String(drawn));
      }
      performance.mark('smx:flame-painted');
    });
    return () => cancelAnimationFrame(frame);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [visible, palette, size, zoom, inverted, highlight, match, hoverNode, dark, diff?.normalize, diff?.widths]);

  const nodeAtClient = (x: number, y: number) => {
    const c = ref.current;
    if (!c) return -1;
    const r = c.getBoundingClientRect();
    return nodeAt(viewRef.current, x - r.left, y - r.top);
  };
  // a node's menu: its "Copy frame" waits for the frames when they are still on their way
  const menuAt = useRef<{ n: number; x: number; y: number; items: MenuItem[] } | null>(null);
  const showMenu = (n: number, x: number, y: number) => {
    const name = tree.names[tree.name[n]];
    // top-down and bottom-up have a synthetic root ("all"); a sandwich's root is its function
    const synthetic = kind === 'top-down' || kind === 'bottom-up';
    const fromRoot = pathTo(tree, n)
      .slice(synthetic ? 1 : 0)
      .map((i) => tree.names[tree.name[i]]);
    // as the stack runs: outermost caller first
    const rootFirst = kind === 'bottom-up' || kind === 'callers' ? fromRoot.reverse() : fromRoot;
    const items = flameNodeMenu({
      name,
      frames: frames ? nodeFrames(frames, n).map(([f]) => f) : null,
      path: rootFirst,
      real: !(synthetic && n === 0),
      zoom: () => onZoom(n),
    });
    menuAt.current = frames ? null : { n, x, y, items };
    useMenuStore.getState().show(x, y, name, items);
  };
  useEffect(() => {
    const m = menuAt.current;
    if (!frames || !m) return;
    menuAt.current = null;
    // still open as it was shown: shown again with its frames
    if (useMenuStore.getState().open?.items === m.items) showMenu(m.n, m.x, m.y);
  }, [frames]);
  const menu = useContextMenu<HTMLCanvasElement>((x, y) => {
    const n = nodeAtClient(x, y);
    if (n < 0) return;
    setHover(null);
    showMenu(n, x, y);
  });

  const local = (e: MouseEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };
  const node = hover?.node ?? -1;
  const parent = node >= 0 ? tree.parent[node] : -1;
  const nodeList = node >= 0 ? nodeFrames(frames, node) : [];
  return (
    <div
      ref={wrapRef}
      className="canvas-wrap flame-canvas"
      data-testid={testId}
      data-nodes={tree.parent.length}
      data-total={tree.total}
      data-root-children={rootChildren(tree)}
      data-highlight-nodes={tree.highlight.length}
    >
      <canvas
        ref={ref}
        {...menu}
        onKeyDown={undefined}
        onPointerMove={(e) => {
          menu.onPointerMove(e);
          const p = local(e);
          const n = nodeAt(view, p.x, p.y);
          setHover(n >= 0 ? { node: n, ...p } : null);
        }}
        onPointerLeave={() => {
          menu.onPointerLeave();
          setHover(null);
        }}
        onClick={(e) => {
          const p = local(e);
          const n = nodeAt(view, p.x, p.y);
          if (n >= 0) onZoom(n);
        }}
        onDoubleClick={(e) => {
          const p = local(e);
          const n = nodeAt(view, p.x, p.y);
          if (n >= 0) onZoom(n);
        }}
      />
      {hover && node >= 0 && (
        <div
          className="tooltip"
          data-testid="flame-tooltip"
          style={{ left: hover.x > size.width - 340 ? Math.max(0, hover.x - 330) : hover.x + 14, top: hover.y + 14 }}
        >
          <div className="mono">
            <b>{tree.names[tree.name[node]]}</b>
          </div>
          <div>
            {fmtInt(tree.value[node])} {weightLabel} · {fmtPct(tree.value[node] / (tree.total || 1))} of all
            {parent >= 0 ? ` · ${fmtPct(tree.value[node] / (tree.value[parent] || 1))} of caller` : ''}
          </div>
          {tree.other && (
            <div data-testid="flame-tooltip-diff">
              {diff?.widths === 'before'
                ? `before ${fmtInt(tree.value[node])} · after ${fmtInt(tree.other[node])}`
                : `before ${fmtInt(tree.other[node])} · after ${fmtInt(tree.value[node])}`}
              {diff?.normalize ? ' (before not scaled here; the colour is)' : ''}
            </div>
          )}
          {nodeList.length > 0 && (
            <ul className="frames-preview">
              {nodeList.slice(0, TIP_FRAMES).map(([f, w]) => (
                <li key={f}>
                  {f} <span className="quiet">{fmtPct(w / (tree.value[node] || 1))}</span>
                </li>
              ))}
              {nodeList.length > TIP_FRAMES && <li className="quiet">… {fmtInt(nodeList.length - TIP_FRAMES)} more frames</li>}
            </ul>
          )}
          <div className="quiet">
            self {fmtInt(tree.self[node])} ({fmtPct(tree.self[node] / (tree.total || 1))}) · {clickHint} · right-click: menu
          </div>
        </div>
      )}
    </div>
  );
}

/** The root's children as `name=value` lines (at most 64, heaviest first), for tests and tools: what a grouped graph's groups hold. */
function rootChildren(t: FlameTree): string {
  const out: string[] = [];
  for (let i = 1; i < t.parent.length && out.length < 64; i++) if (t.parent[i] === 0) out.push(`${t.names[t.name[i]]}=${t.value[i]}`);
  return out.join('\n');
}
