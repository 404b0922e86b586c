import { DiagnosticLog, type Diagnostic } from '../formats/diagnostics.ts';
import { SNIFF_BYTES, sniffKind } from '../formats/sniff.ts';
import { Symbolizer, type SymbolFile } from '../formats/kallsyms.ts';
import { parserForKind } from '../formats/registry.ts';
import { createTraceTextParser } from '../formats/trace-text.ts';
import type { ByteCount, ChunkParser, FileKind, LineCount, ParsedDump, ParsedStat } from '../formats/types.ts';
import { resolveCookies } from './cookie-index.ts';
import { DumpIndex } from './dumps.ts';
import { StackTable } from './stack-table.ts';
import { TraceColumns } from './trace-columns.ts';

/** What was read of one file: every line or byte is either used or reported. */
export interface FileReport {
  file: string;
  kind: FileKind;
  size: number;
  lines: LineCount | null;
  bytes: ByteCount | null;
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
}

/**
 * Reads any number of files, each pushed as byte chunks, into one capture. A file's kind is
 * sniffed from its first bytes; the dumps are indexed and the cookies resolved at `finish`,
 * when every dump is known, whatever order the files came in.
 */
export class Ingest {
  readonly stacks = new StackTable();
  readonly trace = new TraceColumns(this.stacks);
  private readonly dumps: { dump: ParsedDump; log: DiagnosticLog }[] = [];
  private readonly stats: ParsedStat[] = [];
  private readonly symbols: { syms: SymbolFile; log: DiagnosticLog }[] = [];
  private readonly files: FileReport[] = [];
  private readonly logs: DiagnosticLog[] = [];
  private tracer: string | null = null;

  /** Starts a file; push its bytes into the returned parser, then call end(). */
  open(file: string): ChunkParser<FileReport> {
    const log = new DiagnosticLog(file);
    this.logs.push(log);
    let head: Uint8Array[] = [];
    let headLen = 0;
    let size = 0;
    let parser: ChunkParser<unknown> | null = null;
    let kind: FileKind = 'unknown';
    const start = () => {
      const all = concat(head, headLen);
      kind = sniffKind(all);
      parser = this.parserFor(kind, file, log);
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
      end: (): FileReport => {
        if (!parser) start();
        const result = parser!.end();
        const report: FileReport = { file, kind, size, lines: null, bytes: null };
        this.collect(kind, result, report, log);
        this.files.push(report);
        return report;
      },
    };
  }

  private parserFor(kind: FileKind, file: string, log: DiagnosticLog): ChunkParser<unknown> {
    return parserForKind(kind, { file, diagnostics: log }, () => this.trace.sink());
  }

  private collect(kind: FileKind, result: unknown, report: FileReport, log: DiagnosticLog): void {
    switch (kind) {
      case 'trace_text':
      case 'systrace_html': {
        const r = result as ReturnType<ReturnType<typeof createTraceTextParser>['end']>;
        report.lines = r.lines;
        this.tracer ??= r.tracer;
        break;
      }
      case 'stack_map_text':
      case 'stack_map_bin':
      case 'dump_json': {
        const d = result as ParsedDump;
        report.lines = d.lines;
        report.bytes = d.bytes;
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
      default:
        report.bytes = result as ByteCount;
    }
  }

  finish(): Capture {
    const dumps = new DumpIndex(this.stacks);
    const sym = this.symbols.find((s) => !s.syms.allZero);
    const symbolizer = sym ? new Symbolizer(sym.syms) : null;
    for (const { dump, log } of this.dumps) dumps.add(dump, log, symbolizer?.symbolize);
    if (sym && symbolizer && symbolizer.misses > symbolizer.hits) {
      sym.log.forFile(
        `${symbolizer.misses} of ${symbolizer.misses + symbolizer.hits} dump addresses fall outside every symbol: ` +
          'this symbol file is probably from another boot, or KASLR is on (System.map only matches with nokaslr)',
      );
    }
    resolveCookies(this.trace, dumps);
    return {
      stacks: this.stacks,
      trace: this.trace,
      dumps,
      stats: this.stats,
      files: this.files,
      diagnostics: this.logs.flatMap((l) => l.list()),
      tracer: this.tracer,
    };
  }

  /** A diagnostic about a file not opened as such, e.g. a bundle cut short (see unpack.ts). */
  report(file: string, message: string, offset?: number): void {
    let log = this.logs.find((l) => l.file === file);
    if (!log) this.logs.push((log = new DiagnosticLog(file)));
    if (offset === undefined) log.forFile(message);
    else log.atOffset(offset, message);
  }
}


function concat(parts: Uint8Array[], len: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(len);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
