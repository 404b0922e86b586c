// Why an id is wrong (issue 22): each story of a wrong v7 id or a detected v8 cookie, told from
// the simulation's truth, held to the ledger (the outcome, the stack read) and to the records
// (the slot taken in a later generation by the stack a reader gets), on worker_threads.
import { describe, expect, it } from 'vitest';
import { idStories } from './provenance.ts';
import { REC } from './ring.ts';
import { runNode } from './run-node.ts';
import { SCENARIOS } from './scenarios.ts';

describe('the story of a wrong id', { timeout: 60_000 }, () => {
  it('v7-wrong-stack: written for one stack, its slot emptied by a reset, taken by another, read as that other', async () => {
    const sc = SCENARIOS['v7-wrong-stack'];
    const run = await runNode(sc.options);
    const stories = idStories(run.items, run.ledger, run.stackKeys, run.resets, 1e9);
    // one per wrong id: the ledger's count, none left out
    expect(stories.filter((s) => s.outcome === 'wrong').length).toBe(run.ledger.wrong);
    expect(run.ledger.wrong).toBeGreaterThan(0);
    const stackRecs = run.items.filter((i) => i.rec.type !== REC.EVENT);
    for (const s of stories.filter((x) => x.outcome === 'wrong')) {
      const rec = stackRecs[s.record].rec;
      // the write as the ring holds it
      expect([rec.a, rec.truthStack, rec.ts]).toEqual([s.slot, s.written.stack, s.written.ts]);
      // a reader resolves it to another stack: the one the ledger says
      expect(s.read.stack).not.toBeNull();
      expect(s.read.stack).not.toBe(s.written.stack);
      expect(run.stackKeys[s.read.stack!]).toBe(run.ledger.entries[s.record].resolved);
      // the reset that ended the write's generation was the host's, after the write
      expect(s.reset).not.toBeNull();
      expect(s.reset!.generation).toBe(s.written.generation + 1);
      expect(s.reset!.ts).toBeGreaterThanOrEqual(s.written.ts);
      // the slot was taken in a later generation: that, not the times, orders the two inserts. A
      // record's time is its event's, taken before its insert, on its own CPU: the taker may read
      // its clock before the writer does and insert after the reset (seen in CI: 100.84084 against
      // the write's 100.84244, under load), so its time is not held to be after the write's
      expect(s.takenBy).not.toBeNull();
      expect(s.takenBy!.generation).toBeGreaterThan(s.written.generation);
      expect(Number.isFinite(s.takenBy!.ts)).toBe(true);
      // and the stack read is one that held the slot in a later generation (the dump's, the last)
      const later = stackRecs
        .filter((x) => x.rec.type === REC.ID && x.rec.a === s.slot && x.rec.truthGeneration > s.written.generation)
        .map((x) => x.rec.truthStack);
      expect(later).toContain(s.read.stack);
    }
  });

  it('v8-detects: the same run, each stale cookie detected: written in an earlier generation than any dump holds', async () => {
    const run = await runNode(SCENARIOS['v8-detects'].options);
    const stories = idStories(run.items, run.ledger, run.stackKeys, run.resets, 1e9);
    expect(stories.filter((s) => s.outcome === 'detected').length).toBe(run.ledger.detected);
    expect(stories.some((s) => s.outcome === 'wrong')).toBe(false);
    const dumped = new Set(run.dumps.flatMap((d) => d.generationsSeen));
    for (const s of stories) {
      expect(s.kind).toBe('cookie');
      expect(s.read.stack).toBeNull();
      expect(['no-dump', 'no-slot']).toContain(s.read.status);
      if (s.read.status === 'no-dump') expect(dumped.has(s.written.generation)).toBe(false);
    }
  });
});
