/**
 * A user's search text as a predicate on the text a pane shows (frames like `__kmalloc+0x294`,
 * function names): `/regex/flags` is a regular expression, anything else a case-insensitive
 * substring; '' (or blank) matches everything.
 *
 * A regex is never run on the engine the browser has: a backtracking engine cannot be
 * interrupted, and `/^(\w+)*!$/` against a 30-character frame name takes minutes. It runs on the
 * small backtracking matcher below, which has JavaScript's semantics for everything it accepts
 * and counts its steps: past the budget (time, and optionally steps) it throws "pattern too
 * slow" instead of hanging the worker. Syntax is checked by `new RegExp` first (compiling does
 * not backtrack), so an invalid pattern gets the browser's own message.
 */

export type PatternFailure = 'invalid' | 'unsupported' | 'too-slow';

export class PatternError extends Error {
  constructor(
    message: string,
    readonly reason: PatternFailure,
  ) {
    super(message);
    this.name = 'PatternError';
  }
}

/** The words every "too slow" message starts with (the UI and tests look for them). */
export const TOO_SLOW = 'pattern too slow';

export interface PatternOptions {
  /** wall-clock budget for all the tests of one compiled pattern together (default 1000 ms) */
  budgetMs?: number;
  /** a step budget as well (deterministic, for tests); default none */
  maxSteps?: number;
  now?: () => number;
}

export const DEFAULT_BUDGET_MS = 1000;

/** `/body/flags` split, or null for a plain substring. */
export function regexParts(query: string): { body: string; flags: string } | null {
  const q = query.trim();
  if (q.length < 2 || q[0] !== '/') return null;
  const end = q.lastIndexOf('/');
  if (end === 0) return null;
  const flags = q.slice(end + 1);
  // `/a/b` without valid-looking flags is a substring search for that text
  if (!/^[a-z]*$/.test(flags)) return null;
  return { body: q.slice(1, end), flags };
}

/**
 * Strict: throws PatternError at once for an invalid or unsupported regex; the returned test
 * throws PatternError('pattern too slow …') once the budget of this pattern is spent.
 */
export function compilePattern(query: string, opts: PatternOptions = {}): (text: string) => boolean {
  const q = query.trim();
  if (q === '') return () => true;
  const parts = regexParts(q);
  if (!parts) {
    const needle = q.toLowerCase();
    return (text) => text.toLowerCase().includes(needle);
  }
  const { body, flags } = parts;
  try {
    new RegExp(body, flags);
  } catch (e) {
    throw new PatternError((e as Error).message, 'invalid');
  }
  if (flags.includes('v')) throw new PatternError('the v flag (set notation) is not supported in search', 'unsupported');
  const program = parsePattern(body, flags);
  return matcher(program, flags, opts);
}

/**
 * Lenient, for callers without a place to show an error: an invalid or unsupported regex matches
 * nothing. A pattern that runs out of budget still throws: silently matching nothing would lie.
 */
export function compileMatcher(query: string, opts: PatternOptions = {}): (text: string) => boolean {
  try {
    return compilePattern(query, opts);
  } catch (e) {
    if (e instanceof PatternError && e.reason !== 'too-slow') return () => false;
    throw e;
  }
}

/** The strict matcher applied once per text of a table: mask[i] = 1 when texts[i] matches. */
export function matchMask(texts: readonly string[], query: string, opts: PatternOptions = {}): Uint8Array {
  const test = compilePattern(query, opts);
  const mask = new Uint8Array(texts.length);
  for (let i = 0; i < texts.length; i++) if (test(texts[i])) mask[i] = 1;
  return mask;
}

/** The message of a failed search, for the line under a search field; null for other errors. */
export function patternMessage(e: unknown): string | null {
  return e instanceof PatternError ? e.message : null;
}

// ---------------------------------------------------------------------------------------------
// The pattern, parsed. Node kinds follow the ECMAScript grammar (with Annex B's lenient forms).

type CharTest = (c: number) => boolean;

