import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { sniffKind } from './sniff.ts';
import { createStackMapBinParser } from './stack-map-bin.ts';
import { writeStackMapBin, type BinRecordInput } from './stack-map-write.ts';
import { CHUNK_SIZES, feedChunks, fixture } from '../testing/formats.ts';
import { readEveryWay, readers, type ReaderSpec } from '../testing/reader-kit.ts';
import type { ParsedDump } from './types.ts';

function parse(bytes: Uint8Array, chunk = 0) {
  const diagnostics = new DiagnosticLog('f');
  const dump = feedChunks(createStackMapBinParser({ file: 'f', diagnostics }), bytes, chunk);
  const b = dump.bytes!;
  expect(b.total).toBe(bytes.length);
  expect(b.used + b.unused).toBe(b.total);
  return { dump, diags: diagnostics.list() };
}

/** Parses every way (reader-kit.ts: chunk sizes and the header's and a record's sizes, renamed `unknown`, bytes, written back), returns the one-chunk result. */
function parseAll(bytes: Uint8Array, spec: ReaderSpec<ParsedDump> = readers.stackMapBin) {
  const { result: dump, diagnostics: diags } = readEveryWay('f', bytes, { ...spec, sizes: [...CHUNK_SIZES, 3, 16, 17, 200] });
  return { dump, diags };
}

// the same records as scripts/make-bin-fixtures.ts writes
const RECORDS: BinRecordInput[] = [
  { slot: 0, refCount: 1337, ips: [0xffffffff81234567n, 0xffffffff81000010n, 0xffffffff810abcden] },
  { slot: 1, refCount: 12, ips: [0x7fffffffn, 0xffffffffc0a1b2c3n] },
  { slot: 7, refCount: 1, ips: [0xffffffff81111111n, 0xffffffff82222222n, 0xffffffff83333333n, 0xffffffff84444444n] },
];
const WHERE = [16, 56, 88];

const expected = (generation: number | null, n = RECORDS.length) =>
  RECORDS.slice(0, n).map((r, i) => ({
    slot: r.slot,
    generation,
    refCount: r.refCount,
    frames: null,
    ips: BigUint64Array.from(r.ips),
    where: WHERE[i],
  }));

const messages = (diags: { message: string }[]) => diags.map((d) => d.message);

describe('stack_map_bin fixtures', () => {
  for (const [rel, le] of [
    ['v1/le.bin', true],
    ['v1/be.bin', false],
  ] as const) {
    it(rel, () => {
      const bytes = fixture('stack_map_bin/' + rel);
      expect(sniffKind(bytes)).toBe('stack_map_bin');
      const { dump, diags } = parseAll(bytes);
      expect(diags).toEqual([]);
      const { columns, ...rest } = dump;
      expect(columns!.count).toBe(RECORDS.length);
      expect(rest).toEqual({
        file: 'f',
        format: 'stack_map_bin',
        version: '1',
        generation: null,
        littleEndian: le,
        uninitialized: false,
        records: expected(null),
        lines: null,
        bytes: { total: 136, used: 136, unused: 0 },
      });
    });
  }

  it('v2/le.bin: header word is the generation', () => {
    const bytes = fixture('stack_map_bin/v2/le.bin');
    expect(sniffKind(bytes)).toBe('stack_map_bin');
    const { dump, diags } = parseAll(bytes);
    expect(diags).toEqual([]);
    expect(dump.version).toBe('2');
    expect(dump.generation).toBe(3);
    expect(dump.littleEndian).toBe(true);
    expect(dump.records).toEqual(expected(3));
    expect(dump.bytes).toEqual({ total: 136, used: 136, unused: 0 });
  });

  it('v3/unknown-version.bin: read as 2 with a diagnostic', () => {
    const bytes = fixture('stack_map_bin/v3/unknown-version.bin');
    expect(sniffKind(bytes)).toBe('stack_map_bin');
    const { dump, diags } = parseAll(bytes);
    expect(dump.version).toBe('3');
    expect(dump.generation).toBe(5);
    expect(dump.records).toEqual(expected(5));
    expect(diags).toEqual([{ file: 'f', where: 'offset 0x4', message: 'unknown version 3: read as version 2', count: 1 }]);
  });

  it('v1/truncated.bin: whole records kept, truncated tail diagnosed at its offset', () => {
    const bytes = fixture('stack_map_bin/v1/truncated.bin');
    expect(sniffKind(bytes)).toBe('stack_map_bin');
    const { dump, diags } = parseAll(bytes);
    expect(dump.records).toEqual(expected(null, 2));
    expect(dump.bytes).toEqual({ total: 112, used: 88, unused: 24 });
    expect(diags).toEqual([
      { file: 'f', where: 'offset 0x58', message: 'truncated record: 24 of 48 bytes of a record with 4 frames', count: 1 },
      { file: 'f', where: 'offset 0x58', message: 'header claims 3 records, the file holds 2 whole records', count: 1 },
    ]);
  });
});

