import * as d3 from 'd3';
import { TIMELINE_STATUSES } from '../../core/query/api.ts';

/**
 * Stack record status -> colour, index as in the timeline's counts (trace-columns STATUS_NAMES,
 * then 8: an event without a stack record). Chosen to read on light and dark backgrounds.
 */
export const STATUS_COLORS: readonly string[] = [
  '#3b9c5a', // resolved
  '#8e7cc3', // no-dump
  '#e0483e', // no-slot
  '#d9a21b', // unverified
  '#c2479b', // ambiguous
  '#f07c27', // full: fallback, stack written in full
  '#3aa5b8', // user
  '#7a1f1a', // contradicted: a v7 id its event's own fields contradict
  '#9aa0a8', // no stack record
];
export const STATUS_LABELS: readonly string[] = [
  'resolved',
  'no dump',
  'no slot',
  'unverified (v7)',
  'ambiguous',
  'fallback: full stack',
  'user stack',
  'contradicted (v7)',
  'no stack record',
];
if (STATUS_COLORS.length !== TIMELINE_STATUSES) throw new Error('one colour per timeline status');

export const statusColor = d3.scaleOrdinal<string, string>().domain(STATUS_LABELS).range(STATUS_COLORS);

/** The flame colours: a name hashes to one of STEPS points between two warm colours, made once per theme. */
const STEPS = 1000;
const warm: Record<'light' | 'dark', (string | undefined)[]> = { light: [], dark: [] };

/** Stable warm colour per function name, as flame graphs do; hashed so it stays put across views. */
export function frameColor(name: string, dark: boolean): string {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  const step = (h >>> 0) % STEPS;
  const made = warm[dark ? 'dark' : 'light'];
  return (made[step] ??= warmColor(step / STEPS, dark));
}

function warmColor(u: number, dark: boolean): string {
  const c = d3.hsl(d3.interpolateRgb('#f5b041', '#e4572e')(u));
  if (dark) {
    c.l *= 0.72;
    c.s *= 0.85;
  }
  return c.formatHex();
}
