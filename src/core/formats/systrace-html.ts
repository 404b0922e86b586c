/**
 * systrace / atrace HTML (catapult `systrace`, Android `atrace`): the viewer page with the
 * captured ftrace text inside it, in either of the two shapes systrace wrote:
 *  - `<script class="trace-data" type="application/text">` blocks (systrace from 2013 on). A page
 *    may carry several; some hold JSON (Chrome trace events, clock sync) or compressed (base64)
 *    data instead of ftrace text. The block kind is decided by its first non-blank text: `{` or
 *    `[` is JSON, one long base64 run is compressed data, anything else is ftrace text.
 *  - the legacy page (systrace-legacy.py, trappy's `trace_legacy_systrace.html`, catapult's
 *    `android_systrace.html`): a `<script>` whose line `var linuxPerfData = "\` opens a
 *    JavaScript string holding the ftrace text, one trace line per line ending in `\n\` (an
 *    escaped newline, then a line continuation), closed by `\n";`. The text may also be one string
 *    with `\n` escapes on a line. The string is unescaped in one pass, as JavaScript reads it
 *    (`\n`, `\t`, `\r`, `\b`, `\f`, `\v`, `\0`, `\\`, `\"`, `\'`, `\xNN`, `\uNNNN`, `\u{N}`, a
 *    backslash before the line end), with three allowances for what the legacy writer wrote (it
 *    escaped nothing but the newlines): a backslash before any other character is kept with it; a
 *    quote ends the string only when nothing but `;` and blanks follows it on its line (else it is
 *    text); a line that ends without the continuation (trappy's copy) ends a trace line, as trappy
 *    and catapult's importer read it (one diagnostic says so). `</script` ends the string as it
 *    ends the script for a browser.
 *
 * Streaming: the page is split into lines; the ftrace text (of every ftrace trace-data block, and
 * of every linuxPerfData string, unescaped) is forwarded, trace line by trace line, to one trace
 * text parser (createTraceTextParser) with the caller's sink.
 *
 * Accounting, over the lines of the whole file (lines.total = used + unused):
 *  - a file from which no ftrace text was read (no ftrace trace-data block, no linuxPerfData
 *    string) has every line unused, under one diagnostic for the file: its events were not read;
 *  - a line with ftrace text is unused when a trace line with text from it is unused for the
 *    trace parser (with its diagnostic, at the line number in the HTML file), used otherwise; a
 *    line holding many trace lines (a one-line string) counts once;
 *  - a line with text of a JSON or compressed trace-data block is unused: the data is not read,
 *    and each such block gets one diagnostic;
 *  - a line too long to be read is unused (its diagnostic from lines.ts);
 *  - every other line is HTML markup, script or style of the viewer: used (it is what the file
 *    is for, not something that was lost).
 * Event and stack record `lineNo`s and diagnostics name lines of the HTML file (a trace line
 * spanning several, by line continuations, the first of them).
 */
import { DiagnosticLog } from './diagnostics.ts';
import { LineSplitter, TOO_LONG } from './lines.ts';
import { createTraceTextParser } from './trace-text.ts';
import type { ChunkParser, ParseContext, TraceSink, TraceTextResult } from './types.ts';

const CLASS_RE = /\bclass\s*=\s*["']?trace-data(?![\w])/i;
const isWord = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isBlank = (c: number) => c === 32 || c === 9;
const hexValue = (c: number) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1);

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

const MARKER = 'linuxPerfData';

/**
 * The next legacy `var linuxPerfData = "` in `line` from `pos`: `var` first on the line (after
 * blanks) or right after a tag's `>`, then the name, `=` and a quote, blanks between. `index` is
 * where `var` starts, `end` just after the quote. Linear: each hit of the name looks back over the
 * blanks and `var` before it and forward over the blanks after it, stretches no other hit shares.
 */
