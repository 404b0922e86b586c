import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { frameKey } from './frames.ts';
import { sniffKind } from './sniff.ts';
import { createStackMapTextParser } from './stack-map-text.ts';
import { writeStackMapText, type TextRecordInput } from './stack-map-write.ts';
import { CHUNK_SIZES, feedChunks, fixture } from '../testing/formats.ts';
import { readEveryWay, readers, type ReaderSpec } from '../testing/reader-kit.ts';
import type { ParsedDump } from './types.ts';

const enc = new TextEncoder();

function parse(bytes: Uint8Array, chunk = 0) {
  const diagnostics = new DiagnosticLog('f');
  const dump = feedChunks(createStackMapTextParser({ file: 'f', diagnostics }), bytes, chunk);
  expect(dump.lines!.used + dump.lines!.unused).toBe(dump.lines!.total);
  return { dump, diags: diagnostics.list() };
}

/** Parses every way (reader-kit.ts: chunk sizes, renamed `unknown`, lines, written back), returns the one-chunk result. */
function parseAll(bytes: Uint8Array, spec: ReaderSpec<ParsedDump> = readers.stackMapText) {
  const { result: dump, diagnostics: diags } = readEveryWay('f', bytes, spec);
  return { dump, diags };
}

const text = (s: string) => enc.encode(s);

const rec = (slot: number, generation: number | null, refCount: number, frames: string[], where: number) => ({
  slot,
  generation,
  refCount,
  frames,
  ips: null,
  where,
});

describe('stack_map text fixtures', () => {
  it('v7/basic.txt', () => {
    const bytes = fixture('stack_map_text/v7/basic.txt');
    expect(sniffKind(bytes)).toBe('stack_map_text');
    const { dump, diags } = parseAll(bytes);
    expect(diags).toEqual([]);
    expect(dump).toEqual({
      file: 'f',
      format: 'stack_map_text',
      version: 'v7',
      generation: null,
      littleEndian: null,
      uninitialized: false,
      records: [
        rec(0, null, 1337, ['schedule+0x48', 'schedule_timeout+0x1c', 'do_nanosleep+0x8c', 'hrtimer_nanosleep+0xa0'], 1),
        rec(1, null, 12, ['[FTRACE TRAMPOLINE]', 'ext4_file_write_iter+0x5c', 'vfs_write+0x2b4'], 7),
        rec(7, null, 1, ['0xffffffffc0a1b2c3', 'kmem_cache_alloc'], 12),
      ],
      lines: { total: 15, used: 15, unused: 0 },
      bytes: null,
    });
  });

  it('v7/uninitialized.txt', () => {
    const bytes = fixture('stack_map_text/v7/uninitialized.txt');
    expect(sniffKind(bytes)).toBe('stack_map_text');
    const { dump, diags } = parseAll(bytes);
    expect(diags).toEqual([]);
    expect(dump.uninitialized).toBe(true);
    expect(dump.records).toEqual([]);
    expect(dump.version).toBe('v7');
    expect(dump.lines).toEqual({ total: 1, used: 1, unused: 0 });
  });

  it('v8/basic.txt', () => {
    const bytes = fixture('stack_map_text/v8/basic.txt');
    expect(sniffKind(bytes)).toBe('stack_map_text');
    const { dump, diags } = parseAll(bytes);
    expect(diags).toEqual([]);
    expect(dump.version).toBe('v8');
    expect(dump.generation).toBe(3);
    expect(dump.uninitialized).toBe(false);
    expect(dump.records).toEqual([
      rec(0, 3, 4210, ['kmem_cache_alloc+0x1e4', 'getname_flags+0x50', 'do_sys_openat2+0x6c'], 1),
      rec(2, 3, 77, ['[FTRACE TRAMPOLINE]', 'kmem_cache_free+0x20c', 'putname+0x5c', 'do_sys_openat2+0xd8'], 6),
    ]);
    expect(dump.lines).toEqual({ total: 11, used: 11, unused: 0 });
  });

  it('v8/across-reset.txt: reported, each record keeps its generation, dump generation = last', () => {
    const bytes = fixture('stack_map_text/v8/across-reset.txt');
    expect(sniffKind(bytes)).toBe('stack_map_text');
    const { dump, diags } = parseAll(bytes);
    expect(dump.version).toBe('v8');
    expect(dump.generation).toBe(4);
    expect(dump.records).toEqual([
      rec(0, 3, 4210, ['kmem_cache_alloc+0x1e4', 'getname_flags+0x50'], 1),
      rec(1, 3, 9, ['kmem_cache_free+0x20c', 'putname+0x5c'], 5),
      rec(5, 4, 1, ['__kmalloc+0x40', 'seq_open+0x30'], 9),
    ]);
    expect(diags).toHaveLength(1);
    expect(diags[0].where).toBe('file');
    expect(diags[0].message).toMatch(/2 generations \(3, 4\).*reset/);
  });
});

