import { describe, expect, it } from 'vitest';
import { compileMatcher, compilePattern, matchMask, PatternError, regexParts } from './text-match.ts';

describe('search text', () => {
  it('is a case-insensitive substring by default, matched against the text as shown', () => {
    const m = compilePattern('KMALLOC+0x2');
    expect(['__kmalloc+0x294', 'kmalloc_trace+0x260', '__kmalloc+0x188'].map(m)).toEqual([true, false, false]);
    expect(compilePattern('__kmalloc+0x294')('__kmalloc+0x294')).toBe(true);
  });

  it('is a regular expression between slashes, with flags; g and y do not make it stateful', () => {
    expect(compilePattern('/^__k/')('__kmalloc')).toBe(true);
    expect(compilePattern('/^__K/')('__kmalloc')).toBe(false);
    expect(compilePattern('/^__K/i')('__kmalloc')).toBe(true);
    expect(compilePattern('/\\+0x2[0-9a-f]+$/')('__kmalloc+0x294')).toBe(true);
    const g = compilePattern('/a/g');
    expect([g('a'), g('a'), g('a')]).toEqual([true, true, true]);
    expect(regexParts('/a/b c')).toBeNull();
    expect(regexParts('/')).toBeNull();
  });

  it('an invalid regex fails with the browser’s own message; the lenient matcher matches nothing', () => {
    let message = '';
    try {
      new RegExp('([');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(() => compilePattern('/([/')).toThrow(message);
    expect(() => compilePattern('/x/q')).toThrow(PatternError);
    expect(compileMatcher('/([/')('([')).toBe(false);
    expect(() => compilePattern('/(?<=a)b/')).toThrow(/lookbehind is not supported/);
    expect(compileMatcher('/(?<=a)b/')('ab')).toBe(false);
  });

  it('blank matches everything; a lone slash is a substring', () => {
    expect(compilePattern('  ')('anything')).toBe(true);
    expect(compilePattern('/')('a/b')).toBe(true);
    expect(Array.from(matchMask(['a', 'b', 'ab'], 'a'))).toEqual([1, 0, 1]);
  });
});
