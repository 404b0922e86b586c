import * as d3 from 'd3';
import type { WhatIfRow } from '../../core/whatif/whatif.ts';

const W = 460;
const H = 214;
const M = { top: 28, right: 56, bottom: 30, left: 48 };

/**
 * Gain (left axis, events a wrapped buffer keeps with the map / without: `steadyGain`, and the
 * capture's own `gain`) and the map's memory (right axis, MiB, log scale) against bits, for one mode.
 */
export function WhatIfPlot({ rows, recommended }: { rows: readonly WhatIfRow[]; recommended: number | null }) {
  if (rows.length === 0) return null;
  const x = d3
    .scalePoint<number>()
    .domain(rows.map((r) => r.bits))
    .range([M.left, W - M.right])
    .padding(0.3);
  const gainMax = Math.max(1.1, ...rows.map((r) => Math.max(r.steadyGain, r.gain))) * 1.08;
  const yGain = d3
    .scaleLinear()
    .domain([0, gainMax])
    .nice()
    .range([H - M.bottom, M.top]);
  const mem = rows.map((r) => r.mapBytes / 2 ** 20);
  const yMem = d3
    .scaleLog()
    .domain([Math.min(...mem) / 1.5, Math.max(...mem) * 1.5])
    .range([H - M.bottom, M.top]);
  const line = (f: (r: WhatIfRow) => number, y: (v: number) => number) =>
    d3
      .line<WhatIfRow>()
      .x((r) => x(r.bits)!)
      .y((r) => y(f(r)))(rows as WhatIfRow[]) ?? '';
  const gainTicks = yGain.ticks(4);
  const memTicks = [0.5, 2, 8, 32, 128].filter((t) => t >= yMem.domain()[0] && t <= yMem.domain()[1]);
  return (
    <svg
      className="whatif-plot"
      viewBox={`0 0 ${W} ${H}`}
      width="100%"
      style={{ maxWidth: W * 1.4 }}
      role="img"
      aria-label="gain and map memory against bits"
      data-testid="whatif-plot"
    >
      {gainTicks.map((t) => (
        <g key={`g${t}`}>
          <line x1={M.left} x2={W - M.right} y1={yGain(t)} y2={yGain(t)} stroke="var(--line)" />
          <text x={M.left - 6} y={yGain(t) + 4} textAnchor="end" fontSize={10} fill="var(--muted)">
            {t.toFixed(1)}×
          </text>
        </g>
      ))}
      {memTicks.map((t) => (
        <text key={`m${t}`} x={W - M.right + 6} y={yMem(t) + 4} fontSize={10} fill="var(--warn)">
          {t} MiB
        </text>
      ))}
      {rows.map((r) => (
        <text
          key={`x${r.bits}`}
          x={x(r.bits)}
          y={H - M.bottom + 14}
          textAnchor="middle"
          fontSize={10}
          fill={r.bits === recommended ? 'var(--accent)' : 'var(--muted)'}
          fontWeight={r.bits === recommended ? 700 : 400}
        >
          {r.bits}
        </text>
      ))}
      <text x={(M.left + W - M.right) / 2} y={H - 3} textAnchor="middle" fontSize={10} fill="var(--muted)">
        bits (2^bits elements)
      </text>
      {recommended !== null && x(recommended) !== undefined && (
        <line
          x1={x(recommended)}
          x2={x(recommended)}
          y1={M.top}
          y2={H - M.bottom}
          stroke="var(--accent)"
          strokeDasharray="3 3"
          data-testid="whatif-plot-recommended"
        />
      )}
      <path d={line((r) => r.mapBytes / 2 ** 20, yMem)} fill="none" stroke="var(--warn)" strokeWidth={1.5} strokeDasharray="5 3" />
      <path d={line((r) => r.steadyGain, yGain)} fill="none" stroke="var(--accent)" strokeWidth={2} />
      <path d={line((r) => r.gain, yGain)} fill="none" stroke="var(--ok)" strokeWidth={1.5} />
      {rows.map((r) => (
        <circle key={`c${r.bits}`} cx={x(r.bits)} cy={yGain(r.steadyGain)} r={3} fill="var(--accent)">
          <title>{`bits ${r.bits}: steady gain ${r.steadyGain.toFixed(2)}×, gain in this buffer ${r.gain.toFixed(2)}×, map ${(r.mapBytes / 2 ** 20).toFixed(1)} MiB`}</title>
        </circle>
      ))}
      <g fontSize={10} transform={`translate(${M.left}, 4)`}>
        <line x1={0} x2={14} y1={4} y2={4} stroke="var(--accent)" strokeWidth={2} />
        <text x={18} y={8} fill="var(--fg)">
          gain once wrapped
        </text>
        <line x1={122} x2={136} y1={4} y2={4} stroke="var(--ok)" strokeWidth={1.5} />
        <text x={140} y={8} fill="var(--fg)">
          gain in this buffer
        </text>
        <line x1={252} x2={266} y1={4} y2={4} stroke="var(--warn)" strokeWidth={1.5} strokeDasharray="5 3" />
        <text x={270} y={8} fill="var(--fg)">
          map memory
        </text>
      </g>
    </svg>
  );
}
