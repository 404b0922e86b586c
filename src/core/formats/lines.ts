import { concatBytes } from '../base/bytes.ts';
/** The text encoding a byte-order mark announces; UTF-8 without one. */
export function encodingOf(head: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' {
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

/**
 * The first `byte` in `b` at or after `from`, -1 for none: Node's Buffer search (memchr, several
 * times the typed array's own in Node 20 on lines of 100 bytes) where there is one, else the
 * typed array's. Either takes any Uint8Array.
 */
const memchr = (globalThis as { Buffer?: { prototype: { indexOf: (this: Uint8Array, v: number, from?: number) => number } } }).Buffer?.prototype.indexOf;
export const indexOfByte: (b: Uint8Array, byte: number, from?: number) => number =
  typeof memchr === 'function' ? (b, byte, from) => memchr.call(b, byte, from) : (b, byte, from) => b.indexOf(byte, from);

/** ByteLines finds lines with memchr where the host has it (Node), else with scanLine (a browser) */
let linesByMemchr = typeof memchr === 'function';

/** Lines found the browser's way (false) or Node's (true, where memchr exists), so tests in Node check both; returns the way before. */
export function setLinesByMemchrForTests(on: boolean): boolean {
  const was = linesByMemchr;
  linesByMemchr = on && typeof memchr === 'function';
  return was;
}

/**
 * Where there is no memchr (a browser): the next newline at or after `from` (-1: none) in one
 * loop of JS, noting in `odd` whether a CR before the line's end or a 0xE2 lies before it. The
 * typed array's own search costs a call per line and as much per byte as a loop, and ByteLines
 * needs three of them (LF, CR, 0xE2): Chromium, 100 MB of ~110-byte lines, 200 ms against 70 for
 * a loop over bytes. `words` is `b`'s whole aligned 32-bit words from byte `head`: a word whose
 * four bytes all lie in 14..0x7F (plain text: ((x - 0x0e0e0e0e) | x) has no high bit, which is
 * exact for "some byte is below 14 or above 0x7F") is passed in one step (28 ms for those 100 MB).
 */
function scanLine(b: Uint8Array, from: number, odd: { v: boolean; nul: boolean }, words: Int32Array, head: number): number {
  const n = b.length;
  const wn = words.length;
  let crs = 0;
  let lastCr = -1;
  let e2 = false;
  let i = from;
  while (i < n) {
    if (i >= head && ((i - head) & 3) === 0) {
      let w = (i - head) >> 2;
      while (w < wn) {
        const x = words[w];
        if ((((x - 0x0e0e0e0e) | x) & -0x7f7f7f80) !== 0) break;
        w++;
      }
      i = head + (w << 2);
      if (i >= n) break;
    }
    const c = b[i];
    // one compare for the bytes of text (14..0xE1); the rest sorted out here
    if ((c - 14) >>> 0 >= 0xe2 - 14) {
      if (c === 10) {
        // a CR right before the newline ends the line with it; any other CR, or a 0xE2, makes it odd
        odd.v = e2 || crs > 1 || (crs === 1 && lastCr !== i - 1);
        return i;
      }
      if (c === 13) {
        crs++;
        lastCr = i;
      } else if (c === 0xe2) e2 = true;
      else if (c === 0) odd.nul = true;
    }
    i++;
  }
  return -1;
}

const NO_WORDS = new Int32Array(0);

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
  /** UTF-8 with `onBytes`: the lines are cut from the bytes (ByteLines), none decoded but those `onBytes` leaves */
  private bytes: ByteLines | null = null;
  /** ChunkParser.nulFreeFrom of the last push: ByteLines' when it read that chunk as it came */
  private nulFrom = Infinity;

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
    private readonly onBytes?: (bytes: Uint8Array, start: number, end: number, lineNo: number) => boolean,
  ) {}

  /** See ChunkParser.scansEveryByte: ByteLines does where there is no memchr (a browser), once it reads the chunks as they come. */
  scansEveryByte(): boolean {
    return this.bytes !== null && !linesByMemchr;
  }

  /** See ChunkParser.nulFreeFrom: ByteLines' answer for the chunk it last read as it came, else none. */
  nulFreeFrom(): number {
    return this.nulFrom;
  }

  push(chunk: Uint8Array): void {
    if (this.bytes) {
      this.bytes.push(chunk);
      this.nulFrom = this.bytes.nulFrom;
      return;
    }
    this.nulFrom = Infinity;
    if (!this.decoder) {
      const head = this.head ? concatBytes([this.head, chunk]) : chunk;
      if (head.length < 2) {
        this.head = head.slice();
        return;
      }
      this.head = null;
      const encoding = encodingOf(head);
      if (encoding === 'utf-8' && this.onBytes) {
        this.bytes = new ByteLines(
          this.onBytes,
          (text, lineNo) => this.text(text, lineNo),
          (lineNo, length) => this.onLong(lineNo, length),
        );
        this.bytes.push(head);
        return;
      }
      this.decoder = new TextDecoder(encoding);
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
    if (this.bytes) return this.bytes.end();
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

  /**
   * A whole line decoded by ByteLines, `lineNo` its number: offered to `onRange` as a line of a
   * decoded chunk would be (CR, U+2028 and U+2029 looked for), else to `onLine`.
   */
  private text(text: string, lineNo: number): void {
    this.lineNo = lineNo - 1;
    let end = text.length;
    if (end > 0 && text.charCodeAt(end - 1) === 13) end--;
    const onRange = this.onRange;
    if (onRange) {
      const cr = text.indexOf('\r');
      const clean = (cr < 0 || cr >= end) && text.indexOf('\u2028') < 0 && text.indexOf('\u2029') < 0;
      if (onRange(text, 0, end, lineNo, clean)) {
        this.lineNo = lineNo;
        return;
      }
    }
    this.emit(text);
  }

  private emit(line: string): void {
    const n = line.length;
    if (n > 0 && line.charCodeAt(n - 1) === 13) line = line.slice(0, n - 1);
    this.onLine(line, ++this.lineNo);
  }
}

/** Bytes a UTF-16 code unit takes at most in UTF-8 (a replacement character stands for up to 3 bytes too). */
const MAX_BYTES_PER_UNIT = 3;

/**
 * Lines of UTF-8 cut from the bytes, for a reader that reads most of its lines from them
 * (LineSplitter's `onBytes`): a line is found with a native search for its newline and handed
 * over as `bytes[start, end)` (trailing CR excluded) when it holds no CR and no 0xE2 byte (so no
 * U+2028 or U+2029); that line, a line `onBytes` does not take, and the file's first line (its
 * byte-order marks) are decoded whole and given to `onText`, as LineSplitter's decoded chunks
 * would have given them. A newline byte is never inside a character, so a line decoded alone is
 * the same text as in the whole file decoded. A line longer than MAX_LINE characters goes to
 * `onLong`, never held past MAX_BYTES_PER_UNIT bytes a character.
 */
class ByteLines {
  private lineNo = 0;
  /** the first line is yet to come (its byte-order marks are dropped) */
  private first = true;
  /** the line begun in an earlier chunk: its pieces (copies) and their bytes */
  private carry: Uint8Array[] = [];
  private carried = 0;
  /** the carried line is too long whatever it holds: its bytes are counted, not kept */
  private skipping = false;
  /** scanLine's answer, and whether it met a 0 byte in this chunk */
  private readonly odd = { v: false, nul: false };
  /** the last chunk's bytes from here on were each looked at by scanLine, none a 0 (its length: vouches for nothing) */
  nulFrom = 0;
  /** decodes a line after the first: a U+FEFF there is a character, as in a stream decoded whole */
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });

  constructor(
    private readonly onBytes: (bytes: Uint8Array, start: number, end: number, lineNo: number) => boolean,
    private readonly onText: (text: string, lineNo: number) => void,
    private readonly onLong: (lineNo: number, length: number) => void,
  ) {}

  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let pos = 0;
    this.nulFrom = n;
    if (this.carried > 0 || this.skipping) {
      const nl = indexOfByte(chunk, 10);
      if (nl < 0) {
        this.hold(chunk, 0, n);
        return;
      }
      this.hold(chunk, 0, nl);
      this.flushCarry();
      pos = nl + 1;
    }
    if (!linesByMemchr) {
      const odd = this.odd;
      odd.nul = false;
      const scanned = pos;
      // the chunk's whole aligned words, from byte `head`
      const head = (4 - (chunk.byteOffset & 3)) & 3;
      const words = n - head >= 4 ? new Int32Array(chunk.buffer, chunk.byteOffset + head, (n - head) >> 2) : NO_WORDS;
      let nl: number;
      while (pos < n && (nl = scanLine(chunk, pos, odd, words, head)) >= 0) {
        let end = nl;
        if (end > pos && chunk[end - 1] === 13) end--;
        if (nl - pos <= MAX_LINE && !this.first && !odd.v && this.onBytes(chunk, pos, end, this.lineNo + 1)) this.lineNo++;
        else this.decoded(chunk.subarray(pos, nl));
        pos = nl + 1;
      }
      if (pos < n) this.hold(chunk, pos, n);
      // scanLine looked at every byte from `scanned` to the end, one call after another
      if (!odd.nul) this.nulFrom = scanned;
      return;
    }
    // next CR and 0xE2 at or after `pos` (-1: none left); -2: not searched yet
    let cr = -2;
    let e2 = -2;
    let nl: number;
    while (pos < n && (nl = indexOfByte(chunk, 10, pos)) >= 0) {
      let end = nl;
      if (end > pos && chunk[end - 1] === 13) end--;
      if (cr !== -1 && cr < pos) cr = indexOfByte(chunk, 13, pos);
      if (e2 !== -1 && e2 < pos) e2 = indexOfByte(chunk, 0xe2, pos);
      if (nl - pos <= MAX_LINE && !this.first && (cr < 0 || cr >= end) && (e2 < 0 || e2 >= end) && this.onBytes(chunk, pos, end, this.lineNo + 1))
        this.lineNo++;
      else this.decoded(chunk.subarray(pos, nl));
      pos = nl + 1;
    }
    if (pos < n) this.hold(chunk, pos, n);
  }

  /** Ends the last line (one without a newline after it); returns the number of lines. */
  end(): number {
    if (this.carried > 0 || this.skipping) this.flushCarry();
    return this.lineNo;
  }

  /** chunk[from, to) joins the line being carried. */
  private hold(chunk: Uint8Array, from: number, to: number): void {
    if (from === to) return;
    this.carried += to - from;
    if (this.skipping) return;
    if (this.carried > MAX_BYTES_PER_UNIT * (MAX_LINE + 1)) {
      this.skipping = true;
      this.carry = [];
      return;
    }
    this.carry.push(chunk.slice(from, to));
  }

  /** The carried line is complete. */
  private flushCarry(): void {
    if (this.skipping) {
      this.skipping = false;
      this.first = false;
      this.onLong(++this.lineNo, this.carried);
    } else {
      // the line and a newline after it, as a line inside a chunk has (`onBytes` may look at b[end])
      const line = new Uint8Array(this.carried + 1);
      let at = 0;
      for (const piece of this.carry) {
        line.set(piece, at);
        at += piece.length;
      }
      line[at] = 10;
      this.carry = [];
      // a line cut by chunks is read as one in a chunk would be
      const n = this.carried;
      let end = n;
      if (end > 0 && line[end - 1] === 13) end--;
      const cr = indexOfByte(line, 13);
      const clean = (cr < 0 || cr >= end) && indexOfByte(line, 0xe2) < 0;
      if (n <= MAX_LINE && !this.first && clean && this.onBytes(line, 0, end, this.lineNo + 1)) this.lineNo++;
      else this.decoded(line.subarray(0, n));
    }
    this.carried = 0;
  }

  /** A line read as text: decoded, too long, or handed to `onText`. */
  private decoded(line: Uint8Array): void {
    let text: string;
    if (this.first) {
      this.first = false;
      // the decoder drops a byte-order mark; a second one right after it went too (LineSplitter)
      text = new TextDecoder('utf-8').decode(line);
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    } else if (line.length > MAX_BYTES_PER_UNIT * (MAX_LINE + 1)) {
      this.onLong(++this.lineNo, line.length);
      return;
    } else text = this.decoder.decode(line);
    if (text.length > MAX_LINE) {
      this.onLong(++this.lineNo, text.length);
      return;
    }
    this.onText(text, ++this.lineNo);
  }
}
