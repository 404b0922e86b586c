import { describe, expect, it } from 'vitest';
import { frameKey } from '../formats/frames.ts';
import { generateSample } from '../sim/sample-capture.ts';
import { sampleFiles } from '../sim/sample-files.ts';
import { summarize } from './summary.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { RecordStatus } from './trace-columns-data.ts';

const sample = generateSample({ seed: 7, cpus: 4, events: 1500, resets: 2, bits: 14, tail: 30 });
const files = sampleFiles(sample);

describe('ingest of a generated v8 capture', () => {
  it.each([0, 7, 4096])('resolves every cookie to the stack it stood for (chunk %i)', (chunk) => {
    const c = ingestFiles(files, chunk);
    const t = c.trace;
    expect(t.eventCount).toBe(1500);
    expect(t.recordCount).toBe(sample.truth.length);
    const counts = { resolved: 0, noSlot: 0, full: 0 };
    for (let i = 0; i < t.recordCount; i++) {
      const truth = Array.from(sample.truth[i].ips, (ip) => frameKey(sample.kernel.printFrame(ip)));
      const status = t.recStatus.get(i);
      if (status === RecordStatus.Resolved) {
        counts.resolved++;
        expect(t.recGen.get(i)).toBe(sample.truth[i].generation);
        expect(c.stacks.framesOf(t.recStack.get(i))).toEqual(truth);
      } else if (status === RecordStatus.Full) {
        counts.full++;
        expect(c.stacks.framesOf(t.recStack.get(i))).toEqual(truth);
      } else {
        // only a stack first inserted after the final dump may miss its slot
        expect(status).toBe(RecordStatus.NoSlot);
        expect(sample.truth[i].generation).toBe(3);
        counts.noSlot++;
      }
      // every stack record follows its event on the same CPU
      const ev = t.recEvent.get(i);
      expect(ev).toBeGreaterThanOrEqual(0);
      expect(t.evCpu.get(ev)).toBe(t.recCpu.get(i));
    }
    expect(counts.resolved).toBeGreaterThan(1400);
    expect(counts.full).toBe(sample.stat.fallbacks);
    expect(c.diagnostics).toEqual([]);
  });

  it('summarizes as the command line contract says', () => {
    const s = summarize(ingestFiles(files));
    expect(s.events).toBe(1500);
    expect(s.cookies + s.fullStacks).toBe(1500);
    expect(s.resolved + s.unresolved).toBe(s.cookies);
    expect(s.status.resolved + s.status['no-slot']).toBe(s.cookies);
    expect(s.generations).toEqual([1, 2, 3]);
    expect(s.stat).toMatchObject({
      version: 'v8',
      entries: sample.stat.entries,
      capacity: 16384,
      successes: sample.stat.successes,
      drops: sample.stat.fallbacks,
      generation: 3,
    });
    // the top ten are the truth's ten most frequent stacks among the records that found one
    const c = ingestFiles(files);
    const freq = new Map<string, { count: number; frames: string[] }>();
    for (let i = 0; i < sample.truth.length; i++) {
      const st = c.trace.recStatus.get(i);
      if (st !== RecordStatus.Resolved && st !== RecordStatus.Full) continue;
      const frames = Array.from(sample.truth[i].ips, (ip) => frameKey(sample.kernel.printFrame(ip)));
      const e = freq.get(frames.join(';')) ?? { count: 0, frames };
      e.count++;
      freq.set(frames.join(';'), e);
    }
    const counts = [...freq.values()].map((e) => e.count).sort((a, b) => b - a);
    expect(s.top.map((t) => t.count)).toEqual(counts.slice(0, 10));
    for (const t of s.top) expect(freq.get(t.frames.join(';'))?.count).toBe(t.count);
    // every stack a record found, and every dump slot: no more, no fewer
    const dumped = new Set(sample.dumps.flatMap((d) => d.records.map((r) => Array.from(r.ips, (ip) => frameKey(sample.kernel.printFrame(ip))).join(';'))));
    for (const k of freq.keys()) dumped.add(k);
    expect(s.uniqueStacks).toBe(dumped.size);
  });

  it('gives the same capture whatever order the files come in', () => {
    const a = summarize(ingestFiles(files));
    const b = summarize(ingestFiles([...files].reverse()));
    expect({ ...b, files: [], diagnostics: [] }).toEqual({ ...a, files: [], diagnostics: [] });
  });
});

const trace = (lines: string[]) => '# tracer: nop\n' + lines.map((l) => `            bash-1234    [001] d..1.   100.000001: ${l}`).join('\n') + '\n';

describe('cookie index statuses', () => {
  const v7dumpA = 'stack_id 1 [ref 3, depth 2]\n  [0] a+0x1/0x10\n  [1] b+0x2/0x20\n\n';
  const v7dumpB = 'stack_id 1 [ref 3, depth 2]\n  [0] c+0x1/0x10\n  [1] b+0x2/0x20\n\nstack_id 2 [ref 1, depth 1]\n  [0] d+0x4/0x8\n\n';

  it('v7 ids: unverified against one generation-less dump, no-slot when it lacks the slot', () => {
    const c = ingestFiles([
      ['trace', trace(['<stack_id 1>', '<stack_id 9>'])],
      ['map', v7dumpA],
    ]);
    expect([c.trace.recStatus.get(0), c.trace.recStatus.get(1)]).toEqual([RecordStatus.Unverified, RecordStatus.NoSlot]);
    expect(c.stacks.framesOf(c.trace.recStack.get(0))).toEqual(['a+0x1', 'b+0x2']);
  });

  it('v7 ids: ambiguous when generation-less dumps disagree, unverified where they agree', () => {
    const c = ingestFiles([
      ['trace', trace(['<stack_id 1>', '<stack_id 2>'])],
      ['mapA', v7dumpA],
      ['mapB', v7dumpB],
    ]);
    expect([c.trace.recStatus.get(0), c.trace.recStatus.get(1)]).toEqual([RecordStatus.Ambiguous, RecordStatus.Unverified]);
    expect(summarize(c).resolved).toBe(1);
  });

  it('v8 cookies: only against a dump of their own generation', () => {
    const v8dump = 'stack_id 1 gen 2 [ref 1, depth 1]\n => x+0x1/0x2\n\n';
    const c = ingestFiles([
      ['trace', trace(['<stack_id 1 gen 2>', '<stack_id 1 gen 1>', '<stack_id 5 gen 2>'])],
      ['map', v8dump],
    ]);
    expect([0, 1, 2].map((i) => c.trace.recStatus.get(i))).toEqual([RecordStatus.Resolved, RecordStatus.NoDump, RecordStatus.NoSlot]);
    expect(summarize(c).generations).toEqual([1, 2]);
  });

  it('no dump at all: every cookie is no-dump', () => {
    const c = ingestFiles([['trace', trace(['<stack_id 1>', '<stack_id 3 gen 1>'])]]);
    expect(summarize(c).status['no-dump']).toBe(2);
  });
});
