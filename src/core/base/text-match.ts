/**
 * A user's search text as a predicate on the text a pane shows (frames like `__kmalloc+0x294`,
 * function names): `/regex/flags` is a regular expression, anything else a case-insensitive
 * substring; '' (or blank) matches everything.
 *
 * A regex is never run on the engine the browser has: it runs on the step-counting matcher of
 * bounded-regex.ts, which throws "pattern too slow" past its budget instead of hanging the worker.
 */

import { compileRegex, PatternError, type PatternOptions } from './bounded-regex.ts';

export { DEFAULT_BUDGET_MS, PatternError, TOO_SLOW, type PatternFailure, type PatternOptions } from './bounded-regex.ts';

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
  return compileRegex(parts.body, parts.flags, opts);
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
