import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { createStackMapBinParser } from './stack-map-bin.ts';
import { writeStackMapBin, type BinRecordInput } from './stack-map-write.ts';

/** `n` records of 64 ips each, the high half of record r's ips given by `hiOf(r)` */
function records(n: number, hiOf: (r: number) => bigint): BinRecordInput[] {
  return Array.from({ length: n }, (_, r) => ({
    slot: r + 1,
    refCount: 1,
    ips: BigUint64Array.from({ length: 64 }, (_, k) => (hiOf(r) << 32n) | BigInt((r * 64 + k) * 4 + 0x1000)),
  }));
}

function read(recs: BinRecordInput[]) {
  const p = createStackMapBinParser({ file: 'stack_map_bin', diagnostics: new DiagnosticLog('stack_map_bin') });
  const bytes = writeStackMapBin({ version: 2, generation: 1, littleEndian: true, records: recs });
  // in pieces, as a stream hands them over
  for (let i = 0; i < bytes.length; i += 1 << 20) p.push(bytes.subarray(i, i + (1 << 20)));
  return p.end();
}

describe('the ip columns across blocks', () => {
  // 5,000 records of 64 ips: 320,000 ips, more than one block (2^18)
  const shapes: [string, (r: number) => bigint][] = [
    ['every high half 0xffffffff (a 64-bit kernel)', () => 0xffffffffn],
    ['one record of another high half in the second block', (r) => (r === 4500 ? 0n : 0xffffffffn)],
    ['a high half per block, more values than get a shared block', (r) => BigInt(Math.floor((r * 64) / (1 << 18)) * 7 + 1) + (r >= 4900 ? 100n : 0n)],
    ['a high half per record', (r) => BigInt(r)],
  ];
  it.each(shapes)('%s: the records read back are the ones written', (_name, hiOf) => {
    const want = records(5000, hiOf);
    const got = read(want);
    const c = got.columns!;
    expect(c.ipHi.length).toBeGreaterThan(1);
    expect(got.records.map((r) => [r.slot, ...r.ips!])).toEqual(want.map((r) => [r.slot, ...r.ips]));
  });

  it("blocks of one high half share that value's block; a mixed block keeps its own", () => {
    // 12,000 records: 768,000 ips in three blocks, record 5,000 (ip 320,000) in the second
    const c = read(records(12000, (r) => (r === 5000 ? 0n : 0xffffffffn))).columns!;
    const buffers = c.ipHi.map((b) => b.buffer);
    expect(buffers).toHaveLength(3);
    expect([buffers[0] === buffers[2], buffers[1] === buffers[0]]).toEqual([true, false]);
    expect(c.ipHi[1][320000 - (1 << 18)]).toBe(0);
  });
});