export function findLinuxPerfData(line: string, pos: number): { index: number; end: number; quote: number } | null {
  for (let h = line.indexOf(MARKER, pos); h >= 0; h = line.indexOf(MARKER, h + MARKER.length)) {
    // `var` and at least one blank before the name
    let b = h;
    while (b > pos && isBlank(line.charCodeAt(b - 1))) b--;
    if (b === h || b - 3 < pos || !line.startsWith('var', b - 3)) continue;
    const v = b - 3;
    // before `var`: only blanks to the line start, or a tag's `>`
    let a = v;
    while (a > 0 && isBlank(line.charCodeAt(a - 1))) a--;
    if (a > 0 && line.charCodeAt(a - 1) !== 62 /* > */) continue;
    let i = h + MARKER.length;
    while (isBlank(line.charCodeAt(i))) i++;
    if (line.charCodeAt(i) !== 61 /* = */ || line.charCodeAt(i + 1) === 61) continue;
    i++;
    while (isBlank(line.charCodeAt(i))) i++;
    const q = line.charCodeAt(i);
    if (q !== 34 && q !== 39) continue;
    return { index: v, end: i + 1, quote: q };
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

/** Diagnostics of the legacy string (stable texts: they group in the DiagnosticLog). */
export const LEGACY = {
  lineBreak: 'linuxPerfData string: a line ends without the `\\n\\` continuation, read as the end of a trace line (as trappy and catapult read it)',
  notClosed: 'linuxPerfData string not closed before </script>: read up to it',
  notClosedAtEnd: 'linuxPerfData string not closed at the end of the file: read up to it',
  badEscape: 'linuxPerfData string: malformed \\x or \\u escape, kept as written',
} as const;

type BlockKind = 'pending' | 'ftrace' | 'json' | 'compressed';

/** Diagnostics of the inner trace parser, moved to the HTML file's line numbers (each is an unused line: `onLine`). */
class MappedLog extends DiagnosticLog {
  constructor(
    private readonly target: DiagnosticLog,
    private readonly map: (line: number) => number,
    private readonly onLine: (line: number) => void,
  ) {
    super(target.file);
  }
  override atLine(line: number, message: string): void {
    this.onLine(line);
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
  // inner (trace) line k -> the HTML line it starts on: segOuter[i] + segSlope[i] * (k - segInner[i])
  // for k from segInner[i] up to the next segment (slope 1: a line each, 0: many on one line)
  const segInner: number[] = [];
  const segOuter: number[] = [];
  const segSlope: number[] = [];
  /** inner lines that run on over several HTML lines (line continuations): the last of them */
  const spanEnd = new Map<number, number>();
  const toOuter = (k: number): number => {
    let lo = 0;
    let hi = segInner.length - 1;
    if (hi < 0) return k;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (segInner[mid] <= k) lo = mid;
      else hi = mid - 1;
    }
    return segOuter[lo] + segSlope[lo] * (k - segInner[lo]);
  };
  const addSegment = (k: number, outer: number) => {
    const last = segInner.length - 1;
    if (last >= 0) {
      const d = k - segInner[last];
      if (segOuter[last] + segSlope[last] * d === outer) return;
      if (d === 1 && segOuter[last] === outer) {
        segSlope[last] = 0;
        return;
      }
    }
    segInner.push(k);
    segOuter.push(outer);
    segSlope.push(1);
  };
  // HTML lines made unused by the trace parser: the ones its unused lines start on and span
  // (reported in order, so a line is counted once by counting past the last one counted)
  let unusedOuter = 0;
  let lastUnused = 0;
  const innerUnused = (k: number) => {
    const from = Math.max(toOuter(k), lastUnused + 1);
    const to = spanEnd.get(k) ?? toOuter(k);
    if (to >= from) unusedOuter += to - from + 1;
    if (to > lastUnused) lastUnused = to;
  };
  const mappedSink: TraceSink = {
    event: (e) => sink.event({ ...e, lineNo: toOuter(e.lineNo) }),
    stackRecord: (r) => sink.stackRecord({ ...r, lineNo: toOuter(r.lineNo) }),
    lost: (l) => sink.lost({ ...l, lineNo: toOuter(l.lineNo) }),
  };
  const inner = createTraceTextParser({ file: ctx.file, diagnostics: new MappedLog(diag, toOuter, innerUnused) }, mappedSink);
  const enc = new TextEncoder();
  let batch = '';
  let innerLines = 0;

  let inside = false;
  let kind: BlockKind = 'pending';
  let blockLine = 0;
  let blockDataLines = 0;
  let blocks = 0;
  let ftraceBlocks = 0;
  let dataUnused = 0;

  // the legacy string
  let inString = false;
  let quote = 34;
  let legacyStrings = 0;
  let legacyLine = 0;
  /** the trace line being unescaped, and the HTML line its text starts on (0: none yet) */
  let acc = '';
  let accStart = 0;
  let notedBreak = false;

  /** One trace line of text from HTML lines `start`..`end`. */
  const forward = (text: string, start: number, end: number) => {
    const k = ++innerLines;
    addSegment(k, start);
    if (end > start) spanEnd.set(k, end);
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

  /** The unescaped trace line ends at HTML line `lineNo`. */
  const endTraceLine = (lineNo: number) => {
    forward(acc, accStart || lineNo, lineNo);
    acc = '';
    accStart = 0;
  };
  const addText = (s: string, lineNo: number) => {
    if (accStart === 0) accStart = lineNo;
    acc += s;
  };
  /** The string ends (closed, or cut by </script or the end of the file): its last line, if it has text. */
  const endString = (lineNo: number, whitespaceIsMarkup: boolean) => {
    inString = false;
    if (accStart !== 0 && !(whitespaceIsMarkup && acc.trim() === '')) endTraceLine(lineNo);
    acc = '';
    accStart = 0;
  };

  /**
   * Reads the string from `line[from]` on: the index just after its closing quote, or -1 when
   * it runs on past this line (or was cut by `</script`, whose index is returned then as well:
   * the caller goes on there outside the string).
   */
  const scanString = (line: string, from: number, lineNo: number): number => {
    const close = closeFrom(line, from);
    const stop = close >= 0 ? close : line.length;
    let i = from;
    let run = from;
    let continued = false;
    while (i < stop) {
      const c = line.charCodeAt(i);
      if (c === 92 /* \ */) {
        if (i + 1 >= stop) {
          if (stop === line.length) {
            // a line continuation
            if (i > run) addText(line.slice(run, i), lineNo);
            run = i = line.length;
            continued = true;
            break;
          }
          i++; // a backslash right before </script: text
          continue;
        }
        if (i > run) addText(line.slice(run, i), lineNo);
        const e = line.charCodeAt(i + 1);
        i += 2;
        switch (e) {
          case 110 /* n */:
            endTraceLine(lineNo);
            break;
          case 116 /* t */:
            addText('\t', lineNo);
            break;
          case 114 /* r */:
            addText('\r', lineNo);
            break;
          case 98 /* b */:
            addText('\b', lineNo);
            break;
          case 102 /* f */:
            addText('\f', lineNo);
            break;
          case 118 /* v */:
            addText('\v', lineNo);
            break;
          case 92:
          case 34:
          case 39:
            addText(String.fromCharCode(e), lineNo);
            break;
          case 0x2028:
          case 0x2029:
            break; // a line continuation as well
          case 48 /* 0 */: {
            const d = line.charCodeAt(i);
            if (d >= 48 && d <= 57) addText('\\0', lineNo);
            else addText('\0', lineNo);
            break;
          }
          case 120 /* x */:
          case 117 /* u */: {
            const r = e === 120 ? hexEscape(line, i, 2, stop) : unicodeEscape(line, i, stop);
            if (r < 0) {
              addText(e === 120 ? '\\x' : '\\u', lineNo);
              diag.atLine(lineNo, LEGACY.badEscape);
              break;
            }
            i = escEnd;
            // a newline by another escape ends the trace line as `\n` does (the trace parser splits there)
            if (r === 10) endTraceLine(lineNo);
            else addText(String.fromCodePoint(r), lineNo);
            break;
          }
          default:
            // not an escape JavaScript defines beyond dropping the backslash: the legacy writer
            // wrote the trace's own backslash here, kept with its character
            addText(line.slice(i - 2, i), lineNo);
        }
        run = i;
        continue;
      }
      if (c === quote && closesHere(line, i + 1, stop)) {
        if (i > run) addText(line.slice(run, i), lineNo);
        endString(lineNo, false);
        return i + 1;
      }
      i++;
    }
    if (i > run) addText(line.slice(run, i), lineNo);
    if (close >= 0) {
      // HTML ends the script at </script, whatever the JavaScript in it
      diag.atLine(lineNo, LEGACY.notClosed);
      endString(lineNo, true);
      return close;
    }
    if (!continued) {
      if (!notedBreak) diag.atLine(lineNo, LEGACY.lineBreak);
      notedBreak = true;
      endTraceLine(lineNo);
    }
    return -1;
  };

  // per line, what the searches found (from a position at or before the current one): every
  // later search from further on would find the same, so a line is scanned once for each
  let tagAt: { index: number; end: number } | null | undefined;
  let stringAt: ReturnType<typeof findLinuxPerfData> | undefined;
  let closeAt: number | undefined;
  /** The index of the next `</script` at or after `pos` (-1: none). */
  const closeFrom = (line: string, pos: number): number => {
    if (closeAt === undefined || (closeAt >= 0 && closeAt < pos)) {
      CLOSE_RE.lastIndex = pos;
      const c = CLOSE_RE.exec(line);
      closeAt = c ? c.index : -1;
    }
    return closeAt;
  };

  const onLine = (line: string, lineNo: number) => {
    tagAt = undefined;
    stringAt = undefined;
    closeAt = undefined;
    let pos = 0;
    let fwd = false; // this line carries ftrace text
    let data = false; // this line carries text of a JSON or compressed block
    let countedInBlock = false;
    for (;;) {
      if (inString) {
        if (pos < line.length) fwd = true;
        const end = scanString(line, pos, lineNo);
        if (end < 0 || inString) break;
        pos = end;
        continue;
      }
      if (!inside) {
        if (tagAt === undefined || (tagAt !== null && tagAt.index < pos)) tagAt = findTraceDataTag(line, pos);
        if (stringAt === undefined || (stringAt !== null && stringAt.index < pos)) stringAt = findLinuxPerfData(line, pos);
        const m = tagAt;
        const s = stringAt;
        if (s && (!m || s.index < m.index)) {
          inString = true;
          quote = s.quote;
          legacyStrings++;
          legacyLine = lineNo;
          acc = '';
          accStart = 0;
          pos = s.end;
          continue;
        }
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
      const c = closeFrom(line, pos);
      const piece = line.slice(pos, c >= 0 ? c : line.length);
      const whole = pos === 0 && c < 0;
      const blank = piece.trim() === '';
      if (kind === 'pending' && !blank) {
        const t = piece.trim();
        kind = t[0] === '{' || t[0] === '[' ? 'json' : BASE64_RE.test(t) ? 'compressed' : 'ftrace';
        if (kind === 'ftrace') ftraceBlocks++;
      }
      if (kind === 'ftrace' && (whole || !blank)) {
        // a second piece on one line (two blocks on a line) is read; the line counts once
        forward(piece, lineNo, lineNo);
        fwd = true;
      } else if (kind !== 'ftrace' && kind !== 'pending' && !blank) {
        data = true;
        if (!countedInBlock) blockDataLines++;
        countedInBlock = true;
      }
      if (c < 0) break;
      closeBlock();
      pos = c + 8; // `</script`
    }
    if (!fwd && data) dataUnused++;
  };

  const splitter = new LineSplitter(onLine, undefined, (lineNo) => {
    // too long to be read: unused, whatever block or string it was in (a string's trace line
    // being read ends before it)
    if (inString && accStart !== 0) endTraceLine(lineNo - 1);
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
      if (inString) {
        diag.atLine(legacyLine, LEGACY.notClosedAtEnd);
        endString(total, true);
      }
      flushBatch();
      const r = inner.end();
      const read = ftraceBlocks > 0 || legacyStrings > 0;
      if (blocks === 0 && legacyStrings === 0) {
        diag.forFile(
          `no <script class="trace-data"> block and no linuxPerfData string: not a systrace HTML file, nothing read (its ${total} lines are not used)`,
        );
      } else if (!read) diag.forFile(`none of the ${blocks} trace-data blocks holds ftrace text: nothing read (the file's ${total} lines are not used)`);
      // a file whose trace was not read uses none of its lines; else lines with ftrace text count
      // as the trace parser counted their trace lines, data lines of other blocks are unused,
      // every other line is markup
      const unused = read ? Math.min(total, dataUnused + unusedOuter) : total;
      return {
        lines: { total, used: total - unused, unused },
        tracer: r.tracer,
        cpus: r.cpus,
      };
    },
  };
}

/** Where the last escape read by hexEscape / unicodeEscape ends. */
let escEnd = 0;

/** `count` hex digits at `i` (before `stop`) as a number, or -1; escEnd after them. */
function hexEscape(line: string, i: number, count: number, stop: number): number {
  if (i + count > stop) return -1;
  let v = 0;
  for (let k = 0; k < count; k++) {
    const h = hexValue(line.charCodeAt(i + k));
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  escEnd = i + count;
  return v;
}

/** After `\u`: 4 hex digits, or `{` 1 to 6 hex digits `}` up to U+10FFFF; -1 if neither; escEnd after it. */
function unicodeEscape(line: string, i: number, stop: number): number {
  if (line.charCodeAt(i) !== 123 /* { */) return hexEscape(line, i, 4, stop);
  let v = 0;
  let k = i + 1;
  for (; k < stop && k < i + 8; k++) {
    const c = line.charCodeAt(k);
    if (c === 125 /* } */) break;
    const h = hexValue(c);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  if (k === i + 1 || k >= stop || line.charCodeAt(k) !== 125 || v > 0x10ffff) return -1;
  escEnd = k + 1;
  return v;
}

/** After a quote at `i - 1`: only blanks, at most one `;`, and blanks up to `stop` (the line end or `</script`). */
function closesHere(line: string, i: number, stop: number): boolean {
  while (i < stop && isBlank(line.charCodeAt(i))) i++;
  if (i < stop && line.charCodeAt(i) === 59 /* ; */) i++;
  while (i < stop && isBlank(line.charCodeAt(i))) i++;
  return i === stop;
}