describe('stack_map_bin round trip', () => {
  for (const version of [1, 2] as const) {
    for (const littleEndian of [true, false]) {
      it(`version ${version}, ${littleEndian ? 'little' : 'big'} endian`, () => {
        const generation = version === 2 ? 0xfffffffe : null;
        const records: BinRecordInput[] = [
          ...RECORDS,
          { slot: 32767, refCount: 0xffffffff, ips: new BigUint64Array(64).map((_, i) => 0xffffffff80000000n + BigInt(i)) },
          { slot: 32768, refCount: 0, ips: [] },
        ];
        const bytes = writeStackMapBin({ version, generation, littleEndian, records });
        expect(sniffKind(bytes)).toBe('stack_map_bin');
        const { dump, diags } = parseAll(bytes);
        expect(diags).toEqual([]);
        expect(dump.version).toBe(String(version));
        expect(dump.generation).toBe(generation);
        expect(dump.littleEndian).toBe(littleEndian);
        expect(dump.records.map((r) => ({ slot: r.slot, refCount: r.refCount, ips: [...r.ips!] }))).toEqual(
          records.map((r) => ({ slot: r.slot, refCount: r.refCount, ips: [...r.ips] })),
        );
        expect(dump.records.every((r) => r.generation === generation && r.frames === null)).toBe(true);
      });
    }
  }
});

