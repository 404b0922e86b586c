/**
 * systrace / atrace HTML (catapult `systrace`, Android `atrace`): the viewer page with the
 * captured ftrace text inside `<script class="trace-data" type="application/text">` blocks.
 * A page may carry several trace-data blocks; some hold JSON (Chrome trace events, clock sync)
 * or compressed (base64) data instead of ftrace text.
 *
 * Streaming: the page is split into lines; the text of every ftrace trace-data block is
 * forwarded, line by line, to one trace text parser (createTraceTextParser) with the caller's
 * sink. The block kind is decided by its first non-blank text: `{` or `[` is JSON, one long
 * base64 run is compressed data, anything else is ftrace text.
 *
 * Accounting, over the lines of the whole file (lines.total = used + unused):
 *  - a line with ftrace text (a whole line inside the block, or the part of a line after the
 *    opening tag / before `</script>`) counts as the trace parser counts it (used, or unused
 *    with its diagnostic, at the line number in the HTML file);
 *  - a line with text of a JSON or compressed trace-data block is unused: the data is not read,
 *    and each such block gets one diagnostic;
 *  - every other line is HTML markup, script or style of the viewer: used (it is what the file
 *    is for, not something that was lost).
 * Event and stack record `lineNo`s and diagnostics name lines of the HTML file.
 */
import { DiagnosticLog } from './diagnostics.ts';
import { LineSplitter, TOO_LONG } from './lines.ts';
import { createTraceTextParser } from './trace-text.ts';
import type { ChunkParser, ParseContext, TraceSink, TraceTextResult } from './types.ts';

