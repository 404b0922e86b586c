/**
 * The regex engine search runs `/regex/` on: a small backtracking matcher with JavaScript's
 * semantics for everything it accepts (the pattern parsed by regex-parse.ts), which counts its
 * steps. A backtracking engine cannot be interrupted, and `/^(\w+)*!$/` against a 30-character
 * frame name takes minutes on the one the browser has; this one throws "pattern too slow" past its
 * budget (time, and optionally steps) instead of hanging the worker. Syntax is checked by
 * `new RegExp` first (compiling does not backtrack), so an invalid pattern gets the browser's own
 * message.
 */

import { isLineTerminator, isWordCode, type Node, parsePattern, PatternError, type Program } from './regex-parse.ts';

export { PatternError, type PatternFailure } from './regex-parse.ts';

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

/**
 * A pattern body and its flags as a test, on the matcher below. Throws PatternError at once for
 * an invalid or unsupported regex; the returned test throws PatternError('pattern too slow …')
 * once the budget of this pattern is spent.
 */
export function compileRegex(body: string, flags: string, opts: PatternOptions = {}): (text: string) => boolean {
  try {
    new RegExp(body, flags);
  } catch (e) {
    throw new PatternError((e as Error).message, 'invalid');
  }
  if (flags.includes('v')) throw new PatternError('the v flag (set notation) is not supported in search', 'unsupported');
  const program = parsePattern(body, flags);
  return matcher(program, flags, opts);
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
