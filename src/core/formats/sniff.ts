import { CAPTURE_TXT_HEAD } from './capture-info.ts';
import { LEDGER_HEAD } from './sim-ledger.ts';
import { matchEventLine } from './event-line.ts';
import { encodingOf } from './lines.ts';
import { isPerfFrameLine, parsePerfHeader } from './perf-script.ts';
import { findLinuxPerfData, findTraceDataTag } from './systrace-html.ts';
import type { FileKind } from './types.ts';

/** How many leading bytes the sniffer wants to see (fewer at end of file is fine). */
export const SNIFF_BYTES = 16384;

export const FSMB_MAGIC = 0x46534d42;

const STACK_MAP_HEADER = /^stack_id \d+ (?:gen \d+ )?\[ref \d+, depth \d+\]/;
const STAT_KEY = /^(entries|table_size|successes|drops|fallbacks|success_rate|generation|capacity):\s/;
const SYMBOL_LINE = /^[0-9a-fA-F]{8,16} [a-zA-Z?] \S+/;

/** trace-cmd `trace.dat`: `\x17\x08\x44` `tracing` then the version as a NUL-terminated string. */
export const TRACE_DAT_MAGIC = [0x17, 0x08, 0x44, 0x74, 0x72, 0x61, 0x63, 0x69, 0x6e, 0x67];

/** The file version of a trace-cmd `trace.dat` head (`'6'`, `'7'`), null when it is not one. */
export function traceDatVersion(head: Uint8Array): string | null {
  if (head.length < TRACE_DAT_MAGIC.length) return null;
  for (let i = 0; i < TRACE_DAT_MAGIC.length; i++) if (head[i] !== TRACE_DAT_MAGIC[i]) return null;
  let v = '';
  for (let i = TRACE_DAT_MAGIC.length; i < head.length && i < TRACE_DAT_MAGIC.length + 16 && head[i] !== 0; i++) {
    v += String.fromCharCode(head[i]);
  }
  return v;
}

/**
 * Decides a file's kind from its first bytes alone, never from its name: a trace renamed
 * `unknown` is still a trace.
 */
export function sniffKind(whole: Uint8Array): FileKind {
  // the window only: a zip entry or a first chunk can be far larger
  const head = whole.length > SNIFF_BYTES ? whole.subarray(0, SNIFF_BYTES) : whole;
  if (traceDatVersion(head) !== null) return 'trace_cmd_dat';
  if (head.length >= 4) {
    const dv = new DataView(head.buffer, head.byteOffset, head.byteLength);
    if (dv.getUint32(0, true) === FSMB_MAGIC || dv.getUint32(0, false) === FSMB_MAGIC) return 'stack_map_bin';
  }
  const encoding = encodingOf(head);
  let text: string;
  if (encoding === 'utf-8') {
    // NUL padding at the end (of the file, or of the window) is not looked at: nul-gate.ts reports it
    let end = head.length;
    while (end > 0 && head[end - 1] === 0) end--;
    if (end === 0 || !looksLikeText(head.subarray(0, end))) return 'unknown';
    text = new TextDecoder(encoding).decode(head.subarray(0, end));
  } else {
    text = new TextDecoder(encoding).decode(head);
    let end = text.length;
    while (end > 0 && text.charCodeAt(end - 1) === 0) end--;
    text = text.slice(0, end);
  }
  // a stray NUL reads as a blank here (a bit flipped in a space); the reader gets it as it is and it is reported
  if (text.includes('\0')) text = text.replace(/\0/g, ' ');
  const start = text.replace(/^\uFEFF/, '').trimStart();
  // capture.sh's own record: its first line says so
  if (start.startsWith(CAPTURE_TXT_HEAD)) return 'capture_txt';
  // the simulator's ledger.json: its first line says so
  if (start.startsWith(LEDGER_HEAD)) return 'sim_ledger';
  // stackmap_dump.py --json: a list of {stack_id, ...} or {"stacks": [...]}
  if ((start.startsWith('[') || start.startsWith('{')) && (/"stack_id"\s*:/.test(start) || /^\{\s*"stacks"\s*:/.test(start))) {
    return 'dump_json';
  }
  // any HTML document goes to the systrace reader, which says so when it holds no ftrace text;
  // so does a page fragment with a trace-data tag or legacy systrace's `var linuxPerfData = "` first on a line
  const atLineStart = (l: string, at: { index: number } | null) => at?.index === l.length - l.trimStart().length;
  if (
    /^<(?:!doctype\s+html|html[\s>])/i.test(start) ||
    start.split('\n', 400).some((l) => atLineStart(l, findTraceDataTag(l, 0)) || atLineStart(l, findLinuxPerfData(l, 0)))
  ) {
    return 'systrace_html';
  }
  const lines = text.split('\n', 400).map((l) => l.replace(/\r$/, ''));
  let statKeys = 0;
  let symbols = 0;
  let events = 0;
  let perfHeaders = 0;
  let perfFrames = 0;
  for (const line of lines) {
    if (line.trim() === '') continue;
    if (STACK_MAP_HEADER.test(line)) return 'stack_map_text';
    if (SYMBOL_LINE.test(line)) symbols++;
    else if (STAT_KEY.test(line)) statKeys++;
    else if (matchEventLine(line) || line.startsWith('# tracer: ') || /^\s*=>\s/.test(line)) events++;
    else if (line.charCodeAt(0) !== 32 && line.charCodeAt(0) !== 9 && parsePerfHeader(line)) perfHeaders++;
    else if (isPerfFrameLine(line)) perfFrames++;
  }
  if (symbols > 0 && events === 0 && statKeys === 0) return 'kallsyms';
  if (statKeys >= 2 && events === 0) return 'stack_map_stat';
  if (lines.some((l) => l.trim() === 'stackmap not initialized')) {
    // both the map and the stat say this when empty; a stat file has nothing else
    return 'stack_map_text';
  }
  if (events > 0) return 'trace_text';
  if (perfHeaders > 0 && (perfFrames > 0 || perfHeaders >= 2)) return 'perf_script';
  return 'unknown';
}

/**
 * Text if few of its first 4 KB are control characters: at most one in a hundred, and one more
 * (a stray NUL or escape in a file of a few lines). A binary file has far more: NULs in its
 * numbers, UTF-16 without a byte-order mark one in two.
 */
function looksLikeText(head: Uint8Array): boolean {
  let control = 0;
  const n = Math.min(head.length, 4096);
  for (let i = 0; i < n; i++) {
    const b = head[i];
    if (b < 9 || (b > 13 && b < 32)) control++;
  }
  return control <= n / 100 + 1;
}
