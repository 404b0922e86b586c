/**
 * Files that are recognized but not read: `perf script` output (trace-cmd's `trace.dat` is read
 * by trace-dat.ts). Each is counted as bytes (all unused) and gets one file diagnostic that says what it
 * is and what to do instead, rather than the generic "not a known format".
 */
import type { ByteCount, ChunkParser, ParseContext } from './types.ts';

/** `perf script` output: kernel stacks from perf samples, not ftrace. */
export function createPerfScriptParser(ctx: ParseContext): ChunkParser<ByteCount> {
  let total = 0;
  return {
    push(chunk: Uint8Array) {
      total += chunk.length;
    },
    end(): ByteCount {
      ctx.diagnostics.forFile(
        '`perf script` output (perf samples with callchains), not ftrace text: not read; ' +
          'record with ftrace (trace, trace_pipe or `trace-cmd report`) to load stacks here',
      );
      return { total, used: 0, unused: total };
    },
  };
}