type Node =
  | { t: 'char'; test: CharTest; negate: boolean }
  | { t: 'seq'; items: Node[] }
  | { t: 'alt'; alts: Node[] }
  | { t: 'group'; index: number; body: Node }
  | { t: 'look'; negate: boolean; body: Node }
  | { t: 'rep'; body: Node; min: number; max: number; greedy: boolean; capFrom: number; capTo: number }
  | { t: 'assert'; kind: '^' | '$' | 'b' | 'B' }
  | { t: 'backref'; index: number }
  | { t: 'backrefName'; name: string };

interface Program {
  root: Node;
  groups: number;
  names: Map<string, number>;
}

const isDigit = (c: string) => c >= '0' && c <= '9';
const isHex = (c: string) => /^[0-9a-fA-F]$/.test(c);
const isLineTerminator = (c: number) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
const isWordCode = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isSpaceCode = (c: number) =>
  (c >= 9 && c <= 13) || c === 32 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
const isDigitCode = (c: number) => c >= 48 && c <= 57;

const CLASS_ESCAPES: Record<string, CharTest> = {
  d: isDigitCode,
  D: (c) => !isDigitCode(c),
  w: isWordCode,
  W: (c) => !isWordCode(c),
  s: isSpaceCode,
  S: (c) => !isSpaceCode(c),
};

const unsupported = (what: string) => new PatternError(`${what} is not supported in search`, 'unsupported');

/** Groups and their names, counted before parsing so `\N` can tell a back reference from an octal escape. */
function countGroups(src: string): { groups: number; names: Map<string, number> } {
  let groups = 0;
  const names = new Map<string, number>();
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') {
      if (src[i + 1] !== '?') groups++;
      else if (src[i + 2] === '<' && src[i + 3] !== '=' && src[i + 3] !== '!') {
        groups++;
        const end = src.indexOf('>', i);
        names.set(src.slice(i + 3, end), groups);
      }
    }
  }
  return { groups, names };
}

