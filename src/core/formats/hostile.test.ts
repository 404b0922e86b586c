/**
 * Hostile input: random bytes and random text never make a reader throw, and every reader keeps
 * its accounting (lines.total = used + unused, bytes.total = used + unused = the file size).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';
import { DiagnosticLog } from './diagnostics.ts';
import { parserForKind } from './registry.ts';
import { FSMB_MAGIC, sniffKind, TRACE_DAT_MAGIC } from './sniff.ts';
import { feedCuts } from '../testing/formats.ts';
import type { ByteCount, ChunkParser, FileKind, LineCount, ParseContext, TraceSink } from './types.ts';

const RUNS = { numRuns: 200 };
const enc = new TextEncoder();
const nullSink: TraceSink = { event: () => {}, stackRecord: () => {}, lost: () => {} };

type Counted = { lines?: LineCount | null; bytes?: ByteCount | null; total?: number; used?: number; unused?: number };

/** The parser Ingest would choose for a kind (unknown: a byte counter). */
function parserFor(kind: FileKind, ctx: ParseContext): ChunkParser<Counted> {
  return parserForKind(kind, ctx, () => nullSink) as ChunkParser<Counted>;
}

function checkCounts(r: Counted, size: number): void {
  if (r.lines) expect(r.lines.used + r.lines.unused).toBe(r.lines.total);
  if (r.bytes) expect(r.bytes).toMatchObject({ total: size, unused: size - r.bytes.used });
  if (r.total !== undefined) expect([r.total, r.used! + r.unused!]).toEqual([size, size]);
}

const cutsArb = fc.array(fc.nat(), { maxLength: 8 });
const startsWith = (b: Uint8Array, magic: readonly number[]) => magic.every((m, i) => b[i] === m);
const fsmb = (le: boolean) => {
  const h = new Uint8Array(4);
  new DataView(h.buffer).setUint32(0, FSMB_MAGIC, le);
  return [...h];
};

describe('random bytes', () => {
  it('sniffKind + the chosen parser never throw and keep their accounting', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), cutsArb, (bytes, cuts) => {
        const kind = sniffKind(bytes);
        const r = feedCuts(parserFor(kind, { file: 'f', diagnostics: new DiagnosticLog('f') }), bytes, cuts);
        checkCounts(r, bytes.length);
      }),
      RUNS,
    );
  });

  it('behind each magic (stack_map_bin both byte orders, trace.dat) they never throw either', () => {
    const magic = fc.constantFrom(fsmb(true), fsmb(false), TRACE_DAT_MAGIC);
    fc.assert(
      fc.property(magic, fc.uint8Array({ maxLength: 1024 }), cutsArb, (m, rest, cuts) => {
        const bytes = new Uint8Array([...m, ...rest]);
        const kind = sniffKind(bytes);
        expect(['stack_map_bin', 'trace_cmd_dat']).toContain(kind);
        const r = feedCuts(parserFor(kind, { file: 'f', diagnostics: new DiagnosticLog('f') }), bytes, cuts);
        checkCounts(r, bytes.length);
      }),
      RUNS,
    );
  });

  it('pure random binary is unknown, also through Ingest', () => {
    const binary = fc
      .uint8Array({ minLength: 64, maxLength: 4096 })
      .filter((b) => !startsWith(b, fsmb(true)) && !startsWith(b, fsmb(false)) && !startsWith(b, TRACE_DAT_MAGIC))
      // binary: a NUL in the first 4 KiB besides ~10% control bytes (a lone NUL no longer makes a file not text: sniff.ts)
      .map((b) => {
        b[b.length >> 1] = 0;
        return b;
      });
    fc.assert(
      fc.property(binary, (bytes) => {
        expect(sniffKind(bytes)).toBe('unknown');
        const cap = ingestFiles([['blob', bytes]], 100);
        expect(cap.files[0]).toMatchObject({ kind: 'unknown', bytes: { total: bytes.length, used: 0, unused: bytes.length } });
        expect(cap.diagnostics).toHaveLength(1);
        expect(cap.diagnostics[0].message).toMatch(/^not a known format/);
        expect(cap.trace.eventCount).toBe(0);
      }),
      { numRuns: 100 },
    );
  });
});