describe('stack_map text variants', () => {
  it('either frame style follows either header', () => {
    const { dump, diags } = parseAll(
      text('stack_id 3 [ref 2, depth 2]\n => a+0x1/0x10\n => b\n\nstack_id 4 gen 9 [ref 5, depth 1]\n  [0] c+0x2/0x20 [mod]\n\n'),
    );
    expect(dump.records).toEqual([rec(3, null, 2, ['a+0x1', 'b'], 1), rec(4, 9, 5, ['c+0x2'], 5)]);
    // mixing header styles is reported; frame styles are not
    expect(diags.map((d) => d.message)).toEqual([expect.stringMatching(/both v7.*v8/)]);
    expect(dump.version).toBe('v8');
  });

  it('CRLF, no trailing blank line, no trailing newline', () => {
    const { dump, diags } = parseAll(text('stack_id 1 [ref 1, depth 1]\r\n  [0] x+0x1/0x2\r\nstack_id 2 [ref 1, depth 1]\r\n  [0] y'));
    expect(diags).toEqual([]);
    expect(dump.records).toEqual([rec(1, null, 1, ['x+0x1'], 1), rec(2, null, 1, ['y'], 3)]);
  });

  it('empty file: no records, no lines', () => {
    // the sniffer gives an empty file no reader
    const { dump, diags } = parseAll(new Uint8Array(0), { ...readers.stackMapText, sniffed: false });
    expect(dump.records).toEqual([]);
    expect(dump.lines).toEqual({ total: 0, used: 0, unused: 0 });
    expect(diags).toEqual([]);
  });
});

