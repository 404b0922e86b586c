import { DiagnosticLog, type DiagnosticGroup } from '../formats/diagnostics.ts';
import { matchEventLine } from '../formats/event-line.ts';
import { encodingOf } from '../formats/lines.ts';
import { nulGate } from '../formats/nul-gate.ts';
import { createTraceTextParser } from '../formats/trace-text.ts';
import { SNIFF_BYTES, sniffKind } from '../formats/sniff.ts';
import type { ChunkParser, LineCount } from '../formats/types.ts';
import { StackTable } from './stack-table.ts';
import { columnSizer } from './column-sizer.ts';
import { TraceColumns } from './trace-columns.ts';
import { linesAfterStop, type TraceColumnsPart } from './trace-columns-data.ts';

/**
 * A large trace text file read on two threads: this one reads it up to a line boundary, another
 * reads the rest into columns of its own (`readTracePart`), and the session absorbs them
 * (Ingest.open's `end(part)`) so the capture is what one reader of the whole file makes, id for
 * id: the same columns, line numbers, offsets and diagnostics (split-trace.property.test.ts
 * holds it to that).
 *
 * The boundary is the start of a plain event line: one reader's state across lines (an open
 * stack's frame block, a print event's continuation lines) ends at such a line whatever came
 * before, so the second reader starting there in its initial state reads every line as the first
 * would. What it cannot know, the absorb puts right: a record whose event line is before the
 * boundary links to its CPU's last event there, a lost marker before any line of its own gets
 * the time before, and lines and offsets are shifted by the first piece's.
 */

/** The rest of a file as read by another reader: its columns and what its reader said. */
export interface TracePart {
  columns: TraceColumnsPart;
  lines: LineCount;
  tracer: string | null;
  /** the most digits after the point of its event times */
  timeDigits?: number;
  cpus: number | null;
  diagnostics: DiagnosticGroup[];
  /** bytes read */
  bytes: number;
}

/** A reader of a file's rest on another thread (the command line's worker_threads, the page's nested worker). */
export interface TracePartReader {
  /** files smaller than this are read on one thread (the second costs more than it gives) */
  readonly minBytes: number;
  /** the share of a file's bytes the other thread reads (the rest from its start here): about 0.5, less where the other thread reads slower */
  readonly share: number;
  /**
   * Starts reading `blob` from byte `start` to its end as trace text named `file`; `onBytes` is
   * told the bytes read so far. Null when it cannot (this reader does not know the blob).
   */
  start(blob: Blob, start: number, file: string, onBytes?: (n: number) => void): { part: Promise<TracePart>; cancel(): void } | null;
}

const C_NL = 0x0a;
const C_TAB = 0x09;
const C_SPACE = 0x20;
/** a split candidate longer than this is passed over (event lines are short) */
const MAX_CANDIDATE = 4096;

/**
 * Where to split a trace text file near `at`: the offset of the first line that starts inside
 * `window` (the file's bytes from `at`) after a newline and is a plain event line, or -1 when
 * the window holds none. Plain: printable ASCII only (no CR but a CRLF's, no NUL, no multi-byte character),
 * not a header, frame, CPU or version line, and read as an event line by the trace reader.
 */
export function findSplit(window: Uint8Array, at: number): number {
  let nl = window.indexOf(C_NL);
  while (nl >= 0) {
    const from = nl + 1;
    const end = window.indexOf(C_NL, from);
    if (end < 0) return -1;
    if (plainEventLine(window, from, end)) return at + from;
    nl = end;
  }
  return -1;
}

function plainEventLine(b: Uint8Array, from: number, end: number): boolean {
  // a CRLF line is read without its CR
  if (end > from && b[end - 1] === 0x0d) end--;
  if (end === from || end - from > MAX_CANDIDATE) return false;
  const c0 = b[from];
  // `#` headers, and at the start of a line `CPU..`, `cpus=`, `version` are not read as events
  if (c0 === 0x23 || c0 === 0x43 || c0 === 0x63 || c0 === 0x76) return false;
  let lead = from;
  while (lead < end && (b[lead] === C_SPACE || b[lead] === C_TAB)) lead++;
  if (lead === end || b[lead] === 0x3d /* = */ || b[lead] === 0x23) return false;
  let s = '';
  for (let i = from; i < end; i++) {
    const c = b[i];
    if ((c < C_SPACE && c !== C_TAB) || c > 0x7e) return false;
    s += String.fromCharCode(c);
  }
  return matchEventLine(s) !== null;
}

