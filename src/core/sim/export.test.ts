import { describe, expect, it } from 'vitest';
import { loadFiles } from '../capture/load.ts';
import { summarize } from '../capture/summary.ts';
import { STATUS_NAMES } from '../capture/trace-columns-data.ts';
import { ExplorerData } from '../query/explorer-data.ts';
import { NO_GEN } from '../query/selection.ts';
import { decodeBinDump } from './dump-reader.ts';
import { exportCapture, frameKeysOf } from './export.ts';
import { REC } from './ring.ts';
import { resetMarkLines } from '../testing/test-helpers.ts';
import { runNode } from './run-node.ts';
import type { SimOptions } from './sim-options.ts';
import type { RunResult } from './sim-report.ts';

const fromKey = (k: string) => BigUint64Array.from(k.split(','), (x) => BigInt('0x' + x));

async function check(run: RunResult, expectDisagreement = false) {
  const files = exportCapture(run);
  const capture = await loadFiles([...files].map(([name, bytes]) => ({ name, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) })));
  const s = summarize(capture);
  const l = run.ledger;
  // generation-less dumps read on either side of a reset disagree, and the explorer says so per dump
  if (expectDisagreement) {
    expect(s.diagnostics.length).toBeGreaterThan(0);
    for (const d of s.diagnostics) expect(d.message).toMatch(/hold other stacks/);
  } else expect(s.diagnostics).toEqual([]);
  // the CPUs' events, and the host's `stackmap reset N` trace_marker writes (counted in the text)
  expect(s.events).toBe(run.items.filter((i) => i.rec.type === REC.EVENT).length + resetMarkLines(files));
  expect(s.fullStacks).toBe(l.full);
  expect(s.cookies).toBe(l.ids);
  // a wrong id whose event's own call_site= names a function the stack lacks is contradicted, not resolved (field-evidence.ts)
  const contradicted = s.status.contradicted ?? 0;
  expect(contradicted).toBeLessThanOrEqual(l.wrong);
  expect(s.resolved + contradicted).toBe(l.correct + l.wrong);
  expect(s.unresolved - contradicted).toBe(l.detected + l.unresolved);
  // record by record: the same status and the same stack
  const t = capture.trace;
  expect(t.recordCount).toBe(l.entries.length);
  for (let i = 0; i < t.recordCount; i++) {
    const e = l.entries[i];
    const got = STATUS_NAMES[t.recStatus.get(i)];
    // contradicted: an id the ledger has unverified, and wrong (never a right one)
    if (got === 'contradicted') expect([e.status, e.outcome]).toEqual(['unverified', 'wrong']);
    else expect(got).toBe(e.status);
    const stack = t.recStack.get(i);
    if (e.resolved === null) expect(stack).toBe(-1);
    else expect(capture.stacks.framesOf(stack)).toEqual(frameKeysOf(run, fromKey(e.resolved)));
  }
  return { s, l };
}

describe('an exported run read back by the explorer', () => {
  const base: Partial<SimOptions> = { cpus: 4, events: 6000, resets: 6, bits: 10, stacks: 400, zipf: 0.7, raceWindowUs: 5, ringKb: 256 };

  it('v8 (bin v2 before every reset, text at the end) resolves exactly as the ledger says', async () => {
    const run = await runNode({ ...base, mode: 'v8', v8Variant: 'bin', dumps: 'before-reset' });
    const { s, l } = await check(run);
    expect(l.wrong).toBe(0);
    expect(s.generations.length).toBeGreaterThan(1);
    expect(s.stat!.generation).toBe(run.finalGeneration);
  }, 30_000);

  it('v7 (bin v1 at the end only) resolves exactly as the ledger says, wrong ids included', async () => {
    const run = await runNode({ ...base, mode: 'v7', dumps: 'end', events: 12000, resets: 12 });
    const { l } = await check(run);
    expect(l.wrong).toBeGreaterThan(0);
  }, 30_000);

  it('v4 and dumps before every reset (generation-less dumps that disagree: ambiguous)', async () => {
    const run = await runNode({ ...base, mode: 'v4', dumps: 'before-reset' });
    const { l } = await check(run, true);
    expect(l.detected).toBeGreaterThan(0); // the ambiguous ids
  }, 30_000);
});

describe('a v7 map read as stack_map_bin and stack_map at once', () => {
  it('counts each slot once: ref_counts sum to the binary dump alone, without and with kallsyms', async () => {
    const run = await runNode({ mode: 'v7', cpus: 2, events: 4000, resets: 0, stacks: 200, dumps: 'end', textDump: true });
    const files = exportCapture(run);
    const bin = [...files.keys()].find((n) => n.startsWith('stack_map_bin'))!;
    // second method: the binary dump's own records
    const expected = decodeBinDump(files.get(bin)!).records.reduce((n, r) => n + r.refCount, 0);
    for (const withSyms of [true, false]) {
      const named = [...files].filter(([n]) => withSyms || n !== 'kallsyms');
      const capture = await loadFiles(named.map(([name, bytes]) => ({ name, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) })));
      const data = new ExplorerData(capture);
      let sum = 0;
      for (let s = 0; s < capture.stacks.nodeCount; s++) sum += data.refs.count(s, [NO_GEN]) ?? 0;
      expect(sum).toBe(expected);
    }
  }, 30_000);
});
