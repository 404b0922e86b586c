/**
 * trace-cmd's event filter syntax (`trace-cmd report -F`, libtraceevent's event-parse filter),
 * parsed in one pass into a tree that event-filter.ts evaluates per event.
 *
 *   FILTER  := EVENTS [':' EXPR]        EVENTS := PATTERN (',' PATTERN)*
 *   PATTERN := SYSTEM '/' EVENT | NAME  (a POSIX basic regular expression, anchored at both ends,
 *                                        case-insensitive; NAME matches a system or an event name)
 *   EXPR    := TERM (('&&' | '||') TERM)*   (left to right, no precedence: libtraceevent reads
 *                                            `a || b && c` as `(a || b) && c`)
 *   TERM    := '!' TERM | '(' EXPR ')' | FIELD OP VALUE
 *
 * Numbers are C's strtoull (`0x` hex, a leading 0 octal, digits after the number ignored). What
 * trace-cmd crashes on (a missing value, a dangling `&&`, `/ 0`) or refuses (`FIELD OP FIELD`,
 * `VALUE OP FIELD`, `>` on a string, an arithmetic term compared further) is a FilterError naming the
 * column, as is what it silently ignores (`a == 1 b == 2`). An EVENTS pattern no event matches
 * selects nothing (trace-cmd refuses the filter: it knows the file's formats before it parses
 * it, this parser does not).
 */
import { RE2JS } from 're2js';

/** A filter that cannot be parsed: `column` is 1-based, into the filter's text. */
export class FilterError extends Error {
  /** the filter's text (set by EventFilter.parse) */
  text = '';
  constructor(
    readonly column: number,
    readonly reason: string,
  ) {
    super(`filter: column ${column}: ${reason}`);
    this.name = 'FilterError';
  }
}

/** The operators, in the order OPS tries them. */
export const enum Op {
  Eq,
  Ne,
  Ge,
  Le,
  Gt,
  Lt,
  And,
  Or,
  Xor,
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Match,
  NoMatch,
}
const OPS: [string, Op][] = [
  ['==', Op.Eq],
  ['!=', Op.Ne],
  ['>=', Op.Ge],
  ['<=', Op.Le],
  ['=~', Op.Match],
  ['!~', Op.NoMatch],
  ['>', Op.Gt],
  ['<', Op.Lt],
  ['&', Op.And],
  ['|', Op.Or],
  ['^', Op.Xor],
  ['+', Op.Add],
  ['-', Op.Sub],
  ['*', Op.Mul],
  ['/', Op.Div],
  ['%', Op.Mod],
];

/** A parsed expression. */
export type FilterNode =
  | { k: 'and' | 'or'; a: FilterNode; b: FilterNode }
  | { k: 'not'; a: FilterNode }
  | { k: 'num'; field: string; op: Op; value: bigint }
  | { k: 'str'; field: string; op: Op; value: string; re: RE2JS | null };

/** One filter parsed: its event patterns, its expression (none: every event of them) and whether it reads payload fields. */
export interface ParsedFilter {
  events: { system: RE2JS | null; name: RE2JS }[];
  expr: FilterNode | null;
  needsFields: boolean;
}

/** The most nested parentheses and `!`s (a deeper filter is refused, not a stack overflow). */
export const MAX_DEPTH = 200;
/** 2^64 - 1: every value is a u64. */
export const MASK = (1n << 64n) - 1n;

/** `text` scanned once; every token's start column kept for errors. */
export function parseFilter(text: string): ParsedFilter {
  const n = text.length;
  // the EVENTS part ends at the first ':' (no pattern holds one)
  let colon = text.indexOf(':');
  if (colon < 0) colon = n;
  const events: ParsedFilter['events'] = [];
  let start = 0;
  for (let i = 0; i <= colon; i++) {
    if (i < colon && text.charCodeAt(i) !== 44) continue;
    let a = start;
    let b = i;
    while (a < b && isBlank(text.charCodeAt(a))) a++;
    while (b > a && isBlank(text.charCodeAt(b - 1))) b--;
    if (a === b)
      throw new FilterError(
        a + 1,
        i < colon || events.length > 0 ? 'expected an event name before this' : 'expected an event name (SYSTEM/EVENT, SYSTEM or EVENT)',
      );
    // the pattern's own slash (each pattern scanned once: an indexOf to the text's end per pattern was quadratic)
    let slash = a;
    while (slash < b && text.charCodeAt(slash) !== 47) slash++;
    if (slash < b) {
      events.push({ system: eventPattern(text, a, slash), name: eventPattern(text, slash + 1, b) });
    } else {
      events.push({ system: null, name: eventPattern(text, a, b) });
    }
    start = i + 1;
  }
  if (colon === n) return { events, expr: null, needsFields: false };
  const p = new Parser(text, colon + 1);
  p.skip();
  if (p.at >= n) throw new FilterError(n + 1, 'expected a filter after the colon');
  const expr = p.expr(0);
  p.skip();
  if (p.at < n)
    throw new FilterError(
      p.at + 1,
      p.lastTerm === 'arith'
        ? `expected '&&', '||' or the end of the filter: an arithmetic term is not compared further`
        : `expected '&&', '||' or the end of the filter`,
    );
  return { events, expr, needsFields: p.needsFields };
}

