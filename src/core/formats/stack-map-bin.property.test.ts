import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { BIN_MAX_DEPTH, createStackMapBinParser, recordsOf } from './stack-map-bin.ts';
import { writeStackMapBin, type BinRecordInput } from './stack-map-write.ts';
import { feedCuts } from '../testing/formats.ts';

/**
 * The binary reader as plainly as it can be written: the whole file in one DataView, every ip
 * read with getBigUint64, records as objects. The reference for the streaming, columnar one.
 */
function plainRead(bytes: Uint8Array) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: { slot: number; refCount: number; where: number; ips: bigint[] }[] = [];
  if (bytes.length < 16) return { le: null, version: 'unknown', generation: null, records, used: 0, end: bytes.length === 0 ? 'empty' : 'short header' };
  let le: boolean;
  if (dv.getUint32(0, true) === 0x46534d42) le = true;
  else if (dv.getUint32(0, false) === 0x46534d42) le = false;
  else return { le: null, version: 'unknown', generation: null, records, used: 0, end: 'bad magic' };
  const version = dv.getUint32(4, le);
  const nr = dv.getUint32(8, le);
  const generation = version === 1 ? null : dv.getUint32(12, le);
  let off = 16;
  let end = 'complete';
  for (;;) {
    if (records.length >= nr) {
      if (off < bytes.length) end = 'extra';
      break;
    }
    if (records.length >= 1 << 18) {
      end = 'too many';
      break;
    }
    if (off + 16 > bytes.length) {
      end = 'truncated';
      break;
    }
    const depth = dv.getUint32(off + 4, le);
    if (depth > 64) {
      end = 'too deep';
      break;
    }
    if (off + 16 + 8 * depth > bytes.length) {
      end = 'truncated';
      break;
    }
    const ips: bigint[] = [];
    for (let k = 0; k < depth; k++) ips.push(dv.getBigUint64(off + 16 + 8 * k, le));
    records.push({ slot: dv.getUint32(off, le), refCount: dv.getUint32(off + 8, le), where: off, ips });
    off += 16 + 8 * depth;
  }
  return { le, version: String(version), generation, records, used: off, end };
}

/** What the reader's diagnostics must say for each way a file ends (and about slot order). */
const ENDINGS: Record<string, RegExp> = {
  complete: /^$/,
  empty: /^empty file$/,
  'short header': /^truncated header/,
  'bad magic': /^bad magic/,
  extra: /bytes after the \d+ records the header claims$/,
  truncated: /header claims \d+ records, the file holds \d+ whole records$/,
  'too deep': /record claims \d+ frames \(kernel maximum 64\)/,
  'too many': /more than 262,144 records/,
};

const U64 = (1n << 64n) - 1n;
const ip = fc.oneof(
  fc.bigInt({ min: 0n, max: U64 }),
  fc.bigInt({ min: 0xffffffff80000000n, max: 0xffffffffc1000000n }),
  fc.constantFrom(0x7fffffffn, 0n, U64, 0xffffffffn, 0x100000000n),
);
const record: fc.Arbitrary<BinRecordInput> = fc.record({
  slot: fc.oneof(fc.nat({ max: 1 << 18 }), fc.constant(0xffffffff)),
  refCount: fc.oneof(fc.nat(), fc.constant(0xffffffff)),
  ips: fc.array(ip, { maxLength: BIN_MAX_DEPTH }),
});
const dump = fc.record({
  version: fc.constantFrom(1, 2, 3),
  generation: fc.nat(),
  littleEndian: fc.boolean(),
  records: fc.array(record, { maxLength: 24 }),
  /** header count: the records' own, fewer, or more */
  claim: fc.oneof(fc.constant(-1), fc.nat({ max: 30 })),
  /** cut the file at this fraction (1: whole) */
  cut: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
  /** a record whose nr says more than 64 frames, by index (-1: none) */
  deep: fc.integer({ min: -1, max: 24 }),
  /** trailing junk bytes */
  junk: fc.nat({ max: 40 }),
  cuts: fc.array(fc.nat(), { maxLength: 12 }),
});

