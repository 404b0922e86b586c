import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, formatView, parseView } from './view-url.ts';

describe('view <-> query string', () => {
  it('leaves the defaults out', () => {
    expect(formatView(DEFAULT_VIEW)).toBe('');
    expect(parseView('')).toEqual(DEFAULT_VIEW);
  });

  it('round-trips every part of a view', () => {
    const v = {
      ...DEFAULT_VIEW,
      range: [5123.000848, 5123.5] as [number, number],
      window: [5123.1, 5123.9] as [number, number],
      generation: 3,
      cpus: [0, 2],
      stack: 47,
      flameMode: 'sandwich' as const,
      flameWeight: 'refcount' as const,
      flameFocus: '__kmalloc',
      flameZoom: ['all', 'do_syscall_64'],
      flameSearch: '/wake_up/',
      filter: 'kmalloc',
      lanes: 'task' as const,
      theme: 'dark' as const,
      diff: [4, 'none'] as [number, 'none'],
    };
    expect(parseView(formatView(v))).toEqual(v);
  });

  it('keeps keys it does not own and ignores nonsense', () => {
    expect(formatView({ ...DEFAULT_VIEW, generation: 2 }, '?view=simulator&gen=1')).toBe('?view=simulator&gen=2');
    const v = parseView('?range=3,1&gen=x&cpus=a&stack=-4&flame=sideways&lanes=gpu&theme=pink');
    expect(v).toEqual(DEFAULT_VIEW);
    expect(parseView('?gen=none').generation).toBe('none');
  });
});
