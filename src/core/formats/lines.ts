/** The text encoding a byte-order mark announces; UTF-8 without one. */
export function encodingOf(head: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' {
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

/**
 * Splits a stream of byte chunks into lines without ever holding the whole input.
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

  constructor(private readonly onLine: (line: string, lineNo: number) => void) {}

  push(chunk: Uint8Array): void {
    if (!this.decoder) {
      const head = this.head ? concat(this.head, chunk) : chunk;
      if (head.length < 2) {
        this.head = head.slice();
        return;
      }
      this.head = null;
      this.decoder = new TextDecoder(encodingOf(head));
      chunk = head;
    }
    this.decode(chunk);
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
    if (this.rest.length > 0) {
      this.emit(this.rest);
      this.rest = '';
    }
    return this.lineNo;
  }

  private feed(text: string): void {
    let start = 0;
    let nl = text.indexOf('\n');
    if (nl < 0) {
      this.rest += text;
      return;
    }
    // first line joins the remainder of the previous chunk
    this.emit(this.rest + text.slice(0, nl));
    this.rest = '';
    start = nl + 1;
    while ((nl = text.indexOf('\n', start)) >= 0) {
      this.emit(text.slice(start, nl));
      start = nl + 1;
    }
    this.rest = text.slice(start);
  }

  private emit(line: string): void {
    const n = line.length;
    if (n > 0 && line.charCodeAt(n - 1) === 13) line = line.slice(0, n - 1);
    this.onLine(line, ++this.lineNo);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
