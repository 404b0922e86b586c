import { createCaptureInfoParser } from './capture-info.ts';
import { createSimLedgerParser } from './sim-ledger.ts';
import { createDumpJsonParser } from './dump-json.ts';
import { createPerfScriptParser } from './perf-script.ts';
import { createKallsymsParser } from './kallsyms.ts';
import { nulGate } from './nul-gate.ts';
import { createStackMapBinParser } from './stack-map-bin.ts';
import { createStackMapStatParser } from './stack-map-stat.ts';
import { createStackMapTextParser } from './stack-map-text.ts';
import { createSystraceHtmlParser } from './systrace-html.ts';
import { createTraceDatParser } from './trace-dat/trace-dat.ts';
import { createTraceTextParser } from './trace-text.ts';
import type { ByteCount, ChunkParser, FileKind, ParseContext, TraceSink } from './types.ts';

/**
 * The reader for a sniffed kind. Trace kinds send what they read to `sink`; an unknown file
 * gets a byte counter that reports it as not a known format. A text reader reads through
 * nul-gate.ts: NUL padding at the end is reported and not read, any other NUL reported by offset.
 */
export function parserForKind(kind: FileKind, ctx: ParseContext, sink: () => TraceSink): ChunkParser<unknown> {
  const p = readerForKind(kind, ctx, sink);
  return kind === 'stack_map_bin' || kind === 'trace_cmd_dat' || kind === 'unknown' ? p : nulGate(p, ctx.diagnostics);
}

function readerForKind(kind: FileKind, ctx: ParseContext, sink: () => TraceSink): ChunkParser<unknown> {
  switch (kind) {
    case 'trace_text':
      return createTraceTextParser(ctx, sink());
    case 'systrace_html':
      return createSystraceHtmlParser(ctx, sink());
    case 'stack_map_text':
      return createStackMapTextParser(ctx);
    case 'stack_map_bin':
      return createStackMapBinParser(ctx);
    case 'stack_map_stat':
      return createStackMapStatParser(ctx);
    case 'kallsyms':
      return createKallsymsParser(ctx);
    case 'dump_json':
      return createDumpJsonParser(ctx);
    case 'trace_cmd_dat':
      return createTraceDatParser(ctx, sink());
    case 'perf_script':
      return createPerfScriptParser(ctx, sink());
    case 'capture_txt':
      return createCaptureInfoParser(ctx);
    case 'sim_ledger':
      return createSimLedgerParser(ctx);
    case 'unknown':
      return unknownParser(ctx);
  }
}

export const NOT_KNOWN =
  'not a known format (not a trace, stack_map, stack_map_bin, stack_map_stat, dump JSON, kallsyms, capture.sh capture.txt or an archive of them)';

function unknownParser(ctx: ParseContext): ChunkParser<ByteCount> {
  let total = 0;
  return {
    push: (c) => {
      total += c.length;
    },
    end: () => {
      ctx.diagnostics.forFile(total === 0 ? 'empty file' : NOT_KNOWN);
      return { total, used: 0, unused: total };
    },
  };
}
