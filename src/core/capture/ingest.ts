import type { CaptureFacts, ParsedCaptureInfo } from '../formats/capture-info.ts';
import type { ParsedLedger } from '../formats/sim-ledger.ts';
import { DiagnosticLog, type Diagnostic } from '../formats/diagnostics.ts';
import { SNIFF_BYTES, sniffKind } from '../formats/sniff.ts';
import type { SymbolFile } from '../formats/kallsyms.ts';
import { Symbolizer } from '../formats/symbolizer.ts';
import type { FileBudget } from '../formats/decompress-budget.ts';
import { parserForKind } from '../formats/registry.ts';
import type { createTraceTextParser } from '../formats/trace-text.ts';
import type { ByteCount, ChunkParser, FileKind, LineCount, ParsedDump, ParsedStat, TraceTextResult } from '../formats/types.ts';
import { resolveCookies } from './cookie-index.ts';
import { contradictIds } from './field-evidence.ts';
import { compareSymbolFiles, slotsPastTable, statTable } from './cross-checks.ts';
import { DumpIndex } from './dumps.ts';
import { StackTable, type StackTableMark } from './stack-table.ts';
import { TraceColumns, type TraceColumnsMark } from './trace-columns.ts';
import { linesAfterStop, RecordStatus } from './trace-columns-data.ts';
import type { TracePart } from './split-trace.ts';
import { concatBytes } from '../base/bytes.ts';
import type { EventFilter } from './event-filter.ts';

/** What was read of one file: every line or byte is either used or reported. */
export interface FileReport {
  file: string;
  kind: FileKind;
  size: number;
  lines: LineCount | null;
  bytes: ByteCount | null;
  /** capture_txt: what capture.sh recorded (kernel release, buffer size, options set) */
  capture?: CaptureFacts;
  /** trace text: the most digits after the point of its event times (6: microseconds; ts_ns is exact at any uptime up to 6) */
  timeDigits?: number;
  /** perf script: the file ended inside its last sample (no blank line after it) */
  unterminated?: boolean;
  /** stack_map_bin: its header's version as read ('1', '2', another number, or 'unknown' without a magic) */
  binVersion?: string;
}

/** Kinds the explorer cannot read: a load of only these leaves the capture as it was. */
const NOT_READ: ReadonlySet<FileKind> = new Set<FileKind>(['unknown']);

/** Whether the explorer read anything of the file (a file of unknown kind is counted, not read). */
export const understood = (r: FileReport): boolean => !NOT_READ.has(r.kind);

/**
 * A file being read into a session. `end(part)`: the rest of a trace text file was read apart
 * (split-trace.ts), from the byte after the last one pushed here; its columns join this file's.
 */
export interface FileParser extends ChunkParser<FileReport> {
  end(part?: TracePart): FileReport;
}

/** Where a session stood: what rollback() returns it to. */
export interface IngestMark {
  stacks: StackTableMark;
  trace: TraceColumnsMark;
  dumps: number;
  stats: number;
  ledgers: number;
  symbols: number;
  files: number;
  logs: number;
  sealedLogs: number;
  tracer: string | null;
  modules: number;
}

/** Everything rebuilt from a set of files. */
export interface Capture {
  stacks: StackTable;
  trace: TraceColumns;
  dumps: DumpIndex;
  stats: ParsedStat[];
  files: FileReport[];
  diagnostics: Diagnostic[];
  /** `# tracer:` of the first trace that names one */
  tracer: string | null;
  /** a simulated run's ledger.json (the first one read): each record's truth, in the trace's order */
  ledger: ParsedLedger | null;
  /** each function's kernel module, where a frame or kallsyms line named one (`[ext4]`); absent in hand-made captures */
  modules?: ReadonlyMap<string, string>;
}

/**
 * Reads any number of files, each pushed as byte chunks, into one capture. A file's kind is
 * sniffed from its first bytes; the dumps are indexed and the cookies resolved at `finish`,
 * when every dump is known, whatever order the files came in.
 *
 * A session outlives a finish: more files can be opened and `finish` called again, which
 * rebuilds the dump index and every cookie's resolution from all files so far (nothing is read
 * twice), as if all had come at once. `mark()` and `rollback()` undo the files opened since, for
 * a load that was cancelled or failed. Each finish returns a capture over read-only snapshots of
 * the columns, so the capture shown stays whole while the session reads more.
 */
