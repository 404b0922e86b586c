/**
 * The checks every reader's tests share, in one place (issue 39): a file read by the reader the
 * app picks for its kind (registry.ts parserForKind, behind nul-gate.ts where the app puts one), at
 * every chunk size, each reading the same; the kind the sniffer gives its bytes, and the file read
 * renamed `unknown` through the sniffer's pick (the app's path: the kind comes from the bytes,
 * never the name); the reader's line (or byte) accounting covering the whole file; and, where a
 * writer exists, what was read written and read again the same. Each test keeps its own expected values.
 */
import { expect } from 'vitest';
import { DiagnosticLog, type Diagnostic } from '../formats/diagnostics.ts';
import { encodingOf } from '../formats/lines.ts';
import { parserForKind } from '../formats/registry.ts';
import { sniffKind } from '../formats/sniff.ts';
import { writeDumpJson } from '../formats/dump-json-write.ts';
import { writeTraceText, type TraceTextItem } from '../formats/trace-text-write.ts';
import { LEDGER_KINDS, LEDGER_OUTCOMES, writeSimLedger, type ParsedLedger } from '../formats/sim-ledger.ts';
import { writeStackMapBin, writeStackMapStat, writeStackMapText } from '../formats/stack-map-write.ts';
import type { ByteCount, ParsedDump, ParsedStat, TraceTextResult, ChunkParser, FileKind, LineCount, ParseContext, TraceSink } from '../formats/types.ts';
import type { ParsedCaptureInfo } from '../formats/capture-info.ts';
import type { SymbolFile } from '../formats/kallsyms.ts';
import type { PerfScriptResult } from '../formats/perf-script.ts';
import type { TraceDatResult } from '../formats/trace-dat/types.ts';
import { CHUNK_SIZES, feedChunks } from './formats.ts';
import { collector, type Got } from './trace-dat.ts';

/** One reading: what the reader returned, what its sink got (trace readers), and its diagnostics. */
export interface Reading<R> {
  result: R;
  got: Got;
  diagnostics: Diagnostic[];
}

export interface ReaderSpec<R> {
  /** what sniffKind must say of the file; its reader is the app's (registry.ts parserForKind) */
  kind: FileKind;
  /** a reader in place of the app's, read as given (no nul gate added): only the kit's own broken readers (reader-kit.test.ts), which are not sniffed */
  create?: (ctx: ParseContext, sink: TraceSink) => ChunkParser<R>;
  /** what must agree between readings (default: the result, the sink's records and the diagnostics, file names left out) */
  project?: (r: Reading<R>) => unknown;
  /** the accounting to check: the result's `lines` or `bytes` (default: whichever it has) or none */
  count?: 'lines' | 'bytes' | 'none';
  /** a writer of what was read (null: nothing it can write, said by the writer): its output read again must project the same (`sameAfterWrite`) */
  write?: (r: Reading<R>) => Uint8Array | string | null;
  /** the projection compared across the round trip (default `project`): line numbers move when a writer drops comments */
  sameAfterWrite?: (r: Reading<R>) => unknown;
  /** false: not sniffed nor read renamed `unknown`, for content the sniffer gives another reader (an empty file, a fragment) or a broken reader in the kit's own test */
  sniffed?: boolean;
  /** chunk sizes (default CHUNK_SIZES: one chunk, 1-byte pieces, 7, 64) */
  sizes?: readonly number[];
}

const enc = new TextEncoder();

/** A result with its `file` fields (the name a reader was given) left out, at any depth of plain objects. */
function withoutFile(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutFile);
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v) || v instanceof Map || v instanceof Set) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) if (k !== 'file') out[k] = withoutFile((v as Record<string, unknown>)[k]);
  // getters of class instances (a bin dump's lazy `records`) are read by their enumerable keys only
  if ('records' in v && !('records' in out)) out.records = withoutFile((v as { records: unknown }).records);
  return out;
}

