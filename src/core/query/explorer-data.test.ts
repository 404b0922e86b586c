import { describe, expect, it, vi } from 'vitest';
import { StackTable } from '../capture/stack-table.ts';
import { ExplorerData } from './explorer-data.ts';
import { ALL, type Selection } from './api.ts';
import { isOccurrence } from './selection.ts';
import { sampleCapture } from '../testing/explorer-fixtures.ts';
import { topStacks } from './top-stacks.ts';

describe('ExplorerData.byFunction', () => {
  it('one call after another (its index kept between them) gives what a fresh ExplorerData gives', () => {
    const c = sampleCapture();
    const kept = new ExplorerData(c);
    const rows = (d: ExplorerData, sel: Selection) => {
      const r = d.byFunction(d.occurrences(sel));
      return [r.stacks, r.counts, r.first, r.weights, r.v7, r.v8, r.variants].map((a) => Array.from(a));
    };
    const sels: Selection[] = [ALL, { ...ALL, generation: 2 }, { ...ALL, cpus: [1] }, ALL];
    for (const sel of sels) expect(rows(kept, sel)).toEqual(rows(new ExplorerData(c), sel));
    // and it merges: fewer rows than stacks where offsets differ, each stack's count in its row
    const r = kept.byFunction(kept.occurrences(ALL));
    expect(r.counts.reduce((a, b) => a + b, 0)).toBe(kept.occurrences(ALL).counts.reduce((a, b) => a + b, 0));
    expect(Math.max(...r.variants)).toBeGreaterThan(1);
  });
});

describe('ExplorerData.occurrences', () => {
  it('the same selection asked again is the kept answer; any other selection is counted anew, as a fresh ExplorerData counts it', () => {
    const c = sampleCapture();
    const kept = new ExplorerData(c);
    const cols = (d: ExplorerData, sel: Selection) => {
      const o = d.occurrences(sel);
      return [o.stacks, o.counts, o.first, o.weights, o.v7, o.v8].map((a) => Array.from(a)).concat([[o.total]]);
    };
    const first = kept.occurrences(ALL);
    expect(kept.occurrences({ range: null, generation: null, cpus: null })).toBe(first);
    // selections that differ in one part each, and the same CPUs in another order (one key)
    const sels: Selection[] = [
      { ...ALL, generation: 2 },
      { ...ALL, generation: 'none' },
      { ...ALL, cpus: [1] },
      { ...ALL, cpus: [1, 0] },
      { ...ALL, cpus: [0, 1] },
      { ...ALL, range: [5123.2, 5123.6] },
      { ...ALL, range: [5123.6, 5123.2] },
      { ...ALL, range: [5123.2, 5123.7] },
      ALL,
    ];
    for (const sel of sels) expect(cols(kept, sel), JSON.stringify(sel)).toEqual(cols(new ExplorerData(c), sel));
    expect(kept.occurrences({ ...ALL, cpus: [0, 1] })).toBe(kept.occurrences({ ...ALL, cpus: [1, 0, 1] }));
    expect(kept.occurrences({ ...ALL, generation: 2 })).not.toBe(kept.occurrences({ ...ALL, generation: 3 }));
  });
});

describe('ExplorerData depths', () => {
  it("a stack's depth is its frame count, read without a depth column of every node, and the column when asked agrees", () => {
    const c = sampleCapture();
    const d = new ExplorerData(c);
    const stacks = Array.from(d.occurrences(ALL).stacks);
    expect(stacks.length).toBeGreaterThan(3);
    // depthsUpTo is the column's fill: one pass over every node
    const fill = vi.spyOn(StackTable.prototype as unknown as { depthsUpTo(n: number): void }, 'depthsUpTo');
    try {
      // a page of top stacks, and the table sorted by depth, read depths: no column of every node for them
      topStacks(d, { selection: ALL, filter: '', limit: 200 });
      topStacks(d, { selection: ALL, filter: '', limit: 200, sort: { key: 'depth', dir: 'desc' } });
      topStacks(d, { selection: ALL, filter: '', limit: 200, sort: { key: 'bytesSaved', dir: 'desc' } });
      // the second method: the stack's frame keys as the table spells them
      const got = stacks.map((s) => d.depthOf(s));
      expect(got).toEqual(stacks.map((s) => c.stacks.framesOf(s).length));
      expect(fill).not.toHaveBeenCalled();
      const column = d.node.depth;
      expect(fill).toHaveBeenCalled();
      expect(stacks.map((s) => column[s])).toEqual(got);
    } finally {
      fill.mockRestore();
    }
  });
});

describe('ExplorerData weights', () => {
  it('a capture without weights counts each record as 1 and makes no column of weights for it', () => {
    const c = sampleCapture();
    expect(c.trace.hasWeights).toBe(false);
    const made = vi.spyOn(Object.getPrototypeOf(c.trace) as { recWeight: unknown }, 'recWeight', 'get');
    try {
      const d = new ExplorerData(c);
      const o = d.occurrences(ALL);
      // the second method: each stack's records counted one by one
      expect(Array.from(o.weights)).toEqual(Array.from(o.counts));
      topStacks(d, { selection: ALL, filter: '', limit: 50 });
      topStacks(d, { selection: { ...ALL, cpus: [1] }, filter: '', limit: 50 });
      expect(made).not.toHaveBeenCalled();
      // asked for, the column is there: every record weighs 1
      expect(Array.from(d.recWeight).every((w) => w === 1)).toBe(true);
      expect(made).toHaveBeenCalled();
    } finally {
      made.mockRestore();
    }
  });
});

describe('ExplorerData record times', () => {
  it("the whole capture's occurrences and top stacks make no column of the records' times; a range's do, and agree with a scan by time", () => {
    const c = sampleCapture();
    const made = vi.spyOn(Object.getPrototypeOf(c.trace) as { recTs: unknown }, 'recTs', 'get');
    try {
      const d = new ExplorerData(c);
      const whole = d.occurrences(ALL);
      topStacks(d, { selection: ALL, filter: '', limit: 50 });
      expect(made).not.toHaveBeenCalled();
      // a range reads the records' times: the second method, every record tested by its own time
      const ts = Array.from(d.rec.ts);
      const [lo, hi] = [ts[Math.floor(ts.length / 4)], ts[Math.floor((3 * ts.length) / 4)]];
      const ranged = d.occurrences({ ...ALL, range: [lo, hi] });
      let inRange = 0;
      for (let r = 0; r < ts.length; r++) if (ts[r] >= lo && ts[r] <= hi && isOccurrence(d.rec.status[r]) && d.rec.stack[r] >= 0) inRange++;
      expect(ranged.total).toBe(inRange);
      expect(whole.total).toBeGreaterThan(ranged.total);
    } finally {
      made.mockRestore();
    }
  });
});
