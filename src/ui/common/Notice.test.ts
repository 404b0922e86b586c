import { describe, expect, it } from 'vitest';
import { noticeText } from './Notice.tsx';

describe('the dropped-state notice', () => {
  it('is one line naming what was dropped', () => {
    expect(noticeText([{ what: 'stack', hash: '1a2b3c4d5e6f7a8b' }])).toBe("the link's stack 1a2b3c4d5e6f7a8b is not in this capture; dropped");
    expect(noticeText([{ what: 'stack-index', value: '40', index: true }])).toBe(
      "the link's stack 40 is an internal index of some other capture, not a stack_hash; dropped",
    );
    expect(
      noticeText([
        { what: 'stack', hash: '1a2b3c4d5e6f7a8b' },
        { what: 'generation', generation: 12000 },
        { what: 'cpus', cpus: [5, 7] },
        { what: 'range', range: [1.5, 2] },
      ]),
    ).toBe("the link's stack 1a2b3c4d5e6f7a8b, generation 12,000 and CPUs 5, 7 are not in this capture; its range 1.500000–2.000000 is outside it; dropped");
    expect(noticeText([{ what: 'cpus', cpus: [5] }])).toBe("the link's CPU 5 is not in this capture; dropped");
    expect(noticeText([])).toBe('');
  });
});