export class Ingest {
  readonly stacks = new StackTable();
  readonly trace: TraceColumns;
  private readonly dumps: { dump: ParsedDump; log: DiagnosticLog }[] = [];
  private readonly stats: ParsedStat[] = [];
  /** simulator ledgers (ledger.json): the truth of a simulated run's records */
  private readonly ledgers: ParsedLedger[] = [];
  private readonly symbols: { syms: SymbolFile; log: DiagnosticLog }[] = [];
  private readonly files: FileReport[] = [];
  private readonly logs: DiagnosticLog[] = [];
  /** logs before this index belong to files of an earlier load: report() does not add to them */
  private sealedLogs = 0;
  /** a file's newest log by name, as its index in `logs` (checked before use: a rollback may have dropped it) */
  private readonly reportLogs = new Map<string, number>();
  private tracer: string | null = null;
  /** function -> module, in the order first seen (rollback drops the entries past a mark) */
  private readonly modules = new Map<string, string>();

  /**
   * `details`: keep each event's TGID and payload (event-details.ts), as an export of its tables
   * needs. `filter`: only the events it matches are kept, with their stack records (`--filter`). `frameLimit`: the most distinct frames one trace file adds (FRAME_LIMIT; a test's smaller one). `dumpHashLimitForTests`: see below
   */
  constructor(opts: { details?: boolean; frameLimit?: number; filter?: EventFilter; dumpHashLimitForTests?: number } = {}) {
    this.trace = new TraceColumns(this.stacks, opts);
    this.dumpHashLimitForTests = opts.dumpHashLimitForTests;
  }

  /** the binary dumps' address table's limit (IpPool `hashLimitForTests`: 0 reads every dump in two passes) */
  private readonly dumpHashLimitForTests: number | undefined;

  /** Starts a file; push its bytes into the returned parser, then call end(). `inflate`: the given file's decompression budget, for a reader that decompresses. */
  open(file: string, inflate?: FileBudget): FileParser {
    const log = new DiagnosticLog(file);
    let sink: ReturnType<TraceColumns['sink']> | null = null;
    this.logs.push(log);
    this.reportLogs.set(file, this.logs.length - 1);
    let head: Uint8Array[] = [];
    let headLen = 0;
    let size = 0;
    let parser: ChunkParser<unknown> | null = null;
    let kind: FileKind = 'unknown';
    const start = () => {
      const all = head.length === 1 ? head[0] : concatBytes(head);
      kind = sniffKind(all);
      parser = parserForKind(
        kind,
        { file, diagnostics: log, inflate, modules: this.modules },
        () => (sink = this.trace.sink(file, { log, unit: kind === 'trace_cmd_dat' ? 'offset' : 'line' })),
      );
      head = [];
      if (all.length > 0) parser.push(all);
    };
    return {
      push: (chunk: Uint8Array) => {
        size += chunk.length;
        if (parser) {
          parser.push(chunk);
          return;
        }
        head.push(chunk.slice());
        headLen += chunk.length;
        if (headLen >= SNIFF_BYTES) start();
      },
      end: (part?: TracePart): FileReport => {
        if (!parser) start();
        let result = parser!.end();
        if (part) {
          if (kind !== 'trace_text' || !sink) throw new Error(`a part of a trace text file cannot join a file of kind ${kind}`);
          const r = result as TraceTextResult;
          sink.absorb(part.columns, r.lines.total + 1);
          log.absorb(part.diagnostics, r.lines.total, size);
          size += part.bytes;
          const lines = { total: r.lines.total + part.lines.total, used: r.lines.used + part.lines.used, unused: r.lines.unused + part.lines.unused };
          result = {
            lines,
            tracer: part.tracer ?? r.tracer,
            cpus: part.cpus ?? r.cpus,
            timeDigits: Math.max(r.timeDigits ?? 0, part.timeDigits ?? 0),
          } satisfies TraceTextResult;
        }
        const report: FileReport = { file, kind, size, lines: null, bytes: null };
        this.collect(kind, result, report, log);
        // a trace that stopped at its frame limit: the lines from there on were read, not kept
        const stop = sink?.close() ?? null;
        if (report.lines) report.lines = linesAfterStop(report.lines, stop);
        this.files.push(report);
        return report;
      },
    };
  }

