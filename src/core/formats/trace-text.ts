/**
 * Streaming reader for ftrace trace text (DESIGN 2.1): `trace`, `trace_pipe`, `trace-cmd report`
 * and the latency tracers' format. Compression and systrace HTML are unwrapped elsewhere.
 *
 * Every line is classified by its first non-blank character before any regex runs:
 * blank (used), `#` header, `=>` frame, `CPU...` lost/empty-CPU, `cpus=`/`version =` (trace-cmd),
 * else one event-line regex (then the latency regex). Whatever is left is the continuation of a
 * multi-line trace_printk / trace_marker message right before it (used, joined to its event), or
 * an unused line with a diagnostic, so lines.total === used + unused always holds.
 *
 * Speed: into a sink of ids (ColumnSink), UTF-8 is not decoded: the common lines (an event
 * whose head, COMM and name are ASCII with an ordinary payload or a cookie, a `<stack trace>`,
 * a frame of a full stack) are read from the chunk's bytes (`bytes`), a line with the same head
 * as the one before it (a stack record after its event) takes that one's head, and a frame seen
 * before its id (trace-bytes.ts); every other line is decoded alone and read as text. Decoded
 * text is read in place too (no line string, no regex, no match arrays; see `range` and
 * `fastEvent`), giving exactly what the regexes give; anything unusual falls back to them. One
 * event object and one cookie record are reused.
 *
 * The reader is three files: trace-text-reader.ts the state and the text path,
 * trace-text-bytes.ts the byte path over the same state, trace-text-shared.ts what both use
 * (the sink of ids `ColumnSink`, `REASON`, the limits).
 */
import { LineSplitter } from './lines.ts';
import { TraceTextBytes } from './trace-text-bytes.ts';
import type { ChunkParser, ParseContext, TraceSink, TraceTextResult } from './types.ts';

/**
 * A streaming trace text parser. Events go to `sink.event`; cookies, full and user stacks to
 * `sink.stackRecord` (a full/user stack once its frame block ends); lost-event markers to
 * `sink.lost`.
 *
 * Latency-format lines give `ts` as seconds relative to the start of the latency trace (their
 * `NNNus` column / 1e6), not an absolute clock.
 *
 * trace_printk and trace_marker events get the kernel's event names, `bprint` and `print`, as the
 * trace.dat reader names them: `trace-cmd report` prints those names (`bprint: do_work: n=3`); the
 * kernel's `trace` file prints the caller instead of a name (`do_work: n=3`,
 * `tracing_mark_write: B|12|draw`), told apart where its form says so (event-line.ts
 * printkName). The payload is `CALLER: message` either way, as the trace.dat reader's. A
 * multi-line message continues on the lines after its event line: a line that is no trace line
 * of any kind, right after such an event (blank lines between included), joins its payload
 * (`\n` and the line) and counts as used; so the event reaches `sink.event` only when the next
 * line that is something else is read (or at the end).
 *
 * The event object passed to `sink.event` and the record passed to `sink.stackRecord` for a
 * cookie are reused for the next line: a sink must copy what it keeps (see TraceSink).
 */
export function createTraceTextParser(ctx: ParseContext, sink: TraceSink): ChunkParser<TraceTextResult> {
  const st = new TraceTextBytes(ctx, sink);
  const splitter = new LineSplitter(
    (line, lineNo) => st.line(line, lineNo),
    (text, start, end, lineNo, clean) => st.range(text, start, end, lineNo, clean),
    (lineNo) => st.tooLong(lineNo),
    // a sink of ids: the common lines are read from the bytes, not decoded
    st.readsBytes ? (b, start, end, lineNo) => st.bytes(b, start, end, lineNo) : undefined,
  );
  return {
    push(chunk: Uint8Array): void {
      splitter.push(chunk);
      st.bytesDone();
    },
    scansEveryByte: () => splitter.scansEveryByte(),
    nulFreeFrom: () => splitter.nulFreeFrom(),
    end(): TraceTextResult {
      const total = splitter.end();
      st.bytesDone();
      st.flush();
      st.flushPrint();
      return {
        lines: { total, used: st.used, unused: st.unused },
        tracer: st.tracer,
        cpus: st.cpus,
        timeDigits: st.timeDigits,
      };
    },
  };
}
