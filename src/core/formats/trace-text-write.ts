/**
 * Writes events and stack records as ftrace `trace` text (irq-info columns, 6 decimals), the
 * inverse of trace-text.ts: parse(write(x)) gives back x's events and stack records.
 */
import type { TraceEvent, TraceStackRecord } from './types.ts';

export type TraceTextItem =
  | ({ type: 'event' } & Omit<TraceEvent, 'lineNo'>)
  /** `flags` is optional: stack records do not carry it; '.....' when absent */
  | ({ type: 'stack'; flags?: string } & Omit<TraceStackRecord, 'lineNo'>)
  | { type: 'lost'; cpu: number; count: number | null };

export interface TraceTextHeader {
  /** `# tracer: X`, 'nop' when absent */
  tracer?: string | null;
  /** `#P:N`; the highest CPU seen + 1 when absent */
  cpus?: number | null;
}

const LEGEND = [
  '#',
  '#                                _-----=> irqs-off/BH-disabled',
  '#                               / _----=> need-resched',
  '#                              | / _---=> hardirq/softirq',
  '#                              || / _--=> preempt-depth',
  '#                              ||| / _-=> migrate-disable',
  '#                              |||| /     delay',
  '#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION',
  '#              | |         |   |||||     |         |',
];

/** The kernel's context columns: `%16s-%-7d [(%7d)] [%03d] FLAGS %5llu.%06lu: ` */
function context(comm: string, pid: number, tgid: number | null, cpu: number, flags: string, ts: number): string {
  let s = comm.padStart(16) + '-' + String(pid).padEnd(7) + ' ';
  if (tgid !== null) s += '(' + String(tgid).padStart(7) + ') ';
  s += '[' + String(cpu).padStart(3, '0') + '] ';
  if (flags) s += flags + ' ';
  return s + ts.toFixed(6).padStart(12) + ': ';
}

/** Trace text for `items`, in order, after a `# tracer:` / `#P:` header. Ends with a newline. */
export function writeTraceText(items: readonly TraceTextItem[], header: TraceTextHeader = {}): string {
  let entries = 0;
  let maxCpu = -1;
  for (const it of items) {
    if (it.type !== 'lost') entries++;
    if (it.cpu > maxCpu) maxCpu = it.cpu;
  }
  const cpus = header.cpus ?? maxCpu + 1;
  const out: string[] = ['# tracer: ' + (header.tracer ?? 'nop'), '#', `# entries-in-buffer/entries-written: ${entries}/${entries}   #P:${cpus}`, ...LEGEND];
  for (const it of items) {
    if (it.type === 'lost') {
      out.push(it.count === null ? `CPU:${it.cpu} [LOST EVENTS]` : `CPU:${it.cpu} [LOST ${it.count} EVENTS]`);
    } else if (it.type === 'event') {
      const ctx = context(it.comm, it.pid, it.tgid, it.cpu, it.flags, it.ts);
      // function tracer lines and unnamed payloads are printed bare
      const body = it.name === '' || (it.name === 'function' && it.payload.includes(' <-')) ? it.payload : it.name + ': ' + it.payload;
      out.push(ctx + body);
    } else {
      const ctx = context(it.comm, it.pid, null, it.cpu, it.flags ?? '.....', it.ts);
      if (it.kind === 'cookie') {
        out.push(ctx + (it.generation === null ? `<stack_id ${it.slot}>` : `<stack_id ${it.slot} gen ${it.generation}>`));
      } else {
        out.push(ctx + (it.kind === 'user' ? '<user stack trace>' : '<stack trace>'));
        for (const f of it.frames ?? []) out.push(' => ' + f);
      }
    }
  }
  return out.join('\n') + '\n';
}