const CLASS_RE = /\bclass\s*=\s*["']?trace-data(?![\w])/i;
const isWord = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/**
 * The next `<script ... class=trace-data ...>` tag in `line` from `pos` (what
 * `/<script\b[^>]*\bclass\s*=\s*["']?trace-data\b[^>]*>/i` finds, which backtracks over
 * every `<script` of a long line with no `>`): every `<script` before one `>` shares that tag's
 * end, and the first of them matches if any does, so each stretch is looked at once.
 */
export function findTraceDataTag(line: string, pos: number): { index: number; end: number } | null {
  for (let i = line.indexOf('<', pos); i >= 0; i = line.indexOf('<', i + 1)) {
    if (!isScriptOpen(line, i)) continue;
    const gt = line.indexOf('>', i + 7);
    if (gt < 0) return null; // no later <script has a `>` either
    if (CLASS_RE.test(line.slice(i + 7, gt))) return { index: i, end: gt + 1 };
    i = gt; // the other <script before this `>` cannot match where the first did not
  }
  return null;
}

/** `<script` (any case) at `i`, not followed by a word character */
function isScriptOpen(line: string, i: number): boolean {
  const t = 'script';
  for (let k = 0; k < 6; k++) if ((line.charCodeAt(i + 1 + k) | 0x20) !== t.charCodeAt(k)) return false;
  return !isWord(line.charCodeAt(i + 7));
}
const CLOSE_RE = /<\/script/gi;
const BASE64_RE = /^[A-Za-z0-9+/=]{64,}$/;
const FORWARD_BATCH = 1 << 16;

type BlockKind = 'pending' | 'ftrace' | 'json' | 'compressed';

/** Diagnostics of the inner trace parser, moved to the HTML file's line numbers. */
class MappedLog extends DiagnosticLog {
  constructor(
    private readonly target: DiagnosticLog,
    private readonly map: (line: number) => number,
  ) {
    super(target.file);
  }
  override atLine(line: number, message: string): void {
    this.target.atLine(this.map(line), message);
  }
  override atOffset(offset: number, message: string): void {
    this.target.atOffset(offset, message);
  }
  override forFile(message: string): void {
    this.target.forFile(message);
  }
}

export function createSystraceHtmlParser(ctx: ParseContext, sink: TraceSink): ChunkParser<TraceTextResult> {
  const diag = ctx.diagnostics;
  // inner line k -> outer line k + delta, for k from segInner[i] up to the next segment
  const segInner: number[] = [];
  const segDelta: number[] = [];
  const toOuter = (k: number): number => {
    let lo = 0;
    let hi = segInner.length - 1;
    if (hi < 0) return k;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (segInner[mid] <= k) lo = mid;
      else hi = mid - 1;
    }
    return k + segDelta[lo];
  };
  const mappedSink: TraceSink = {
    event: (e) => sink.event({ ...e, lineNo: toOuter(e.lineNo) }),
    stackRecord: (r) => sink.stackRecord({ ...r, lineNo: toOuter(r.lineNo) }),
    lost: (l) => sink.lost({ ...l, lineNo: toOuter(l.lineNo) }),
  };
  const inner = createTraceTextParser({ file: ctx.file, diagnostics: new MappedLog(diag, toOuter) }, mappedSink);
  const enc = new TextEncoder();
  let batch = '';
  let innerLines = 0;
  let forwardedOuter = 0;

  let inside = false;
  let kind: BlockKind = 'pending';
  let blockLine = 0;
  let blockDataLines = 0;
  let blocks = 0;
  let ftraceBlocks = 0;
  let dataUnused = 0;

  const forward = (text: string, lineNo: number) => {
    const k = ++innerLines;
    const delta = lineNo - k;
    if (segDelta.length === 0 || segDelta[segDelta.length - 1] !== delta) {
      segInner.push(k);
      segDelta.push(delta);
    }
    batch += text + '\n';
    if (batch.length >= FORWARD_BATCH) flushBatch();
  };
  const flushBatch = () => {
    if (batch) inner.push(enc.encode(batch));
    batch = '';
  };

  const closeBlock = () => {
    if (kind === 'json' || kind === 'compressed') {
      const what = kind === 'json' ? 'JSON (Chrome trace events), not ftrace text' : 'compressed (base64) data';
      diag.atLine(blockLine, `trace-data block holds ${what}: its ${blockDataLines} lines are not read`);
    }
    inside = false;
  };

  const onLine = (line: string, lineNo: number) => {
    let pos = 0;
    let fwd = false; // this line carries ftrace text
    let data = false; // this line carries text of a JSON or compressed block
    let countedInBlock = false;
    for (;;) {
      if (!inside) {
        const m = findTraceDataTag(line, pos);
        if (!m) break;
        inside = true;
        kind = 'pending';
        blockLine = lineNo;
        blockDataLines = 0;
        countedInBlock = false;
        blocks++;
        pos = m.end;
        continue;
      }
      CLOSE_RE.lastIndex = pos;
      const c = CLOSE_RE.exec(line);
      const piece = line.slice(pos, c ? c.index : line.length);
      const whole = pos === 0 && !c;
      const blank = piece.trim() === '';
      if (kind === 'pending' && !blank) {
        const t = piece.trim();
        kind = t[0] === '{' || t[0] === '[' ? 'json' : BASE64_RE.test(t) ? 'compressed' : 'ftrace';
        if (kind === 'ftrace') ftraceBlocks++;
      }
      if (kind === 'ftrace' && (whole || !blank)) {
        // a second piece on one line (two blocks on a line) is read; the line counts once
        forward(piece, lineNo);
        fwd = true;
      } else if (kind !== 'ftrace' && kind !== 'pending' && !blank) {
        data = true;
        if (!countedInBlock) blockDataLines++;
        countedInBlock = true;
      }
      if (!c) break;
      closeBlock();
      pos = c.index + c[0].length;
    }
    if (fwd) forwardedOuter++;
    else if (data) dataUnused++;
  };

  const splitter = new LineSplitter(onLine, undefined, (lineNo) => {
    // too long to be read: unused, whatever block it was in
    dataUnused++;
    diag.atLine(lineNo, TOO_LONG);
  });

  return {
    push(chunk: Uint8Array) {
      splitter.push(chunk);
    },
    end(): TraceTextResult {
      const total = splitter.end();
      if (inside) {
        diag.atLine(blockLine, 'trace-data block is not closed (no </script> before the end of the file)');
        closeBlock();
      }
      flushBatch();
      const r = inner.end();
      if (blocks === 0) diag.forFile('no <script class="trace-data"> block: not a systrace HTML file, nothing read');
      else if (ftraceBlocks === 0) diag.forFile(`none of the ${blocks} trace-data blocks holds ftrace text: nothing read`);
      // lines with ftrace text count as the trace parser counted them (a line carrying two
      // pieces counts once), data lines of other blocks are unused, every other line is markup
      const unused = Math.min(total, dataUnused + Math.min(r.lines.unused, forwardedOuter));
      return {
        lines: { total, used: total - unused, unused },
        tracer: r.tracer,
        cpus: r.cpus,
      };
    },
  };
}
