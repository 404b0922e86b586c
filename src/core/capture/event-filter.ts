/**
 * trace-cmd's event filter (`trace-cmd report -F`, libtraceevent's event-parse filter), parsed in
 * one pass and evaluated per event in time linear in the filter and the event's text.
 *
 *   FILTER  := EVENTS [':' EXPR]        EVENTS := PATTERN (',' PATTERN)*
 *   PATTERN := SYSTEM '/' EVENT | NAME  (a POSIX basic regular expression, anchored at both ends,
 *                                        case-insensitive; NAME matches a system or an event name)
 *   EXPR    := TERM (('&&' | '||') TERM)*   (left to right, no precedence: libtraceevent reads
 *                                            `a || b && c` as `(a || b) && c`)
 *   TERM    := '!' TERM | '(' EXPR ')' | FIELD OP VALUE
 *
 * What trace-cmd 3.x does, found by running it (event-filter.trace-cmd.test.ts holds it to that):
 * every comparison is of unsigned 64-bit integers (a signed field sign-extended, `-1` the largest
 * value: `node < 0` is never true); `FIELD & 4` (and `| ^ + - * / %`) stands alone, true when the
 * result is not 0, and cannot be compared further; a string (quoted `"` or `'`) goes with `==`
 * `!=` `=~` `!~` only, `=~` a basic regular expression, case-insensitive and unanchored, `==`
 * exact; a numeric field against a string is its function name when it is a long or pointer with a
 * symbol, else `0x%llx` for `==`/`!=` and the empty string for `=~`/`!~`; a field the event lacks
 * makes its comparison false (so `!` of it true). Numbers are C's strtoull (`0x` hex, a leading 0
 * octal, digits after the number ignored). What trace-cmd crashes on (a missing value, a dangling
 * `&&`, `/ 0`) or refuses (`FIELD OP FIELD`, `VALUE OP FIELD`, `>` on a string, `&&` after an
 * arithmetic term) is a FilterError naming the column, as is what it silently ignores (`a == 1 b == 2`).
 * An EVENTS pattern no event matches selects nothing (trace-cmd refuses the filter: it knows the
 * file's formats before it parses it, this parser does not).
 */
import { RE2JS } from 're2js';
import { payloadFields } from '../formats/payload-fields.ts';
import type { RawFields } from '../formats/types.ts';

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

/** What the filter reads of an event. */
export interface FilterEvent {
  name: string;
  /** the event's system (trace.dat); undefined when the input does not say (text traces): a `SYSTEM/EVENT` pattern then checks the event's name only */
  system?: string;
  comm: string;
  pid: number;
  cpu: number;
  tgid: number | null;
  /** the payload as printed (`key=value ...`): text traces' fields */
  payload: string;
  /** trace.dat: the record's raw fields, preferred to the payload's */
  raw?: RawFields;
}

