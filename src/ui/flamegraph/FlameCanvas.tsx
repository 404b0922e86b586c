import { useEffect, useMemo, useState, type MouseEvent } from 'react';
import type { FlameTree } from '../../core/model/query-types.ts';
import { useResolvedTheme } from '../../state/theme.ts';
import { fmtInt, fmtPct } from '../common/format.ts';
import { useCanvas } from '../common/useCanvas.ts';
import { drawFlame, nodeAt, ROW_H, type FlameView } from './draw.ts';
import { layoutFlame } from '../../state/flame.ts';

interface Props {
  tree: FlameTree;
  zoom: number;
  inverted?: boolean;
  match: Uint8Array | null;
  weightLabel: string;
  onZoom(node: number): void;
  testId?: string;
  /** what a click does, for the tooltip */
  clickHint?: string;
}

/** One call tree as an icicle on a canvas (devicePixelRatio aware), with hover and click to zoom. */
export function FlameCanvas({ tree, zoom, inverted = false, match, weightLabel, onZoom, testId, clickHint = 'click to zoom' }: Props) {
  const layout = useMemo(() => layoutFlame(tree), [tree]);
  const { ref, size, context } = useCanvas(Math.max(1, layout.rows) * ROW_H);
  const dark = useResolvedTheme() === 'dark';
  const highlight = useMemo(() => new Set(tree.highlight), [tree]);
  const [hover, setHover] = useState<{ node: number; x: number; y: number } | null>(null);
  const view: FlameView = { tree, layout, width: size.width, height: size.height, zoom, inverted, highlight, match, hover: hover?.node ?? -1, dark };

  useEffect(() => {
    const ctx = context();
    if (ctx) drawFlame(ctx, view);
  });

  const local = (e: MouseEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };
  const node = hover?.node ?? -1;
  const parent = node >= 0 ? tree.parent[node] : -1;
  return (
    <div className="canvas-wrap flame-canvas" data-testid={testId} data-nodes={tree.parent.length} data-highlight-nodes={tree.highlight.length}>
      <canvas
        ref={ref}
        onPointerMove={(e) => {
          const p = local(e);
          const n = nodeAt(view, p.x, p.y);
          setHover(n >= 0 ? { node: n, ...p } : null);
        }}
        onPointerLeave={() => setHover(null)}
        onClick={(e) => {
          const p = local(e);
          const n = nodeAt(view, p.x, p.y);
          if (n >= 0) onZoom(n);
        }}
      />
      {hover && node >= 0 && (
        <div className="tooltip" style={{ left: hover.x > size.width - 320 ? Math.max(0, hover.x - 310) : hover.x + 14, top: hover.y + 14 }}>
          <div className="mono">
            <b>{tree.names[tree.name[node]]}</b>
          </div>
          <div>
            {fmtInt(tree.value[node])} {weightLabel} · {fmtPct(tree.value[node] / (tree.total || 1))} of all
            {parent >= 0 ? ` · ${fmtPct(tree.value[node] / (tree.value[parent] || 1))} of caller` : ''}
          </div>
          <div className="quiet">
            self {fmtInt(tree.self[node])} ({fmtPct(tree.self[node] / (tree.total || 1))}) · {clickHint}
          </div>
        </div>
      )}
    </div>
  );
}
