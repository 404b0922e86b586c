import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { Explorer } from '../query/explorer.ts';
import { realDescribe, realTrace } from '../testing/real-traces.ts';
import { ingestFiles } from '../testing/test-helpers.ts';

// A generation in force does not carry from one trace file into an unrelated one: the tpoint
// example (no cookies) loaded after the sample is in no generation, so choosing one leaves it out.

const sample = (f: string) => [f, new Uint8Array(readFileSync(new URL(`../../../public/samples/${f}`, import.meta.url)))] as [string, Uint8Array];
const SAMPLE = ['trace', 'stack_map_bin.gen1', 'stack_map_bin.gen2', 'stack_map_bin.gen3', 'stack_map_stat', 'kallsyms'].map(sample);
const tpoint = (): [string, Uint8Array] => ['tpoint', realTrace('perf-tools-tpoint_example.txt')];

realDescribe('generations per trace file', () => {
  it('choosing generation 3 counts the sample alone, not the tpoint events after it', () => {
    const alone = new Explorer(ingestFiles(SAMPLE));
    const both = new Explorer(ingestFiles([...SAMPLE, tpoint()]));
    const sel = (generation: number | 'none' | null) => ({ range: null, generation, cpus: null }) as const;
    for (const g of [1, 2, 3] as const) expect(both.selectionSummary(sel(g)).events).toBe(alone.selectionSummary(sel(g)).events);
    // the tpoint events are in no generation
    const all = both.selectionSummary(sel(null)).events;
    expect(all - alone.selectionSummary(sel(null)).events).toBe(18); // the tpoint example's 18 events (real-formats.test.ts, by grep)
    expect(both.selectionSummary(sel('none')).events).toBe(alone.selectionSummary(sel('none')).events + 18);
  });
});