describe('stack_map text damage', () => {
  it('fewer frames than depth: record kept with what it has, said at its header line', () => {
    const { dump, diags } = parseAll(text('stack_id 1 [ref 1, depth 3]\n  [0] a\n  [1] b\n\nstack_id 2 [ref 1, depth 1]\n  [0] c\n'));
    expect(dump.records).toEqual([rec(1, null, 1, ['a', 'b'], 1), rec(2, null, 1, ['c'], 5)]);
    expect(diags).toEqual([{ file: 'f', where: 'line 1', message: expect.stringMatching(/2 of its 3 frames/), count: 1 }]);
  });

  it('slots and generations up to 2^32 - 1 kept exactly; past 32 bits refused and said, never wrapped (issue 34, 13)', () => {
    const { dump, diags } = parseAll(
      text(
        'stack_id 4294967295 gen 4294967295 [ref 1, depth 1]\n => a\n\nstack_id 4294967296 gen 1 [ref 1, depth 1]\n => b\n\nstack_id 2 gen 4294967296 [ref 1, depth 1]\n => c\n\nstack_id 2147483648 gen 2147483648 [ref 1, depth 1]\n => d\n\n',
      ),
    );
    expect(dump.records.map((r) => [r.slot, r.generation, r.frames])).toEqual([
      [4294967295, 4294967295, ['a']],
      [2147483648, 2147483648, ['d']],
    ]);
    expect(diags.filter((d) => /beyond 32 bits/.test(d.message)).map((d) => d.where)).toEqual(['lines 4, 7']);
  });

  it('truncated at end of file mid-record', () => {
    const { dump, diags } = parseAll(text('stack_id 1 [ref 1, depth 3]\n  [0] a\n'));
    expect(dump.records).toEqual([rec(1, null, 1, ['a'], 1)]);
    expect(diags[0].message).toMatch(/1 of its 3 frames/);
  });

  it('bad frame index: kept in file order, diagnosed at that line', () => {
    const { dump, diags } = parseAll(text('stack_id 1 [ref 1, depth 2]\n  [0] a\n  [5] b\n\n'));
    expect(dump.records[0].frames).toEqual(['a', 'b']);
    expect(dump.lines).toEqual({ total: 4, used: 4, unused: 0 });
    expect(diags).toEqual([{ file: 'f', where: 'line 3', message: expect.stringMatching(/\[5\].*\[1\]/), count: 1 }]);
  });

  it('garbage, stray frames and extra frames are unused lines, each diagnosed; parsing goes on', () => {
    const input =
      'hello world\n' + // 1 garbage
      ' => orphan\n' + // 2 frame outside a record
      'stack_id 1 [ref 1, depth 1]\n' + // 3
      '  [0] a\n' + // 4
      '  [1] too_many\n' + // 5 beyond depth
      '\x01\x02 junk\n' + // 6 garbage inside/after a record
      '\n' + // 7
      'stack_id 2 [ref 7, depth 1]\n' + // 8
      ' => b\n'; // 9
    const { dump, diags } = parseAll(text(input));
    expect(dump.records).toEqual([rec(1, null, 1, ['a'], 3), rec(2, null, 7, ['b'], 8)]);
    expect(dump.lines).toEqual({ total: 9, used: 5, unused: 4 });
    const where = Object.fromEntries(diags.map((d) => [d.message, d.where]));
    expect(where).toEqual({
      'unrecognized line': 'lines 1, 6',
      'frame line outside a record': 'line 2',
      "frame line beyond the record's depth 1": 'line 5',
    });
  });

  it('random bytes never throw and always balance', () => {
    let seed = 1;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    for (let n = 0; n < 20; n++) {
      const bytes = new Uint8Array(300).map(() => rnd());
      for (const size of CHUNK_SIZES) expect(() => parse(bytes, size)).not.toThrow();
    }
  });
});

describe('stack_map text round trip', () => {
  const records: TextRecordInput[] = [
    { slot: 0, refCount: 1337, frames: ['schedule+0x48/0xc0', 'schedule_timeout+0x1c/0x30'] },
    { slot: 3, refCount: 1, frames: ['[FTRACE TRAMPOLINE]', 'ext4_file_write_iter+0x5c/0x9a0 [ext4]', '0xffffffffc0a1b2c3'] },
    { slot: 16383, refCount: 4294967295, frames: ['kmem_cache_alloc'] },
  ];

  for (const version of ['v7', 'v8'] as const) {
    it(version, () => {
      const generation = version === 'v8' ? 12 : null;
      const bytes = text(writeStackMapText(records, { version, generation }));
      expect(sniffKind(bytes)).toBe('stack_map_text');
      const { dump, diags } = parseAll(bytes);
      expect(diags).toEqual([]);
      expect(dump.version).toBe(version);
      expect(dump.generation).toBe(generation);
      expect(dump.records.map(({ slot, generation: g, refCount, frames }) => ({ slot, generation: g, refCount, frames }))).toEqual(
        records.map((r) => ({ slot: r.slot, generation, refCount: r.refCount, frames: r.frames.map(frameKey) })),
      );
    });
  }

  it('v8 with per-record generations', () => {
    const input = records.map((r, i) => ({ ...r, generation: i < 2 ? 1 : 2 }));
    const { dump, diags } = parseAll(text(writeStackMapText(input, { version: 'v8' })));
    expect(dump.records.map((r) => r.generation)).toEqual([1, 1, 2]);
    expect(dump.generation).toBe(2);
    expect(diags).toHaveLength(1);
  });

  it('uninitialized', () => {
    const { dump } = parseAll(text(writeStackMapText([], { version: 'v8', uninitialized: true })));
    expect(dump.uninitialized).toBe(true);
  });
});
