/**
 * The event line's head, scanned in linear time: what the two regexes below match, with the
 * same groups, but never backtracking (they take tens of seconds on a few hundred KB of spaces
 * or dashes: `^\s*(.*?)-` retries every split of the leading blanks).
 *
 *   EVENT    /^\s*(.*?)-(\d+)\s+(?:\(\s*(-+|\d+)\)\s+)?\[(\d+)\]\s+(?:(\S{4,5})\s+)?(\d+\.\d+):(?:\s+|$)(.*)$/
 *   LATENCY  /^\s*(.*?)-(\d+)\s+(\d+)(\S{4,5})\s+(\d+(?:\.\d+)?)us[!#$@*+ ]?:(?:\s+|$)(.*)$/
 *
 * The COMM is lazy, so the PID column is the first `-digits` after which the rest of the line
 * matches. Each candidate `-` is checked by scanning forward from it; a check stops at its first
 * mismatch and the stretches candidates look at do not overlap (each `-` is followed by its own
 * digits and blanks), and where the payload may not hold a line terminator (`.` of the regex)
 * the last terminator's position is known beforehand, so a line costs O(length).
 * `event-line.test.ts` compares both with the regexes on generated lines.
 */

export interface EventHead {
  /** the COMM as printed (padding included), from the first character after the leading blanks */
  comm: string;
  pid: number;
  /** EVENT: the TGID column as printed (`-----` or digits), null without one */
  tgid: string | null;
  cpu: number;
  /** 4 or 5 flag characters, '' without irq-info */
  flags: string;
  /** EVENT: seconds as printed; LATENCY: microseconds as printed */
  time: string;
  /** where the payload starts in the line */
  payload: number;
}

