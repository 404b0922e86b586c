// The dump merge against the simulator's ledger: a v7 capture recorded by the concurrent simulator
// (worker threads, so an integration test; scripts/suites.ts).
import { describe, expect, it } from 'vitest';
import { exportCapture, frameKeysOf } from '../sim/export.ts';
import { runNode } from '../sim/run-node.ts';
import { loadFiles } from './load.ts';
import { summarize } from './summary.ts';
import { STATUS_NAMES } from './trace-columns-data.ts';

describe('a simulated v7 capture (binary and text dump at the end) loaded without kallsyms', () => {
  it('resolves every id the ledger resolves, as unverified, to the stack the simulator recorded', async () => {
    const run = await runNode({ mode: 'v7', dumps: 'end', cpus: 4, events: 8000, resets: 4, bits: 10, stacks: 300, zipf: 0.8, raceWindowUs: 5, ringKb: 256 });
    const files = exportCapture(run);
    expect([...files.keys()].filter((f) => f.startsWith('stack_map')).sort()).toEqual(['stack_map.2', 'stack_map_bin.1', 'stack_map_stat']);
    const blobs = (keep: (name: string) => boolean) =>
      [...files].filter(([name]) => keep(name)).map(([name, bytes]) => ({ name, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) }));
    const c = await loadFiles(blobs((n) => n !== 'kallsyms'));
    const s = summarize(c);
    const l = run.ledger;
    expect(s.diagnostics).toEqual([]);
    expect(s.status.ambiguous).toBe(0);
    // every id that found a stack is unverified, or contradicted where its event's call_site= is
    // not in that stack (field-evidence.ts): only wrong ones are, checked record by record below
    expect(s.status.unverified + s.status.contradicted).toBe(l.correct + l.wrong);
    expect(l.status.unverified).toBe(l.correct + l.wrong);
    expect(s.resolved).toBe(l.correct + l.wrong - s.status.contradicted);
    expect(s.unresolved).toBe(l.unresolved + s.status.contradicted);
    // record by record: the stack the ledger resolved, named as the simulated kernel prints it
    const t = c.trace;
    expect(t.recordCount).toBe(l.entries.length);
    for (let i = 0; i < t.recordCount; i++) {
      const e = l.entries[i];
      const st = STATUS_NAMES[t.recStatus.get(i)];
      if (st === 'contradicted') expect([e.status, e.outcome]).toEqual(['unverified', 'wrong']);
      else expect(st).toBe(e.status);
      if (e.resolved === null) continue;
      expect(c.stacks.framesOf(t.recStack.get(i))).toEqual(
        frameKeysOf(
          run,
          BigUint64Array.from(e.resolved.split(','), (x) => BigInt('0x' + x)),
        ),
      );
    }
    // the binary dump's raw readings are the text dump's stacks, not more of them
    const withSymbols = summarize(await loadFiles(blobs(() => true)));
    expect(s.uniqueStacks).toBe(withSymbols.uniqueStacks);
  }, 30_000);
});