/** Bytes looked at, from the middle of a file on, for a line to split it at. */
export const SPLIT_WINDOW = 1 << 20;

/** Whether a file of `size` bytes is split for `parts` (when it is a plain UTF-8 trace text), and where its window starts. */
export function splitWindow(size: number, parts: Pick<TracePartReader, 'minBytes' | 'share'>): number | null {
  if (size < parts.minBytes || size < 4 * SNIFF_BYTES) return null;
  return Math.max(SNIFF_BYTES, Math.floor(size * (1 - Math.min(Math.max(parts.share, 0.05), 0.95))));
}

/** Whether a file whose first SNIFF_BYTES are `head` is one splitPoint splits: a UTF-8 trace text. */
export const splitsAsTrace = (head: Uint8Array): boolean => sniffKind(head) === 'trace_text' && encodingOf(head) === 'utf-8';

/**
 * Where to split a file for `parts`: a line boundary near where the other thread's `share` of it
 * starts (findSplit; the part reader's own share unless told) when it is a large plain UTF-8
 * trace text file, else null. Past the sniffed head, so both reads of the file
 * see it as the same kind. A read that fails here leaves the file to one thread (whose read
 * reports the failure).
 */
export async function splitPoint(blob: Blob, parts: TracePartReader | undefined, share = parts?.share ?? 0.5): Promise<number | null> {
  const size = blob.size;
  const at = parts ? splitWindow(size, { minBytes: parts.minBytes, share }) : null;
  if (at === null) return null;
  try {
    if (!splitsAsTrace(new Uint8Array(await blob.slice(0, SNIFF_BYTES).arrayBuffer()))) return null;
    const s = findSplit(new Uint8Array(await blob.slice(at, Math.min(size, at + SPLIT_WINDOW)).arrayBuffer()), at);
    return s > 0 ? s : null;
  } catch {
    return null;
  }
}

/** Files below this are read on one thread by default: a worker takes tens of milliseconds to start. */
export const PART_MIN_BYTES = 16 << 20;

/**
 * Reads a file's rest (from a split) into columns of its own: what another thread runs. The
 * trace text reader behind the NUL gate, as registry.ts gives it for the kind, imported alone
 * (the other thread loads no other reader).
 */
export function readTracePart(file: string, total = 0): ChunkParser<TracePart> {
  const stacks = new StackTable();
  const columns = new TraceColumns(stacks);
  const log = new DiagnosticLog(file);
  const sink = columns.sink(file, { log, piece: true });
  const parser = nulGate(createTraceTextParser({ file, diagnostics: log }, sink), log);
  // `total`, the part's bytes when known: its columns sized once as it is read
  const sized = columnSizer(columns, total);
  let bytes = 0;
  return {
    push(chunk) {
      bytes += chunk.length;
      parser.push(chunk);
      sized(bytes);
    },
    end() {
      const r = parser.end();
      const lines = linesAfterStop(r.lines, sink.close());
      return {
        columns: { ...columns.exportPart(), state: sink.pieceState() },
        lines,
        tracer: r.tracer,
        cpus: r.cpus,
        timeDigits: r.timeDigits,
        diagnostics: log.exportGroups(),
        bytes,
      };
    },
  };
}

/** Bytes between a part reader's progress reports. */
export const REPORT_EVERY = 4 << 20;

/**
 * What a part reader's thread runs (the command line's worker_threads worker, the page's nested
 * worker): `stream` (the file from the split on) read into a part, `onBytes` told every few MB.
 */
export async function readPartFrom(stream: ReadableStream<Uint8Array>, file: string, onBytes: (n: number) => void, total = 0): Promise<TracePart> {
  const reader = readTracePart(file, total);
  const r = stream.getReader();
  let n = 0;
  let told = 0;
  for (;;) {
    const c = await r.read();
    if (c.done) break;
    reader.push(c.value);
    n += c.value.length;
    if (n - told >= REPORT_EVERY) onBytes((told = n));
  }
  return reader.end();
}

/** The buffers of a part's columns, to transfer rather than copy. */
export function partBuffers(p: TracePart): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const v of Object.values(p.columns)) if (ArrayBuffer.isView(v)) out.push(v.buffer as ArrayBuffer);
  return out;
}
