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
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
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
