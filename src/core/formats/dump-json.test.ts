import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';
import { RecordStatus } from '../capture/trace-columns-data.ts';
import { DiagnosticLog } from './diagnostics.ts';
import { createDumpJsonParser, MAX_ENTRY_IPS } from './dump-json.ts';
import { MAX_NEST } from './dump-json-tokenizer.ts';
import { writeDumpJson } from './dump-json-write.ts';
import { frameKey, TRAMPOLINE } from './frames.ts';
import { STRAY_NUL, nulPadding } from './nul-gate.ts';
import { parserForKind } from './registry.ts';
import { BIN_MAX_RECORDS } from './stack-map-bin.ts';
import { sniffKind } from './sniff.ts';
import { feedChunks, feedCuts, fixture } from '../testing/formats.ts';
import { readEveryWay, readers } from '../testing/reader-kit.ts';
import type { ParsedDump } from './types.ts';

const enc = new TextEncoder();
function read(text: string, chunk = 0) {
  const log = new DiagnosticLog('dump.json');
  const d = feedChunks(createDumpJsonParser({ file: 'dump.json', diagnostics: log }), enc.encode(text), chunk);
  return { d, diags: log.list().map((x) => x.message) };
}

/** The line of entry i of a list written by JSON.stringify with `indent`: the i-th line indented exactly that much that opens a value. */
function lineOf(text: string, i: number, indent = 2): number {
  const start = new RegExp(`^ {${indent}}[^ }\\]]`);
  const starts = text.split('\n').flatMap((l, n) => (start.test(l) ? [n + 1] : []));
  return starts[i];
}

const DUMP = writeDumpJson([
  { slot: 1, refCount: 5, ips: [0xffffffff81234567n, 0x7fffffffn], symbols: ['vfs_read+0x7/0x120', '[FTRACE TRAMPOLINE]'] },
  { slot: 4, refCount: 1, ips: [0xffffffff81001010n] },
]);

