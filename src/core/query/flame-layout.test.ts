import { describe, expect, it } from 'vitest';
import { ExplorerData } from './explorer-data.ts';
import { handCapture } from '../testing/explorer-fixtures.ts';
import { flame } from './flame.ts';
import { layoutFlame, searchFlame } from './flame-layout.ts';
import { ALL } from './api.ts';

describe('flame layout and search', () => {
  const d = new ExplorerData(handCapture());
  const req = { selection: ALL, weight: 'occurrences', focus: null, highlightStack: null, granularity: 'function' } as const;
  // all 7 > b 7 > [a 4 > d 1 > a 1], [c 3]
  const td = flame(d, { ...req, mode: 'top-down' }).tree;

  it('nests children left to right inside their parent, widths by value', () => {
    const l = layoutFlame(td);
    expect(l.rows).toBe(5);
    const r = (i: number) => [l.x0[i], l.x1[i], l.depth[i]];
    expect(r(0)).toEqual([0, 1, 0]);
    expect(r(1)).toEqual([0, 1, 1]);
    expect(r(2)[0]).toBe(0);
    expect(r(2)[1]).toBeCloseTo(4 / 7);
    expect(r(3)[1]).toBeCloseTo(1 / 7);
    expect(r(5)[0]).toBeCloseTo(4 / 7);
    expect(r(5)[1]).toBeCloseTo(1);
  });

  it('an empty tree lays out as zero width', () => {
    const t = flame(d, { ...req, mode: 'sandwich', focus: 'nope' }).tree;
    const l = layoutFlame(t);
    expect([l.x0[0], l.x1[0]]).toEqual([0, 0]);
  });

  it('search: matched nodes and their share, nested matches counted once', () => {
    const a = searchFlame(td, 'a');
    // 'a' matches the node "a" twice (nested) and not the synthetic root "all"
    expect(Array.from(a.nodes)).toEqual([2, 4]);
    expect(a.share).toBeCloseTo(4 / 7);
    const ac = searchFlame(td, '/^(a|c)$/');
    expect(ac.share).toBeCloseTo(1);
    expect(searchFlame(td, 'D').value).toBe(1);
    expect(searchFlame(td, '').nodes.length).toBe(0);
    expect(searchFlame(td, '/[/').share).toBe(0);
    // bottom-up: b appears under a, under d>a and under c; the top-level nodes are a, c
    const bu = flame(d, { ...req, mode: 'bottom-up' }).tree;
    expect(searchFlame(bu, 'b').share).toBeCloseTo(1);
    expect(searchFlame(bu, 'a').share).toBeCloseTo(4 / 7);
  });
});
