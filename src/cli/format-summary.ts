import { escapeControls as esc } from '../core/base/control-chars.ts';
import type { Summary } from '../core/capture/summary.ts';

const int = (n: number) => n.toLocaleString('en-US');

/** generations printed one by one in the text summary: the first and the last few of the list */
const TEXT_HEAD = 20;
const TEXT_TAIL = 3;

/** The generations on one line: a long list (or one the summary already cut) as its first and last few, the rest counted. */
function generationsLine(s: Summary): string {
  const g = s.generations;
  if (g.length === 0) return '-';
  if (g.length <= TEXT_HEAD + TEXT_TAIL && !s.generationsCut) return g.join(', ');
  const head = g.slice(0, Math.min(TEXT_HEAD, g.length - TEXT_TAIL));
  const tail = g.slice(g.length - TEXT_TAIL);
  const left = g.length - head.length - tail.length + s.generationsCut;
  return `${head.join(', ')}, ... ${int(left)} more ..., ${tail.join(', ')} (${int(g.length + s.generationsCut)} in all)`;
}

/**
 * The retention gain in words: the events the same ring buffer keeps with the map, as the cookie
 * ABI mail counts retention ("drops from about 2.17x to about 2.0x": events kept, not bytes), with
 * the ring bytes per event it comes from, the assumed event size, and the stack bytes' own ratio
 * under that name.
 */
export function retentionLine(rb: Summary['derived']['ringBuffer']): string {
  const x = (v: number) => `${v.toFixed(1)}x`;
  const b = (v: number) => `${v.toFixed(1)} B`;
  const assumed = `each event's own record taken as ${rb.eventBytes} B, assumed`;
  if (rb.basis === 'unknown') {
    return (
      `unknown (between ${x(rb.bounds!.gain[0])} and ${x(rb.bounds!.gain[1])} the events kept; ${assumed}; ` +
      `the stack bytes alone between ${x(rb.bounds!.stackBytesRatio[0])} and ${x(rb.bounds!.stackBytesRatio[1])}): ${esc(rb.why ?? '')}`
    );
  }
  const perEvent = Number.isFinite(rb.bytesPerEventWithMap)
    ? `ring bytes per event ${b(rb.bytesPerEventWithoutMap)} without the map / ${b(rb.bytesPerEventWithMap)} with it (${assumed})`
    : `no events: the stack bytes alone`;
  return `${x(rb.gain)} the events kept${rb.basis === 'estimated' ? ' (estimated)' : ''}: ${perEvent}; the stack bytes alone ${x(rb.stackBytesRatio)}. ${esc(rb.why ?? '')}`;
}

/**
 * stack_map_stat's counters under the kernel's own names, only those the file printed: v7's
 * `entries E / C`, `table_size`, `successes`, `drops`, `success_rate` (the v7 document); v8's
 * `generation`, `entries`, `capacity`, `successes`, `fallbacks` (the v8 cover letter: it "drops
 * table_size and success_rate, and renames drops to fallbacks, since those stacks are recorded in
 * full, not lost"). Nothing computed is printed as the kernel's.
 */
export function statLine(stat: NonNullable<Summary['stat']>): string {
  if (stat.values.length === 0) return `${esc(stat.file)}: stackmap not initialized`;
  const counter = stat.version === 'v8' ? 'fallbacks' : 'drops';
  const parts: string[] = [];
  if (stat.generation !== null) parts.push(`generation ${stat.generation}`);
  if (stat.entries !== null) parts.push(`entries ${stat.entries}${stat.capacity !== null ? ` of ${stat.capacity}` : ''}`);
  if (stat.tableSize !== null) parts.push(`table_size ${stat.tableSize}`);
  if (stat.successes !== null) parts.push(`successes ${stat.successes}`);
  if (stat.drops !== null) parts.push(`${counter} ${stat.drops}`);
  if (stat.successRate !== null) parts.push(`success_rate ${stat.successRate}%`);
  return `${parts.join(', ')} (${stat.version}, ${esc(stat.file)})`;
}

/** The summary as a person reads it in a terminal: what came from the files (names, frames, messages) with its control characters escaped. */
export function formatSummary(s: Summary): string {
  const out: string[] = [];
  const row = (k: string, v: string | number) => out.push(`${k.padEnd(14)} ${v}`);
  row('events', s.events);
  row('cookies', s.cookies);
  row('full stacks', s.fullStacks);
  row('resolved', s.resolved);
  row('unresolved', s.unresolved);
  row('unique stacks', s.uniqueStacks);
  row('generations', generationsLine(s));
  row(
    'status',
    Object.entries(s.status)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || '-',
  );
  const rb = s.derived.ringBuffer;
  if (rb.why !== null) {
    row('retention gain', retentionLine(rb));
  }
  if (s.segments.length > 1) {
    out.push('', `segments (${s.segments.length} unrelated time ranges, each its own timeline):`);
    for (const g of s.segments) {
      const span = g.lastTs - g.firstTs;
      out.push(
        `  ${String(g.index).padStart(3)}  ${g.firstTs.toFixed(6)} - ${g.lastTs.toFixed(6)}  (${span.toFixed(3)} s)  ${int(g.events).padStart(9)} events  ${esc(g.file)}`,
      );
    }
  }
  if (s.stat) row('stack_map_stat', statLine(s.stat));
  out.push('', 'files:');
  for (const f of s.files) {
    const acc = f.lines ? `${f.lines.used}/${f.lines.total} lines used` : f.bytes ? `${f.bytes.used}/${f.bytes.total} bytes used` : '';
    out.push(`  ${esc(f.file)}  ${f.kind}  ${acc}`);
  }
  if (s.top.length) {
    out.push('', 'top stacks:');
    for (const t of s.top) out.push(`  ${String(t.count).padStart(7)}  ${t.frames.slice(0, 4).map(esc).join(' <- ')}${t.frames.length > 4 ? ' ...' : ''}`);
  }
  if (s.diagnostics.length) {
    out.push('', 'diagnostics:');
    for (const d of s.diagnostics) out.push(`  ${esc(d.file)}: ${esc(d.where)}: ${esc(d.message)}${d.count > 1 ? ` (${d.count}x)` : ''}`);
  }
  return out.join('\n') + '\n';
}
