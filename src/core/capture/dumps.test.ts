import { describe, expect, it } from 'vitest';
import { writeStackMapBin } from '../formats/stack-map-write.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { RecordStatus } from './trace-columns-data.ts';

const text =
  'stack_id 1 gen 4 [ref 5, depth 2]\n => schedule+0x48/0xc0\n => worker_thread+0x10/0x200\n\nstack_id 2 gen 4 [ref 1, depth 1]\n => kfree+0x8/0x40\n\n';
const bin = (records: { slot: number; refCount: number; ips: bigint[] }[]) => writeStackMapBin({ version: 2, generation: 4, littleEndian: true, records });
const trace = '            bash-1234    [001] d..1.   100.000001: <stack_id 1 gen 4>\n';

describe('text and binary dumps of one generation', () => {
  it('merge slot by slot; an unsymbolized binary record of the same depth agrees with the text', () => {
    const c = ingestFiles([
      ['trace', trace],
      ['stack_map', text],
      [
        'stack_map_bin',
        bin([
          { slot: 1, refCount: 7, ips: [0xffffffff81000048n, 0xffffffff81000510n] },
          { slot: 3, refCount: 1, ips: [0xffffffff81000900n] },
        ]),
      ],
    ]);
    expect(c.diagnostics).toEqual([]);
    const gen = c.dumps.byGeneration.get(4)!;
    expect([...gen.slots.keys()].sort()).toEqual([1, 2, 3]);
    // the readable stack wins, the larger ref_count is kept (it only grows between reads)
    expect(c.stacks.framesOf(gen.slots.get(1)!.stack)).toEqual(['schedule+0x48', 'worker_thread+0x10']);
    expect(gen.slots.get(1)!.refCount).toBe(7);
    expect(gen.sources.length).toBe(2);
  });

  it("a map's entries as columns are its slots as read one at a time, and the text's own numbers", () => {
    const c = ingestFiles([
      ['stack_map', text],
      [
        'stack_map_bin',
        bin([
          { slot: 1, refCount: 7, ips: [0xffffffff81000048n, 0xffffffff81000510n] },
          { slot: 3, refCount: 2, ips: [0xffffffff81000900n] },
        ]),
      ],
    ]);
    const slots = c.dumps.byGeneration.get(4)!.slots;
    const cols = slots.columns();
    const one = Array.from({ length: slots.size }, (_, i) => [slots.slotAt(i), slots.stackAt(i), slots.refCountAt(i)]);
    expect(Array.from(cols.slot, (s, i) => [s, cols.stack[i], cols.refCount[i]])).toEqual(one);
    // the text's slots and ref counts (ref 5 read as 7 by the binary dump: the larger is kept), then the binary's own slot 3
    expect(Array.from(cols.slot)).toEqual([1, 2, 3]);
    expect(Array.from(cols.refCount)).toEqual([7, 1, 2]);
    expect(c.stacks.framesOf(cols.stack[1])).toEqual(['kfree+0x8']);
  });

  it("a map's columns, read once and kept, are made again once a slot's stack changes", () => {
    const c = ingestFiles([['stack_map', text]]);
    const slots = c.dumps.byGeneration.get(4)!.slots;
    const before = slots.columns();
    expect(slots.columns()).toBe(before);
    // slot 2 read again as slot 1's stack (frames the table has: the capture's is a snapshot)
    slots.get(2)!.setFrames(['schedule+0x48', 'worker_thread+0x10']);
    const after = slots.columns();
    expect(before.stack[1]).not.toBe(before.stack[0]);
    expect(after.stack[1]).toBe(after.stack[0]);
    expect(Array.from(after.stack, (_, i) => slots.stackAt(i))).toEqual(Array.from(after.stack));
  });

  it('a new generation whose slots ascend is kept at once, as the same records out of order are one by one', () => {
    const recs = Array.from({ length: 40 }, (_, i) => ({
      slot: 3 * i + 1,
      refCount: i + 1,
      ips: Array.from({ length: 1 + (i % 5) }, (_, k) => 0xffffffff81000000n + BigInt(((i * 7 + k * 3) % 11) * 16)),
    }));
    const slotsOf = (c: ReturnType<typeof ingestFiles>) => {
      const slots = c.dumps.byGeneration.get(4)!.slots;
      return [...slots.keys()].sort((a, b) => a - b).map((n) => [n, slots.get(n)!.refCount, c.stacks.framesOf(slots.get(n)!.stack).join(' ')]);
    };
    const inOrder = ingestFiles([['stack_map_bin', bin(recs)]]);
    // two records swapped: the slots no longer ascend, so each is added on its own
    const swapped = recs.slice();
    [swapped[3], swapped[4]] = [swapped[4], swapped[3]];
    const oneByOne = ingestFiles([['stack_map_bin', bin(swapped)]]);
    expect(oneByOne.diagnostics.map((d) => d.message)).toEqual(['slots not in ascending order']);
    expect(slotsOf(inOrder)).toEqual(slotsOf(oneByOne));
    expect(inOrder.stacks.size).toBe(oneByOne.stacks.size);
    // and as written: the record's own ref_count and depth
    expect(slotsOf(inOrder).map(([n, ref, frames]) => [n, ref, (frames as string).split(' ').length])).toEqual(
      recs.map((r) => [r.slot, r.refCount, r.ips.length]),
    );
  });

  it('report a disagreement, keeping the first dump read', () => {
    const c = ingestFiles([
      ['stack_map', text],
      ['stack_map_bin', bin([{ slot: 1, refCount: 5, ips: [0xffffffff81000048n] }])],
    ]);
    expect(c.diagnostics).toHaveLength(1);
    expect(c.diagnostics[0]).toMatchObject({ file: 'stack_map_bin', where: 'offset 0x10' });
    expect(c.diagnostics[0].message).toMatch(/generation 4 slot 1 disagrees with stack_map/);
    expect(c.stacks.framesOf(c.dumps.byGeneration.get(4)!.slots.get(1)!.stack)).toHaveLength(2);
  });
});

