/**
 * A resumable JSON tokenizer over decoded text (dump-json.ts's reader extends it): fed byte
 * chunks (UTF-8, or UTF-16 after its byte-order mark, decoded in pieces), it resumes anywhere,
 * even inside a token, counts lines, keeps a string or number's text only when the reader wants
 * it (and not past MAX_TOKEN characters), refuses nesting deeper than MAX_NEST, and tells the
 * reader what it reads through the abstract methods below, the reader's mapping of the document.
 * As JSON.parse reads it, but a NUL between tokens is a blank (nul-gate.ts reports it).
 */
import { concatBytes } from '../base/bytes.ts';
import { encodingOf } from './lines.ts';

/** A string or number longer than this is not held: it is no valid value for any field read. */
export const MAX_TOKEN = 65536;
/** Containers open at once; deeper is refused as not a dump. */
export const MAX_NEST = 256;
/** bytes decoded at once */
const DECODE_PIECE = 1 << 16;

// what comes next
const E_VALUE = 0;
const E_VALUE_OR_END = 1; // after [
const E_KEY_OR_END = 2; // after {
const E_KEY = 3; // after , in an object
const E_COLON = 4;
const E_COMMA_OR_END = 5;
const E_DONE = 6; // after the document

// the token being read
const T_NONE = 0;
const T_STRING = 1;
const T_ESCAPE = 2; // after a backslash
const T_UNICODE = 3; // \uXXXX
const T_NUMBER = 4;
const T_LITERAL = 5;

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const ESCAPES: Record<number, string> = { 34: '"', 92: '\\', 47: '/', 98: '\b', 102: '\f', 110: '\n', 114: '\r', 116: '\t' };
const LITERALS: Record<number, string> = { 116: 'true', 102: 'false', 110: 'null' };

/** A scalar as read: a string, a number's text, a literal, or too long to hold. */
export type Scalar = { kind: 'string' | 'number'; text: string } | { kind: 'true' | 'false' | 'null' | 'long' };

/** The tokenizer's state and loop; what the values mean is the subclass's (the abstract methods). */
export abstract class JsonTokenizer {
  private decoder: TextDecoder | null = null;
  private head: Uint8Array | null = null;
  private first = true;

  // lines: '\n' seen, whether the last character was one, any character at all
  protected newlines = 0;
  protected lastNl = false;
  protected chars = 0;

  // positions
  protected line = 1;
  protected lineStart = 0;
  protected pos = 0;

  // syntax
  private expect = E_VALUE;
  private readonly isObject = new Uint8Array(MAX_NEST);
  protected depth = 0;
  /** the last key read ('' when too long to hold) */
  protected key = '';
  protected stopped = false;
  /** the whole document was read */
  protected complete = false;

  // the token being read
  private tok = T_NONE;
  /** the token's text so far (pieces joined: a token across pieces is rare, and a concatenation is O(1)) */
  private acc = '';
  private keep = false;
  private long = false;
  private hex = '';
  private literal = '';
  private litAt = 0;
  private keyPending = false;

