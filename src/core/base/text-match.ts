/**
 * A user's search text as a predicate on the text a pane shows (frames like `__kmalloc+0x294`,
 * function names): `/regex/flags` is a regular expression, anything else a case-insensitive
 * substring; '' (or blank) matches everything.
 *
 * A regex is written in JavaScript's syntax (checked by `new RegExp`, which compiles without
 * matching, so an invalid pattern gets the browser's own message) but never runs on the
 * browser's backtracking engine, where `/^(\w+)*!$/` against a 30-character frame name takes
 * minutes: it runs on re2js, a port of RE2, whose time is linear in the text whatever the
 * pattern. So there is no time budget and no "too slow". What RE2 cannot do in linear time
 * (backreferences, lookahead) is refused with the pattern and the reason; lookbehind runs, through
 * re2js's linear-time lookbehinds.
 *
 * toRe2 below rewrites the few constructs both accept with different meanings, so a pattern
 * matches what it matches in JavaScript. Known differences left: with `i`, RE2 folds case the
 * Unicode way, as JavaScript does only with `u` (`/k/i` also matches the Kelvin sign U+212A);
 * with `m`, lines end at `\n` only (JavaScript also ends them at `\r`, U+2028, U+2029); without
 * `u`, RE2 still reads a surrogate pair as one character.
 *
 * re2js is imported statically: compilePattern is synchronous and called from synchronous query
 * code (top stacks, flame, the CLI), and the only bundle that reaches it is the ingest worker's.
 */

import { RE2JS } from 're2js';

export type PatternFailure = 'invalid' | 'unsupported';

/** The error every failed search pattern is reported with; its message names the pattern. */
export class PatternError extends Error {
  constructor(
    message: string,
    readonly reason: PatternFailure,
  ) {
    super(message);
    this.name = 'PatternError';
  }
}

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
 * Strict: throws PatternError at once for an invalid regex, or one RE2 cannot run. The returned
 * test never throws, and takes time linear in the text.
 */
export function compilePattern(query: string): (text: string) => boolean {
  const q = query.trim();
  if (q === '') return () => true;
  const parts = regexParts(q);
  if (!parts) {
    const needle = q.toLowerCase();
    return (text) => text.toLowerCase().includes(needle);
  }
  return compileRegex(parts.body, parts.flags);
}

/** Lenient, for callers without a place to show an error: an invalid or refused regex matches nothing. */
export function compileMatcher(query: string): (text: string) => boolean {
  try {
    return compilePattern(query);
  } catch (e) {
    if (e instanceof PatternError) return () => false;
    throw e;
  }
}

/** The strict matcher applied once per text of a table: mask[i] = 1 when texts[i] matches. */
export function matchMask(texts: readonly string[], query: string): Uint8Array {
  const test = compilePattern(query);
  const mask = new Uint8Array(texts.length);
  for (let i = 0; i < texts.length; i++) if (test(texts[i])) mask[i] = 1;
  return mask;
}

/** The message of a failed search, for the line under a search field; null for other errors. */
export function patternMessage(e: unknown): string | null {
  return e instanceof PatternError ? e.message : null;
}

// ---------------------------------------------------------------------------------------------

/** A pattern body and its flags as a test on RE2. g, y and d only matter to a stateful RegExp: ignored. */
function compileRegex(body: string, flags: string): (text: string) => boolean {
  try {
    new RegExp(body, flags);
  } catch (e) {
    throw new PatternError((e as Error).message, 'invalid');
  }
  const shown = `/${body}/${flags}`;
  if (flags.includes('v')) throw new PatternError(`search pattern ${shown}: the v flag (set notation) is not supported`, 'unsupported');
  let re2Flags = RE2JS.LOOKBEHINDS;
  if (flags.includes('i')) re2Flags |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) re2Flags |= RE2JS.MULTILINE;
  if (flags.includes('s')) re2Flags |= RE2JS.DOTALL;
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(toRe2(body, flags, shown)), re2Flags);
  } catch (e) {
    if (e instanceof PatternError) throw e;
    // RE2's message is "error parsing regexp: <reason>: `<where>`"
    const reason = (e as Error).message.replace('error parsing regexp: ', '');
    throw new PatternError(
      `search pattern ${shown}: RE2 cannot run it: ${reason} (search runs in linear time, so no lookahead, backreferences or repeat counts past 1000)`,
      'unsupported',
    );
  }
  return (text) => re.test(text);
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isOctal = (c: string | undefined) => c !== undefined && c >= '0' && c <= '7';

/** The legacy octal escape at `at` (after the backslash): its code (null for \8, \9) and the index after it. */
function legacyOctal(body: string, at: number): [number | null, number] {
  if (!isOctal(body[at])) return [null, at + 1];
  // 0-3 start up to three digits, 4-7 up to two: never past \377
  const most = body[at] <= '3' ? 3 : 2;
  let end = at + 1;
  while (end - at < most && isOctal(body[end])) end++;
  return [parseInt(body.slice(at, end), 8), end];
}

