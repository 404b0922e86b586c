/**
 * Files that are recognized but not read: trace-cmd's binary `trace.dat` and `perf script`
 * output. Each is counted as bytes (all unused) and gets one file diagnostic that says what it
 * is and what to do instead, rather than the generic "not a known format".
 */
import { traceDatVersion } from './sniff.ts';
import type { ByteCount, ChunkParser, ParseContext } from './types.ts';

const HEAD_BYTES = 32;

/** trace-cmd `trace.dat`: reports its version and how to convert it. */
export function createTraceDatParser(ctx: ParseContext): ChunkParser<ByteCount> {
  const head = new Uint8Array(HEAD_BYTES);
  let total = 0;
  return {
    push(chunk: Uint8Array) {
      if (total < HEAD_BYTES) head.set(chunk.subarray(0, HEAD_BYTES - total), total);
      total += chunk.length;
    },
    end(): ByteCount {
      const version = traceDatVersion(head.subarray(0, Math.min(total, HEAD_BYTES)));
      ctx.diagnostics.forFile(
        `trace-cmd binary trace.dat (version ${version || '?'}): convert it with \`trace-cmd report > trace.txt\` and load that`,
      );
      return { total, used: 0, unused: total };
    },
  };
}

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