  private collect(kind: FileKind, result: unknown, report: FileReport, log: DiagnosticLog): void {
    switch (kind) {
      case 'trace_text':
      case 'systrace_html':
      case 'perf_script': {
        const r = result as ReturnType<ReturnType<typeof createTraceTextParser>['end']>;
        report.lines = r.lines;
        if (r.timeDigits) report.timeDigits = r.timeDigits;
        this.tracer ??= r.tracer;
        if (kind === 'perf_script' && (result as { unterminated?: boolean }).unterminated) report.unterminated = true;
        break;
      }
      case 'stack_map_text':
      case 'stack_map_bin':
      case 'dump_json': {
        const d = result as ParsedDump;
        report.lines = d.lines;
        report.bytes = d.bytes;
        if (kind === 'stack_map_bin') report.binVersion = d.version;
        this.dumps.push({ dump: d, log });
        break;
      }
      case 'stack_map_stat': {
        const s = result as ParsedStat;
        report.lines = s.lines;
        this.stats.push(s);
        break;
      }
      case 'kallsyms': {
        const syms = result as SymbolFile;
        report.lines = syms.lines;
        this.symbols.push({ syms, log });
        break;
      }
      case 'sim_ledger': {
        const l = result as ParsedLedger;
        report.lines = l.lines;
        this.ledgers.push(l);
        break;
      }
      case 'capture_txt': {
        const c = result as ParsedCaptureInfo;
        report.lines = c.lines;
        if (c.facts) report.capture = c.facts;
        break;
      }
      case 'trace_cmd_dat': {
        const { total, used, unused } = result as ByteCount;
        report.bytes = { total, used, unused };
        break;
      }
      default:
        report.bytes = result as ByteCount;
    }
  }

  /**
   * Indexes every dump read so far and resolves every cookie against them. Callable again after
   * more files: what it derives (dump index, resolutions, its own diagnostics) is rebuilt each
   * time, never added to the last one's.
   */
  finish(): Capture {
    /** diagnostics of this finish, by the file they are about (kept apart, so a second finish does not repeat them) */
    const derivedLogs = new Map<DiagnosticLog, DiagnosticLog>();
    const derivedLog = (l: DiagnosticLog) => {
      let d = derivedLogs.get(l);
      if (!d) derivedLogs.set(l, (d = new DiagnosticLog(l.file)));
      return d;
    };
    const dumps = new DumpIndex(this.stacks, { hashLimitForTests: this.dumpHashLimitForTests });
    const sym = this.symbols.find((s) => !s.syms.allZero);
    const symbolizer = sym ? new Symbolizer(sym.syms) : null;
    // what the other files contradict is said on them: symbols named otherwise, slots no table holds
    if (sym) for (const s of this.symbols) if (s !== sym) compareSymbolFiles(sym.syms, s.syms, derivedLog(s.log));
    const table = statTable(this.stats);
    for (const { dump, log } of this.dumps) slotsPastTable(dump, table, derivedLog(log));
    for (const { dump, log } of this.dumps) dumps.add(dump, derivedLog(log), symbolizer);
    if (sym && symbolizer && symbolizer.misses > symbolizer.hits) {
      derivedLog(sym.log).forFile(
        `${symbolizer.misses} of ${symbolizer.misses + symbolizer.hits} dump addresses fall outside every symbol: ` +
          'this symbol file is probably from another boot, or KASLR is on (System.map only matches with nokaslr)',
      );
    }
    resolveCookies(this.trace, dumps);
    // v4/v7 ids whose event's own fields name a function their stack lacks (issue 36)
    contradictIds(this.trace, this.stacks, symbolizer);
    // the columns' growth slack is not kept by the capture
    this.trace.trim();
    this.sealedLogs = this.logs.length;
    const stacks = this.stacks.snapshot(this.referencedStacks(dumps));
    return {
      stacks,
      trace: this.trace.snapshot(stacks),
      dumps,
      stats: this.stats.slice(),
      files: this.files.slice(),
      diagnostics: this.logs.flatMap((l) => {
        const derived = derivedLogs.get(l);
        return derived ? [...l.list(), ...derived.list()] : l.list();
      }),
      tracer: this.tracer,
      ledger: this.ledgers[0] ?? null,
      modules: new Map(this.modules),
    };
  }