  /** Stops reading at `pos` (line `line`) for `reason`; sets `stopped` (nothing is read after). */
  protected abstract fail(reason: string): void;
  /** A value begins (a scalar, or a container about to open); false when reading stopped. */
  protected abstract startValue(): boolean;
  /** Whether a key of the object open at `depth - 1` is wanted as text. */
  protected abstract keyWanted(): boolean;
  /** Whether a string value here is wanted as text (calls startValue first). */
  protected abstract valueKept(): boolean;
  /** A key was read into `key`. */
  protected abstract keyRead(): void;
  /** A scalar value was read. */
  protected abstract scalar(v: Scalar): void;
  /** A container opens at `depth` (before it is counted). */
  protected abstract entered(obj: boolean): void;
  /** The container at `depth` closed (after it is uncounted). */
  protected abstract left(): void;
  /** A value ended: the document (`depth` 0) or an element of the container at `depth - 1`. */
  protected abstract valueEnded(): void;

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
    // in pieces: Node's streaming decoder is ~10x slower per byte on pieces of 128 KB and more
    for (let i = 0; i < chunk.length; i += DECODE_PIECE) this.text(this.decoder.decode(chunk.subarray(i, i + DECODE_PIECE), { stream: true }));
  }

  /** The decoder's end: the text it still held read. */
  protected endText(): void {
    if (!this.decoder) {
      this.decoder = new TextDecoder('utf-8');
      if (this.head) this.text(this.decoder.decode(this.head, { stream: true }));
    }
    this.text(this.decoder.decode());
  }

  protected text(s: string): void {
    if (this.first && s.length > 0) {
      this.first = false;
      if (s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    }
    if (s.length === 0) return;
    for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) this.newlines++;
    this.chars += s.length;
    this.lastNl = s.charCodeAt(s.length - 1) === 10;
    if (!this.stopped) this.scan(s);
  }

  /**
   * Everything read at the end of the file: a token that ends there, or a document cut short
   * (failed). True when the document was whole and nothing stopped it.
   */
  protected endTokens(): boolean {
    if (this.tok === T_NUMBER) this.endNumber();
    else if (this.tok === T_LITERAL && this.litAt === this.literal.length) this.endLiteral();
    if (this.stopped) return false;
    if (this.tok !== T_NONE || this.expect !== E_DONE) {
      this.fail(this.depth === 0 && this.expect === E_VALUE && this.tok === T_NONE ? 'no JSON in the file' : 'the file ends inside the document');
      return false;
    }
    return true;
  }

  private scan(s: string): void {
    const n = s.length;
    let i = 0;
    const base = this.pos;
    while (i < n && !this.stopped) {
      const tok = this.tok;
      if (tok !== T_NONE) {
        this.pos = base + i;
        i = this.token(s, i);
        continue;
      }
      // blanks between tokens, in a tight loop
      let c = s.charCodeAt(i);
      while (c === 32 || c === 10 || c === 13 || c === 9 || c === 0) {
        if (c === 10) {
          this.line++;
          this.lineStart = base + i + 1;
        }
        if (++i === n) break;
        c = s.charCodeAt(i);
      }
      if (i === n) break;
      this.pos = base + i;
      i++;
      const ex = this.expect;
      if (ex === E_DONE) {
        this.fail('more after the document');
        break;
      }
      if (ex === E_COLON) {
        if (c === 58) this.expect = E_VALUE;
        else this.fail('":" expected after a key');
        continue;
      }
      if (ex === E_COMMA_OR_END) {
        const obj = this.isObject[this.depth - 1] === 1;
        if (c === 44) this.expect = obj ? E_KEY : E_VALUE;
        else if (c === (obj ? 125 : 93)) this.close();
        else this.fail(obj ? '"," or "}" expected' : '"," or "]" expected');
        continue;
      }
      if (ex === E_KEY || ex === E_KEY_OR_END) {
        if (c === 34) {
          this.keyPending = true;
          this.startString(this.keyWanted());
        } else if (c === 125 && ex === E_KEY_OR_END) this.close();
        else this.fail('a key (a string) expected');
        continue;
      }
      // a value, or the end of an empty list
      if (c === 93 && ex === E_VALUE_OR_END) {
        this.close();
        continue;
      }
      if (c === 123 || c === 91) {
        this.open(c === 123);
        continue;
      }
      if (c === 34) {
        this.startString(this.valueKept());
        continue;
      }
      if (c === 45 || (c >= 48 && c <= 57)) {
        if (!this.startValue()) continue;
        this.tok = T_NUMBER;
        this.acc = '';
        this.long = false;
        i--; // the number's first character is read as part of it
        continue;
      }
      const word = LITERALS[c];
      if (word !== undefined) {
        if (!this.startValue()) continue;
        this.tok = T_LITERAL;
        this.literal = word;
        this.litAt = 1;
        continue;
      }
      this.fail(`unexpected character ${JSON.stringify(String.fromCharCode(c))}`);
    }
    this.pos = base + n;
  }

  /** Continues the token being read at s[i]; returns where it stopped. */
  private token(s: string, i: number): number {
    const n = s.length;
    switch (this.tok) {
      case T_STRING: {
        const from = i;
        let c = 0;
        for (; i < n; i++) {
          c = s.charCodeAt(i);
          if (c === 34 || c === 92 || (c < 32 && c !== 0)) break;
        }
        if (i > from) this.append(s, from, i);
        if (i === n) return i;
        if (c === 34) {
          this.tok = T_NONE;
          this.endString();
          return i + 1;
        }
        if (c === 92) {
          this.tok = T_ESCAPE;
          return i + 1;
        }
        this.fail('a control character inside a string');
        return n;
      }
      case T_ESCAPE: {
        const c = s.charCodeAt(i);
        if (c === 117) {
          this.tok = T_UNICODE;
          this.hex = '';
          return i + 1;
        }
        const e = ESCAPES[c];
        if (e === undefined) {
          this.fail('a bad escape in a string');
          return n;
        }
        this.appendText(e);
        this.tok = T_STRING;
        return i + 1;
      }
      case T_UNICODE: {
        while (i < n && this.hex.length < 4) {
          const c = s.charCodeAt(i);
          if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) {
            this.fail('a bad \\u escape in a string');
            return n;
          }
          this.hex += s[i];
          i++;
        }
        if (this.hex.length === 4) {
          this.appendText(String.fromCharCode(parseInt(this.hex, 16)));
          this.tok = T_STRING;
        }
        return i;
      }
      case T_NUMBER: {
        const from = i;
        for (; i < n; i++) {
          const c = s.charCodeAt(i);
          if (!((c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69)) break;
        }
        if (i > from) this.append(s, from, i, true);
        if (i < n) this.endNumber();
        return i;
      }
      case T_LITERAL: {
        const w = this.literal;
        while (i < n && this.litAt < w.length) {
          if (s.charCodeAt(i) !== w.charCodeAt(this.litAt)) {
            this.fail(`not a JSON value (expected "${w}")`);
            return n;
          }
          i++;
          this.litAt++;
        }
        if (this.litAt === w.length) this.endLiteral();
        return i;
      }
    }
    return i;
  }

  private append(s: string, a: number, b: number, always = false): void {
    if ((!this.keep && !always) || this.long) return;
    if (this.acc.length + (b - a) > MAX_TOKEN) {
      this.long = true;
      this.acc = '';
      return;
    }
    const piece = a === 0 && b === s.length ? s : s.slice(a, b);
    this.acc = this.acc.length === 0 ? piece : this.acc + piece;
  }

  private appendText(t: string): void {
    if (!this.keep || this.long) return;
    if (this.acc.length + t.length > MAX_TOKEN) {
      this.long = true;
      this.acc = '';
      return;
    }
    this.acc += t;
  }

  private tokenText(): string {
    const t = this.acc;
    this.acc = '';
    return t;
  }

  private startString(keep: boolean): void {
    if (this.stopped) return;
    this.tok = T_STRING;
    this.keep = keep;
    this.long = false;
    this.acc = '';
  }

  private endString(): void {
    const text = this.keep && !this.long ? this.tokenText() : '';
    const long = this.long;
    this.acc = '';
    if (this.keyPending) {
      this.keyPending = false;
      this.key = long ? '' : text;
      this.expect = E_COLON;
      this.keyRead();
      return;
    }
    this.value(long ? { kind: 'long' } : { kind: 'string', text });
  }

  private endNumber(): void {
    this.tok = T_NONE;
    if (this.long) {
      this.value({ kind: 'long' });
      return;
    }
    const text = this.tokenText();
    if (!NUMBER.test(text)) {
      this.fail(`not a JSON number (${JSON.stringify(text.slice(0, 40))})`);
      return;
    }
    this.value({ kind: 'number', text });
  }

  private endLiteral(): void {
    this.tok = T_NONE;
    this.value({ kind: this.literal as 'true' | 'false' | 'null' });
  }

  /** A scalar: the subclass's, then the value ends. */
  private value(v: Scalar): void {
    this.scalar(v);
    this.afterValue();
  }

  private open(obj: boolean): void {
    if (!this.startValue()) return;
    if (this.depth >= MAX_NEST) {
      this.fail(`nested deeper than ${MAX_NEST}`);
      return;
    }
    this.entered(obj);
    this.isObject[this.depth] = obj ? 1 : 0;
    this.depth++;
    this.expect = obj ? E_KEY_OR_END : E_VALUE_OR_END;
  }

  private close(): void {
    this.depth--;
    this.left();
    this.afterValue();
  }

  private afterValue(): void {
    if (this.depth === 0) {
      this.expect = E_DONE;
      this.complete = true;
    } else this.expect = E_COMMA_OR_END;
    this.valueEnded();
  }
}
