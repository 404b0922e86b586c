import * as d3 from 'd3';

/** A half-circle gauge (d3.arc): value of max, turning to the warning colour past `warnAt`. */
export function Gauge({ value, max, label, warnAt = 0.85 }: { value: number; max: number; label: string; warnAt?: number }) {
  const frac = max > 0 ? Math.min(1, value / max) : 0;
  const arc = d3
    .arc<{ start: number; end: number }>()
    .innerRadius(38)
    .outerRadius(52)
    .startAngle((d) => d.start)
    .endAngle((d) => d.end)
    .cornerRadius(2);
  const a0 = -Math.PI / 2;
  return (
    <svg className="gauge" viewBox="-60 -58 120 70" width={150} height={88} role="img" aria-label={`${label}: ${value} of ${max}`}>
      <path d={arc({ start: a0, end: Math.PI / 2 }) ?? ''} className="gauge-track" />
      <path d={arc({ start: a0, end: a0 + Math.PI * frac }) ?? ''} className={frac >= warnAt ? 'gauge-fill warn' : 'gauge-fill'} />
      <text y={-8} textAnchor="middle" className="gauge-value">
        {(100 * frac).toFixed(frac > 0 && frac < 0.01 ? 2 : 1)}%
      </text>
      <text y={8} textAnchor="middle" className="gauge-label">
        {label}
      </text>
    </svg>
  );
}