/** JavaScript's `\s`. */
export function isSpace(c: number): boolean {
  if (c === 32 || (c >= 9 && c <= 13)) return true;
  if (c < 0xa0) return false;
  return (
    c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

/** What `.` does not match. */
const isTerminator = (c: number) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
const isDigit = (c: number) => c >= 48 && c <= 57;

function skipSpaces(s: string, i: number): number {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
}

function skipDigits(s: string, i: number): number {
  while (i < s.length && isDigit(s.charCodeAt(i))) i++;
  return i;
}

/** Positions of the first terminator after the leading blanks and of the last one (-1: none). */
function scanLine(s: string): { lead: number; firstTerm: number; lastTerm: number } {
  const lead = skipSpaces(s, 0);
  let firstTerm = -1;
  let lastTerm = -1;
  for (let i = lead; i < s.length; i++) {
    if (isTerminator(s.charCodeAt(i))) {
      if (firstTerm < 0) firstTerm = i;
      lastTerm = i;
    }
  }
  return { lead, firstTerm, lastTerm };
}

/** `:(?:\s+|$)(.*)$` at `i` (just after the `:`): the payload's start, or -1. */
function payloadAt(s: string, i: number, lastTerm: number): number {
  const p = skipSpaces(s, i);
  if (p === i && i !== s.length) return -1;
  return lastTerm >= p ? -1 : p;
}

/** The EVENT regex, or null where it does not match. */
export function matchEventLine(s: string): EventHead | null {
  const { lead, firstTerm, lastTerm } = scanLine(s);
  for (let d = s.indexOf('-', lead); d >= 0; d = s.indexOf('-', d + 1)) {
    if (firstTerm >= 0 && firstTerm < d) return null; // the COMM cannot hold a terminator
    const r = eventRest(s, d, lastTerm);
    if (r) return { ...r, comm: s.slice(lead, d) };
  }
  return null;
}

function eventRest(s: string, d: number, lastTerm: number): Omit<EventHead, 'comm'> | null {
  let i = skipDigits(s, d + 1);
  if (i === d + 1) return null;
  const pid = +s.slice(d + 1, i);
  let k = skipSpaces(s, i);
  if (k === i) return null;
  i = k;
  let tgid: string | null = null;
  if (s.charCodeAt(i) === 40 /* ( */) {
    const a = skipSpaces(s, i + 1);
    let b = a;
    if (s.charCodeAt(a) === 45) while (s.charCodeAt(b) === 45) b++;
    else b = skipDigits(s, a);
    if (b === a || s.charCodeAt(b) !== 41 /* ) */) return null;
    k = skipSpaces(s, b + 1);
    if (k === b + 1) return null;
    tgid = s.slice(a, b);
    i = k;
  }
  if (s.charCodeAt(i) !== 91 /* [ */) return null;
  const c0 = i + 1;
  const c1 = skipDigits(s, c0);
  if (c1 === c0 || s.charCodeAt(c1) !== 93 /* ] */) return null;
  const cpu = +s.slice(c0, c1);
  i = skipSpaces(s, c1 + 1);
  if (i === c1 + 1) return null;
  // (?:(\S{4,5})\s+)?: five flag characters, then four, then none
  for (const len of [5, 4]) {
    let j = i;
    while (j < i + len && j < s.length && !isSpace(s.charCodeAt(j))) j++;
    if (j !== i + len) continue;
    const t = skipSpaces(s, j);
    if (t === j) continue;
    const r = timeAt(s, t, lastTerm);
    if (r) return { pid, tgid, cpu, flags: s.slice(i, j), time: r.time, payload: r.payload };
  }
  const r = timeAt(s, i, lastTerm);
  return r ? { pid, tgid, cpu, flags: '', time: r.time, payload: r.payload } : null;
}

/** `(\d+\.\d+):(?:\s+|$)(.*)$` at `i`. */
function timeAt(s: string, i: number, lastTerm: number): { time: string; payload: number } | null {
  const a = skipDigits(s, i);
  if (a === i || s.charCodeAt(a) !== 46 /* . */) return null;
  const b = skipDigits(s, a + 1);
  if (b === a + 1 || s.charCodeAt(b) !== 58 /* : */) return null;
  const payload = payloadAt(s, b + 1, lastTerm);
  return payload < 0 ? null : { time: s.slice(i, b), payload };
}

/** The LATENCY regex, or null where it does not match. */
export function matchLatencyLine(s: string): EventHead | null {
  const { lead, firstTerm, lastTerm } = scanLine(s);
  for (let d = s.indexOf('-', lead); d >= 0; d = s.indexOf('-', d + 1)) {
    if (firstTerm >= 0 && firstTerm < d) return null;
    const r = latencyRest(s, d, lastTerm);
    if (r) return { ...r, comm: s.slice(lead, d) };
  }
  return null;
}

const MARKS = '!#$@*+ ';

function latencyRest(s: string, d: number, lastTerm: number): Omit<EventHead, 'comm'> | null {
  let i = skipDigits(s, d + 1);
  if (i === d + 1) return null;
  const pid = +s.slice(d + 1, i);
  const k = skipSpaces(s, i);
  if (k === i) return null;
  i = k;
  // (\d+)(\S{4,5})\s+ : one non-blank run, CPU digits then 4 or 5 flag characters (the CPU as
  // long as the flags allow, 4 flags before 5 at the same CPU length, as the regex backtracks)
  let end = i;
  while (end < s.length && !isSpace(s.charCodeAt(end))) end++;
  const digits = skipDigits(s, i) - i;
  const run = end - i;
  let cpuLen = -1;
  for (let len = Math.min(digits, run - 4); len >= 1; len--) {
    if (run - len === 5 || run - len === 4) {
      cpuLen = len;
      break;
    }
  }
  if (cpuLen < 0 || end === s.length) return null;
  const cpu = +s.slice(i, i + cpuLen);
  const flags = s.slice(i + cpuLen, end);
  i = skipSpaces(s, end);
  // (\d+(?:\.\d+)?)us[!#$@*+ ]?:
  const a = skipDigits(s, i);
  if (a === i) return null;
  let b = a;
  if (s.charCodeAt(a) === 46 && isDigit(s.charCodeAt(a + 1))) b = skipDigits(s, a + 1);
  if (s.charCodeAt(b) !== 117 /* u */ || s.charCodeAt(b + 1) !== 115 /* s */) return null;
  let c = b + 2;
  if (s.charCodeAt(c) !== 58 && MARKS.includes(s[c] ?? '\0') && s.charCodeAt(c + 1) === 58) c++;
  if (s.charCodeAt(c) !== 58) return null;
  const payload = payloadAt(s, c + 1, lastTerm);
  return payload < 0 ? null : { pid, tgid: null, cpu, flags, time: s.slice(i, b), payload };
}

// ---------------------------------------------------------------- trace_printk and trace_marker

/**
 * What scripts/capture.sh and the simulator's export write to trace_marker just before each
 * `echo 0 > stack_map`, `stackmap reset N`: the kernel does not trace a reset, so this is how a
 * trace shows one (a v7 id recorded before it may name another stack in a dump read after it).
 */
export const RESET_MARKER = 'stackmap reset';

/**
 * Whether a `print` event's payload (`CALLER: message`, as the text and trace.dat readers both
 * give it) is a RESET_MARKER write: the message is the marker, alone or followed by a space.
 */
export function isResetMarker(payload: string, from = 0, to = payload.length): boolean {
  const k = payload.indexOf(': ', from);
  if (k < 0 || k + 2 + RESET_MARKER.length > to || !payload.startsWith(RESET_MARKER, k + 2)) return false;
  const after = k + 2 + RESET_MARKER.length;
  return after === to || payload.charCodeAt(after) === 32;
}

/** What `printkName` tells: nothing (an ordinary `name: fields` event, or not that shape), `bprint`, `print`. */
export const PRINTK_NONE = 0;
export const PRINTK_BPRINT = 1;
export const PRINTK_PRINT = 2;

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);

/**
 * The kernel writes a trace_printk (`bprint`) and a trace_marker write (`print`) into the `trace`
 * file with no event name, as `CALLER: message` (trace_output.c, trace_bprint_print and
 * trace_print_print: seq_print_ip_sym(ip) then `: `), CALLER being the caller's ip printed as
 * `%ps` (`do_work`), `%pS` with the sym-offset option (`do_work+0x1c/0x40`), `0xffffffffc0a1b2c3`
 * for an ip without a symbol, `0` for an ip of 0, `func [module]` for a module's function, and
 * ` <ffffffff81234567>` after it with the sym-addr option. A trace_marker write's ip is
 * `tracing_mark_write`'s own (kernels before 3.4: 0, printed `0`).
 *
 * Given a payload `s[from, n)`, tells which of those its head is: `print` for `tracing_mark_write`
 * (any of the forms) and `0`; `bprint` for the forms no event name can take (an address, an offset,
 * a `.` as in `do_work.isra.0`, a module, a sym-addr). A bare symbol (`do_work: n=3`) cannot be
 * told from an event of that name (`sched_switch: prev_comm=...`) and gives PRINTK_NONE.
 * Linear: each character of the head is looked at once.
 */
export function printkName(s: string, from: number, n: number): number {
  let i = from;
  let c = 0;
  let plus = -1;
  let dot = false;
  while (i < n && (c = s.charCodeAt(i)) !== 58 && c !== 32 && c !== 9) {
    if (c === 43 /* + */ && plus < 0) plus = i;
    else if (c === 46 /* . */) dot = true;
    i++;
  }
  if (i === n || i === from) return PRINTK_NONE;
  const symEnd = plus >= 0 ? plus : i;
  const first = s.charCodeAt(from);
  /** 0: a word (an event name as well as a symbol); 1: only a symbol; 2: tracing_mark_write; 3: the ip 0 */
  let kind = 0;
  if (symEnd - from === 18 && s.startsWith('tracing_mark_write', from)) kind = 2;
  else if (first >= 48 && first <= 57) {
    if (i - from === 1 && first === 48) kind = 3;
    else {
      // 0x and hex digits to the end of the head: an ip without a symbol
      if (first !== 48 || s.charCodeAt(from + 1) !== 120 /* x */ || i - from < 3) return PRINTK_NONE;
      for (let k = from + 2; k < i; k++) if (!isHex(s.charCodeAt(k))) return PRINTK_NONE;
      kind = 1;
    }
  } else if (plus >= 0) {
    // sym+0xOFF[/0xSIZE]
    if (!s.startsWith('+0x', plus) || !isHex(s.charCodeAt(plus + 3))) return PRINTK_NONE;
    kind = 1;
  } else if (dot) kind = 1;
  let j = i;
  if (c === 32 || c === 9) {
    // ` [module]` and / or ` <address>` (sym-addr); anything else is not this shape
    if (kind === 3) return PRINTK_NONE;
    let extra = false;
    if (c === 32 && s.charCodeAt(j + 1) === 91 /* [ */) {
      let k = j + 2;
      while (k < n && (c = s.charCodeAt(k)) !== 93 && c !== 32 && c !== 9 && c !== 58) k++;
      if (k === j + 2 || k >= n || c !== 93) return PRINTK_NONE;
      j = k + 1;
      extra = true;
    }
    if (s.charCodeAt(j) === 32 && s.charCodeAt(j + 1) === 60 /* < */) {
      let k = j + 2;
      while (k < n && isHex(s.charCodeAt(k))) k++;
      if (k === j + 2 || k >= n || s.charCodeAt(k) !== 62 /* > */) return PRINTK_NONE;
      j = k + 1;
      extra = true;
    }
    if (!extra) return PRINTK_NONE;
    if (kind === 0) kind = 1;
  }
  if (j >= n || s.charCodeAt(j) !== 58) return PRINTK_NONE;
  if (j + 1 < n && (c = s.charCodeAt(j + 1)) !== 32 && c !== 9) return PRINTK_NONE;
  return kind === 2 || kind === 3 ? PRINTK_PRINT : kind === 1 ? PRINTK_BPRINT : PRINTK_NONE;
}
