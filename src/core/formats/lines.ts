/**
 * Splits a stream of byte chunks into lines without ever holding the whole input.
 * Decodes UTF-8 across chunk boundaries, strips a trailing CR (CRLF files) and a leading BOM.
 */
export class LineSplitter {
  private decoder = new TextDecoder('utf-8');
  private rest = '';
  private lineNo = 0;
  private first = true;

  constructor(private readonly onLine: (line: string, lineNo: number) => void) {}

  push(chunk: Uint8Array): void {
    let text = this.decoder.decode(chunk, { stream: true });
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    this.feed(text);
  }

  /** Flushes the last line (one without a trailing newline). Returns the number of lines. */
  end(): number {
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
