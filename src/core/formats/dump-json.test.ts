import { describe, expect, it } from 'vitest';
import { ingestFiles } from '../model/test-helpers.ts';
import { RecordStatus } from '../model/trace-columns.ts';
import { DiagnosticLog } from './diagnostics.ts';
import { createDumpJsonParser, MAX_JSON_BYTES } from './dump-json.ts';
import { writeDumpJson } from './dump-json-write.ts';
import { TRAMPOLINE } from './frames.ts';
import { sniffKind } from './sniff.ts';
import { CHUNK_SIZES, feedChunks } from './test-util.ts';

const enc = new TextEncoder();
function read(text: string, chunk = 0) {
  const log = new DiagnosticLog('dump.json');
  const d = feedChunks(createDumpJsonParser({ file: 'dump.json', diagnostics: log }), enc.encode(text), chunk);
  return { d, diags: log.list().map((x) => x.message) };
}

const DUMP = writeDumpJson([
  { slot: 1, refCount: 5, ips: [0xffffffff81234567n, 0x7fffffffn], symbols: ['vfs_read+0x7/0x120', '[FTRACE TRAMPOLINE]'] },
  { slot: 4, refCount: 1, ips: [0xffffffff81001010n] },
]);

describe('stackmap_dump.py --json', () => {
  it.each(CHUNK_SIZES)('reads a list, symbols as frame keys, ips as BigUint64Array (chunk %i)', (chunk) => {
    expect(sniffKind(enc.encode(DUMP))).toBe('dump_json');
    const { d, diags } = read(DUMP, chunk);
    expect(diags).toEqual([]);
    expect(d).toMatchObject({ format: 'dump_json', version: 'json', generation: null, littleEndian: null, bytes: null });
    expect(d.lines).toEqual({ total: DUMP.split('\n').length - 1, used: DUMP.split('\n').length - 1, unused: 0 });
    expect(d.records).toEqual([
      { slot: 1, generation: null, refCount: 5, frames: ['vfs_read+0x7', TRAMPOLINE], ips: BigUint64Array.of(0xffffffff81234567n, 0x7fffffffn), where: 0 },
      { slot: 4, generation: null, refCount: 1, frames: null, ips: BigUint64Array.of(0xffffffff81001010n), where: 1 },
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
    const { d, diags } = read(JSON.stringify(entries, null, 1));
    expect(d.records.map((r) => [r.slot, r.refCount, r.frames, r.where])).toEqual([
      [0, 1, null, 0],
      [7, 2, null, 7],
      [8, 2, null, 16],
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

  it('invalid JSON: every line unused, one diagnostic', () => {
    const { d, diags } = read('[{"stack_id": 1,\n "ref_count": 1,\n');
    expect(d.records).toEqual([]);
    expect(d.lines).toEqual({ total: 2, used: 0, unused: 2 });
    expect(diags).toHaveLength(1);
    expect(diags[0]).toMatch(/^not valid JSON/);
  });

  it('a document that is not a list of stacks', () => {
    const { d, diags } = read('{"stack_id": 1}\n');
    expect(d.records).toEqual([]);
    expect(diags).toEqual(['JSON is neither a list of stacks nor {"stacks": [...]}: nothing read']);
    expect(d.lines).toEqual({ total: 1, used: 0, unused: 1 });
  });

  it('caps the buffered text', () => {
    const log = new DiagnosticLog('big.json');
    const p = createDumpJsonParser({ file: 'big.json', diagnostics: log });
    const chunk = new Uint8Array(64 * 1024 * 1024).fill(0x20);
    for (let i = 0; i <= MAX_JSON_BYTES / chunk.length; i++) p.push(chunk);
    const d = p.end();
    expect(d.records).toEqual([]);
    expect(log.list().map((x) => x.message)).toEqual(['JSON dump larger than 256 MiB: not read']);
    expect(d.lines).toEqual({ total: 1, used: 0, unused: 1 });
  });

  it('through Ingest: a generation-less dump that v7 ids resolve against', () => {
    const trace = '# tracer: nop\n            bash-1234    [001] d..1.   100.000001: kmalloc: x=1\n            bash-1234    [001] d..1.   100.000001: <stack_id 1>\n';
    const c = ingestFiles([['trace', trace], ['dump.json', DUMP]], 7);
    expect(c.files.map((f) => f.kind)).toEqual(['trace_text', 'dump_json']);
    expect(c.dumps.sources).toEqual([{ file: 'dump.json', format: 'dump_json', version: 'json', generation: null, records: 2 }]);
    expect(c.trace.recStatus.get(0)).toBe(RecordStatus.Unverified);
    expect(c.stacks.framesOf(c.trace.recStack.get(0))).toEqual(['vfs_read+0x7', TRAMPOLINE]);
    // ips without symbols are shown as hex when no kallsyms is loaded
    expect(c.stacks.framesOf(c.dumps.generationless[0].slots.get(4)!.stack)).toEqual(['0xffffffff81001010']);
    expect(c.diagnostics).toEqual([]);
  });
});