describe('stackmap_dump.py --json', () => {
  it('reads a list, symbols as frame keys, ips as BigUint64Array (every chunk size, renamed `unknown`, written back: reader-kit.ts)', () => {
    expect(sniffKind(enc.encode(DUMP))).toBe('dump_json');
    const { result: d, diagnostics } = readEveryWay('dump.json', DUMP, readers.dumpJson);
    const diags = diagnostics.map((x) => x.message);
    expect(diags).toEqual([]);
    expect(d).toMatchObject({ format: 'dump_json', version: 'json', generation: null, littleEndian: null, bytes: null });
    expect(d.lines).toEqual({ total: DUMP.split('\n').length - 1, used: DUMP.split('\n').length - 1, unused: 0 });
    expect(d.records).toEqual([
      {
        slot: 1,
        generation: null,
        refCount: 5,
        frames: ['vfs_read+0x7', TRAMPOLINE],
        ips: BigUint64Array.of(0xffffffff81234567n, 0x7fffffffn),
        where: lineOf(DUMP, 0),
      },
      { slot: 4, generation: null, refCount: 1, frames: null, ips: BigUint64Array.of(0xffffffff81001010n), where: lineOf(DUMP, 1) },
    ]);
  });

  it('accepts {"stacks": [...]} and numbers or decimal strings as ips', () => {
    const text = '{"stacks": [{"stack_id": 2, "ref_count": 3, "ips": [18446744071578846567, "4294967295", "0XFF"]}]}';
    expect(sniffKind(enc.encode(text))).toBe('dump_json');
    const { d, diags } = read(text);
    // 18446744071578846567 is not a safe integer: the entry is rejected, by index
    expect(diags).toEqual(['entry 0: an ip is not a 64-bit address ("0x..." or a number); skipped']);
    expect(d.records).toEqual([]);
    const ok = read('{"stacks": [{"stack_id": 2, "ref_count": 3, "ips": [4096, "4294967295", "0XFF"]}]}');
    expect(ok.diags).toEqual([]);
    expect(Array.from(ok.d.records[0].ips!)).toEqual([4096n, 4294967295n, 255n]);
  });

  it('reports bad entries by index and keeps the rest', () => {
    const entries = [
      { stack_id: 0, ref_count: 1, ips: ['0x1'] },
      'nope',
      { stack_id: -1, ref_count: 1, ips: [] },
      { stack_id: 3, ips: [] },
      { stack_id: 4, ref_count: 1, ips: '0x1' },
      { stack_id: 5, ref_count: 1, ips: ['0x1ffffffffffffffff'] },
      { stack_id: 0, ref_count: 9, ips: [] },
      { stack_id: 7, ref_count: 2, ips: ['0x2'], symbols: ['a', 'b'] },
      ...Array.from({ length: 8 }, (_, i) => ({ stack_id: 100 + i, ref_count: 'x', ips: [] })),
      { stack_id: 8, ref_count: 2, ips: ['0x3'] },
    ];
    const text = JSON.stringify(entries, null, 1);
    const { d, diags } = read(text);
    expect(d.records.map((r) => [r.slot, r.refCount, r.frames, r.where])).toEqual([
      [0, 1, null, lineOf(text, 0, 1)],
      [7, 2, null, lineOf(text, 7, 1)],
      [8, 2, null, lineOf(text, 16, 1)],
    ]);
    expect(diags).toEqual([
      'entry 1: not an object; skipped',
      'entry 2: "stack_id" missing or not an integer in 0..2^32-1; skipped',
      'entry 3: "ref_count" missing or not an integer in 0..2^32-1; skipped',
      'entry 4: "ips" missing or not a list; skipped',
      'entry 5: an ip is not a 64-bit address ("0x..." or a number); skipped',
      'entry 6: stack_id appears twice in the dump; the first is kept; skipped',
      'entry 7: "symbols" is not a list of 1 strings: the ips are used',
      'entry 8: "ref_count" missing or not an integer in 0..2^32-1; skipped',
      'entry 9: "ref_count" missing or not an integer in 0..2^32-1; skipped',
      'entry 10: "ref_count" missing or not an integer in 0..2^32-1; skipped',
      'entry 11: "ref_count" missing or not an integer in 0..2^32-1; skipped',
      '4 more entries: "ref_count" missing or not an integer in 0..2^32-1; skipped',
    ]);
    expect(d.lines!.unused).toBe(0);
  });

  it('cut short: no entry whole, every line unused, one diagnostic', () => {
    const { d, diags } = read('[{"stack_id": 1,\n "ref_count": 1,\n');
    expect(d.records).toEqual([]);
    expect(d.lines).toEqual({ total: 2, used: 0, unused: 2 });
    expect(diags).toEqual(['not valid JSON (the file ends inside the document, column 1): nothing read']);
  });

  it('a document that is not a list of stacks', () => {
    const { d, diags } = read('{"stack_id": 1}\n');
    expect(d.records).toEqual([]);
    expect(diags).toEqual(['JSON is neither a list of stacks nor {"stacks": [...]}: nothing read']);
    expect(d.lines).toEqual({ total: 1, used: 0, unused: 1 });
  });

  it('through Ingest: a generation-less dump that v7 ids resolve against', () => {
    const trace =
      '# tracer: nop\n            bash-1234    [001] d..1.   100.000001: kmalloc: x=1\n            bash-1234    [001] d..1.   100.000001: <stack_id 1>\n';
    const c = ingestFiles(
      [
        ['trace', trace],
        ['dump.json', DUMP],
      ],
      7,
    );
    expect(c.files.map((f) => f.kind)).toEqual(['trace_text', 'dump_json']);
    expect(c.dumps.sources).toEqual([{ file: 'dump.json', format: 'dump_json', version: 'json', generation: null, records: 2 }]);
    expect(c.trace.recStatus.get(0)).toBe(RecordStatus.Unverified);
    expect(c.stacks.framesOf(c.trace.recStack.get(0))).toEqual(['vfs_read+0x7', TRAMPOLINE]);
    // ips without symbols are shown as hex when no kallsyms is loaded
    expect(c.stacks.framesOf(c.dumps.generationless[0].slots.get(4)!.stack)).toEqual(['0xffffffff81001010']);
    expect(c.diagnostics).toEqual([]);
  });
});

// ---------------------------------------------------------------- streamed, capped, UTF-16, damaged

/**
 * The second method: the dump read with JSON.parse and BigInt (what this reader did before it
 * was streamed), for documents JSON.parse takes: the records kept, in order.
 */