const defaultProject = <R>(r: Reading<R>) => ({
  result: withoutFile(r.result),
  // an event's `raw` (trace.dat) is valid only during its call: functions, not data
  got: { ...r.got, events: r.got.events.map(({ raw: _, ...e }) => e) },
  diagnostics: r.diagnostics.map(({ file: _, ...d }) => d),
});

/** A projection for big traces: the sink's calls in order as text (collector's `order`), cheaper to compare than every event object. */
export const inOrder = <R>(r: Reading<R>) => ({
  result: withoutFile(r.result),
  order: r.got.order,
  diagnostics: r.diagnostics.map(({ file: _, ...d }) => d),
});

/**
 * One reading of `bytes` named `name` at chunk `size`, by the app's reader for the spec's kind (or
 * the spec's own `create`). Nothing but the name differs between a reading as named and one renamed
 * `unknown`, and the projections leave the name out.
 */
function readOnce<R>(spec: ReaderSpec<R>, name: string, bytes: Uint8Array, size: number): Reading<R> {
  const log = new DiagnosticLog(name);
  const { sink, got } = collector();
  const ctx: ParseContext = { file: name, diagnostics: log };
  const parser = spec.create ? spec.create(ctx, sink) : (parserForKind(spec.kind, ctx, () => sink) as ChunkParser<R>);
  const result = feedChunks(parser, bytes, size);
  return { result, got, diagnostics: log.list() };
}

/**
 * The lines of a text file as the readers count them: its encoding's text (byte-order mark and
 * trailing NUL padding left out, nul-gate.ts reports it), split at `\n`, a last line without one counted.
 */
export function linesOf(bytes: Uint8Array): number {
  const encoding = encodingOf(bytes);
  let text = new TextDecoder(encoding).decode(bytes);
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0) end--;
  text = text.slice(0, end);
  if (text === '') return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n : n + 1;
}

/** The reader's accounting covers the file: total = the file's lines (or bytes) = used + unused, and unused ones are reported. */
function checkAccount(bytes: Uint8Array, result: unknown, diagnostics: readonly Diagnostic[], count: ReaderSpec<unknown>['count'], what: string): void {
  if (count === 'none') return;
  const r = result as { lines?: LineCount | null; bytes?: ByteCount | null } & Partial<ByteCount>;
  const lines = count === 'bytes' ? null : (r.lines ?? null);
  const byteCount = count === 'lines' ? null : (r.bytes ?? (typeof r.total === 'number' ? (r as ByteCount) : null));
  expect(lines ?? byteCount, `${what}: the reader reports no ${count ?? 'lines or bytes'}`).not.toBeNull();
  if (lines) {
    expect(lines.total, `${what}: lines read against the file's lines`).toBe(linesOf(bytes));
    expect(lines.used + lines.unused, `${what}: used + unused lines`).toBe(lines.total);
    if (lines.unused > 0) expect(diagnostics.length, `${what}: ${lines.unused} unused lines and no diagnostic`).toBeGreaterThan(0);
  } else if (byteCount) {
    expect(byteCount.total, `${what}: bytes read against the file's bytes`).toBe(bytes.length);
    expect(byteCount.used + byteCount.unused, `${what}: used + unused bytes`).toBe(byteCount.total);
    if (byteCount.unused > 0) expect(diagnostics.length, `${what}: ${byteCount.unused} unused bytes and no diagnostic`).toBeGreaterThan(0);
  }
}

/**
 * Reads `content` as `name` at every chunk size, and (unless `sniffed: false`) checks the sniffer
 * gives its bytes the spec's kind and reads it renamed `unknown` in one chunk through the sniffer's
 * pick: every reading must project the same and account for the whole file, and (with `write`, a file
 * read without diagnostics) read back the same after writing.
 * Returns the reading as named in one chunk, for the test's own expected values.
 */
