import { concatBytes } from '../base/bytes.ts';
/** The text encoding a byte-order mark announces; UTF-8 without one. */
export function encodingOf(head: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' {
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

/** Bytes decoded at once. */
const DECODE_PIECE = 1 << 16;

/** The longest line any reader looks at; a longer one is reported and skipped, never parsed. */
export const MAX_LINE = 65536;
export const TOO_LONG = `line longer than ${MAX_LINE.toLocaleString('en-US')} characters: not read`;

/**
 * Splits a stream of byte chunks into lines without ever holding the whole input.
 * A line longer than MAX_LINE characters is not held either: `onLong(lineNo, length)` is told
 * about it (it still counts as a line) and its text is dropped as it streams past.
 * Decodes UTF-8 (or UTF-16 LE/BE after their byte-order mark) across chunk boundaries, strips a
 * trailing CR (CRLF files) and the byte-order mark.
 */
export class LineSplitter {
  private decoder: TextDecoder | null = null;
  /** bytes held until the first two decide the encoding */
  private head: Uint8Array | null = null;
  private rest = '';
  private lineNo = 0;
  private first = true;
  /** characters of the current line dropped because it is too long (0: not skipping) */
  private skipped = 0;

  /**
   * `onRange`, if given, is offered each line that lies inside one decoded chunk before it is
   * sliced out: the line is `text` from `start` to `end` (exclusive, trailing CR excluded);
   * `clean` says it holds no CR, U+2028 or U+2029. When it returns true the line is done (it
   * still counts); when false, `onLine` gets the line as usual.
   */
  constructor(
    private readonly onLine: (line: string, lineNo: number) => void,
    private readonly onRange?: (text: string, start: number, end: number, lineNo: number, clean: boolean) => boolean,
    private readonly onLong: (lineNo: number, length: number) => void = () => {},
  ) {}

  push(chunk: Uint8Array): void {
    if (!this.decoder) {
      const head = this.head ? concatBytes([this.head, chunk]) : chunk;
      if (head.length < 2) {
        this.head = head.slice();
        return;
      }
      this.head = null;
      this.decoder = new TextDecoder(encodingOf(head));
      chunk = head;
    }
    // in pieces: Node's streaming decoder took 4-6x the time per byte on chunks of 128-256 KB
    if (chunk.length <= DECODE_PIECE) this.decode(chunk);
    else for (let i = 0; i < chunk.length; i += DECODE_PIECE) this.decode(chunk.subarray(i, i + DECODE_PIECE));
  }

  private decode(chunk: Uint8Array): void {
    let text = this.decoder!.decode(chunk, { stream: true });
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    this.feed(text);
  }

  /** Flushes the last line (one without a trailing newline). Returns the number of lines. */
  end(): number {
    if (!this.decoder) {
      this.decoder = new TextDecoder('utf-8');
      if (this.head) this.decode(this.head);
    }
    const tail = this.decoder.decode();
    if (tail) this.feed(tail);
    if (this.skipped > 0) this.long(this.skipped);
    else if (this.rest.length > 0) {
      this.emit(this.rest);
      this.rest = '';
    }
    return this.lineNo;
  }

  private feed(text: string): void {
    let start = 0;
    let nl = text.indexOf('\n');
    if (nl < 0) {
      if (this.skipped > 0) this.skipped += text.length;
      else if (this.rest.length + text.length > MAX_LINE) {
        this.skipped = this.rest.length + text.length;
        this.rest = '';
      } else this.rest += text;
      return;
    }
    // first line joins the remainder of the previous chunk
    if (this.skipped > 0) this.long(this.skipped + nl);
    else if (this.rest.length + nl > MAX_LINE) this.long(this.rest.length + nl);
    else this.emit(this.rest + text.slice(0, nl));
    this.rest = '';
    start = nl + 1;
    const onRange = this.onRange;
    if (onRange) {
      // next CR, U+2028, U+2029 at or after `start` (-1: none left); -2: not searched yet
      let cr = -2;
      let ls = -2;
      let ps = -2;
      while ((nl = text.indexOf('\n', start)) >= 0) {
        let end = nl;
        if (end > start && text.charCodeAt(end - 1) === 13) end--;
        if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
        if (ls !== -1 && ls < start) ls = text.indexOf('\u2028', start);
        if (ps !== -1 && ps < start) ps = text.indexOf('\u2029', start);
        const clean = (cr < 0 || cr >= end) && (ls < 0 || ls >= end) && (ps < 0 || ps >= end);
        if (nl - start > MAX_LINE) this.long(nl - start);
        else if (onRange(text, start, end, this.lineNo + 1, clean)) this.lineNo++;
        else this.emit(text.slice(start, nl));
        start = nl + 1;
      }
    } else {
      while ((nl = text.indexOf('\n', start)) >= 0) {
        if (nl - start > MAX_LINE) this.long(nl - start);
        else this.emit(text.slice(start, nl));
        start = nl + 1;
      }
    }
    if (text.length - start > MAX_LINE) this.skipped = text.length - start;
    else this.rest = text.slice(start);
  }

  private long(length: number): void {
    this.skipped = 0;
    this.onLong(++this.lineNo, length);
  }

  private emit(line: string): void {
    const n = line.length;
    if (n > 0 && line.charCodeAt(n - 1) === 13) line = line.slice(0, n - 1);
    this.onLine(line, ++this.lineNo);
  }
}