/** What `\s` means in JavaScript (WhiteSpace and LineTerminator), as class items in RE2's syntax. */
const JS_SPACE = '\\t\\n\\v\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}';
/** Its complement (`\S`), spelled out so that it also works inside a class, where RE2 cannot negate. */
const JS_NON_SPACE =
  '\\x{0}-\\x{8}\\x{e}-\\x{1f}\\x{21}-\\x{9f}\\x{a1}-\\x{167f}\\x{1681}-\\x{1fff}\\x{200b}-\\x{2027}\\x{202a}-\\x{202e}\\x{2030}-\\x{205e}\\x{2060}-\\x{2fff}\\x{3001}-\\x{fefe}\\x{ff00}-\\x{10ffff}';
/** JavaScript's `.` without the s flag: anything but a line terminator (RE2's excludes `\n` only). */
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';

/**
 * The body of a pattern JavaScript accepted, rewritten where RE2 would read the same text
 * differently; translateRegExp then does the rest (named groups, `\uXXXX`, `\u{…}`, `[]`, `[^]`).
 * Throws PatternError for a backreference. A loop over the characters, escapes and classes tracked.
 */
function toRe2(body: string, flags: string, shown: string): string {
  const unicode = flags.includes('u');
  const dotAll = flags.includes('s');
  const backref = (what: string) => new PatternError(`search pattern ${shown}: ${what} is a backreference, which RE2 cannot run in linear time`, 'unsupported');
  // `\k<name>` is a backreference once the pattern has a named group (or the u flag), else "k";
  // `\N` is one when there are N groups (or the u flag), else a legacy octal escape
  let named = false;
  let groups = 0;
  for (let i = 0, inClass = false; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(' && body[i + 1] !== '?') groups++;
    else if (c === '(' && body[i + 2] === '<' && body[i + 3] !== '=' && body[i + 3] !== '!') {
      named = true;
      groups++;
    }
  }
  let out = '';
  let inClass = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') {
      // JavaScript refused a lone trailing backslash, so there is a next character
      const e = body[++i];
      if (isDigit(e)) {
        let end = i;
        while (isDigit(body[end])) end++;
        if (!inClass && e !== '0' && (unicode || Number(body.slice(i, end)) <= groups)) throw backref(`\\${body.slice(i, end)}`);
        // Annex B's legacy octal escape: up to three octal digits, at most \377; \8 and \9 are the digits
        const [code, next] = legacyOctal(body, i);
        out += code === null ? e : `\\x{${code.toString(16)}}`;
        i = next - 1;
        continue;
      }
      if (e === 'k' && (named || unicode)) throw backref('\\k<…>');
      if (e === 'c') {
        // a control letter; in a class also a digit or _ (Annex B); else a backslash and a c
        const n = body.charCodeAt(i + 1);
        const letter = (n >= 65 && n <= 90) || (n >= 97 && n <= 122);
        if (letter || (inClass && (isDigit(body[i + 1]) || n === 95))) {
          out += `\\x{${(n % 32).toString(16)}}`;
          i++;
        } else out += '\\\\c';
        continue;
      }
      if (e === 's' || e === 'S') {
        const items = e === 's' ? JS_SPACE : JS_NON_SPACE;
        out += inClass ? items : `[${items}]`;
        // `[\s-a]` is a '-' in JavaScript, a range in RE2
        if (inClass && body[i + 1] === '-') {
          out += '\\-';
          i++;
        }
      } else if (e === 'b' && inClass)
        out += '\\x08'; // backspace in a class, a word boundary outside
      else if (!unicode && 'aAzQEpPk'.includes(e))
        out += e; // identity escapes in JavaScript, RE2 escapes (\A, \z, \Q…\E, \p{…})
      else if ((e === 'x' || (e === 'u' && !unicode)) && body[i + 1] === '{')
        out += e; // `\x{41}` is x{41} in JavaScript, `\u{41}` too without u
      else out += `\\${e}`;
    } else if (inClass) {
      if (c === ']') inClass = false;
      // a '[' in a class is itself in JavaScript; in RE2 it may open `[:alpha:]`
      out += c === '[' ? '\\[' : c;
    } else if (c === '[') {
      inClass = true;
      out += c;
      // `[]` and `[^]` end at once in JavaScript (translateRegExp rewrites them whole)
      if (body[i + 1] === '^' && body[i + 2] === ']') {
        out += '^]';
        i += 2;
        inClass = false;
      } else if (body[i + 1] === ']') {
        out += ']';
        i++;
        inClass = false;
      }
    } else if (c === '.' && !dotAll) out += JS_DOT;
    else out += c;
  }
  return out;
}
