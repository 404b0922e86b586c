/**
 * A search regex parsed into a tree of nodes for the step-counting matcher of bounded-regex.ts.
 * Node kinds follow the ECMAScript grammar (with Annex B's lenient forms); what the matcher does
 * not implement (lookbehind, `\p{…}`, code points beyond U+FFFF, other `(?` groups) is refused
 * by name with a PatternError, the error every failed search pattern is reported with.
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

export type CharTest = (c: number) => boolean;

export type Node =
  | { t: 'char'; test: CharTest; negate: boolean }
  | { t: 'seq'; items: Node[] }
  | { t: 'alt'; alts: Node[] }
  | { t: 'group'; index: number; body: Node }
  | { t: 'look'; negate: boolean; body: Node }
  | { t: 'rep'; body: Node; min: number; max: number; greedy: boolean; capFrom: number; capTo: number }
  | { t: 'assert'; kind: '^' | '$' | 'b' | 'B' }
  | { t: 'backref'; index: number }
  | { t: 'backrefName'; name: string };

export interface Program {
  root: Node;
  groups: number;
  names: Map<string, number>;
}

const isDigit = (c: string) => c >= '0' && c <= '9';
const isHex = (c: string) => /^[0-9a-fA-F]$/.test(c);
export const isLineTerminator = (c: number) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
export const isWordCode = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
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

export function parsePattern(src: string, flags: string): Program {
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
