import { describe, expect, it } from 'vitest';
import { compileRegex, PatternError, TOO_SLOW } from './bounded-regex.ts';

/** xorshift32: the same "random" patterns on every run */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** A random pattern over a small alphabet, from the constructs the matcher implements. */
function randomPattern(r: () => number, depth = 0): string {
  const pick = <T,>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const atom = (): string => {
    const k = r();
    if (depth < 2 && k < 0.18) return `(${randomPattern(r, depth + 1)})`;
    if (depth < 2 && k < 0.26) return `(?:${randomPattern(r, depth + 1)})`;
    if (depth < 2 && k < 0.3) return `(?${pick(['=', '!'])}${randomPattern(r, depth + 1)})`;
    if (k < 0.38) return pick(['[ab]', '[^a]', '[a-c_]', '[\\d+]', '[^\\w]', '[]', '[^]', '[A-B]']);
    if (k < 0.48) return pick(['\\w', '\\W', '\\d', '\\s', '.', '\\+', '\\x61', '\\u0062']);
    if (k < 0.6) return pick(['\\1', '\\2']);
    return pick(['a', 'b', 'A', '_', '+', '0', 'x', '{', '}']);
  };
  const term = (): string => {
    const k = r();
    if (k < 0.06) return pick(['^', '$', '\\b', '\\B']);
    const a = atom();
    const q = r();
    const quant = q < 0.15 ? '*' : q < 0.25 ? '+' : q < 0.33 ? '?' : q < 0.38 ? pick(['{2}', '{0,2}', '{1,}']) : '';
    return a + quant + (quant && r() < 0.3 ? '?' : '');
  };
  const alt = () => Array.from({ length: 1 + Math.floor(r() * 3) }, term).join('');
  return r() < 0.2 ? `${alt()}|${alt()}` : alt();
}

function randomText(r: () => number): string {
  const chars = 'aabAB_+0x{} \n';
  return Array.from({ length: Math.floor(r() * 9) }, () => chars[Math.floor(r() * chars.length)]).join('');
}
describe('the bounded regex engine', () => {
  it('agrees with the JavaScript engine on 3,000 random patterns and texts', () => {
    const r = rng(20261201);
    let compared = 0;
    let matched = 0;
    const slow: string[] = [];
    for (let n = 0; n < 3000; n++) {
      const body = randomPattern(r);
      const flags = r() < 0.3 ? 'i' : r() < 0.1 ? 'm' : r() < 0.1 ? 's' : '';
      let native: RegExp;
      try {
        native = new RegExp(body, flags);
      } catch {
        continue;
      }
      // a step budget, not a clock: the comparison does not depend on the machine's load
      const ours = compileRegex(body, flags, { budgetMs: Infinity, maxSteps: 2_000_000 });
      for (let t = 0; t < 12; t++) {
        const text = randomText(r);
        const want = native.test(text);
        let got: boolean;
        try {
          got = ours(text);
        } catch (e) {
          // nested repeats over a short text: counted, and must stay rare
          if (!(e instanceof PatternError) || e.reason !== 'too-slow') throw e;
          slow.push(body);
          break;
        }
        if (got !== want) expect({ body, flags, text, got }).toEqual({ body, flags, text, got: want });
        compared++;
        if (want) matched++;
      }
    }
    expect(compared).toBeGreaterThan(20_000);
    expect(slow.length).toBeLessThan(10);
    // both outcomes are well represented, so agreement is not trivial
    expect(matched).toBeGreaterThan(compared * 0.2);
    expect(matched).toBeLessThan(compared * 0.8);
  });

  it('hand-picked semantics: back references, lazy repeats, empty iterations, case folding', () => {
    const cases: [string, string, string][] = [
      ['(a)\\1', '', 'aa'],
      // captures inside a repeat are reset at each iteration
      ['^(?:(a)|b)+\\1$', '', 'ab'],
      // a lookahead that matched, followed by a failure, leaves no capture behind
      ['(?:(?=(a))x|a)\\1', '', 'ab'],
      ['(a)|\\1b', '', 'b'],
      ['(?:(a)|b)\\1', '', 'ba'],
      ['(a*)*b', '', 'aaab'],
      ['(a*?)+?$', '', 'aa'],
      ['(?:a|())*\\1b', '', 'ab'],
      ['(?=(a))\\1', '', 'a'],
      ['(?!(a))\\1b', '', 'b'],
      ['[^a]', 'i', 'A'],
      ['\\w+\\b', '', '__kmalloc+0x294'],
      ['^x$', 'm', 'a\nx\nb'],
      ['a.b', 's', 'a\nb'],
      ['\\k<n>(?<n>a)', '', 'a'],
      ['[\\w-+]', '', '-'],
      ['\\c_', '', '\\c_'],
      ['a{,2}', '', 'a{,2}'],
      ['\\0', '', '\0'],
      ['[\\b]', '', '\b'],
    ];
    for (const [body, flags, text] of cases) {
      const want = new RegExp(body, flags).test(text);
      expect([body, compileRegex(body, flags)(text)]).toEqual([body, want]);
    }
  });

  it('a pathological pattern gives up with "pattern too slow" (its time budget; the step budget deterministically)', () => {
    const names = ['kmem_cache_alloc_node_trace_', 'try_to_wake_up_abcdefghijkl', '__kmalloc_node_track_caller_'];
    let error: unknown = null;
    try {
      // one budget for all the tests of a compiled pattern
      const test = compileRegex('^(\\w+)*!$', '', { budgetMs: 200 });
      for (const name of names) test(name);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PatternError);
    expect((error as PatternError).reason).toBe('too-slow');
    expect((error as Error).message.startsWith(TOO_SLOW)).toBe(true);
    // the step budget gives the same answer, deterministically
    expect(() => compileRegex('^(\\w+)*!$', '', { maxSteps: 100_000 })(names[0])).toThrow(TOO_SLOW);
    // the same pattern on a short text is simply answered
    expect(compileRegex('^(\\w+)*!$', '')('ab!')).toBe(true);
  });
});
