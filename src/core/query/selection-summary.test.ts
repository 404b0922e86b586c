import { describe, expect, it } from 'vitest';
import { hasStack } from '../capture/cookie-index.ts';
import { derive } from '../capture/derived.ts';
import { ExplorerData } from './explorer-data.ts';
import { handCapture, sampleCapture } from '../testing/explorer-fixtures.ts';
import { ALL } from './api.ts';
import { selectionSummary } from './selection-summary.ts';
import { summarize } from '../capture/summary.ts';
import { RecordKind } from '../capture/trace-columns-data.ts';

const pick = (s: { events: number; cookies: number; fullStacks: number; resolved: number; unresolved: number; uniqueStacks: number }) => [
  s.events,
  s.cookies,
  s.fullStacks,
  s.resolved,
  s.unresolved,
  s.uniqueStacks,
];

describe('selection summary', () => {
  it('ALL equals summarize() on the hand capture and the sample', () => {
    for (const c of [handCapture(), sampleCapture()]) {
      const s = selectionSummary(new ExplorerData(c), ALL);
      const g = summarize(c);
      expect(pick(s)).toEqual(pick(g));
      expect(s.status).toEqual(g.status);
    }
  });

  it('hand capture by generation', () => {
    const d = new ExplorerData(handCapture());
    const g = (generation: number) => pick(selectionSummary(d, { range: null, generation, cpus: null }));
    expect(g(1)).toEqual([6, 4, 1, 4, 0, 3]);
    expect(g(2)).toEqual([3, 3, 0, 2, 1, 1]);
    expect(g(3)).toEqual([1, 1, 0, 0, 1, 0]);
    expect(pick(selectionSummary(d, { range: [100.000002, 100.000004], generation: null, cpus: [0] }))).toEqual([2, 1, 1, 1, 0, 2]);
  });

  it("sample: a generation's summary equals counts done by hand", () => {
    const c = sampleCapture();
    const d = new ExplorerData(c);
    const t = c.trace;
    for (const gen of [1, 2, 3]) {
      // v8 cookies carry their generation; a full stack is in the generation of the last cookie before it
      let current = -1;
      for (let i = 0; i < t.recordCount && current < 0; i++) if (t.recKind.get(i) === RecordKind.CookieV8) current = t.recGen.get(i);
      const n = { events: 0, cookies: 0, full: 0, resolved: 0 };
      const stacks = new Set<number>();
      const inGen = new Uint8Array(t.recordCount);
      for (let i = 0; i < t.recordCount; i++) {
        if (t.recKind.get(i) === RecordKind.CookieV8) current = t.recGen.get(i);
        if (current !== gen) continue;
        inGen[i] = 1;
        const st = t.recStatus.get(i);
        if (t.recKind.get(i) === RecordKind.Full) {
          n.full++;
          stacks.add(t.recStack.get(i));
        } else {
          n.cookies++;
          if (hasStack(st)) {
            n.resolved++;
            stacks.add(t.recStack.get(i));
          }
        }
      }
      // every sample event has exactly one record
      for (let e = 0; e < t.eventCount; e++) if (inGen[t.evRecord.get(e)]) n.events++;
      expect(pick(selectionSummary(d, { range: null, generation: gen, cpus: null }))).toEqual([
        n.events,
        n.cookies,
        n.full,
        n.resolved,
        n.cookies - n.resolved,
        stacks.size,
      ]);
      expect(n.events).toBeGreaterThan(500);
    }
    const full = selectionSummary(d, ALL);
    const parts = [1, 2, 3].map((generation) => selectionSummary(d, { range: null, generation, cpus: null }));
    expect(parts.reduce((a, p) => a + p.events, 0)).toBe(full.events);
    expect(parts.reduce((a, p) => a + p.fullStacks, 0)).toBe(full.fullStacks);
    expect(parts.reduce((a, p) => a + p.status.full, 0)).toBe(full.status.full);
  });
});

describe('the selection\u2019s ring-buffer bytes', () => {
  it('with ALL equal the capture\u2019s derived figures; the generations\u2019 add up to them', () => {
    const c = sampleCapture();
    const d = new ExplorerData(c);
    const all = selectionSummary(d, ALL);
    const whole = derive(c);
    expect(all.ringBuffer).toEqual(whole.ringBuffer);
    expect(all.dedupRate).toBeCloseTo(whole.dedupRate, 12);
    const gens = d.capture.dumps.generations();
    expect(gens.length).toBeGreaterThan(1);
    let withMap = 0;
    for (const g of gens) withMap += selectionSummary(d, { ...ALL, generation: g }).ringBuffer.bytesWithMap;
    expect(withMap).toBe(all.ringBuffer.bytesWithMap);
  });
});
