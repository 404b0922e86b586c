// Issue 36: v7 ids whose event's own fields (call_site=) contradict the stack they resolve to,
// against the simulator's truth: the v7-wrong-stack scenario's workload on three seeds, run by
// the concurrent simulator as `cli simulate` runs it (worker threads: an integration test,
// scripts/suites.ts), exported, loaded and summarized as `summary --json` does. The expected
// numbers are the ledger's (ledger.json, the run's own record of each id's truth), and a regex
// reading of the exported trace for the call sites.
import { describe, expect, it } from 'vitest';
import { exportCapture } from '../sim/export.ts';
import { runNode } from '../sim/run-node.ts';
import { SCENARIOS } from '../sim/scenarios.ts';
import { loadFiles } from './load.ts';
import { summarize } from './summary.ts';

const blobsOf = (files: Map<string, Uint8Array>, keep: (name: string) => boolean = () => true) =>
  [...files].filter(([name]) => keep(name)).map(([name, bytes]) => ({ name, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) }));

describe('contradicted: v7 ids whose call_site= their resolved stack lacks (v7-wrong-stack workload)', () => {
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: at least 90% of the ledger's wrong ids contradicted, no right one`, async () => {
      const run = await runNode({ ...SCENARIOS['v7-wrong-stack'].options, seed });
      const files = exportCapture(run);
      const s = summarize(await loadFiles(blobsOf(files)));
      const text = new TextDecoder().decode(files.get('trace'));
      const ledger = JSON.parse(new TextDecoder().decode(files.get('ledger.json'))) as { records?: { outcome: string }[] } | { outcome: string }[];
      const records = Array.isArray(ledger) ? ledger : (ledger.records ?? []);
      const wrong = records.filter((r) => r.outcome === 'wrong').length;
      // a second reading: every event names its call site, as the trace prints it
      const events = text.match(/^.*kmem_cache_alloc: call_site=\S+/gm)?.length ?? 0;
      expect(events).toBe(s.events - (text.match(/stackmap reset \d+/g)?.length ?? 0));
      expect(wrong).toBe(run.ledger.wrong);
      expect(wrong).toBeGreaterThan(0);
      const t = s.simTruth!;
      console.log(
        `seed ${seed}: wrong ${wrong}, contradicted ${s.status.contradicted}, contradictedWrong ${t.contradictedWrong}, contradictedRight ${t.contradictedRight}`,
      );
      expect(t.matched).toBe(true);
      expect(s.status.contradicted).toBeGreaterThan(0);
      expect(s.status.contradicted).toBe(t.contradicted);
      expect(t.contradictedRight).toBe(0);
      expect(t.contradictedWrong).toBeGreaterThanOrEqual(Math.ceil(0.9 * wrong));
      // the ids the trace's fields cannot deny stay unverified: together they are every id resolved
      expect(s.status.unverified + s.status.contradicted).toBe(run.ledger.correct + run.ledger.wrong);
      expect(t.unverifiedWrong).toBe(wrong);
    }, 20_000);
  }
});