function plainRead(text: string): { slot: number; refCount: number; frames: string[] | null; ips: bigint[] }[] {
  const doc = JSON.parse(text.replace(/^\uFEFF/, ''));
  const list: unknown[] = Array.isArray(doc) ? doc : doc.stacks;
  const out: { slot: number; refCount: number; frames: string[] | null; ips: bigint[] }[] = [];
  const seen = new Set<number>();
  const u32 = (x: unknown) => {
    const v = typeof x === 'string' && /^\d{1,10}$/.test(x) ? Number(x) : x;
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff ? v : null;
  };
  const u64 = (x: unknown) => {
    if (typeof x === 'number') return Number.isSafeInteger(x) && x >= 0 ? BigInt(x) : null;
    if (typeof x !== 'string' || !/^(?:0[xX][0-9a-fA-F]{1,16}|\d{1,20})$/.test(x)) return null;
    const v = BigInt(x);
    return v < 1n << 64n ? v : null;
  };
  for (const e of list as Record<string, unknown>[]) {
    if (typeof e !== 'object' || e === null || Array.isArray(e)) continue;
    const slot = u32(e.stack_id);
    const ref = u32(e.ref_count);
    if (slot === null || ref === null || !Array.isArray(e.ips) || e.ips.length > MAX_ENTRY_IPS) continue;
    const ips = e.ips.map(u64);
    if (ips.some((x) => x === null) || seen.has(slot)) continue;
    seen.add(slot);
    const s = e.symbols;
    const frames = Array.isArray(s) && s.length === ips.length && s.every((x) => typeof x === 'string') ? s.map(frameKey) : null;
    out.push({ slot, refCount: ref, frames, ips: ips as bigint[] });
  }
  return out;
}

const plainOf = (d: ParsedDump) => d.records.map((r) => ({ slot: r.slot, refCount: r.refCount, frames: r.frames, ips: Array.from(r.ips!) }));

/** UTF-16 with a byte-order mark, code unit by code unit (no TextEncoder: it only writes UTF-8). */
function utf16(text: string, le: boolean): Uint8Array {
  const out = new Uint8Array(2 + 2 * text.length);
  out.set(le ? [0xff, 0xfe] : [0xfe, 0xff]);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[2 + 2 * i + (le ? 0 : 1)] = c & 0xff;
    out[2 + 2 * i + (le ? 1 : 0)] = c >> 8;
  }
  return out;
}

function readBytes(bytes: Uint8Array, chunk: number, file = 'dump.json') {
  const log = new DiagnosticLog(file);
  const d = feedChunks(
    parserForKind('dump_json', { file, diagnostics: log }, () => ({ event() {}, stackRecord() {}, lost() {} })) as ReturnType<typeof createDumpJsonParser>,
    bytes,
    chunk,
  );
  return { d: d as ParsedDump, diags: log.list().map((x) => `${x.where}: ${x.message}`) };
}