export function readEveryWay<R>(name: string, content: Uint8Array | string, spec: ReaderSpec<R>): Reading<R> {
  const bytes = typeof content === 'string' ? enc.encode(content) : content;
  const project = spec.project ?? defaultProject;
  const sniffed = spec.sniffed !== false;
  // the app's path: the kind comes from the bytes (once: the bytes are the same at every chunk size)
  if (sniffed) expect(sniffKind(bytes), `${name}: the sniffer's kind`).toBe(spec.kind);
  const first = readOnce(spec, name, bytes, 0);
  const want = project(first);
  checkAccount(bytes, first.result, first.diagnostics, spec.count, name);
  const same = (r: Reading<R>, as: string, size: number) => {
    const how = `${name} read as ${as} in ${size === 0 ? 'one chunk' : `chunks of ${size}`}`;
    expect(project(r), how).toEqual(want);
    checkAccount(bytes, r.result, r.diagnostics, spec.count, how);
  };
  // renamed `unknown`, by the sniffer's pick (the kind asserted above): the name is all that differs, one chunk is enough
  if (sniffed) same(readOnce({ ...spec, create: undefined }, 'unknown', bytes, 0), 'unknown', 0);
  for (const size of spec.sizes ?? CHUNK_SIZES) if (size !== 0) same(readOnce(spec, name, bytes, size), name, size);
  // a damaged file's reading need not be writable (a v8 dump with a v7 record has no generation to write): clean files only
  if (spec.write && first.diagnostics.length === 0) {
    const written = spec.write(first);
    if (written === null) return first;
    const again = readOnce(spec, name, typeof written === 'string' ? enc.encode(written) : written, 0);
    const kept = spec.sameAfterWrite ?? project;
    expect(kept(again), `${name} written and read again`).toEqual(kept(first));
  }
  return first;
}

/** A dump's content, what a writer keeps: not where each record stood, nor the accounting. */
const dumpContent = (r: Reading<ParsedDump>) => ({
  version: r.result.version,
  generation: r.result.generation,
  uninitialized: r.result.uninitialized,
  records: r.result.records.map(({ where: _, ...rec }) => rec),
});

/** The writers of stack-map-write.ts, dump-json-write.ts and sim-ledger.ts, given what their reader read (trace-text-write.ts's: traceTextBack). */
const writeBack = {
  stackMapText: ({ result: d }: Reading<ParsedDump>) =>
    d.version !== 'v7' && d.version !== 'v8'
      ? null
      : writeStackMapText(
          d.records.map((r) => ({ slot: r.slot, generation: r.generation, refCount: r.refCount, frames: r.frames ?? [] })),
          { version: d.version, generation: d.generation, uninitialized: d.uninitialized },
        ),
  stackMapBin: ({ result: d }: Reading<ParsedDump>) =>
    d.littleEndian === null || !/^\d+$/.test(d.version)
      ? null
      : writeStackMapBin({
          version: +d.version,
          generation: d.generation,
          littleEndian: d.littleEndian,
          records: d.records.map((r) => ({ slot: r.slot, refCount: r.refCount, ips: r.ips ?? [] })),
        }),
  dumpJson: ({ result: d }: Reading<ParsedDump>) =>
    writeDumpJson(d.records.map((r) => ({ slot: r.slot, refCount: r.refCount, ips: r.ips ?? [], symbols: r.frames }))),
  stackMapStat: ({ result: s }: Reading<ParsedStat>) => {
    if (s.uninitialized) return writeStackMapStat({ version: s.version, uninitialized: true });
    const v = { entries: s.entries, capacity: s.capacity, successes: s.successes };
    if (s.version === 'v7' && s.tableSize !== null && s.drops !== null && Object.values(v).every((x) => x !== null))
      return writeStackMapStat({
        version: 'v7',
        entries: s.entries!,
        capacity: s.capacity!,
        successes: s.successes!,
        tableSize: s.tableSize,
        drops: s.drops,
        successRate: s.successRate,
      });
    const known = ['generation', 'entries', 'capacity', 'successes', 'fallbacks'];
    if (s.version === 'v8' && s.generation !== null && s.drops !== null && Object.values(v).every((x) => x !== null))
      return writeStackMapStat({
        version: 'v8',
        generation: s.generation,
        entries: s.entries!,
        capacity: s.capacity!,
        successes: s.successes!,
        fallbacks: s.drops,
        extra: s.values.filter(([k]) => !known.includes(k)),
      });
    return null;
  },
  simLedger: ({ result: l }: Reading<ParsedLedger>) =>
    l.version !== 2 || l.mode === null
      ? null
      : writeSimLedger(
          l.mode,
          Array.from({ length: l.count }, (_, i) => ({
            cpu: l.cpu[i],
            ts: l.ts[i],
            kind: LEDGER_KINDS[l.kind[i]],
            slot: l.slot[i],
            generation: l.generation[i],
            stack: l.stack[i],
            event: l.event[i] < 0 ? null : l.event[i],
            trueStack: l.trueStack[i],
            resolvedTo: l.resolvedTo[i] < 0 ? null : l.resolvedTo[i],
            outcome: LEDGER_OUTCOMES[l.outcome[i]],
          })),
          l.stacks,
        ),
};