  /**
   * Distinct stacks some source holds: a full stack in the trace or a slot of a dump. Not the
   * table's size: a stack interned by an earlier finish that no source holds now (a binary
   * dump's raw addresses, before kallsyms came) is not counted.
   */
  private referencedStacks(dumps: DumpIndex): number {
    // a bit per node: a byte each was 8.9 MB of fresh memory at a 262,144-stack dump, faulted in as it was marked
    const seen = new Int32Array((this.stacks.nodeCount + 31) >>> 5);
    const slots = dumps.slotStacks();
    let n = 0;
    for (let r = 0; r < slots.length; r++) n += markOnce(seen, slots[r]);
    const status = this.trace.recStatus.raw();
    const stack = this.trace.recStack.raw();
    for (let i = 0; i < status.length; i++) if (status[i] === RecordStatus.Full) n += markOnce(seen, stack[i]);
    return n;
  }

  mark(): IngestMark {
    return {
      stacks: this.stacks.mark(),
      trace: this.trace.mark(),
      dumps: this.dumps.length,
      stats: this.stats.length,
      ledgers: this.ledgers.length,
      symbols: this.symbols.length,
      files: this.files.length,
      logs: this.logs.length,
      sealedLogs: this.sealedLogs,
      tracer: this.tracer,
      modules: this.modules.size,
    };
  }

  /** Diagnostics about the files opened since `m` (before a rollback forgets them). */
  diagnosticsSince(m: IngestMark): Diagnostic[] {
    return this.logs.slice(m.logs).flatMap((l) => l.list());
  }

  /**
   * Forgets every file opened since `m`, read whole or in part. The cookie resolutions the
   * columns hold may then be stale: the next finish() rebuilds them (the captures returned
   * before are snapshots, untouched).
   */
  rollback(m: IngestMark): void {
    this.stacks.rollback(m.stacks);
    this.trace.rollback(m.trace);
    this.dumps.length = m.dumps;
    this.stats.length = m.stats;
    this.ledgers.length = m.ledgers;
    this.symbols.length = m.symbols;
    this.files.length = m.files;
    this.logs.length = m.logs;
    this.sealedLogs = m.sealedLogs;
    this.tracer = m.tracer;
    // a Map keeps insertion order: the entries past the mark are the ones added since
    if (this.modules.size > m.modules) {
      let k = 0;
      // a Map's iteration goes on past an entry deleted under it
      for (const key of this.modules.keys()) if (k++ >= m.modules) this.modules.delete(key);
    }
  }

  /** A diagnostic about a file not opened as such, e.g. a bundle cut short (see unpack.ts). */
  report(file: string, message: string, offset?: number): void {
    // the file's open log, found by name in O(1) (a slice and scan per report was quadratic in an archive's members)
    const i = this.reportLogs.get(file);
    let log = i !== undefined && i >= this.sealedLogs && i < this.logs.length && this.logs[i].file === file ? this.logs[i] : undefined;
    if (!log) {
      this.logs.push((log = new DiagnosticLog(file)));
      this.reportLogs.set(file, this.logs.length - 1);
    }
    if (offset === undefined) log.forFile(message);
    else log.atOffset(offset, message);
  }
}

/** Marks node `s` (>= 0) in the bitmap `seen`: 1 the first time, else 0. */
function markOnce(seen: Int32Array, s: number): number {
  if (s < 0) return 0;
  const w = s >>> 5;
  const bit = 1 << (s & 31);
  if ((seen[w] & bit) !== 0) return 0;
  seen[w] |= bit;
  return 1;
}