// ---------------------------------------------------------------- random text

/** Fragments of every format, so random text reaches deep into each reader. */
const TOKENS = [
  '\n',
  '\n',
  '\n',
  '\r\n',
  ' ',
  ' ',
  '  ',
  '\t',
  '#',
  '# tracer: nop',
  '#P:4',
  '=>',
  ' => ',
  '[',
  ']',
  '(',
  ')',
  '-',
  '-1234',
  ' [001] ',
  ' (  123) ',
  '(-----)',
  'd..1 ',
  '100.000001: ',
  '12us+: ',
  '<stack_id 7>',
  '<stack_id 7 gen 2>',
  '<stack_id x>',
  '<stack trace>',
  '<user stack trace>',
  'kernel_stack: ',
  'CPU:1 [LOST 3 EVENTS]',
  'CPU 2 is empty',
  'cpus=4',
  'version = 6',
  'stack_id 3 [ref 1, depth 2]',
  'stack_id 3 gen 1 [ref 1, depth 99]',
  '  [0] ',
  'vfs_read+0x1a/0x40',
  ' [ext4]',
  '0xffffffff81234567',
  '[FTRACE TRAMPOLINE]',
  'stackmap not initialized',
  'entries: 2 / 16384',
  'fallbacks: 1',
  'generation: ',
  'ffffffff81000000 T _text',
  '\t[mod]',
  '{',
  '}',
  '[',
  ']',
  '"stack_id": ',
  '"ips": ["0x1", ',
  '"symbols": [',
  '"stacks": ',
  ',',
  ':',
  '"',
  '99999999999999999999',
  '-1',
  'null',
  '<html>',
  '<script class="trace-data">',
  '</script>',
  '\u00e9',
  '\ufeff',
  '\u0000',
  'x',
  '42',
];
const tokenText = fc.array(fc.constantFrom(...TOKENS), { maxLength: 120 }).map((t) => t.join(''));
const anyText = fc.oneof(tokenText, fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ maxLength: 300 }));

const TEXT_KINDS: FileKind[] = ['trace_text', 'systrace_html', 'stack_map_text', 'stack_map_stat', 'kallsyms', 'dump_json'];
const TEXT_PARSERS: [string, (ctx: ParseContext) => ChunkParser<Counted>][] = TEXT_KINDS.map((k) => [k, (ctx) => parserFor(k, ctx)]);

describe('random text', () => {
  it.each(TEXT_PARSERS)('%s never throws and lines.total = used + unused', (_name, make) => {
    fc.assert(
      fc.property(anyText, cutsArb, (text, cuts) => {
        const bytes = enc.encode(text);
        const log = new DiagnosticLog('f');
        const r = feedCuts(make({ file: 'f', diagnostics: log }), bytes, cuts);
        expect(r.lines).toBeTruthy();
        checkCounts(r, bytes.length);
        // a line that is not used has a diagnostic
        if (r.lines!.unused > 0) expect(log.size).toBeGreaterThan(0);
        // chunking changes nothing
        const whole = feedCuts(make({ file: 'f', diagnostics: new DiagnosticLog('f') }), bytes, []);
        expect(r).toEqual(whole);
      }),
      RUNS,
    );
  });

  it('sniffKind on random text never throws, and Ingest keeps every file accounted', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const bytes = enc.encode(text);
        sniffKind(bytes);
        const cap = ingestFiles([['f', bytes]], 5);
        const f = cap.files[0];
        if (f.lines) expect(f.lines.used + f.lines.unused).toBe(f.lines.total);
        if (f.bytes) expect(f.bytes.used + f.bytes.unused).toBe(f.bytes.total);
        expect(f.size).toBe(bytes.length);
      }),
      RUNS,
    );
  });
});