function parsePattern(src: string, flags: string): Program {
  const unicode = flags.includes('u');
  const { groups, names } = countGroups(src);
  let pos = 0;
  let nextGroup = 1;
  const peek = (o = 0) => src[pos + o] ?? '';
  const single = (code: number): Node => ({ t: 'char', negate: false, test: (c) => c === code });

  const disjunction = (): Node => {
    const alts = [alternative()];
    while (peek() === '|') {
      pos++;
      alts.push(alternative());
    }
    return alts.length === 1 ? alts[0] : { t: 'alt', alts };
  };

  const alternative = (): Node => {
    const items: Node[] = [];
    while (pos < src.length && peek() !== '|' && peek() !== ')') items.push(term());
    return items.length === 1 ? items[0] : { t: 'seq', items };
  };

  /** `{n}`, `{n,}`, `{n,m}` at pos, or null (then `{` is a literal, Annex B). */
  const braces = (): { min: number; max: number; end: number } | null => {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(pos));
    if (!m) return null;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    return { min, max, end: pos + m[0].length };
  };

  const term = (): Node => {
    const groupsBefore = nextGroup;
    const c = peek();
    let atom: Node;
    let quantifiable = true;
    if (c === '^' || c === '$') {
      pos++;
      return { t: 'assert', kind: c };
    }
    if (c === '\\' && (peek(1) === 'b' || peek(1) === 'B')) {
      pos += 2;
      return { t: 'assert', kind: peek(-1) as 'b' | 'B' };
    }
    if (c === '(') {
      pos++;
      if (peek() === '?') {
        const k = peek(1);
        if (k === ':') {
          pos += 2;
          atom = disjunction();
        } else if (k === '=' || k === '!') {
          pos += 2;
          atom = { t: 'look', negate: k === '!', body: disjunction() };
          // Annex B lets a lookahead be quantified, but never in unicode mode
          quantifiable = !unicode;
        } else if (k === '<' && (peek(2) === '=' || peek(2) === '!')) {
          throw unsupported('lookbehind');
        } else if (k === '<') {
          const end = src.indexOf('>', pos);
          pos = end + 1;
          const index = nextGroup++;
          atom = { t: 'group', index, body: disjunction() };
        } else {
          throw unsupported(`the group (?${k}`);
        }
      } else {
        const index = nextGroup++;
        atom = { t: 'group', index, body: disjunction() };
      }
      pos++; // ')'
    } else if (c === '[') {
      atom = charClass();
    } else if (c === '.') {
      pos++;
      const dotAll = flags.includes('s');
      atom = { t: 'char', negate: false, test: dotAll ? () => true : (x) => !isLineTerminator(x) };
    } else if (c === '\\') {
      pos++;
      atom = atomEscape();
    } else {
      pos++;
      atom = single(c.charCodeAt(0));
    }
    if (!quantifiable) return atom;
    let min = 1;
    let max = 1;
    const q = peek();
    if (q === '*') [min, max] = [0, Infinity];
    else if (q === '+') [min, max] = [1, Infinity];
    else if (q === '?') [min, max] = [0, 1];
    else if (q === '{') {
      const b = braces();
      if (!b) return atom;
      [min, max] = [b.min, b.max];
      pos = b.end - 1;
    } else return atom;
    pos++;
    let greedy = true;
    if (peek() === '?') {
      greedy = false;
      pos++;
    }
    return { t: 'rep', body: atom, min, max, greedy, capFrom: groupsBefore, capTo: nextGroup };
  };

  /** after a backslash outside a class */
  const atomEscape = (): Node => {
    const c = peek();
    if (CLASS_ESCAPES[c]) {
      pos++;
      return { t: 'char', negate: false, test: CLASS_ESCAPES[c] };
    }
    if (c >= '1' && c <= '9') {
      const m = /^\d+/.exec(src.slice(pos))!;
      const n = Number(m[0]);
      if (n <= groups) {
        pos += m[0].length;
        return { t: 'backref', index: n };
      }
      if (c === '8' || c === '9') {
        pos++;
        return single(c.charCodeAt(0));
      }
      return single(legacyOctal());
    }
    if (c === 'k' && names.size > 0) {
      const end = src.indexOf('>', pos);
      const name = src.slice(pos + 2, end);
      pos = end + 1;
      return { t: 'backrefName', name };
    }
    return single(characterEscape(false));
  };

  /** \0 and legacy octal escapes (\12, \377), at pos on the first digit */
  const legacyOctal = (): number => {
    let v = 0;
    let n = 0;
    while (n < 3 && peek() >= '0' && peek() <= '7' && v * 8 + Number(peek()) <= 0o377) {
      v = v * 8 + Number(peek());
      pos++;
      n++;
    }
    return v;
  };

  /** a character escape after a backslash (pos on the letter); returns the code unit */
  const characterEscape = (inClass: boolean): number => {
    const c = peek();
    pos++;
    switch (c) {
      case 't':
        return 9;
      case 'n':
        return 10;
      case 'v':
        return 11;
      case 'f':
        return 12;
      case 'r':
        return 13;
      case '0':
        if (!isDigit(peek())) return 0;
        pos--;
        return legacyOctal();
      case 'c': {
        const l = peek();
        if (/^[a-zA-Z]$/.test(l) || (inClass && /^[0-9_]$/.test(l))) {
          pos++;
          return l.charCodeAt(0) % 32;
        }
        // Annex B: a backslash that escapes nothing is itself
        pos--;
        return 92;
      }
      case 'x':
        if (isHex(peek()) && isHex(peek(1))) {
          pos += 2;
          return parseInt(src.slice(pos - 2, pos), 16);
        }
        return 120;
      case 'u': {
        if (unicode && peek() === '{') {
          const end = src.indexOf('}', pos);
          const cp = parseInt(src.slice(pos + 1, end), 16);
          if (cp > 0xffff) throw unsupported('a code point beyond U+FFFF');
          pos = end + 1;
          return cp;
        }
        const h = src.slice(pos, pos + 4);
        if (/^[0-9a-fA-F]{4}$/.test(h)) {
          pos += 4;
          return parseInt(h, 16);
        }
        return 117;
      }
      case 'p':
      case 'P':
        if (unicode) throw unsupported('\\p{…}');
        return c.charCodeAt(0);
      default:
        if (inClass && c >= '1' && c <= '7') {
          pos--;
          return legacyOctal();
        }
        return c.charCodeAt(0);
    }
  };

  const charClass = (): Node => {
    pos++; // '['
    let negate = false;
    if (peek() === '^') {
      negate = true;
      pos++;
    }
    const tests: CharTest[] = [];
    const ranges: [number, number][] = [];
    /** one class atom: a code unit, or a class escape's test */
    const classAtom = (): number | CharTest => {
      const c = peek();
      if (c === '\\') {
        pos++;
        const e = peek();
        if (CLASS_ESCAPES[e]) {
          pos++;
          return CLASS_ESCAPES[e];
        }
        if (e === 'b') {
          pos++;
          return 8;
        }
        if (e === '-') {
          pos++;
          return 45;
        }
        return characterEscape(true);
      }
      pos++;
      return c.charCodeAt(0);
    };
    while (pos < src.length && peek() !== ']') {
      const a = classAtom();
      if (peek() === '-' && peek(1) !== ']' && pos + 1 < src.length) {
        pos++;
        const b = classAtom();
        if (typeof a === 'number' && typeof b === 'number') ranges.push([a, b]);
        else {
          // Annex B: `[\w-z]` is \w, '-' and 'z'
          for (const x of [a, b]) typeof x === 'number' ? ranges.push([x, x]) : tests.push(x);
          ranges.push([45, 45]);
        }
      } else if (typeof a === 'number') ranges.push([a, a]);
      else tests.push(a);
    }
    pos++; // ']'
    const inSet = (c: number) => {
      for (const [lo, hi] of ranges) if (c >= lo && c <= hi) return true;
      for (const t of tests) if (t(c)) return true;
      return false;
    };
    // negated after case folding: /[^a]/i does not match 'A'
    return { t: 'char', negate, test: inSet };
  };

  const root = disjunction();
  if (pos < src.length) throw new PatternError(`unexpected "${peek()}" at ${pos}`, 'invalid');
  return { root, groups, names };
}