const v7text = (records: { slot: number; frames: string[] }[]) =>
  records.map((r) => `stack_id ${r.slot} [ref 1, depth ${r.frames.length}]\n` + r.frames.map((f, i) => `  [${i}] ${f}\n`).join('') + '\n').join('');
const binV1 = (records: { slot: number; ips: bigint[] }[]) =>
  writeStackMapBin({ version: 1, generation: null, littleEndian: true, records: records.map((r) => ({ ...r, refCount: 1 })) });
const v7trace = (slots: number[]) =>
  slots.map((s, i) => `            bash-1234    [001] d..1.   100.${String(i + 1).padStart(6, '0')}: <stack_id ${s}>\n`).join('');

describe('generation-less dumps (v7 ids)', () => {
  it('a binary dump without kallsyms and a text dump of the same map agree: the ids are unverified, the text frames kept, no stack counted twice', () => {
    const c = ingestFiles([
      ['trace', v7trace([1, 1, 2])],
      // the trampoline marker is named in both, raw addresses only in the binary dump
      [
        'stack_map_bin',
        binV1([
          { slot: 1, ips: [0xffffffff81000048n, 0x7fffffffn, 0xffffffff81000510n] },
          { slot: 2, ips: [0xffffffff81000900n] },
        ]),
      ],
      [
        'stack_map',
        v7text([
          { slot: 1, frames: ['schedule+0x48/0xc0', '[FTRACE TRAMPOLINE]', 'worker_thread+0x10/0x200'] },
          { slot: 2, frames: ['kfree+0x8/0x40'] },
        ]),
      ],
    ]);
    expect(c.diagnostics).toEqual([]);
    expect([0, 1, 2].map((i) => c.trace.recStatus.get(i))).toEqual([RecordStatus.Unverified, RecordStatus.Unverified, RecordStatus.Unverified]);
    expect(c.stacks.framesOf(c.trace.recStack.get(0))).toEqual(['schedule+0x48', '[FTRACE TRAMPOLINE]', 'worker_thread+0x10']);
    expect(c.stacks.framesOf(c.trace.recStack.get(2))).toEqual(['kfree+0x8']);
    // both dumps' own slot maps hold the readable stack
    for (const g of c.dumps.generationless) expect(c.stacks.framesOf(g.slots.get(1)!.stack)[0]).toBe('schedule+0x48');
    expect(c.stacks.size).toBe(2);
  });

  it('two dumps that hold different stacks in a slot: ambiguous, with a diagnostic naming both files and the slot', () => {
    const c = ingestFiles([
      ['trace', v7trace([1, 2, 3])],
      [
        'mapA',
        v7text([
          { slot: 1, frames: ['a+0x1/0x10', 'b+0x2/0x20'] },
          { slot: 2, frames: ['d+0x4/0x8'] },
        ]),
      ],
      [
        'mapB',
        v7text([
          { slot: 1, frames: ['c+0x1/0x10', 'b+0x2/0x20'] },
          { slot: 2, frames: ['d+0x4/0x8'] },
          { slot: 3, frames: ['e+0x1/0x2'] },
        ]),
      ],
      // raw but of another depth than both: disagrees too
      ['stack_map_bin', binV1([{ slot: 2, ips: [0xffffffff81000100n, 0xffffffff81000200n] }])],
    ]);
    expect([0, 1, 2].map((i) => c.trace.recStatus.get(i))).toEqual([RecordStatus.Ambiguous, RecordStatus.Ambiguous, RecordStatus.Unverified]);
    expect(c.diagnostics).toHaveLength(2);
    expect(c.diagnostics[0]).toMatchObject({ file: 'mapB', where: 'line 1' });
    expect(c.diagnostics[0].message).toMatch(
      /^slots that hold other stacks than in earlier dumps: 1 of the 2 this dump shares with them \(the first, slot 1, against mapA: frame 0 of 2: c\+0x1 here, a\+0x1 there\)\. v7 ids naming them are ambiguous/,
    );
    expect(c.diagnostics[1]).toMatchObject({ file: 'stack_map_bin', where: 'offset 0x10' });
    expect(c.diagnostics[1].message).toContain('1 of the 1 this dump shares with them (the first, slot 2, against mapA: depth 2 here, 1 there)');
  });

  it('several disagreeing slots in one dump: one diagnostic with the count', () => {
    const slots = [1, 2, 3, 4];
    const c = ingestFiles([
      ['old', v7text(slots.map((slot) => ({ slot, frames: [`f${slot}+0x1/0x2`] })))],
      ['new', v7text(slots.map((slot) => ({ slot, frames: [slot < 4 ? `g${slot}+0x1/0x2` : `f${slot}+0x1/0x2`] })))],
    ]);
    expect(c.diagnostics).toHaveLength(1);
    expect(c.diagnostics[0]).toMatchObject({ file: 'new', where: 'line 1' });
    expect(c.diagnostics[0].message).toMatch(
      /^slots that hold other stacks than in earlier dumps: 3 of the 4 this dump shares with them \(the first, slot 1, against old: /,
    );
  });

  it('text and binary dumps of one generation: a trampoline frame does not make them disagree', () => {
    const c = ingestFiles([
      ['stack_map', 'stack_id 1 gen 4 [ref 5, depth 2]\n => schedule+0x48/0xc0\n => [FTRACE TRAMPOLINE]\n\n'],
      ['stack_map_bin', bin([{ slot: 1, refCount: 7, ips: [0xffffffff81000048n, 0x7fffffffn] }])],
    ]);
    expect(c.diagnostics).toEqual([]);
    expect(c.stacks.framesOf(c.dumps.byGeneration.get(4)!.slots.get(1)!.stack)).toEqual(['schedule+0x48', '[FTRACE TRAMPOLINE]']);
    expect(c.stacks.size).toBe(1);
  });
});
