import { describe, expect, it } from 'vitest';
import { ExplorerData } from './explorer-data.ts';
import { handCapture, sampleCapture, stackOf } from './explorer-fixtures.ts';
import { generationDiff } from './generation-diff.ts';
import { topStacks } from './top-stacks.ts';

describe('generation diff', () => {
  it('hand capture: only in A, only in B, changed', () => {
    const c = handCapture();
    const d = new ExplorerData(c);
    const S1 = stackOf(c, ['a+0x1', 'b+0x2']);
    const S2 = stackOf(c, ['c+0x3', 'b+0x2']);
    const S3 = stackOf(c, ['a+0x1', 'd+0x4', 'a+0x9', 'b+0x2']);
    expect(generationDiff(d, 1, 2)).toEqual({
      a: 1,
      b: 2,
      onlyA: [
        { stack: S1, leaf: 'a+0x1', a: 3, b: 0 },
        { stack: S3, leaf: 'a+0x1', a: 1, b: 0 },
      ],
      onlyB: [],
      changed: [{ stack: S2, leaf: 'c+0x3', a: 1, b: 2 }],
    });
    const r = generationDiff(d, 2, 'none');
    expect([r.onlyA.length, r.onlyB.length, r.changed.length]).toEqual([1, 0, 0]);
  });

  it('sample: every stack of each side is accounted for', () => {
    const d = new ExplorerData(sampleCapture());
    const r = generationDiff(d, 1, 2);
    const sideA = topStacks(d, { selection: { range: null, generation: 1, cpus: null }, filter: '', limit: 1e9 }).rows;
    const sideB = topStacks(d, { selection: { range: null, generation: 2, cpus: null }, filter: '', limit: 1e9 }).rows;
    const same = sideA.filter((x) => sideB.some((y) => y.stack === x.stack && y.count === x.count)).length;
    expect(r.onlyA.length + r.changed.length + same).toBe(sideA.length);
    expect(r.onlyB.length + r.changed.length + same).toBe(sideB.length);
    for (const x of r.changed) expect(x.a).not.toBe(x.b);
  });
});