describe('stack_map_bin reader against a plain DataView/BigInt reader (property)', () => {
  it('reads the same records, bytes and endings from random dumps, both versions and byte orders, truncated, cut into any chunks', () => {
    fc.assert(
      fc.property(dump, (d) => {
        const whole = writeStackMapBin({
          version: d.version,
          generation: d.version === 1 ? null : d.generation,
          littleEndian: d.littleEndian,
          records: d.records.map((r) => ({ ...r, slot: r.slot >>> 0 })),
          nrStacks: d.claim < 0 ? d.records.length : d.claim,
        });
        const padded = new Uint8Array(whole.length + d.junk);
        padded.set(whole);
        for (let i = whole.length; i < padded.length; i++) padded[i] = (i * 37) & 0xff;
        if (d.deep >= 0 && d.deep < d.records.length) {
          let off = 16;
          for (let r = 0; r < d.deep; r++) off += 16 + 8 * d.records[r].ips.length;
          new DataView(padded.buffer).setUint32(off + 4, BIN_MAX_DEPTH + 1 + d.deep, d.littleEndian);
        }
        const bytes = padded.subarray(0, Math.floor(padded.length * d.cut));
        const want = plainRead(bytes);
        const log = new DiagnosticLog('f');
        const got = feedCuts(createStackMapBinParser({ file: 'f', diagnostics: log }), bytes, d.cuts);

        expect(got.littleEndian).toBe(want.le);
        expect(got.version).toBe(want.version);
        if (want.le !== null) expect(got.generation).toBe(want.generation);
        expect(got.bytes).toEqual({ total: bytes.length, used: want.used, unused: bytes.length - want.used });
        const asRead = got.records.map((r) => ({ slot: r.slot, refCount: r.refCount, where: r.where, ips: [...r.ips!] }));
        expect(asRead).toEqual(want.records);
        expect(got.records.every((r) => r.generation === got.generation && r.frames === null)).toBe(true);
        // the columns say the same, each record's ips inside one block
        const c = got.columns!;
        expect(c.count).toBe(want.records.length);
        expect(c.ips).toBe(want.records.reduce((n, r) => n + r.ips.length, 0));
        for (let r = 0; r < c.count; r++) expect(c.start[r] + c.depth[r]).toBeLessThanOrEqual(c.ipHi[c.block[r]].length);
        expect(recordsOf(c, got.generation).map((r) => [...r.ips!])).toEqual(want.records.map((r) => r.ips));

        const messages = log.list().map((x) => x.message);
        const ending = ENDINGS[want.end];
        if (want.end === 'complete') {
          expect(messages.filter((m) => !/slot|version/.test(m))).toEqual([]);
        } else {
          expect(
            messages.some((m) => ending.test(m)),
            `${want.end}: ${messages.join(' | ')}`,
          ).toBe(true);
        }
        // slots out of order are reported once per record, at the record
        const disorder = want.records.filter((r, i) => i > 0 && r.slot <= Math.max(...want.records.slice(0, i).map((x) => x.slot))).length;
        const reported = log
          .list()
          .filter((x) => /slot appears twice|slots not in ascending order/.test(x.message))
          .reduce((n, x) => n + x.count, 0);
        expect(reported).toBe(disorder);
      }),
      { numRuns: 400 },
    );
  });

  it('reads a dump larger than one ip block (2^18 ips) the same way', () => {
    let seed = 11;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const records: BinRecordInput[] = [];
    for (let s = 0; s < 9000; s++) {
      const ips = new BigUint64Array(1 + ((rnd() >>> 16) % 64));
      for (let k = 0; k < ips.length; k++) ips[k] = (BigInt(rnd()) << 32n) | BigInt(rnd());
      records.push({ slot: s, refCount: rnd(), ips });
    }
    for (const littleEndian of [true, false]) {
      const bytes = writeStackMapBin({ version: 2, generation: 9, littleEndian, records });
      const want = plainRead(bytes);
      const got = feedCuts(createStackMapBinParser({ file: 'f', diagnostics: new DiagnosticLog('f') }), bytes, [1000, 70_001, 3_000_000]);
      expect(got.columns!.ipHi.length).toBeGreaterThan(1);
      expect(got.records.map((r) => ({ slot: r.slot, refCount: r.refCount, where: r.where, ips: [...r.ips!] }))).toEqual(want.records);
    }
  });
});
