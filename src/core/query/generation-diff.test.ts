import { describe, expect, it } from 'vitest';
import { ExplorerData } from './explorer-data.ts';
import { handCapture, sampleCapture, handStacks } from '../testing/explorer-fixtures.ts';
import { framesApart, generationDiff } from './generation-diff.ts';
import { topStacks } from './top-stacks.ts';

describe('generation diff', () => {
  it('hand capture: only in A, only in B, changed', () => {
    const c = handCapture();
    const d = new ExplorerData(c);
    const { S1, S2, S3 } = handStacks(c);
    expect(generationDiff(d, 1, 2)).toEqual({
      a: 1,
      b: 2,
      // S1 and S3 share the leaf a+0x1: the next frame tells them apart
      onlyA: [
        { stack: S1, leaf: 'a+0x1', a: 3, b: 0, apart: 'b+0x2', apartAt: 1, depth: 2 },
        { stack: S3, leaf: 'a+0x1', a: 1, b: 0, apart: 'd+0x4', apartAt: 1, depth: 4 },
      ],
      onlyB: [],
      changed: [{ stack: S2, leaf: 'c+0x3', a: 1, b: 2, apart: 'c+0x3', apartAt: 0, depth: 2 }],
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

  it('the frame that tells a stack apart: past the longest prefix shared with any other', () => {
    expect(framesApart([['x', 'y'], ['x', 'y', 'z'], ['w'], ['x', 'q']])).toEqual([
      { at: 2, frame: null },
      { at: 2, frame: 'z' },
      { at: 0, frame: 'w' },
      { at: 1, frame: 'q' },
    ]);
  });

  it('sample: each row is told apart from every other row by its frames up to `apart` (checked pair by pair)', () => {
    const c = sampleCapture();
    const d = new ExplorerData(c);
    const r = generationDiff(d, 1, 2);
    const rows = [...r.onlyA, ...r.onlyB, ...r.changed];
    const frames = rows.map((x) => c.stacks.framesOf(x.stack));
    const sameLeaf = rows.filter((x) => rows.some((y) => y !== x && y.leaf === x.leaf));
    expect(sameLeaf.length).toBeGreaterThan(10);
    rows.forEach((x, i) => {
      if (x.apart === null) return;
      expect(frames[i][x.apartAt]).toBe(x.apart);
      const prefix = frames[i].slice(0, x.apartAt + 1).join('\n');
      const shorter = frames[i].slice(0, x.apartAt).join('\n');
      for (let j = 0; j < rows.length; j++) {
        if (j === i) continue;
        // nobody else starts with the prefix through `apart` ...
        expect(frames[j].slice(0, x.apartAt + 1).join('\n')).not.toBe(prefix);
      }
      // ... and it is the shortest such prefix: someone shares the one before it
      if (x.apartAt > 0) expect(frames.some((f, j) => j !== i && f.slice(0, x.apartAt).join('\n') === shorter)).toBe(true);
    });
  });
});