describe('dump JSON streamed', () => {
  const utf8 = fixture('dump_json/json/basic.json');
  const text = new TextDecoder().decode(utf8);
  const want = plainRead(text);

  it('the fixture, and its UTF-16 LE (CRLF) and BE copies written by Python, read as JSON.parse reads the UTF-8 one (every chunk size, renamed `unknown`: reader-kit.ts)', () => {
    expect(want.map((r) => r.slot)).toEqual([1, 4, 9]);
    const lines = text.split('\n').length - 1;
    for (const name of ['dump_json/json/basic.json', 'dump_json/utf16/basic-le-crlf.json', 'dump_json/utf16/basic-be.json']) {
      const bytes = fixture(name);
      const r = readEveryWay(name, bytes, readers.dumpJson);
      const [d, diags] = [r.result, r.diagnostics.map((x) => `${x.where}: ${x.message}`)];
      expect(diags, name).toEqual([]);
      expect(plainOf(d), name).toEqual(want);
      expect(d.lines, name).toEqual({ total: lines, used: lines, unused: 0 });
      // each record's line: its `{` in the UTF-8 text
      expect(
        d.records.map((r) => r.where),
        name,
      ).toEqual([0, 1, 2].map((i) => lineOf(text, i)));
    }
  });

  it('UTF-16 made in the test from the UTF-8 fixture, both byte orders, cut anywhere, reads the same', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(fc.nat(), { maxLength: 12 }), (le, cuts) => {
        const log = new DiagnosticLog('f');
        const d = feedCuts(createDumpJsonParser({ file: 'f', diagnostics: log }), utf16(text, le), cuts);
        expect(log.list()).toEqual([]);
        expect(plainOf(d)).toEqual(want);
      }),
      { numRuns: 100 },
    );
  });

  it('any dump, written with any indent and cut anywhere (down to one byte a chunk), reads as JSON.parse reads it', () => {
    const entry = fc.record(
      {
        stack_id: fc.oneof(fc.nat({ max: 40 }), fc.nat({ max: 40 }).map(String), fc.constant(-1), fc.constant('x')),
        ref_count: fc.oneof(fc.nat(), fc.constant(1.5)),
        ips: fc.oneof(
          fc.array(
            fc.oneof(
              fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((b) => '0x' + b.toString(16)),
              fc.nat(),
              fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map(String),
              fc.constant('0xg'),
              fc.constant(-3),
            ),
            { maxLength: 6 },
          ),
          fc.constant('0x1'),
        ),
        symbols: fc.oneof(fc.constant(null), fc.array(fc.stringMatching(/^[a-z_]{1,8}(?:\+0x[0-9a-f]{1,3}\/0x[0-9a-f]{1,3})?$/), { maxLength: 6 })),
        other: fc.jsonValue({ maxDepth: 3 }),
      },
      { requiredKeys: ['stack_id'] },
    );
    const doc = fc.oneof(fc.array(fc.oneof({ arbitrary: entry, weight: 6 }, { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 }), { maxLength: 8 }));
    fc.assert(
      fc.property(doc, fc.boolean(), fc.constantFrom(0, 1, 2, '\t'), fc.array(fc.nat(), { maxLength: 10 }), (list, wrap, indent, cuts) => {
        const t = JSON.stringify(wrap ? { meta: { n: list.length }, stacks: list } : list, null, indent);
        const bytes = enc.encode(t);
        const log = new DiagnosticLog('f');
        const d = feedCuts(createDumpJsonParser({ file: 'f', diagnostics: log }), bytes, cuts);
        expect(plainOf(d)).toEqual(plainRead(t));
        expect(d.lines!.unused).toBe(0);
        // one byte a chunk: the same records and the same diagnostics
        const log1 = new DiagnosticLog('f');
        const d1 = feedChunks(createDumpJsonParser({ file: 'f', diagnostics: log1 }), bytes, 1);
        expect(plainOf(d1)).toEqual(plainOf(d));
        expect(log1.list()).toEqual(log.list());
      }),
      { numRuns: 200 },
    );
  });

  it(`keeps ${BIN_MAX_RECORDS.toLocaleString('en-US')} records at most, as the binary dump does, and says where it stopped`, () => {
    const n = BIN_MAX_RECORDS + 3;
    // one entry a line: entry i on line i + 2
    const t = '[\n' + Array.from({ length: n }, (_, i) => `{"stack_id": ${i}, "ref_count": 1, "ips": [${i}]}`).join(',\n') + '\n]\n';
    const { d, diags } = read(t, 1 << 16);
    expect(diags).toEqual([`more than ${BIN_MAX_RECORDS.toLocaleString('en-US')} records, the most the largest map (bits 18) holds: the rest is not read`]);
    const cols = d.columns!;
    expect(cols.count).toBe(BIN_MAX_RECORDS);
    expect([cols.slot[0], cols.slot[BIN_MAX_RECORDS - 1], cols.where[BIN_MAX_RECORDS - 1]]).toEqual([0, BIN_MAX_RECORDS - 1, BIN_MAX_RECORDS + 1]);
    // the lines of the records read are used; the 3 entries after them and the closing bracket are not
    const total = n + 2;
    expect(d.lines).toEqual({ total, used: BIN_MAX_RECORDS + 1, unused: 4 });
  }, 30_000);

  it('a dump cut short keeps the entries before the cut; one cut in the middle of a token gives the same', () => {
    const whole = writeDumpJson(
      Array.from({ length: 6 }, (_, i) => ({ slot: i, refCount: 1, ips: [BigInt(0xffffffff81000000 + i)], symbols: ['f' + i + '+0x1/0x10'] })),
    );
    for (let cut = 1; cut < whole.length; cut += 7) {
      const part = whole.slice(0, cut);
      const { d, diags } = read(part, 5);
      // the second method: JSON.parse of the entries wholly before the cut
      const done = whole.slice(0, whole.lastIndexOf('}', cut - 1) + 1);
      const entries = done.lastIndexOf('\n  }') < 0 ? '[]' : done.slice(0, done.lastIndexOf('\n  }') + 4) + ']';
      expect(plainOf(d)).toEqual(plainRead(entries));
      expect(diags).toHaveLength(1);
      expect(diags[0]).toMatch(/^not valid JSON \(the file ends inside the document, column \d+\): /);
    }
  });

  it('damaged text stops the reading at the damage with its line and column, the records before it kept', () => {
    const t =
      '[\n  {"stack_id": 1, "ref_count": 1, "ips": [1]},\n  {"stack_id": 2, "ref_count": 1, "ips": [2]},\n  {"stack_id": 3, "ref_count": 1 "ips": [3]},\n  {"stack_id": 4, "ref_count": 1, "ips": [4]}\n]\n';
    const { d, diags } = read(t);
    expect(d.records.map((r) => r.slot)).toEqual([1, 2]);
    const column = t.split('\n')[3].indexOf('"ips"') + 1;
    expect(diags).toEqual([`not valid JSON ("," or "}" expected, column ${column}): the 2 records before it are kept, the rest is not read`]);
    expect(d.lines).toEqual({ total: 6, used: 3, unused: 3 });
  });

  it('nesting deeper than MAX_NEST, a long string and a long number: refused with a diagnostic, nothing thrown, nothing else lost', () => {
    const deep = read('['.repeat(1_000_000));
    // the first `[` opens the list, the second its first entry (not an object), the 257th is one too deep
    expect(deep.diags).toEqual(['entry 0: not an object; skipped', `not valid JSON (nested deeper than ${MAX_NEST}, column ${MAX_NEST + 1}): nothing read`]);
    const big = 'x'.repeat(1 << 20);
    const t = JSON.stringify([
      { stack_id: 1, ref_count: 1, ips: [1], note: big },
      { stack_id: big, ref_count: 1, ips: [2] },
      { stack_id: 3, ref_count: Number('1' + '0'.repeat(300)), ips: [3] },
      { stack_id: 4, ref_count: 1, ips: [4], symbols: [big] },
      { stack_id: 5, ref_count: 1, ips: Array.from({ length: MAX_ENTRY_IPS + 1 }, (_, i) => i) },
    ]);
    const { d, diags } = read(t, 4096);
    expect(plainOf(d)).toEqual([
      { slot: 1, refCount: 1, frames: null, ips: [1n] },
      { slot: 4, refCount: 1, frames: null, ips: [4n] },
    ]);
    expect(diags).toEqual([
      'entry 1: "stack_id" missing or not an integer in 0..2^32-1; skipped',
      'entry 2: "ref_count" missing or not an integer in 0..2^32-1; skipped',
      'entry 3: "symbols" is not a list of 1 strings: the ips are used',
      `entry 4: more than ${MAX_ENTRY_IPS} ips (the kernel's stacks hold at most 64); skipped`,
    ]);
  });

  it('NUL padding after the document is reported once and the dump read whole; a NUL between tokens is a blank, reported by offset', () => {
    const padded = new Uint8Array([...utf8, ...new Uint8Array(5000)]);
    expect(sniffKind(padded)).toBe('dump_json');
    const p = readBytes(padded, 64);
    expect(plainOf(p.d)).toEqual(want);
    expect(p.diags).toEqual([`offset 0x${utf8.length.toString(16)}: ${nulPadding(5000)}`]);
    // a space after the first `:` turned into a NUL (one bit), and the same in UTF-16 LE
    const at = text.indexOf(': ') + 1;
    const flipped = utf8.slice();
    flipped[at] = 0;
    expect(sniffKind(flipped)).toBe('dump_json');
    const f = readBytes(flipped, 7);
    expect(plainOf(f.d)).toEqual(want);
    expect(f.diags).toEqual([`offset 0x${at.toString(16)}: ${STRAY_NUL}`]);
    const wide = utf16(text.slice(0, at) + '\0' + text.slice(at + 1), true);
    const w = readBytes(wide, 3);
    expect(plainOf(w.d)).toEqual(want);
    expect(w.diags).toEqual([`offset 0x${(2 + 2 * at).toString(16)}: ${STRAY_NUL}`]);
  });

  it('records without symbols come as columns only (no object per record) until asked for', () => {
    const { d } = read(writeDumpJson([{ slot: 3, refCount: 2, ips: [0xffffffff81000010n, 5n] }]));
    expect(d.columns).toMatchObject({ count: 1, ips: 2 });
    expect(Array.from(d.columns!.ipHi[0])).toEqual([0xffffffff, 0]);
    expect(Array.from(d.columns!.ipLo[0])).toEqual([0x81000010, 5]);
    expect(plainOf(d)).toEqual([{ slot: 3, refCount: 2, frames: null, ips: [0xffffffff81000010n, 5n] }]);
  });
});
