import * as d3 from 'd3';

export const fmtInt = d3.format(',d');
export const fmtPct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(x < 0.001 && x > 0 ? 2 : 1)}%` : '–');
/** byte counts in decimal units (kB = 1,000 B): core/base/units.ts, shared with the what-if's words */
export { fmtBytes } from '../../core/base/units.ts';
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