describe('stack_map_bin hostile input', () => {
  it('header claiming 0xFFFFFFFF records on a short file: no preallocation, whole records kept', () => {
    const bytes = writeStackMapBin({ version: 2, generation: 1, littleEndian: true, records: RECORDS, nrStacks: 0xffffffff });
    const { dump, diags } = parseAll(bytes);
    expect(dump.records).toEqual(expected(1));
    expect(dump.bytes).toEqual({ total: 136, used: 136, unused: 0 });
    expect(messages(diags)).toEqual(['header claims 4294967295 records, the file holds 3 whole records']);
  });

  it('record claiming 2^31 frames: diagnostic at its offset, no allocation, reading stops', () => {
    const good = writeStackMapBin({ version: 1, generation: null, littleEndian: false, records: RECORDS.slice(0, 1) });
    const bad = new Uint8Array(16 + 64);
    const dv = new DataView(bad.buffer);
    dv.setUint32(0, 9, false);
    dv.setUint32(4, 2 ** 31, false);
    const bytes = new Uint8Array(good.length + bad.length);
    bytes.set(good);
    bytes.set(bad, good.length);
    new DataView(bytes.buffer).setUint32(8, 5, false); // nr_stacks 5
    const { dump, diags } = parseAll(bytes);
    expect(dump.records).toEqual(expected(null, 1));
    expect(dump.bytes).toEqual({ total: bytes.length, used: good.length, unused: 80 });
    expect(diags).toEqual([
      {
        file: 'f',
        where: 'offset 0x38',
        message: expect.stringMatching(/record claims 2147483648 frames \(kernel maximum 64\).*stops here; 80 bytes not read/),
        count: 1,
      },
    ]);
  });

  it('truncated mid record header and mid ips, at every cut point', () => {
    const whole = writeStackMapBin({ version: 2, generation: 7, littleEndian: true, records: RECORDS });
    for (let cut = 0; cut < whole.length; cut++) {
      const { dump, diags } = parse(whole.subarray(0, cut), 1);
      const kept = WHERE.filter((w, i) => w + 16 + 8 * RECORDS[i].ips.length <= cut).length;
      expect(dump.records).toHaveLength(kept);
      expect(diags.length).toBeGreaterThan(0);
      if (cut < 16) expect(dump.records).toEqual([]);
    }
  });

  it('extra bytes after nr_stacks records', () => {
    const whole = writeStackMapBin({ version: 1, generation: null, littleEndian: true, records: RECORDS, nrStacks: 2 });
    const { dump, diags } = parseAll(whole);
    expect(dump.records).toEqual(expected(null, 2));
    expect(dump.bytes).toEqual({ total: 136, used: 88, unused: 48 });
    expect(diags).toEqual([{ file: 'f', where: 'offset 0x58', message: '48 bytes after the 2 records the header claims', count: 1 }]);
  });

  it('random bytes after the header never throw and always balance', () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    for (let n = 0; n < 50; n++) {
      for (const le of [true, false]) {
        const header = writeStackMapBin({ version: 1 + (n % 3), generation: n, littleEndian: le, records: [], nrStacks: rnd() });
        const bytes = new Uint8Array(16 + 1 + ((rnd() << 2) | (rnd() & 3)));
        bytes.set(header);
        for (let i = 16; i < bytes.length; i++) bytes[i] = rnd();
        const results = CHUNK_SIZES.map((size) => parse(bytes, size));
        for (const r of results) expect(r).toEqual(results[0]);
      }
    }
  });

  it('bad magic, short header, empty file', () => {
    const junk = new TextEncoder().encode('this is not a binary stack map at all');
    // neither the junk nor the empty file has the magic the sniffer looks for: read as named only
    const named = { ...readers.stackMapBin, sniffed: false };
    let r = parseAll(junk, named);
    expect(r.dump.records).toEqual([]);
    expect(r.dump.littleEndian).toBe(null);
    expect(r.dump.version).toBe('unknown');
    expect(r.dump.bytes).toEqual({ total: junk.length, used: 0, unused: junk.length });
    expect(messages(r.diags)).toEqual([expect.stringMatching(/^bad magic.*37 bytes not read$/)]);

    r = parseAll(fixture('stack_map_bin/v1/le.bin').subarray(0, 10));
    expect(r.diags).toEqual([{ file: 'f', where: 'offset 0x0', message: 'truncated header: 10 of 16 bytes', count: 1 }]);

    r = parseAll(new Uint8Array(0), named);
    expect(messages(r.diags)).toEqual(['empty file']);
    expect(r.dump.bytes).toEqual({ total: 0, used: 0, unused: 0 });
  });

  it('version 1 with a non-zero reserved word is reported', () => {
    const bytes = writeStackMapBin({ version: 1, generation: null, littleEndian: true, records: RECORDS });
    new DataView(bytes.buffer).setUint32(12, 5, true);
    const { dump, diags } = parseAll(bytes);
    expect(dump.generation).toBe(null);
    expect(dump.records).toHaveLength(3);
    expect(diags).toEqual([{ file: 'f', where: 'offset 0xc', message: 'version 1 header reserved word is 5, expected 0', count: 1 }]);
  });
});

describe('bounded by the largest map', () => {
  it('a header claiming 0xffffffff records over 300,000 zero-depth ones keeps 262,144 and says why', () => {
    const n = 300_000;
    const bytes = new Uint8Array(16 + n * 16);
    const dv = new DataView(bytes.buffer);
    dv.setUint32(0, 0x46534d42, true);
    dv.setUint32(4, 1, true);
    dv.setUint32(8, 0xffffffff, true);
    for (let i = 0; i < n; i++) dv.setUint32(16 + i * 16, i, true); // slot i, nr 0
    const log = new DiagnosticLog('stack_map_bin');
    const r = feedChunks(createStackMapBinParser({ file: 'stack_map_bin', diagnostics: log }), bytes, 1 << 16);
    expect(r.records.length).toBe(262_144);
    expect(r.bytes).toEqual({ total: bytes.length, used: 16 + 262_144 * 16, unused: (n - 262_144) * 16 });
    expect(
      log
        .list()
        .map((d) => d.message)
        .join('\n'),
    ).toMatch(/more than 262,144 records/);
  });
});
