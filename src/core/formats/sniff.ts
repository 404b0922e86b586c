import type { FileKind } from './types.ts';

/** How many leading bytes the sniffer wants to see (fewer at end of file is fine). */
export const SNIFF_BYTES = 16384;

export const FSMB_MAGIC = 0x46534d42;

const STACK_MAP_HEADER = /^stack_id \d+ (?:gen \d+ )?\[ref \d+, depth \d+\]/;
const STAT_KEY = /^(entries|table_size|successes|drops|fallbacks|success_rate|generation|capacity):\s/;
const SYMBOL_LINE = /^[0-9a-fA-F]{8,16} [a-zA-Z?] \S+/;
const EVENT_LINE = /^\s*.+-\d+\s+(?:\(\s*[-\d]+\)\s+)?\[\d+\]\s.*?\d+\.\d+:\s/;

/**
 * Decides a file's kind from its first bytes alone, never from its name: a trace renamed
 * `unknown` is still a trace.
 */
export function sniffKind(head: Uint8Array): FileKind {
  if (head.length >= 4) {
    const dv = new DataView(head.buffer, head.byteOffset, head.byteLength);
    if (dv.getUint32(0, true) === FSMB_MAGIC || dv.getUint32(0, false) === FSMB_MAGIC) return 'stack_map_bin';
  }
  if (!looksLikeText(head)) return 'unknown';
  const text = new TextDecoder('utf-8').decode(head);
  const lines = text.split('\n', 400).map((l) => l.replace(/\r$/, ''));
  let statKeys = 0;
  let symbols = 0;
  let events = 0;
  for (const line of lines) {
    if (line.trim() === '') continue;
    if (STACK_MAP_HEADER.test(line)) return 'stack_map_text';
    if (SYMBOL_LINE.test(line)) symbols++;
    else if (STAT_KEY.test(line)) statKeys++;
    else if (EVENT_LINE.test(line) || /^# tracer: /.test(line) || /^\s*=>\s/.test(line)) events++;
  }
  if (symbols > 0 && events === 0 && statKeys === 0) return 'kallsyms';
  if (statKeys >= 2 && events === 0) return 'stack_map_stat';
  if (lines.some((l) => l.trim() === 'stackmap not initialized')) {
    // both the map and the stat say this when empty; a stat file has nothing else
    return 'stack_map_text';
  }
  if (events > 0) return 'trace_text';
  return 'unknown';
}

/** Text if it decodes without NULs and has few control characters. */
function looksLikeText(head: Uint8Array): boolean {
  let control = 0;
  const n = Math.min(head.length, 4096);
  for (let i = 0; i < n; i++) {
    const b = head[i];
    if (b === 0) return false;
    if (b < 9 || (b > 13 && b < 32)) control++;
  }
  return control <= n / 100;
}
