/**
 * Text from a capture (comm names, symbols, file names, diagnostics, query results) made safe to
 * print where a terminal or a line-based format reads it: a capture must not be able to clear the
 * user's screen (ESC [2J), retitle the window (ESC ] 0 ; ... BEL), move the cursor (CR, BS), end
 * a line early (LF) or reorder what is shown (bidi overrides, "Trojan source").
 *
 * `escapeControls` writes each such character as a C-style escape, as `ls -b` does: `\t`, `\n`,
 * `\r`, `\xHH` for the other C0 controls, DEL and the C1 controls (U+0080-U+009F, which some
 * terminals obey even as UTF-8), `\uHHHH` for the bidi controls and the line and paragraph
 * separators; a backslash becomes `\\`, so the escaped text reads back unambiguously. Everything
 * else (any other Unicode) is left as it is.
 */

// one character class, no alternation or nesting: linear in the text, no backtracking
const UNSAFE = /[\\\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const UNSAFE_TEST = /[\\\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

const NAMED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

const hex = (c: string, digits: number) => c.charCodeAt(0).toString(16).padStart(digits, '0');

function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  return c.charCodeAt(0) < 0x100 ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`;
}

/** `s` with every control character (C0, DEL, C1, bidi controls, U+2028/9) and backslash escaped. */
export function escapeControls(s: string): string {
  return UNSAFE_TEST.test(s) ? s.replace(UNSAFE, escapeOne) : s;
}

/** Several lines of text (a message DuckDB wraps, a stack trace): each line escaped, the line breaks kept. */
export function escapeLines(s: string): string {
  return s.split('\n').map(escapeControls).join('\n');
}

// what JSON.stringify leaves raw in a string: it escapes U+0000-U+001F, `"` and `\` only
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/**
 * JSON.stringify for a terminal: also DEL, the C1 controls and the bidi controls written as
 * `\uHHHH`. They can stand only inside strings, where the escape is the same character, so the
 * text parses to the same value.
 */
export function jsonForTerminal(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(JSON_UNSAFE, (c) => `\\u${hex(c, 4)}`);
}
