import { describe, expect, it } from 'vitest';
import { ExplorerData } from './explorer-data.ts';
import { handCapture, sampleCapture, stackOf } from './explorer-fixtures.ts';
import { ALL } from './query-types.ts';
import { summarize } from './summary.ts';
import { stackOccurrences, topStacks } from './top-stacks.ts';

describe('top stacks', () => {
  const c = handCapture();
  const d = new ExplorerData(c);
  const S1 = stackOf(c, ['a+0x1', 'b+0x2']);
  const S2 = stackOf(c, ['c+0x3', 'b+0x2']);
  const S3 = stackOf(c, ['a+0x1', 'd+0x4', 'a+0x9', 'b+0x2']);

  it('ranks by occurrences, ties by first occurrence, with share, refCount, generations, bytes saved', () => {
    const r = topStacks(d, { selection: ALL, filter: '', limit: 10 });
    expect([r.total, r.matching]).toEqual([7, 3]);
    expect(r.rows).toEqual([
      // two v8 cookies (2 x (28 - 16)) and a full stack (saves nothing); hashes from Python's integers, slots from the fixture's dumps
      { stack: S1, stackHash: 'e5e29399c829f289', slots: [{ generation: 1, slot: 1 }], count: 3, share: 3 / 7, refCount: 2, generations: [1], leaf: 'a+0x1', depth: 2, bytesSaved: 24 },
      { stack: S2, stackHash: '159f8313055c2d45', slots: [{ generation: 1, slot: 2 }, { generation: 2, slot: 1 }], count: 3, share: 3 / 7, refCount: 6, generations: [1, 2], leaf: 'c+0x3', depth: 2, bytesSaved: 36 },
      { stack: S3, stackHash: '9dc3bdb379e56521', slots: [{ generation: 1, slot: 3 }], count: 1, share: 1 / 7, refCount: 1, generations: [1], leaf: 'a+0x1', depth: 4, bytesSaved: 12 + 32 - 16 },
    ]);
  });

  it('filters by function (substring or /regex/), limits, and restricts refCount to the generation', () => {
    expect(topStacks(d, { selection: ALL, filter: 'D', limit: 10 }).rows.map((x) => x.stack)).toEqual([S3]);
    const re = topStacks(d, { selection: ALL, filter: '/^[ac]$/', limit: 1 });
    expect([re.matching, re.rows.map((x) => x.stack)]).toEqual([3, [S1]]);
    // offsets are not part of the function name
    expect(topStacks(d, { selection: ALL, filter: '0x9', limit: 10 }).matching).toBe(0);
    expect(topStacks(d, { selection: ALL, filter: '/(/', limit: 10 }).rows).toEqual([]);
    const g2 = topStacks(d, { selection: { range: null, generation: 2, cpus: null }, filter: '', limit: 10 });
    expect(g2.rows.map((x) => [x.stack, x.count, x.refCount, x.generations])).toEqual([[S2, 2, 5, [2]]]);
  });

  it('a brushed range filters the stacks', () => {
    const r = topStacks(d, { selection: { range: [100.000003, 100.000005], generation: null, cpus: null }, filter: '', limit: 10 });
    expect(r.rows.map((x) => [x.stack, x.count])).toEqual([
      [S1, 2],
      [S3, 1],
    ]);
    expect(r.total).toBe(3);
  });

  it('occurrences of one stack, as timestamps', () => {
    expect(Array.from(stackOccurrences(d, S1, ALL))).toEqual([100.000001, 100.000003, 100.000004]);
    expect(Array.from(stackOccurrences(d, S2, { range: null, generation: 2, cpus: [1] }))).toEqual([101.000003]);
  });

  it('sample: agrees with summarize().top', () => {
    const s = sampleCapture();
    const top = topStacks(new ExplorerData(s), { selection: ALL, filter: '', limit: 10 });
    const sum = summarize(s);
    expect(top.rows.map((r) => [r.count, s.stacks.framesOf(r.stack)])).toEqual(sum.top.map((t) => [t.count, t.frames]));
    expect(top.total).toBe(sum.resolved + sum.fullStacks);
  });
});
