import { describe, expect, it } from 'vitest';
import { writeStackMapBin } from '../formats/stack-map-write.ts';
import { ingestFiles } from './test-helpers.ts';

const text = 'stack_id 1 gen 4 [ref 5, depth 2]\n => schedule+0x48/0xc0\n => worker_thread+0x10/0x200\n\nstack_id 2 gen 4 [ref 1, depth 1]\n => kfree+0x8/0x40\n\n';
const bin = (records: { slot: number; refCount: number; ips: bigint[] }[]) =>
  writeStackMapBin({ version: 2, generation: 4, littleEndian: true, records });
const trace = '            bash-1234    [001] d..1.   100.000001: <stack_id 1 gen 4>\n';

describe('text and binary dumps of one generation', () => {
  it('merge slot by slot; an unsymbolized binary record of the same depth agrees with the text', () => {
    const c = ingestFiles([
      ['trace', trace],
      ['stack_map', text],
      ['stack_map_bin', bin([{ slot: 1, refCount: 7, ips: [0xffffffff81000048n, 0xffffffff81000510n] }, { slot: 3, refCount: 1, ips: [0xffffffff81000900n] }])],
    ]);
    expect(c.diagnostics).toEqual([]);
    const gen = c.dumps.byGeneration.get(4)!;
    expect([...gen.slots.keys()].sort()).toEqual([1, 2, 3]);
    // the readable stack wins, the larger ref_count is kept (it only grows between reads)
    expect(c.stacks.framesOf(gen.slots.get(1)!.stack)).toEqual(['schedule+0x48', 'worker_thread+0x10']);
    expect(gen.slots.get(1)!.refCount).toBe(7);
    expect(gen.sources.length).toBe(2);
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
