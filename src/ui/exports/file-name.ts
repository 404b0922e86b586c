import type { ExportKind, FlameMode, FlameWeight, Selection } from '../../core/query/api.ts';

const EXT: Record<ExportKind, string> = { folded: 'folded', svg: 'svg', speedscope: 'speedscope.json', 'chrome-trace': 'trace.json' };

/**
 * The fewest decimals (1 to 9) at which both ends of a range print apart, so a name tells two
 * ranges apart without the nine decimals of every timestamp.
 */
export function rangeText(r: [number, number]): string {
  for (let d = 1; d < 9; d++) {
    const a = r[0].toFixed(d);
    const b = r[1].toFixed(d);
    if (a !== b) return `${a}s-${b}s`;
  }
  return `${r[0].toFixed(9)}s-${r[1].toFixed(9)}s`;
}

/** only what every file system takes: letters, digits and . , + - _ */
const safe = (s: string) => s.replace(/[^A-Za-z0-9.,+_-]/g, '_');

/**
 * A download's name from what it holds: `stackmap-gen2-12.3s-14.1s-cpu0,1.folded`; the whole
 * capture is `stackmap-all.folded`, its events an event filter kept `stackmap-filtered.folded`. The SVG adds its shape when not top-down (and the sandwich's
 * function), weights by ref_count add `refcount`.
 */
export function exportFileName(
  kind: ExportKind,
  sel: Selection,
  opts: { mode?: FlameMode; weight?: FlameWeight; focus?: string | null; filtered?: boolean } = {},
): string {
  const parts = ['stackmap'];
  // an event filter on: its events only (stackmap-filtered.folded), not the whole capture
  if (opts.filtered) parts.push('filtered');
  if (sel.generation !== null) parts.push(sel.generation === 'none' ? 'gen-none' : `gen${sel.generation}`);
  if (sel.range) parts.push(rangeText(sel.range));
  if (sel.cpus) parts.push(`cpu${[...sel.cpus].sort((a, b) => a - b).join(',')}`);
  if (parts.length === 1) parts.push('all');
  if (kind === 'svg' && opts.mode && opts.mode !== 'top-down') {
    parts.push(opts.mode);
    if (opts.mode === 'sandwich' && opts.focus) parts.push(opts.focus);
  }
  if (kind !== 'chrome-trace' && (opts.weight === 'refcount' || opts.weight === 'period')) parts.push(opts.weight);
  // a field's weight names the field: stackmap-all-bytes_alloc.folded
  if (kind !== 'chrome-trace' && opts.weight?.startsWith('field:')) parts.push(opts.weight.slice('field:'.length));
  return `${safe(parts.join('-'))}.${EXT[kind]}`;
}
