import { describe, expect, it } from 'vitest';
import { ExplorerData } from './explorer-data.ts';
import { ALL, type Selection } from './api.ts';
import { sampleCapture } from '../testing/explorer-fixtures.ts';

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
