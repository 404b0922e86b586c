import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bump, hasTraceCmd, readDat, reportText, sorted } from '../testing/trace-dat.ts';
import { loadFiles } from '../capture/load.ts';
import { alignLedger } from '../capture/sim-truth.ts';
import { summarize } from '../capture/summary.ts';
import { exportCapture, frameKeysOf, ledgerRows } from './export.ts';
import { idStories } from './provenance.ts';
import { resetMarkLines } from '../testing/test-helpers.ts';
import { runNode } from './run-node.ts';
import type { SCENARIO_NAMES } from './scenarios.ts';
import { SCENARIOS, scenarioReport } from './scenarios.ts';
import { REC } from './ring.ts';
import { Explorer } from '../query/explorer.ts';
import { eventInfo } from '../query/event-near.ts';

// Every guided scenario on worker_threads: its effect must appear on every run (the workload and
// the race window make it certain). The numbers are checked against the exported capture as the
// explorer reads it, a second method beside the simulator's own ledger.

async function run(name: (typeof SCENARIO_NAMES)[number]) {
  const sc = SCENARIOS[name];
  const r = await runNode(sc.options, sc.during ? { during: sc.during } : {});
  return { r, rep: scenarioReport(sc, r) };
}

async function explorerSummary(r: Awaited<ReturnType<typeof runNode>>) {
  const files = [...exportCapture(r)].map(([name, bytes]) => ({ name, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) }));
  const c = await loadFiles(files);
  return { summary: summarize(c), diagnostics: c.diagnostics, capture: c };
}