function eventPattern(text: string, a: number, b: number): RE2JS {
  let lo = a;
  let hi = b;
  while (lo < hi && isBlank(text.charCodeAt(lo))) lo++;
  while (hi > lo && isBlank(text.charCodeAt(hi - 1))) hi--;
  if (lo === hi) throw new FilterError(lo + 1, 'expected a name on each side of the slash');
  return compileBre(text.slice(lo, hi), lo + 1, true);
}

/**
 * A POSIX basic regular expression (glibc's: `\(`, `\)`, `\{`, `\}`, `\|`, `\+`, `\?` special,
 * their bare forms literal, a leading `*` literal) as RE2 syntax, compiled case-insensitive.
 */
export function compileBre(bre: string, column: number, anchored: boolean): RE2JS {
  let out = '';
  const n = bre.length;
  let i = 0;
  let atStart = true;
  while (i < n) {
    const c = bre[i];
    if (c === '\\' && i + 1 < n) {
      const d = bre[i + 1];
      out += '()|{}+?'.includes(d) ? (d === '(' ? '(?:' : d) : '\\' + d;
      atStart = d === '(' || d === '|';
      i += 2;
      continue;
    }
    if (c === '[') {
      // a bracket expression to its `]` (a `]` first, after `^` too, is a member)
      let j = i + 1;
      if (bre[j] === '^') j++;
      if (bre[j] === ']') j++;
      while (j < n && bre[j] !== ']') j++;
      if (j >= n) throw new FilterError(column + i, 'unterminated bracket expression in the regular expression');
      out += bre.slice(i, j + 1).replace(/\\/g, '\\\\');
      i = j + 1;
      atStart = false;
      continue;
    }
    if ('()|{}+?'.includes(c) || (c === '*' && atStart)) out += '\\' + c;
    else out += c;
    atStart = c === '^' && atStart;
    i++;
  }
  try {
    return RE2JS.compile(anchored ? `^(?:${out})$` : out, RE2JS.CASE_INSENSITIVE);
  } catch (e) {
    throw new FilterError(column, `invalid regular expression: ${(e as Error).message.slice(0, 200)}`);
  }
}

const isBlank = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 11 || c === 12;
const isIdentStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdent = (c: number) => isIdentStart(c) || (c >= 48 && c <= 57);

class Parser {
  at: number;
  needsFields = false;
  /** what the last term parsed was: a comparison, or an arithmetic term (which no comparison may follow) */
  lastTerm: 'cmp' | 'arith' = 'cmp';

  constructor(
    private readonly s: string,
    at: number,
  ) {
    this.at = at;
  }

  skip(): void {
    while (this.at < this.s.length && isBlank(this.s.charCodeAt(this.at))) this.at++;
  }

  private fail(why: string, at = this.at): never {
    throw new FilterError(at + 1, why);
  }

  /** EXPR: terms joined by && and ||, left to right. */
  expr(depth: number): FilterNode {
    let left = this.term(depth);
    for (;;) {
      this.skip();
      const s = this.s;
      const two = s.slice(this.at, this.at + 2);
      if (two !== '&&' && two !== '||') return left;
      this.at += 2;
      this.skip();
      if (this.at >= s.length) this.fail(`expected a comparison after '${two}'`);
      const right = this.term(depth);
      left = { k: two === '&&' ? 'and' : 'or', a: left, b: right };
    }
  }

