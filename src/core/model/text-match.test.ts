import { describe, expect, it } from 'vitest';
import { compileMatcher, matchMask } from './text-match.ts';

describe('search text', () => {
  it('is a case-insensitive substring by default', () => {
    const m = compileMatcher('Cache_ALLOC');
    expect(['kmem_cache_alloc', '__kmalloc', 'do_sys_open'].map(m)).toEqual([true, false, false]);
  });
  it('is a regular expression between slashes, with flags', () => {
    expect(compileMatcher('/^__k/')('__kmalloc')).toBe(true);
    expect(compileMatcher('/^__K/')('__kmalloc')).toBe(false);
    expect(compileMatcher('/^__K/i')('__kmalloc')).toBe(true);
    // a stateful flag does not make repeated tests alternate
    const g = compileMatcher('/a/g');
    expect([g('a'), g('a'), g('a')]).toEqual([true, true, true]);
  });
  it('an invalid regex matches nothing and does not throw', () => {
    expect(() => compileMatcher('/([/')).not.toThrow();
    expect(compileMatcher('/([/')('([')).toBe(false);
    expect(compileMatcher('/x/q')('x')).toBe(false);
  });
  it('blank matches everything; a lone slash is a substring', () => {
    expect(compileMatcher('  ')('anything')).toBe(true);
    expect(compileMatcher('/')('a/b')).toBe(true);
    expect(Array.from(matchMask(['a', 'b', 'ab'], 'a'))).toEqual([1, 0, 1]);
  });
});