// each runs 4 worker_threads for real: seconds each, more on a loaded machine
describe('guided scenarios', { timeout: 60_000 }, () => {
  it('v7-wrong-stack: old ids resolve to other stacks, and the explorer shows them as resolved', async () => {
    const { r, rep } = await run('v7-wrong-stack');
    expect(rep.effect.ok).toBe(true);
    expect(rep.ledger.wrong).toBeGreaterThan(0);
    expect(rep.ledger.detected).toBe(0); // v7 detects nothing
    const s = await explorerSummary(r);
    // wrong ids look resolved to a reader of the files
    // (those whose event's own call_site= contradicts the stack are contradicted instead: wrong ones only)
    const contradicted = s.summary.status.contradicted ?? 0;
    expect(contradicted).toBeLessThanOrEqual(rep.ledger.wrong);
    expect(s.summary.resolved + contradicted).toBe(rep.ledger.correct + rep.ledger.wrong);
    // but the files hold evidence (v7-evidence.ts): ids beyond their slot's ref_count, each one
    // written before a reset as the simulation knows (a lower bound: at most the ids from before the last reset)
    const stale = r.items.filter((x) => x.rec.type === REC.ID && x.rec.truthGeneration < r.finalGeneration).length;
    expect(s.summary.staleIds!.excess).toBeGreaterThan(0);
    expect(s.summary.staleIds!.excess).toBeLessThanOrEqual(stale);
    // and the trace's reset markers (written as capture.sh writes them) show the ids recorded before
    // the last reset, as the simulator timed them; those are the ids of the earlier generations but
    // for the odd one timed just before the reset and inserted after it (as in the kernel: the
    // event's time is taken before its stack is recorded)
    // (each marker is stamped no earlier than CPU 0's record before it, as a shell's write cannot come
    // between an event and its stack record: its time read from the trace's text, as printed)
    const text = new TextDecoder().decode(exportCapture(r).get('trace')!);
    const lastReset = Math.max(...[...text.matchAll(/ (\d+\.\d{6}): tracing_mark_write: stackmap reset \d+/g)].map((m) => Number(m[1])));
    expect(lastReset).toBeGreaterThanOrEqual(Math.max(...r.resets.map((x) => x.ts)) - 1e-6);
    const beforeLast = r.items.filter((x) => x.rec.type === REC.ID && Number(x.rec.ts.toFixed(6)) < lastReset).length;
    expect(s.summary.beforeReset).toMatchObject({ resets: r.resets.length, ids: beforeLast });
    expect(Math.abs(beforeLast - stale)).toBeLessThanOrEqual(r.config.cpus * r.resets.length);
    // and its ledger.json, read with it, says which: every unverified id's truth, the ledger's counts
    expect(s.summary.simTruth).toMatchObject({ matched: true, unverifiedWrong: rep.ledger.wrong, unverifiedRight: rep.ledger.correct });
    // the explorer's event info carries each record's truth: the events of wrong ids, counted, are the ledger's wrong ids
    const ex = new Explorer(s.capture);
    const d = ex.data;
    let wrongEvents = 0;
    for (let e = 0; e < d.eventCount; e++) {
      const info = eventInfo(d, e);
      if (info.truth?.outcome !== 'wrong') continue;
      wrongEvents++;
      // a wrong id resolved to a stack, and the run's stack it was written for is another than the one it resolves to
      // unverified, or contradicted where its event's own call_site= names a function the stack lacks
      expect(['unverified', 'contradicted']).toContain(info.status);
      expect(r.stackKeys[info.truth.stack]).not.toBe(undefined);
    }
    expect(wrongEvents).toBe(rep.ledger.wrong);
    // and each wrong id's story, told by the explorer from the files and the ledger (id-story.ts),
    // is the one the simulator tells from what it knows (provenance.ts): the write, the reset (its
    // trace marker), who took the slot next, and the stack a reader gets
    expect(ex.idStoryCount()).toBe(rep.ledger.wrong);
    const told = idStories(r.items, r.ledger, r.stackKeys, r.resets, 60);
    expect(told.length).toBe(Math.min(60, rep.ledger.wrong));
    const framesOfRun = (i: number) => frameKeysOf(r, r.population.ips[i]);
    told.forEach((sim, n) => {
      const view = ex.idStoryAt(n)!;
      expect(view.outcome).toBe('wrong');
      expect(view.written).toMatchObject({ cpu: sim.written.cpu, generation: sim.written.generation, slot: sim.slot, runStack: sim.written.stack });
      expect(view.written.ts).toBeCloseTo(sim.written.ts, 6);
      expect(view.reset!.ts).toBeCloseTo(sim.reset!.ts!, 6);
      expect(view.taken).toMatchObject({ cpu: sim.takenBy!.cpu, generation: sim.takenBy!.generation, runStack: sim.takenBy!.stack });
      expect(view.taken!.ts).toBeCloseTo(sim.takenBy!.ts, 6);
      expect(ex.stackFrames(view.read.stack)).toEqual(framesOfRun(sim.read.stack!));
      if (view.written.stack >= 0) expect(ex.stackFrames(view.written.stack)).toEqual(framesOfRun(sim.written.stack));
      // the true stacks' frames, from ledger.json's stacks table, whether or not the capture resolves any record to them
      expect(view.written.frames).toEqual(framesOfRun(sim.written.stack));
      expect(view.taken!.frames).toEqual(framesOfRun(sim.takenBy!.stack));
      expect(ex.idStoryOfEvent(view.event)).toBe(n);
    });
  });

  it('v8-detects: the same run, no cookie misresolves and the stale ones are flagged', async () => {
    const { r, rep } = await run('v8-detects');
    expect(rep.effect.ok).toBe(true);
    expect(rep.ledger.wrong).toBe(0);
    expect(rep.ledger.detected).toBeGreaterThan(0);
    const s = await explorerSummary(r);
    expect(s.summary.unresolved).toBe(rep.ledger.detected + rep.ledger.unresolved);
  });

  it('v7-duplicates and v8-fallback: contention splits v7 into copies, v8 records in full instead', async () => {
    const v7 = (await run('v7-duplicates')).rep;
    expect(v7.effect.ok).toBe(true);
    expect(v7.duplicates).toBeGreaterThan(0);
    // the seed's own mechanism among them: the loser of the slot's cmpxchg to the same stack advanced
    expect(v7.lostSameHash).toBeGreaterThan(0);
    // and the only one: a CPU meeting the winner's unpublished slot waits for it (v8 letter: v8
    // records the stack "in full instead of waiting"), so no copy comes without a lost cmpxchg
    expect(v7.duplicates).toBeLessThanOrEqual(v7.lostSameHash);
    const v8 = (await run('v8-fallback')).rep;
    expect(v8.effect.ok).toBe(true);
    expect(v8.duplicates).toBe(0);
    expect(v8.fallbackReasons.inFlight).toBeGreaterThan(0);
  });

  it('pool-exhausted: the pool runs dry, gravestones stay, probes lengthen', async () => {
    const { rep } = await run('pool-exhausted');
    expect(rep.effect.ok).toBe(true);
    expect(rep.entries).toBe(rep.capacity);
    expect(rep.gravestones).toBeGreaterThan(0);
    expect(rep.fallbackReasons.poolEmpty).toBeGreaterThan(0);
    expect(rep.probesPerInsert).toBeGreaterThan(2);
  });

  it('estale: a reset between two reads of stack_map_bin fails the read; the reopened read completes', async () => {
    const { r, rep } = await run('estale');
    expect(rep.effect.ok).toBe(true);
    expect(rep.estale).toBeGreaterThanOrEqual(1);
    expect(r.dumps.filter((d) => d.format === 'bin').length).toBeGreaterThanOrEqual(1);
  });

  it('text-splice: one stack_map holds two generations, and the explorer reports the splice', async () => {
    const { r, rep } = await run('text-splice');
    expect(rep.effect.ok).toBe(true);
    expect(rep.textDumpGenerations).toBe(2);
    const s = await explorerSummary(r);
    expect(s.diagnostics.map((d) => d.message).join('\n')).toMatch(/generation/i);
  });

  it('text-splice: the host holds the CPUs until its read is done, so the splice does not depend on their speed (400 events, all recorded long before the read without the hold)', async () => {
    const sc = SCENARIOS['text-splice'];
    const r = await runNode({ ...sc.options, events: 400 }, { during: sc.during });
    const rep = scenarioReport(sc, r);
    expect(rep.textDumpGenerations).toBe(2);
    expect(rep.events).toBeGreaterThan(400); // recorded past their events while held
  });

  it('v4-refused: resets while tracing are refused, the two with tracing off succeed', async () => {
    const { rep } = await run('v4-refused');
    expect(rep.effect.ok).toBe(true);
    // 4 CPUs x (2000 events / every 500) = 16 CPU resets, each turned away: refused while
    // recording, or EBUSY when two CPUs' resets meet (which one depends on the scheduler)
    expect(rep.resets.byCpus).toBe(0);
    expect(rep.refused + rep.resets.ebusy).toBeGreaterThanOrEqual(16);
    expect(rep.refused).toBeGreaterThanOrEqual(8);
    expect(rep.resets.done).toBe(2);
  });

  it('nmi-nested: interrupts nested in inserts; v8 records their same-stack inserts in full, and the explorer counts their events and full stacks', async () => {
    const { r, rep } = await run('nmi-nested');
    expect(rep.effect.ok).toBe(true);
    expect(rep.interrupts.sameStackInFlight).toBeGreaterThan(0);
    expect(rep.duplicates).toBe(0);
    const s = await explorerSummary(r);
    // every event of the CPUs and of their interrupts, each with its stack record, as the files hold them
    expect(s.summary.events).toBe(rep.events + resetMarkLines(exportCapture(r)));
    expect(s.summary.fullStacks).toBe(r.items.filter((x) => x.rec.type === REC.FULL).length);
    // each stack record to its own event: the explorer, reading each record's latency flags, gives every
    // record the event the simulation wrote it for (ledger.json's event), where "the last event on the
    // CPU" would give the outer stacks to the nested events
    const { records } = ledgerRows(r);
    const t = s.capture.trace;
    expect(t.recordCount).toBe(records.length);
    // records whose own event is not the last event before them on their CPU: the nested runs
    let nested = 0;
    const lastOnCpu = new Map<number, number>();
    for (const it of r.items) {
      if (it.rec.type === REC.EVENT) lastOnCpu.set(it.cpu, it.rec.truthEvent);
      else if (lastOnCpu.get(it.cpu) !== it.rec.truthEvent) nested++;
    }
    for (let i = 0; i < records.length; i++) expect(t.recEvent.get(i), `record ${i}`).toBe(records[i].event ?? -1);
    // the same as a trace.dat, whose records carry the context in common_flags (hardirq 0x08, NMI 0x40)
    const dat = await loadFiles([...exportCapture(r, 'trace-dat')].map(([name, bytes]) => ({ name, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) })));
    // its records in the trace.dat's order (each CPU in turn), lined up with ledger.json's by the explorer (sim-truth.ts)
    const aligned = alignLedger(dat);
    expect(aligned.why).toBe(null);
    const index = aligned.index!;
    expect(dat.trace.recordCount).toBe(records.length);
    for (let i = 0; i < dat.trace.recordCount; i++) {
      expect(index[i], `trace.dat record ${i} lined up`).toBeGreaterThanOrEqual(0);
      expect(dat.trace.recEvent.get(i), `trace.dat record ${i}`).toBe(dat.ledger!.event[index[i]]);
    }
    // the flags it carries read as trace-cmd reads them (`report -l`): irqs-off and hardirq per event,
    // this machine's libtraceevent printing no NMI letter (an NMI reads '.', one inside an IRQ 'h'),
    // where the reader gives the kernel's z and Z
    if (hasTraceCmd || process.env.CI) {
      const dir = mkdtempSync(join(tmpdir(), 'smx-nmi-'));
      try {
        const bytes = exportCapture(r, 'trace-dat').get('trace.dat')!;
        writeFileSync(join(dir, 'trace.dat'), bytes);
        const peer = new Map<string, number>();
        for (const line of reportText(['-l', '-i', join(dir, 'trace.dat')]).split('\n')) {
          const m = /-\d+\s+(\d+)([d.])[.Nnp]([.hsH])[\d.a-f]\S*\s+(\d+\.\d+): kmem_cache_alloc:/.exec(line);
          if (m) bump(peer, `${m[1]} ${m[4]} ${m[2]}${m[3]}`);
        }
        const ours = new Map<string, number>();
        for (const e of readDat(bytes, bytes.length).got.events) {
          if (e.name !== 'kmem_cache_alloc') continue;
          const hs = e.flags[2] === 'z' ? '.' : e.flags[2] === 'Z' ? 'h' : e.flags[2];
          // trace-cmd prints microseconds rounded half up from the record's nanoseconds
          const us = Math.floor((Math.round(e.ts * 1e9) + 500) / 1000);
          bump(ours, `${e.cpu} ${Math.floor(us / 1e6)}.${String(us % 1e6).padStart(6, '0')} ${e.flags[0]}${hs}`);
        }
        expect(sorted(ours)).toEqual(sorted(peer));
        // and every kind of context is there: the CPUs' own, IRQs, NMIs, NMIs inside IRQs
        const kinds = new Set(readDat(bytes, bytes.length).got.events.map((e) => e.flags[2]));
        for (const k of ['.', 'h', 'z', 'Z']) expect(kinds, k).toContain(k);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    expect(nested).toBeGreaterThan(0);
  });

  it('boot-window: full stacks before the map is published, then cookies; lost reservations leave events without a stack', async () => {
    const { r, rep } = await run('boot-window');
    expect(rep.effect.ok).toBe(true);
    const s = await explorerSummary(r);
    expect(s.summary.events).toBe(rep.events + resetMarkLines(exportCapture(r)));
    // the files hold a full stack for each boot record and fallback, a cookie for each success
    expect(s.summary.fullStacks).toBe(rep.bootStacks + rep.fallbacks + rep.bypasses + rep.deepStacks);
    expect(s.summary.cookies).toBe(rep.successes);
    expect(rep.events - s.summary.fullStacks - s.summary.cookies).toBe(rep.reserveFails + rep.rcuDiscards);
  });
});