  private term(depth: number): FilterNode {
    if (depth > MAX_DEPTH) this.fail(`more than ${MAX_DEPTH} nested parentheses and '!'s`);
    this.skip();
    const s = this.s;
    const c = s.charCodeAt(this.at);
    if (this.at >= s.length) this.fail('expected a comparison');
    if (c === 33 && s.charCodeAt(this.at + 1) !== 61 && s.charCodeAt(this.at + 1) !== 126) {
      this.at++;
      const a = this.term(depth + 1);
      if (this.lastTerm === 'arith') this.lastTerm = 'cmp';
      return { k: 'not', a };
    }
    if (c === 40) {
      const open = this.at;
      this.at++;
      const a = this.expr(depth + 1);
      this.skip();
      if (s.charCodeAt(this.at) !== 41) this.fail(this.at >= s.length ? `expected ')' to close the '(' at column ${open + 1}` : `expected '&&', '||' or ')'`);
      this.at++;
      if (this.lastTerm === 'arith') this.lastTerm = 'cmp';
      return a;
    }
    return this.comparison();
  }

  private comparison(): FilterNode {
    const s = this.s;
    const fieldAt = this.at;
    if (!isIdentStart(s.charCodeAt(this.at)))
      this.fail(/[0-9"']/.test(s[this.at]) ? 'expected a field name: a comparison is FIELD OP VALUE' : `expected a field name, '!' or '('`);
    while (this.at < s.length && isIdent(s.charCodeAt(this.at))) this.at++;
    const field = s.slice(fieldAt, this.at);
    this.skip();
    const opAt = this.at;
    let op: Op | null = null;
    for (const [t, o] of OPS) {
      if (s.startsWith(t, this.at)) {
        op = o;
        this.at += t.length;
        break;
      }
    }
    if (op === null) this.fail(`expected an operator after '${field}'`, opAt);
    this.skip();
    const valueAt = this.at;
    if (this.at >= s.length) this.fail(`expected a value after '${s.slice(opAt, valueAt).trim()}'`);
    const q = s.charCodeAt(this.at);
    const arith = op >= Op.And && op <= Op.Mod;
    if (q === 34 || q === 39) {
      const close = s.indexOf(s[this.at], this.at + 1);
      if (close < 0) this.fail('unterminated string', valueAt);
      const value = s.slice(this.at + 1, close);
      this.at = close + 1;
      if (op !== Op.Eq && op !== Op.Ne && op !== Op.Match && op !== Op.NoMatch) this.fail('a string compares only with ==, !=, =~ or !~', opAt);
      if (field !== 'COMM' && field !== 'CPU' && field !== 'TGID' && field !== 'common_pid') this.needsFields = true;
      this.lastTerm = 'cmp';
      const re = op === Op.Match || op === Op.NoMatch ? compileBre(value, valueAt + 2, false) : null;
      return { k: 'str', field, op, value, re };
    }
    if (op === Op.Match || op === Op.NoMatch) this.fail(`'${op === Op.Match ? '=~' : '!~'}' takes a quoted regular expression`, valueAt);
    const value = this.number();
    if ((op === Op.Div || op === Op.Mod) && value === 0n) this.fail('division by zero', valueAt);
    if (field !== 'COMM' && field !== 'CPU' && field !== 'TGID' && field !== 'common_pid') this.needsFields = true;
    this.lastTerm = arith ? 'arith' : 'cmp';
    return { k: 'num', field, op, value };
  }

  /** A number as C's strtoull reads it (`-` negates modulo 2^64; `0x` hex; a leading 0 octal); the word's other characters are read and ignored, as libtraceevent does. */
  private number(): bigint {
    const s = this.s;
    const at = this.at;
    let i = at;
    let neg = false;
    if (s[i] === '-' || s[i] === '+') {
      neg = s[i] === '-';
      i++;
    }
    let base = 10;
    if (s[i] === '0' && (s[i + 1] === 'x' || s[i + 1] === 'X') && /[0-9a-fA-F]/.test(s[i + 2] ?? '')) {
      base = 16;
      i += 2;
    } else if (s[i] === '0') base = 8;
    const from = i;
    while (i < s.length && digitOf(s.charCodeAt(i)) < base) i++;
    if (i === from && base !== 8)
      this.fail(
        s[at] === '(' || s[at] === '!'
          ? 'expected a value: a comparison is FIELD OP VALUE'
          : isIdentStart(s.charCodeAt(at))
            ? 'expected a number or a quoted string: a field compares with a value, not a field'
            : 'expected a number or a quoted string',
        at,
      );
    let v = 0n;
    const b = BigInt(base);
    for (let k = from; k < i; k++) v = (v * b + BigInt(digitOf(s.charCodeAt(k)))) & MASK;
    // the rest of the word (`512x`) is read and ignored, as strtoull's caller does
    while (i < s.length && isIdent(s.charCodeAt(i))) i++;
    this.at = i;
    return neg ? BigInt.asUintN(64, -v) : v;
  }
}

function digitOf(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 32;
  if (l >= 97 && l <= 102) return l - 87;
  return 99;
}
