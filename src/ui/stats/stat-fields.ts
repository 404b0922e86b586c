import type { ParsedStat } from '../../core/formats/types.ts';

/**
 * What the stat pane shows of a stack_map_stat, split in two: the fields the kernel printed, under
 * the kernel's own names, and what this explorer computes from them, apart and labelled so.
 *
 * The seeds: the v7 document's `stack_map_stat` prints `entries: E / C`, `table_size`,
 * `successes`, `drops` and `success_rate`; the v8 cover letter's "has one field per line, adds
 * generation and capacity, drops table_size and success_rate, and renames drops to fallbacks,
 * since those stacks are recorded in full, not lost". So a v8 file never shows a table size or a
 * success rate among the kernel's fields, and calls its counter `fallbacks`.
 */

/** one field as the kernel printed it */
export interface KernelField {
  /** the kernel's key, the label shown */
  key: string;
  value: string;
  /** a number to warn on (drops, fallbacks above 0) */
  warn?: boolean;
}

/** a figure this explorer computes from the file (not a field of it) */
export interface ComputedField {
  id: 'rate' | 'table';
  label: string;
  value: string;
  /** how it was computed, and why it is not the kernel's */
  how: string;
}

const int = (n: number) => n.toLocaleString('en-US');
const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(x < 0.001 && x > 0 ? 2 : 1)}%` : '–');

/** The keys this split knows; any other key of the file is shown as read, apart (StatDashboard). */
export const KNOWN_STAT_KEYS: ReadonlySet<string> = new Set([
  'entries',
  'capacity',
  'table_size',
  'successes',
  'drops',
  'fallbacks',
  'success_rate',
  'generation',
]);

/** The kernel's fields in the order it printed them (the known keys only), as read. */
export function kernelFields(stat: ParsedStat): KernelField[] {
  const out: KernelField[] = [];
  // the last value of a key is the one used (the reader's rule); keep the key where it first appeared
  const last = new Map(stat.values);
  for (const [key] of stat.values) {
    if (!KNOWN_STAT_KEYS.has(key) || out.some((f) => f.key === key)) continue;
    const value = last.get(key)!;
    const warn = (key === 'drops' || key === 'fallbacks') && stat.drops !== null && stat.drops > 0;
    out.push({ key, value, ...(warn ? { warn } : {}) });
  }
  return out;
}

/**
 * What the explorer computes where the kernel printed nothing: v8's success share and table size
 * (the letter dropped both fields), and a v7 file's when it lacks the field (the reader accepts one
 * without `success_rate`). Empty for a v7 file that printed both.
 */
export function computedFields(stat: ParsedStat): ComputedField[] {
  if (stat.uninitialized) return [];
  const out: ComputedField[] = [];
  const counter = stat.version === 'v8' ? 'fallbacks' : 'drops';
  if (stat.successRate === null && stat.successes !== null && stat.drops !== null) {
    const attempts = stat.successes + stat.drops;
    out.push({
      id: 'rate',
      label: stat.version === 'v8' ? 'stored as a cookie' : 'success rate',
      value: pct(attempts ? stat.successes / attempts : NaN),
      how:
        `successes / (successes + ${counter}) = ${int(stat.successes)} / ${int(attempts)}, the v7 document's success_rate formula` +
        (stat.version === 'v8'
          ? '; v8 prints no success_rate (the v8 cover letter dropped it): its fallbacks are recorded in full, not lost'
          : '; this file prints no success_rate'),
    });
  }
  if (stat.tableSize === null && stat.capacity !== null) {
    out.push({
      id: 'table',
      label: 'hash table',
      value: `${int(2 * stat.capacity)} slots`,
      how:
        `2 × capacity ${int(stat.capacity)}, as the v7 document's "2x over-provisioned table"` +
        (stat.version === 'v8' ? '; v8 prints no table_size (the v8 cover letter dropped it)' : '; this file prints no table_size'),
    });
  }
  return out;
}
