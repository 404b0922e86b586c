// explore's summary, whose stack counts are the explorer's occurrences of the whole capture handed
// over, held to the summary summarize makes alone (its own countOccurrences walk, which
// summary.peer.test holds to FlameGraph's stackcollapse-perf.pl on real perf script files), on
// generated captures and on real perf script files whose samples carry periods (weights: the
// summary counts samples, not periods; handing over the weights fails here).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { summarize } from '../core/capture/summary.ts';
import { generateSample } from '../core/sim/sample-capture.ts';
import { sampleFiles } from '../core/sim/sample-files.ts';
import { realIt, realTrace } from '../core/testing/real-traces.ts';
import { ingestFiles } from '../core/testing/test-helpers.ts';
import { explore } from './ingest-views.ts';

describe('explore: the summary counts the records by stack once, with the explorer', () => {
  it('on generated captures (by call site): the summary summarize makes alone', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 200, max: 3000 }), (seed, events) => {
        const sample = generateSample({ seed, cpus: 2, events, resets: 1, bits: 12, tail: 10 });
        const c = ingestFiles(sampleFiles(sample));
        const { explorer, summary } = explore(c);
        expect(summary).toEqual(summarize(c));
        // the whole capture's occurrences are the explorer's cached answer: its first query reads them again
        const whole = { range: null, generation: null, cpus: null };
        expect(explorer.data.occurrences(whole)).toBe(explorer.data.occurrences(whole));
      }),
      { numRuns: 20 },
    );
  });

  for (const file of ['inferno-perf-go-stacks.txt', 'flamegraph-perf-dd-stacks-01.txt']) {
    realIt(`${file}: samples with periods, counted as samples, by function: the summary summarize makes alone`, () => {
      const c = ingestFiles([['perf.script', realTrace(file)]]);
      const { explorer, summary } = explore(c);
      expect(summary).toEqual(summarize(c));
      expect(summary.top.length).toBeGreaterThan(1);
      // the weights differ from the counts here: a summary of weights would fail the line above
      const occ = explorer.data.occurrences({ range: null, generation: null, cpus: null });
      expect(Array.from(occ.weights)).not.toEqual(Array.from(occ.counts));
    });
  }
});