// ---------------------------------------------------------------------------------------------
// Matching: continuation-passing backtracking, in the order the ECMAScript spec tries things.

type Cont = (i: number) => boolean;
type Match = (i: number, k: Cont) => boolean;

/** ECMAScript's Canonicalize without the u flag */
function canon(c: number): number {
  const u = String.fromCharCode(c).toUpperCase();
  if (u.length !== 1) return c;
  const cu = u.charCodeAt(0);
  return c >= 128 && cu < 128 ? c : cu;
}
function lowerOf(c: number): number {
  const l = String.fromCharCode(c).toLowerCase();
  return l.length === 1 ? l.charCodeAt(0) : c;
}

function matcher(p: Program, flags: string, opts: PatternOptions): (text: string) => boolean {
  const icase = flags.includes('i');
  const multiline = flags.includes('m');
  const now = opts.now ?? (() => performance.now());
  const budgetMs = opts.budgetMs ?? DEFAULT_BUDGET_MS;
  const maxSteps = opts.maxSteps ?? Infinity;
  const started = now();
  let steps = 0;
  let s = '';
  const caps = new Int32Array(2 * (p.groups + 1)).fill(-1);

  const tick = () => {
    if (++steps > maxSteps || ((steps & 4095) === 0 && now() - started > budgetMs)) {
      throw new PatternError(`${TOO_SLOW}: gave up after ${Math.round(now() - started)} ms; nested repeats such as (\\w+)* try every split of the text`, 'too-slow');
    }
  };
  const wordAt = (i: number) => i >= 0 && i < s.length && isWordCode(s.charCodeAt(i));

  const compile = (n: Node): Match => {
    switch (n.t) {
      case 'char': {
        const has = icase
          ? (c: number) => {
              if (n.test(c)) return true;
              const cc = canon(c);
              return n.test(cc) || n.test(lowerOf(cc));
            }
          : n.test;
        const test = n.negate ? (c: number) => !has(c) : has;
        return (i, k) => {
          tick();
          return i < s.length && test(s.charCodeAt(i)) && k(i + 1);
        };
      }
      case 'seq': {
        const ms = n.items.map(compile);
        return ms.reduceRight<Match>(
          (next, m) => (i, k) => m(i, (j) => next(j, k)),
          (i, k) => k(i),
        );
      }
      case 'alt': {
        const ms = n.alts.map(compile);
        return (i, k) => {
          for (const m of ms) if (m(i, k)) return true;
          return false;
        };
      }
      case 'group': {
        const body = compile(n.body);
        const a = 2 * n.index;
        return (i, k) =>
          body(i, (j) => {
            const os = caps[a];
            const oe = caps[a + 1];
            caps[a] = i;
            caps[a + 1] = j;
            if (k(j)) return true;
            caps[a] = os;
            caps[a + 1] = oe;
            return false;
          });
      }
      case 'look': {
        const body = compile(n.body);
        return (i, k) => {
          tick();
          const saved = caps.slice();
          const found = body(i, () => true);
          if (n.negate) {
            caps.set(saved);
            return !found && k(i);
          }
          if (found && k(i)) return true;
          caps.set(saved);
          return false;
        };
      }
      case 'rep': {
        const body = compile(n.body);
        const { min, max, greedy } = n;
        const c0 = 2 * n.capFrom;
        const c1 = 2 * n.capTo;
        return (start, k) => {
          const loop = (count: number, i: number): boolean => {
            tick();
            if (count >= max) return k(i);
            const iterate = () => {
              // each iteration starts with the captures inside it undefined
              const saved = c1 > c0 ? caps.slice(c0, c1) : null;
              if (saved) caps.fill(-1, c0, c1);
              // an iteration past the minimum that matched nothing ends the loop
              if (body(i, (j) => (count >= min && j === i ? false : loop(count + 1, j)))) return true;
              if (saved) caps.set(saved, c0);
              return false;
            };
            if (count < min) return iterate();
            return greedy ? iterate() || k(i) : k(i) || iterate();
          };
          return loop(0, start);
        };
      }
      case 'assert':
        return (i, k) => {
          tick();
          let ok: boolean;
          if (n.kind === '^') ok = i === 0 || (multiline && isLineTerminator(s.charCodeAt(i - 1)));
          else if (n.kind === '$') ok = i === s.length || (multiline && isLineTerminator(s.charCodeAt(i)));
          else ok = (wordAt(i - 1) !== wordAt(i)) === (n.kind === 'b');
          return ok && k(i);
        };
      case 'backref':
      case 'backrefName': {
        const index = n.t === 'backref' ? n.index : (p.names.get(n.name) ?? 0);
        const a = 2 * index;
        return (i, k) => {
          tick();
          const from = caps[a];
          const to = caps[a + 1];
          if (index === 0 || from < 0 || to < 0) return k(i);
          const len = to - from;
          if (i + len > s.length) return false;
          for (let x = 0; x < len; x++) {
            const c1 = s.charCodeAt(from + x);
            const c2 = s.charCodeAt(i + x);
            if (c1 !== c2 && !(icase && canon(c1) === canon(c2))) return false;
          }
          return k(i + len);
        };
      }
    }
  };

  const root = compile(p.root);
  const accept: Cont = () => true;
  // a pattern that starts with `^` (not multiline) can only match at 0
  const first = p.root.t === 'seq' ? p.root.items[0] : p.root;
  const anchored = !multiline && first.t === 'assert' && first.kind === '^';
  return (text) => {
    s = text;
    const last = anchored ? 0 : text.length;
    try {
      for (let start = 0; start <= last; start++) {
        caps.fill(-1);
        if (root(start, accept)) return true;
      }
    } catch (e) {
      // recursion as deep as the text is long: a repeat over a very long text
      if (e instanceof RangeError) throw new PatternError(`${TOO_SLOW}: the text (${text.length} characters) is too long for this pattern`, 'too-slow');
      throw e;
    }
    return false;
  };
}
