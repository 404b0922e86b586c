import * as d3 from 'd3';

export const fmtInt = d3.format(',d');
export const fmtPct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(x < 0.001 && x > 0 ? 2 : 1)}%` : '–');
export const fmtBytes = (n: number) =>
  n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(2)} MB` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} kB` : `${Math.round(n)} B`;
/** trace seconds as ftrace prints them */
export const fmtTs = (t: number) => (Number.isFinite(t) ? t.toFixed(6) : '–');
/** a duration in the largest unit that keeps it readable */
export function fmtDuration(s: number): string {
  const a = Math.abs(s);
  if (a >= 1) return `${s.toFixed(3)} s`;
  if (a >= 1e-3) return `${(s * 1e3).toFixed(2)} ms`;
  if (a >= 1e-6) return `${(s * 1e6).toFixed(1)} µs`;
  return `${(s * 1e9).toFixed(0)} ns`;
}
export const genLabel = (g: number | 'none' | null) => (g === null ? 'all generations' : g === 'none' ? 'no generation (v7 ids)' : `generation ${g}`);