const enum Op {
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

type Node =
  | { k: 'and' | 'or'; a: Node; b: Node }
  | { k: 'not'; a: Node }
  | { k: 'num'; field: string; op: Op; value: bigint }
  | { k: 'str'; field: string; op: Op; value: string; re: RE2JS | null };

interface One {
  events: { system: RE2JS | null; name: RE2JS }[];
  expr: Node | null;
  needsFields: boolean;
}

/** The most nested parentheses and `!`s (a deeper filter is refused, not a stack overflow). */
export const MAX_DEPTH = 200;
const MASK = (1n << 64n) - 1n;

/** Several filters (repeated `--filter`, as several `-F`), ORed: an event matches when one of them does. */
export class EventFilter {
  private readonly all: One[];
  private readonly fields = new Map<string, string>();

  private constructor(all: One[]) {
    this.all = all;
  }

  /** Parses each filter; throws FilterError (with the filter's text before its message when there are several). */
  static parse(texts: readonly string[]): EventFilter {
    return new EventFilter(
      texts.map((t) => {
        try {
          return parseOne(t);
        } catch (e) {
          if (e instanceof FilterError) e.text = t;
          throw e;
        }
      }),
    );
  }

  /** per event name (and system), which of the filters its name passes: RE2 asked once per name, not per event */
  private readonly nameHits = new Map<string, boolean[]>();

  private hitsOf(name: string, system: string | undefined): boolean[] {
    const key = system === undefined ? name : `${system}/${name}`;
    let hits = this.nameHits.get(key);
    if (!hits) {
      const e = { name, system } as FilterEvent;
      hits = this.all.map((f) => f.events.some((p) => eventMatches(p, e)));
      // names come from the input: a bounded cache, asked again past it
      if (this.nameHits.size < 4096) this.nameHits.set(key, hits);
    }
    return hits;
  }

  /** Whether an event of this name (text traces: no system) can match at all, before its payload is looked at. */
  selectsName(name: string, system?: string): boolean {
    return this.hitsOf(name, system).some(Boolean);
  }

  matches(e: FilterEvent): boolean {
    let fieldsOf: string | null = null;
    const hits = this.hitsOf(e.name, e.system);
    for (let k = 0; k < this.all.length; k++) {
      const f = this.all[k];
      if (!hits[k]) continue;
      if (!f.expr) return true;
      if (f.needsFields && !e.raw && fieldsOf !== e.payload) {
        this.fields.clear();
        payloadFields(e.payload, (k, v) => {
          if (!this.fields.has(k)) this.fields.set(k, v);
        });
        fieldsOf = e.payload;
      }
      if (evaluate(f.expr, e, this.fields)) return true;
    }
    return false;
  }
}

function eventMatches(p: { system: RE2JS | null; name: RE2JS }, e: FilterEvent): boolean {
  if (p.system) return p.name.matches(e.name) && (e.system === undefined || p.system.matches(e.system));
  return p.name.matches(e.name) || (e.system !== undefined && p.name.matches(e.system));
}

// ---------------------------------------------------------------- evaluation

function evaluate(n: Node, e: FilterEvent, fields: Map<string, string>): boolean {
  switch (n.k) {
    case 'and':
      return evaluate(n.a, e, fields) && evaluate(n.b, e, fields);
    case 'or':
      return evaluate(n.a, e, fields) || evaluate(n.b, e, fields);
    case 'not':
      return !evaluate(n.a, e, fields);
    case 'num': {
      const v = intOf(n.field, e, fields);
      if (v === undefined) return false;
      return compare(n.op, v, n.value);
    }
    case 'str': {
      const regex = n.op === Op.Match || n.op === Op.NoMatch;
      const s = textOf(n.field, e, fields, regex);
      if (s === undefined) return false;
      if (n.op === Op.Eq) return s === n.value;
      if (n.op === Op.Ne) return s !== n.value;
      const hit = n.re!.test(s);
      return n.op === Op.Match ? hit : !hit;
    }
  }
}

function compare(op: Op, a: bigint, b: bigint): boolean {
  switch (op) {
    case Op.Eq:
      return a === b;
    case Op.Ne:
      return a !== b;
    case Op.Ge:
      return a >= b;
    case Op.Le:
      return a <= b;
    case Op.Gt:
      return a > b;
    case Op.Lt:
      return a < b;
    case Op.And:
      return (a & b) !== 0n;
    case Op.Or:
      return (a | b) !== 0n;
    case Op.Xor:
      return (a ^ b) !== 0n;
    case Op.Add:
      return ((a + b) & MASK) !== 0n;
    case Op.Sub:
      return ((a - b) & MASK) !== 0n;
    case Op.Mul:
      return ((a * b) & MASK) !== 0n;
    case Op.Div:
      return a / b !== 0n;
    case Op.Mod:
      return a % b !== 0n;
    default:
      return false;
  }
}

const u64 = (n: number): bigint => BigInt.asUintN(64, BigInt(n));

function intOf(field: string, e: FilterEvent, fields: Map<string, string>): bigint | undefined {
  if (field === 'CPU') return u64(e.cpu);
  if (field === 'COMM') return undefined;
  if (field === 'TGID') return e.tgid === null || e.tgid < 0 ? undefined : u64(e.tgid);
  if (field === 'common_pid') return u64(e.pid);
  if (e.raw) return e.raw.int(field);
  const t = fields.get(field);
  return t === undefined ? undefined : textInteger(t);
}

function textOf(field: string, e: FilterEvent, fields: Map<string, string>, regex: boolean): string | undefined {
  if (field === 'COMM') return e.comm;
  if (field === 'CPU' || field === 'TGID' || field === 'common_pid') {
    const v = intOf(field, e, fields);
    return v === undefined ? undefined : regex ? '' : '0x' + v.toString(16);
  }
  if (e.raw) return e.raw.text(field, regex);
  return fields.get(field);
}

/** A text payload's value as a u64: decimal (a leading `-` two's complement) or `0x` hex, whole; undefined otherwise. */
export function textInteger(t: string): bigint | undefined {
  const n = t.length;
  if (n === 0 || n > 40) return undefined;
  let i = 0;
  const neg = t.charCodeAt(0) === 45;
  if (neg) i++;
  let hex = false;
  if (n - i > 2 && t.charCodeAt(i) === 48 && (t.charCodeAt(i + 1) | 32) === 120) {
    hex = true;
    i += 2;
  }
  if (i >= n) return undefined;
  for (let k = i; k < n; k++) {
    const c = t.charCodeAt(k);
    const ok = (c >= 48 && c <= 57) || (hex && (c | 32) >= 97 && (c | 32) <= 102);
    if (!ok) return undefined;
  }
  const v = BigInt(hex ? '0x' + t.slice(i) : t.slice(i));
  return BigInt.asUintN(64, neg ? -v : v);
}

// ---------------------------------------------------------------- parsing

/** `text` scanned once; every token's start column kept for errors. */
function parseOne(text: string): One {
  const n = text.length;
  // the EVENTS part ends at the first ':' (no pattern holds one)
  let colon = text.indexOf(':');
  if (colon < 0) colon = n;
  const events: One['events'] = [];
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
      p.lastTerm === 'arith' ? `expected the end of the filter: an arithmetic term stands alone` : `expected '&&', '||' or the end of the filter`,
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
  /** what the last term parsed was: a comparison, or an arithmetic term (which nothing may follow) */
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
  expr(depth: number): Node {
    let left = this.term(depth);
    for (;;) {
      this.skip();
      const s = this.s;
      const two = s.slice(this.at, this.at + 2);
      if (two !== '&&' && two !== '||') return left;
      if (this.lastTerm === 'arith') this.fail(`expected the end of the filter: an arithmetic term stands alone, without '${two}'`);
      this.at += 2;
      this.skip();
      if (this.at >= s.length) this.fail(`expected a comparison after '${two}'`);
      const right = this.term(depth);
      if ((this.lastTerm as string) === 'arith') this.fail(`an arithmetic term stands alone, not after '${two}'`, this.at - 1);
      left = { k: two === '&&' ? 'and' : 'or', a: left, b: right };
    }
  }

  private term(depth: number): Node {
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

  private comparison(): Node {
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
