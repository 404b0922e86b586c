import { describe, expect, it } from 'vitest';
import { ExplorerData } from './explorer-data.ts';
import { NO_GEN } from './selection.ts';
import { handCapture, sampleCapture, handStacks } from '../testing/explorer-fixtures.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { writeStackMapBin } from '../formats/stack-map-write.ts';
import type { Capture } from '../capture/ingest.ts';

/** Two generation-less dumps of one map: slot 3 read at ref 3 and 4, slot 5 holding a different stack in each. */
function generationless(): Capture {
  const bin = (records: { slot: number; refCount: number; ips: bigint[] }[]) => writeStackMapBin({ version: 1, generation: null, littleEndian: true, records });
  return ingestFiles([
    [
      'stack_map_bin.a',
      bin([
        { slot: 3, refCount: 3, ips: [0xffffffff81000010n, 0xffffffff81000020n] },
        { slot: 5, refCount: 1, ips: [0xffffffff81000030n] },
      ]),
    ],
    [
      'stack_map_bin.b',
      bin([
        { slot: 3, refCount: 4, ips: [0xffffffff81000010n, 0xffffffff81000020n] },
        { slot: 5, refCount: 2, ips: [0xffffffff81000040n] },
      ]),
    ],
  ]);
}

describe("DumpRefs: the dumps' ref_count of each stack", () => {
  it("refCounts of a table's rows: the dump text's ref per generation, summed; null where no dump of those generations holds the stack", () => {
    const c = handCapture();
    const d = new ExplorerData(c);
    // HAND_DUMP_GEN1/GEN2 read by eye: (a b) ref 2 in gen 1; (c b) ref 1 in gen 1 and 5 in gen 2; (a d a b) ref 1 in gen 1
    const { S1: ab, S2: cb, S3: adab } = handStacks(c);
    const rows = [ab, cb, adab];
    expect(d.refs.counts(rows, null)).toEqual([2, 6, 1]);
    expect(d.refs.counts(rows, [1])).toEqual([2, 1, 1]);
    expect(d.refs.counts(rows, [2])).toEqual([null, 5, null]);
    expect(d.refs.counts(rows, [7])).toEqual([null, null, null]);
    // a generation key given twice counts once, with the index and without
    expect(d.refs.counts(rows, [1, 1])).toEqual([2, 1, 1]);
    expect(rows.map((s) => d.refs.count(s, [1, 1]))).toEqual([2, 1, 1]);
  });

  it('generation-less dumps: a slot read twice counts once at its highest ref, a slot that changed stacks counts each', () => {
    const c = generationless();
    const d = new ExplorerData(c);
    const stacks = Array.from({ length: d.node.parent.length - 1 }, (_, i) => i + 1).filter((s) => d.stacks.framesOf(s).length > 0);
    const byFrames = new Map(stacks.map((s) => [d.stacks.framesOf(s).length, s]));
    const got = new Map(stacks.map((s, i) => [s, d.refs.counts(stacks, null)[i]]));
    // the two-frame stack: max(3, 4); the one-frame stacks of slot 5: 1 and 2
    expect(got.get(byFrames.get(2)!)).toBe(4);
    expect([...got.values()].filter((v) => v !== null).sort()).toEqual([1, 2, 4]);
    expect(d.refs.counts(stacks, [NO_GEN])).toEqual(d.refs.counts(stacks, null));
  });

  it('refCounts without the index and refCount with it agree on every node, every generation key', () => {
    for (const c of [handCapture(), sampleCapture(), generationless()]) {
      const nodes = Array.from({ length: new ExplorerData(c).node.parent.length }, (_, i) => i);
      const indexed = new ExplorerData(c);
      const keys = [null, [NO_GEN], [1], [2], [3], [99]];
      for (const gens of keys) {
        const batch = new ExplorerData(c).refs.counts(nodes, gens);
        expect(batch).toEqual(nodes.map((s) => indexed.refs.count(s, gens)));
        // once the index is made, refCounts reads it
        expect(indexed.refs.counts(nodes, gens)).toEqual(batch);
      }
    }
  });
});
