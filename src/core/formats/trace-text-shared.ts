/**
 * What the trace text reader (trace-text-reader.ts) and its byte path (trace-text-bytes.ts)
 * share: the sink of ids they feed, the diagnostic reasons, the limits of the columns, the line
 * head record, character codes and the fast paths' result codes. Imports nothing of either.
 */
import { MAX_LINE, TOO_LONG } from './lines.ts';
import type { TraceSink } from './types.ts';

/** Short, stable diagnostic reasons (they group in the DiagnosticLog). */
export const REASON = {
  notTrace: 'not a trace line',
  tooLong: TOO_LONG,
  notHeader: 'not a trace header',
  orphanFrame: 'frame line without a stack record',
  badStackId: 'malformed stack_id record',
  idTooLarge: 'stack_id slot or generation beyond 32 bits',
} as const;

/** The largest slot or generation a cookie may carry: the kernel's are u32. */
export const MAX_ID = 0xffffffff;
/** The largest pid or CPU the columns hold (Int32): the kernel's pid_t is an int, PID_MAX_LIMIT 2^22, NR_CPUS at most 8192. */
export const MAX_I32 = 0x7fffffff;
/** Times from here on are past 2^63 - 1 nanoseconds: ts_ns (INT64) cannot hold them. */
// the literal as written since the first reader (the double nearest it is the bound compared with)
// oxlint-disable-next-line no-loss-of-precision
export const MAX_TS_NS_SECONDS = 9223372036.854775;

/**
 * The most characters a trace_printk or trace_marker event's payload grows to with its
 * continuation lines (the kernel prints one event into a trace_seq of a page, 4 KB on most
 * machines, 64 KB at most): a line past it is not joined but reported.
 */
export const MAX_PRINT = MAX_LINE;

/** What an event line says before its payload (one record per parser, filled for each line: issue 39). */
export interface LineHead {
  lineNo: number;
  pid: number;
  /** null without a TGID column, or `(-------)` */
  tgid: number | null;
  cpu: number;
  /** seconds */
  ts: number;
}

/** Character codes the readers test. */
export const C_SPACE = 32;
export const C_TAB = 9;
export const C_HASH = 35;
export const C_EQ = 61;
export const C_GT = 62;
export const C_LT = 60;
export const C_C = 67;
export const C_c = 99;
export const C_v = 118;
export const C_DASH = 45;
export const C_DOT = 46;
export const C_COLON = 58;
export const C_LPAREN = 40;
export const C_RPAREN = 41;
export const C_LBRACKET = 91;
export const C_RBRACKET = 93;

/** Strings interned to dense ids, looked up inside a longer text without slicing it (base/string-table.ts StringTable). */
export interface InternTable {
  /** the string of each id */
  readonly strings: readonly string[];
  intern(s: string): number;
  internRange(text: string, from: number, to: number): number;
}

/**
 * A sink that takes events and cookies as numbers and ids (the trace columns): when the sink
 * given to the parser is one, common event and cookie lines go to `eventIds` and `cookieIds`
 * with their task and event names interned in `tasks` and `names` straight from the decoded
 * text (no event object, no payload, flags or name string); everything else still goes to the
 * TraceSink methods. `generation` is -1 for a v4..v7 id.
 */
export interface ColumnSink {
  readonly tasks: InternTable;
  readonly names: InternTable;
  /** `ctx`: the line's context (types.ts contextOf), -1 when its flags do not say */
  eventIds(ts: number, cpu: number, pid: number, task: number, name: number, ctx?: number): void;
  cookieIds(ts: number, cpu: number, pid: number, task: number, slot: number, generation: number, ctx?: number): void;
  /** with `fullIds`: a full kernel stack's frame keys interned here, the stack given as their ids */
  readonly frames?: InternTable;
  /** a full kernel stack: `ids[0, n)`, leaf first, ids into `frames`; `lineNo` its `<stack trace>` line */
  fullIds?(ts: number, cpu: number, pid: number, task: number, ids: Int32Array, n: number, lineNo?: number, ctx?: number): void;
  /**
   * With it, the event just given to `eventIds` has its TGID (-1: none) and payload `line[from, to)`
   * said too, and a print event (whose message may go on over the next lines) reaches `event` whole.
   */
  eventMore?(tgid: number, line: string, from: number, to: number): void;
  /**
   * `eventMore` for a line read from its bytes: the payload is `bytes[from, to)` (UTF-8, the same
   * text `eventMore` would be given), valid until `bytesDone` (a sink keeps no reference past it).
   * Without it, `eventMore` gets the payload decoded.
   */
  eventMoreBytes?(tgid: number, bytes: Uint8Array, from: number, to: number): void;
  /** the bytes given to `eventMoreBytes` so far may be reused by the reader's caller from now on */
  bytesDone?(): void;
}

/** The sink as a sink of ids, or null when it is not one. */
export function columnSink(sink: TraceSink): ColumnSink | null {
  const c = sink as Partial<ColumnSink>;
  return typeof c.eventIds === 'function' && typeof c.cookieIds === 'function' && c.tasks && c.names ? (c as ColumnSink) : null;
}

/** A space or a tab. */
export function isBlank(c: number): boolean {
  return c === C_SPACE || c === C_TAB;
}

/** A character `\s` might match besides space and tab (conservative: any control or non-ASCII). */
export function maybeSpace(c: number): boolean {
  return c < C_SPACE || c >= 0x7f;
}

/** The kernel's events that print `CALLER: message` and may run on over several lines. */
export type PrintName = 'bprint' | 'print' | 'bputs';

/** What a fast path says of a line: read, not this form (try the next `-`), or left to the regexes. */
export const FAST_DONE = 0;
export const FAST_NO = 1;
export const FAST_UNSURE = 2;
/** 10^k exactly, k <= 22. */
export const POW10 = Array.from({ length: 23 }, (_, k) => Number('1e' + k));
