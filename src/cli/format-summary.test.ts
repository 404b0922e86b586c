import { describe, expect, it } from 'vitest';
import { summarize } from '../core/capture/summary.ts';
import { ingestFiles } from '../core/testing/test-helpers.ts';
import { formatSummary } from './format-summary.ts';

// `summary`'s text names stack_map_stat's counters as each kernel prints them (issue 36). The
// expected words are the seeds': the v7 document's example output, and the v8 cover letter's
// "drops table_size and success_rate, and renames drops to fallbacks".

const statLine = (stat: string) =>
  formatSummary(summarize(ingestFiles([['stack_map_stat', stat]])))
    .split('\n')
    .find((l) => l.startsWith('stack_map_stat'))!;

describe("summary's stack_map_stat line", () => {
  it('v8: fallbacks, with generation and capacity; no drops, table_size or success_rate', () => {
    const l = statLine('generation: 3\nentries: 264\ncapacity: 16384\nsuccesses: 3990\nfallbacks: 10\n');
    expect(l).toContain('generation 3');
    expect(l).toContain('entries 264 of 16384');
    expect(l).toContain('successes 3990');
    expect(l).toContain('fallbacks 10');
    expect(l).not.toMatch(/drops|table_size|success_rate/);
  });

  it("v7 (the v7 document's example): drops, table_size and success_rate as printed", () => {
    const l = statLine('entries: 2500 / 16384\ntable_size: 32768\nsuccesses: 148923\ndrops: 0\nsuccess_rate: 100%\n');
    expect(l).toContain('entries 2500 of 16384');
    expect(l).toContain('table_size 32768');
    expect(l).toContain('drops 0');
    expect(l).toContain('success_rate 100%');
    expect(l).not.toContain('fallbacks');
  });

  it('the JSON keeps stat.drops for both and adds stat.fallbacks for v8 (DESIGN 2.3)', () => {
    const v8 = summarize(ingestFiles([['stack_map_stat', 'generation: 3\nentries: 264\ncapacity: 16384\nsuccesses: 3990\nfallbacks: 10\n']])).stat!;
    expect([v8.drops, v8.fallbacks, v8.tableSize, v8.successRate]).toEqual([10, 10, null, null]);
    const v7 = summarize(
      ingestFiles([['stack_map_stat', 'entries: 2500 / 16384\ntable_size: 32768\nsuccesses: 148923\ndrops: 0\nsuccess_rate: 100%\n']]),
    ).stat!;
    expect([v7.drops, v7.fallbacks]).toEqual([0, null]);
  });
});

describe("summary's retention gain line", () => {
  const line = (ts: string, p: string) => `            bash-1234    [001] d..1.   ${ts}: ${p}`;
  it('says the events kept, with the ring bytes per event, and the stack bytes alone under that name', () => {
    // 4 events, each with cookie slot 1 of generation 1 (depth 2): counted by hand
    const t =
      ['# tracer: nop', ...[1, 2, 3, 4].flatMap((i) => [line(`1.00000${i}`, 'kmem_cache_alloc: x=1'), line(`1.00000${i}`, '<stack_id 1 gen 1>')])].join('\n') +
      '\n';
    const dump = 'stack_id 1 gen 1 [ref 4, depth 2]\n => a\n => b\n\n';
    const text = formatSummary(
      summarize(
        ingestFiles([
          ['trace', t],
          ['stack_map', dump],
        ]),
      ),
    );
    const l = text.split('\n').find((x) => x.startsWith('retention gain'))!;
    // per event: 56 + 16 with the map, 56 + 12 + 8 x 2 without; the stack bytes 28 / 16
    const gain = (56 + 28) / (56 + 16);
    expect(l).toContain(
      `retention gain ${gain.toFixed(1)}x the events kept: ring bytes per event 84.0 B without the map / 72.0 B with it (each event's own record taken as 56 B, assumed)`,
    );
    expect(l).toContain(`the stack bytes alone ${(28 / 16).toFixed(1)}x`);
  });
});