/** trace-text-write.ts: the sink's events, stack records and lost markers merged back in line order */
function traceTextBack({ result, got }: Reading<TraceTextResult>): string | null {
  // the writer prints microseconds, as the kernel's trace does: a nanosecond trace has nothing to write to
  if ((result.timeDigits ?? 0) > 6) return null;
  const items: (TraceTextItem & { at: number })[] = [
    ...got.events.map(({ lineNo, raw: _, ...e }) => ({ type: 'event' as const, ...e, at: lineNo })),
    ...got.stacks.map(({ lineNo, ...r }) => ({ type: 'stack' as const, ...r, at: lineNo })),
    ...got.lost.map(({ lineNo, ...l }) => ({ type: 'lost' as const, ...l, at: lineNo })),
  ];
  items.sort((a, b) => a.at - b.at);
  return writeTraceText(
    items.map(({ at: _, ...it }) => it as TraceTextItem),
    { tracer: result.tracer, cpus: result.cpus },
  );
}

/** what the text writer keeps: not line numbers, nor a stack record's context (it prints no flags for one) */
const traceContent = ({ got }: Reading<TraceTextResult>) => ({
  events: got.events.map(({ lineNo: _, raw: __, ...e }) => e),
  stacks: got.stacks.map(({ lineNo: _, ctx: __, ...r }) => r),
  lost: got.lost.map(({ lineNo: _, ...l }) => l),
});

const ledgerContent = ({ result: { lines: _, ...l } }: Reading<ParsedLedger>) => l;
const statContent = ({ result: { lines: _, file: __, ...s } }: Reading<ParsedStat>) => s;

/** Every reader by its kind (the app's, registry.ts): `readEveryWay(name, bytes, readers.stackMapText)`, or `{ ...readers.x, write }`. */
const specOf = <R>(s: ReaderSpec<R>) => s;

export const readers = {
  traceText: specOf<TraceTextResult>({ kind: 'trace_text', write: traceTextBack, sameAfterWrite: traceContent }),
  systraceHtml: specOf<TraceTextResult>({ kind: 'systrace_html' }),
  perfScript: specOf<PerfScriptResult>({ kind: 'perf_script' }),
  traceDat: specOf<TraceDatResult>({ kind: 'trace_cmd_dat', count: 'bytes' }),
  stackMapText: specOf<ParsedDump>({ kind: 'stack_map_text', write: writeBack.stackMapText, sameAfterWrite: dumpContent }),
  stackMapBin: specOf<ParsedDump>({ kind: 'stack_map_bin', count: 'bytes', write: writeBack.stackMapBin, sameAfterWrite: dumpContent }),
  stackMapStat: specOf<ParsedStat>({ kind: 'stack_map_stat', write: writeBack.stackMapStat, sameAfterWrite: statContent }),
  dumpJson: specOf<ParsedDump>({ kind: 'dump_json', write: writeBack.dumpJson, sameAfterWrite: dumpContent }),
  kallsyms: specOf<SymbolFile>({ kind: 'kallsyms' }),
  captureInfo: specOf<ParsedCaptureInfo>({ kind: 'capture_txt' }),
  simLedger: specOf<ParsedLedger>({ kind: 'sim_ledger', write: writeBack.simLedger, sameAfterWrite: ledgerContent }),
};
