import { frameKey } from './frames.ts';
import { encodingOf } from './lines.ts';
import { DumpColumnsBuilder } from './dump-columns.ts';
import { BIN_MAX_RECORDS, recordsOf } from './stack-map-bin.ts';
import type { ChunkParser, DumpColumns, DumpRecord, ParseContext, ParsedDump } from './types.ts';
import { concatBytes } from '../base/bytes.ts';

/**
 * `stackmap_dump.py --json` output (DESIGN 2.4): the same map as `stack_map_bin`, without a
 * generation.
 *
 *   [ {"stack_id": 12, "ref_count": 3, "ips": ["0xffffffff81234567", ...], "symbols": [...]}, ... ]
 *
 * or the same list wrapped as `{"stacks": [...]}`. `ips` are hex strings (`0x...`), decimal
 * strings or safe-integer numbers, leaf first. With `symbols` (one string per ip) the frames are
 * their keys; without, `frames` is null and the model symbolizes the ips.
 *
 * Streamed: a tokenizer over the decoded text (UTF-8, or UTF-16 after its byte-order mark) that
 * resumes anywhere, even inside a token, keeps only the entry being read, and builds no value it
 * does not need (any other key's value is stepped over). So memory is the records read, and at
 * most BIN_MAX_RECORDS of them are kept, as in a binary dump: past that the rest is not read and
 * says so. The records are kept as a binary dump's are, as columns (`ParsedDump.columns`: typed
 * arrays, every ip as two 32-bit halves in blocks, no BigInt and no object per record); `records`
 * are built from them when asked for. A dump with `symbols` comes as `records` only (the model
 * reads frames from records), built at the end. DumpRecord.where is the line of the entry's `{`.
 *
 * Accounting is by line: when the whole document is read, every line is used (an entry that is
 * rejected gets a diagnostic naming its index and line instead). When the text stops being JSON
 * (a file cut short, a damaged byte), or at the record cap, the entries before are kept and the
 * lines after the last whole entry are unused, with one diagnostic naming the line and column.
 * A document that is neither a list nor `{"stacks": [...]}` leaves every line unused.
 *
 * As JSON.parse reads it, with three differences: a NUL between tokens is a blank (nul-gate.ts
 * reports it), only the first `"stacks"` list of a wrapper is read (a later one is reported), and
 * strings or numbers longer than MAX_TOKEN characters, nesting deeper than MAX_NEST and entries of
 * more than MAX_ENTRY_IPS ips are refused (the entry, or the rest of the file) with a diagnostic.
 */

/** The kernel's maximum stack depth. */
const MAX_DEPTH = 64;
/** An entry with more ips than this is skipped, its ips not held (the kernel's stacks hold 64 at most; a column depth is a byte). */
export const MAX_ENTRY_IPS = 255;
/** A string or number longer than this is not held: it is no valid value for any field read. */
export const MAX_TOKEN = 65536;
/** Containers open at once; deeper is refused as not a dump. */
export const MAX_NEST = 256;
/** Diagnostics per reason that name an entry; the rest are summed up. */
const NAMED_PER_REASON = 5;
/** bytes decoded at once */
const DECODE_PIECE = 1 << 16;
/** ips per block of the ip columns once the first block has doubled up to it (1 MB per half) */
const U64_MAX = (1n << 64n) - 1n;

// container roles
const R_SKIP = 0;
const R_LIST = 1; // the list of entries
const R_WRAP = 2; // {"stacks": [...]}
const R_ENTRY = 3;
const R_IPS = 4;
const R_SYMS = 5;

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

// an entry's fields, by key
const F_OTHER = 0;
const F_ID = 1;
const F_REF = 2;
const F_IPS = 3;
const F_SYMS = 4;

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const ESCAPES: Record<number, string> = { 34: '"', 92: '\\', 47: '/', 98: '\b', 102: '\f', 110: '\n', 114: '\r', 116: '\t' };
const LITERALS: Record<number, string> = { 116: 'true', 102: 'false', 110: 'null' };

/** A scalar as read: a string, a number's text, a literal, or too long to hold. */
type Scalar = { kind: 'string' | 'number'; text: string } | { kind: 'true' | 'false' | 'null' | 'long' };

export function createDumpJsonParser(ctx: ParseContext): ChunkParser<ParsedDump> {
  const r = new DumpJsonReader(ctx);
  return { push: (c) => r.push(c), end: () => r.end() };
}

class DumpJsonReader {
  private readonly diag: ParseContext['diagnostics'];
  private decoder: TextDecoder | null = null;
  private head: Uint8Array | null = null;
  private first = true;

  // lines: '\n' seen, whether the last character was one, any character at all
  private newlines = 0;
  private lastNl = false;
  private chars = 0;

  // positions
  private line = 1;
  private lineStart = 0;
  private pos = 0;

  // syntax
  private expect = E_VALUE;
  private readonly roles = new Uint8Array(MAX_NEST);
  private readonly isObject = new Uint8Array(MAX_NEST);
  private depth = 0;
  private key = '';
  private stopped = false;
  private complete = false;

  // the token being read
  private tok = T_NONE;
  /** the token's text so far (pieces joined: a token across pieces is rare, and a concatenation is O(1)) */
  private acc = '';
  private keep = false;
  private long = false;
  private hex = '';
  private literal = '';
  private litAt = 0;

  // the document
  private listFound = false;
  private secondStacks = false;
  private entries = 0;
  private usedThrough = 0;
  private readonly cols = new DumpColumnsBuilder();
  /** each record's symbols, once an entry has them (null before and for one without) */
  private frames: (string[] | null)[] | null = null;
  private readonly seen = new Set<number>();
  private readonly byReason = new Map<string, number>();

  // the entry being read
  private entryLine = 0;
  private field = F_OTHER;
  private id: Scalar | null = null;
  private ref: Scalar | null = null;
  /** 0 missing, 1 a list, 2 not a list */
  private ipsState = 0;
  private ipsBad = false;
  private ipsMany = false;
  private ipsN = 0;
  private ipHi = new Uint32Array(MAX_DEPTH);
  private ipLo = new Uint32Array(MAX_DEPTH);
  /** undefined: no key; null: null; else the strings, or false when not a list of strings */
  private syms: string[] | null | false | undefined = undefined;

  constructor(private readonly ctx: ParseContext) {
    this.diag = ctx.diagnostics;
  }

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

  end(): ParsedDump {
    if (!this.decoder) {
      this.decoder = new TextDecoder('utf-8');
      if (this.head) this.text(this.decoder.decode(this.head, { stream: true }));
    }
    this.text(this.decoder.decode());
    if (!this.stopped) this.finish();
    const total = this.newlines + (this.chars > 0 && !this.lastNl ? 1 : 0);
    let used = 0;
    if (this.listFound) used = this.complete && !this.stopped ? total : Math.min(this.usedThrough, total);
    const columns = this.cols.done();
    const frames = this.frames;
    let records: DumpRecord[] | null = null;
    let from: DumpColumns | null = columns;
    const dump: ParsedDump = {
      file: this.ctx.file,
      format: 'dump_json',
      version: 'json',
      generation: null,
      littleEndian: null,
      uninitialized: false,
      get records(): DumpRecord[] {
        if (!records) {
          records = recordsOf(from!, null);
          if (frames) for (let r = 0; r < records.length; r++) records[r].frames = frames[r];
          // a dump with symbols is read from its records alone: its columns go
          if (frames) from = null;
        }
        return records;
      },
      lines: { total, used, unused: total - used },
      bytes: null,
    };
    // the model reads a dump's columns when it has them, and frames only from records
    if (!frames) dump.columns = columns;
    return dump;
  }

  private text(s: string): void {
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

  /** Everything read at the end of the file: a token that ends there, or a document cut short. */
  private finish(): void {
    if (this.tok === T_NUMBER) this.endNumber();
    else if (this.tok === T_LITERAL && this.litAt === this.literal.length) this.endLiteral();
    if (this.stopped) return;
    if (this.tok !== T_NONE || this.expect !== E_DONE) {
      this.fail(this.depth === 0 && this.expect === E_VALUE && this.tok === T_NONE ? 'no JSON in the file' : 'the file ends inside the document');
      return;
    }
    if (!this.listFound) this.neither();
    this.summarize();
  }

  private neither(): void {
    this.diag.forFile('JSON is neither a list of stacks nor {"stacks": [...]}: nothing read');
  }

  private summarize(): void {
    for (const [reason, n] of this.byReason) {
      if (n > NAMED_PER_REASON) this.diag.forFile(`${n - NAMED_PER_REASON} more entries: ${reason}; skipped`);
    }
  }

  /** Stops reading: the entries before are kept, and the lines after the last whole one are unused. */
  private fail(reason: string): void {
    if (this.stopped) return;
    this.stopped = true;
    const col = this.pos - this.lineStart + 1;
    const kept = this.cols.count;
    const what = kept > 0 ? `the ${kept.toLocaleString('en-US')} records before it are kept, the rest is not read` : 'nothing read';
    this.diag.atLine(this.line, `not valid JSON (${reason}, column ${col}): ${what}`);
    if (!this.listFound && this.complete) this.neither();
    this.summarize();
  }

  private stopAtCap(): void {
    this.stopped = true;
    this.diag.atLine(this.line, `more than ${BIN_MAX_RECORDS.toLocaleString('en-US')} records, the most the largest map (bits 18) holds: the rest is not read`);
    this.summarize();
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
        if (c === 34) this.startString(this.keyKept());
        else if (c === 125 && ex === E_KEY_OR_END) this.close();
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

  /** Whether a key in the current object is wanted (in the wrapper and in an entry). */
  private keyKept(): boolean {
    const role = this.roles[this.depth - 1];
    this.keyPending = true;
    return role === R_WRAP || role === R_ENTRY;
  }

  private keyPending = false;

  /** Whether a string value here is wanted. */
  private valueKept(): boolean {
    if (!this.startValue()) return false;
    const role = this.depth === 0 ? -1 : this.roles[this.depth - 1];
    if (role === R_IPS || role === R_SYMS) return true;
    return role === R_ENTRY && (this.field === F_ID || this.field === F_REF);
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
      const role = this.roles[this.depth - 1];
      if (role === R_ENTRY) this.field = fieldOf(this.key);
      return;
    }
    this.scalar(long ? { kind: 'long' } : { kind: 'string', text });
  }

  private endNumber(): void {
    this.tok = T_NONE;
    if (this.long) {
      this.scalar({ kind: 'long' });
      return;
    }
    const text = this.tokenText();
    if (!NUMBER.test(text)) {
      this.fail(`not a JSON number (${JSON.stringify(text.slice(0, 40))})`);
      return;
    }
    this.scalar({ kind: 'number', text });
  }

  private endLiteral(): void {
    this.tok = T_NONE;
    this.scalar({ kind: this.literal as 'true' | 'false' | 'null' });
  }

  /**
   * A value begins (a scalar, or a container about to open). In the list of entries this is an
   * entry: the record cap is checked before it is read. False when reading stopped.
   */
  private startValue(): boolean {
    if (this.depth > 0 && this.roles[this.depth - 1] === R_LIST) {
      if (this.cols.count >= BIN_MAX_RECORDS) {
        this.stopAtCap();
        return false;
      }
      this.entryLine = this.line;
    }
    return true;
  }

  private open(obj: boolean): void {
    if (!this.startValue()) return;
    if (this.depth >= MAX_NEST) {
      this.fail(`nested deeper than ${MAX_NEST}`);
      return;
    }
    const parent = this.depth === 0 ? -1 : this.roles[this.depth - 1];
    let role = R_SKIP;
    if (parent === -1) role = obj ? R_WRAP : R_LIST;
    else if (parent === R_WRAP) {
      if (this.key === 'stacks' && !obj && !this.listFound) role = R_LIST;
      else if (this.key === 'stacks' && !obj) this.second();
    } else if (parent === R_LIST) {
      if (obj) {
        role = R_ENTRY;
        this.beginEntry();
      } else this.rejectNow('not an object');
    } else if (parent === R_ENTRY) {
      const f = this.field;
      if (f === F_IPS) {
        if (obj) this.ipsState = 2;
        else {
          role = R_IPS;
          this.ipsState = 1;
          this.ipsBad = false;
          this.ipsMany = false;
          this.ipsN = 0;
        }
      } else if (f === F_SYMS) {
        if (obj) this.syms = false;
        else {
          role = R_SYMS;
          this.syms = [];
        }
      } else if (f === F_ID) this.id = { kind: 'long' };
      else if (f === F_REF) this.ref = { kind: 'long' };
    } else if (parent === R_IPS) this.ipsBad = true;
    else if (parent === R_SYMS) this.syms = false;
    if (role === R_LIST) this.listFound = true;
    this.roles[this.depth] = role;
    this.isObject[this.depth] = obj ? 1 : 0;
    this.depth++;
    this.expect = obj ? E_KEY_OR_END : E_VALUE_OR_END;
  }

  private close(): void {
    this.depth--;
    const role = this.roles[this.depth];
    if (role === R_ENTRY) this.endEntry();
    this.afterValue();
  }

  private afterValue(): void {
    if (this.depth === 0) {
      this.expect = E_DONE;
      this.complete = true;
      this.usedThrough = this.line;
      return;
    }
    this.expect = E_COMMA_OR_END;
    if (this.roles[this.depth - 1] === R_LIST) this.usedThrough = this.line;
  }

  private scalar(v: Scalar): void {
    const parent = this.depth === 0 ? -1 : this.roles[this.depth - 1];
    if (parent === R_LIST) this.rejectNow('not an object');
    else if (parent === R_WRAP) {
      if (this.key === 'stacks' && this.listFound) this.second();
    } else if (parent === R_ENTRY) {
      const f = this.field;
      if (f === F_ID) this.id = v;
      else if (f === F_REF) this.ref = v;
      else if (f === F_IPS) this.ipsState = 2;
      else if (f === F_SYMS) this.syms = v.kind === 'null' ? null : false;
    } else if (parent === R_IPS) this.ip(v);
    else if (parent === R_SYMS) {
      if (v.kind === 'string' && this.syms) {
        if (this.syms.length < MAX_ENTRY_IPS) this.syms.push(v.text);
        else this.syms = false;
      } else this.syms = false;
    }
    this.afterValue();
  }

  private second(): void {
    if (this.secondStacks) return;
    this.secondStacks = true;
    this.diag.atLine(this.line, 'a second "stacks" key: only the first list is read');
  }

  private beginEntry(): void {
    this.field = F_OTHER;
    this.id = null;
    this.ref = null;
    this.ipsState = 0;
    this.ipsBad = false;
    this.ipsMany = false;
    this.ipsN = 0;
    this.syms = undefined;
  }

  private ip(v: Scalar): void {
    if (this.ipsBad || this.ipsMany) return;
    if (this.ipsN >= MAX_ENTRY_IPS) {
      this.ipsMany = true;
      return;
    }
    const k = this.ipsN;
    if (k === this.ipHi.length) {
      const hi = new Uint32Array(2 * k);
      const lo = new Uint32Array(2 * k);
      hi.set(this.ipHi);
      lo.set(this.ipLo);
      this.ipHi = hi;
      this.ipLo = lo;
    }
    if (!halves(v, this.ipHi, this.ipLo, k)) {
      this.ipsBad = true;
      return;
    }
    this.ipsN = k + 1;
  }

  private rejectNow(reason: string): void {
    this.entryLine = this.line;
    this.reject(this.entries++, reason);
  }

  private reject(i: number, reason: string): void {
    const n = (this.byReason.get(reason) ?? 0) + 1;
    this.byReason.set(reason, n);
    if (n <= NAMED_PER_REASON) this.diag.atLine(this.entryLine, `entry ${i}: ${reason}; skipped`);
  }

  private endEntry(): void {
    const i = this.entries++;
    const slot = u32(this.id);
    if (slot === null) return this.reject(i, '"stack_id" missing or not an integer in 0..2^32-1');
    const ref = u32(this.ref);
    if (ref === null) return this.reject(i, '"ref_count" missing or not an integer in 0..2^32-1');
    if (this.ipsState !== 1) return this.reject(i, '"ips" missing or not a list');
    if (this.ipsBad) return this.reject(i, 'an ip is not a 64-bit address ("0x..." or a number)');
    if (this.ipsMany) return this.reject(i, `more than ${MAX_ENTRY_IPS.toLocaleString('en-US')} ips (the kernel's stacks hold at most ${MAX_DEPTH})`);
    if (this.seen.has(slot)) return this.reject(i, 'stack_id appears twice in the dump; the first is kept');
    this.seen.add(slot);
    const n = this.ipsN;
    if (n > MAX_DEPTH) this.diag.atLine(this.entryLine, `entry ${i}: depth ${n} above the kernel maximum of ${MAX_DEPTH}`);
    let frames: string[] | null = null;
    const s = this.syms;
    if (s !== undefined && s !== null) {
      if (s !== false && s.length === n) frames = s.map(ownKey);
      else this.diag.atLine(this.entryLine, `entry ${i}: "symbols" is not a list of ${n} strings: the ips are used`);
    }
    const r = this.cols.count;
    const at = this.cols.record(slot, ref, this.entryLine, n);
    this.cols.hi.set(this.ipHi.subarray(0, n), at);
    this.cols.lo.set(this.ipLo.subarray(0, n), at);
    if (frames && !this.frames) this.frames = new Array<string[] | null>(r).fill(null);
    if (this.frames) this.frames.push(frames);
  }

}

/**
 * A frame's key as a string of its own: a slice of the decoded text would keep the whole piece it
 * was cut from (64 KB) alive for as long as the frame is, so every piece of the file would stay.
 * Slicing a concatenation makes V8 copy it flat first, and the slice then holds only that copy.
 */
function ownKey(symbol: string): string {
  const k = frameKey(symbol);
  return k.length < 13 ? k : (k + ' ').slice(0, -1);
}

function fieldOf(key: string): number {
  switch (key) {
    case 'stack_id':
      return F_ID;
    case 'ref_count':
      return F_REF;
    case 'ips':
      return F_IPS;
    case 'symbols':
      return F_SYMS;
  }
  return F_OTHER;
}

function u32(v: Scalar | null): number | null {
  if (v === null) return null;
  let x: number;
  if (v.kind === 'number') x = Number(v.text);
  else if (v.kind === 'string' && /^\d{1,10}$/.test(v.text)) x = Number(v.text);
  else return null;
  return Number.isInteger(x) && x >= 0 && x <= 0xffffffff ? x : null;
}

/** A hex digit's value, or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  c |= 32;
  return c >= 97 && c <= 102 ? c - 87 : -1;
}

/**
 * Writes an ip's two 32-bit halves at k; false when it is not a 64-bit address: a safe integer
 * number, or a string `0x` + 1-16 hex digits or 1-20 decimal digits up to 2^64 - 1.
 */
function halves(v: Scalar, hi: Uint32Array, lo: Uint32Array, k: number): boolean {
  if (v.kind === 'number') {
    const x = Number(v.text);
    if (!Number.isSafeInteger(x) || x < 0) return false;
    hi[k] = Math.floor(x / 4294967296);
    lo[k] = x >>> 0;
    return true;
  }
  if (v.kind !== 'string') return false;
  const t = v.text;
  const n = t.length;
  if (n >= 3 && t.charCodeAt(0) === 48 && (t.charCodeAt(1) | 32) === 120) {
    if (n > 18) return false;
    const cut = n - 8;
    let h = 0;
    let l = 0;
    for (let i = 2; i < n; i++) {
      const d = hexDigit(t.charCodeAt(i));
      if (d < 0) return false;
      if (i < cut) h = h * 16 + d;
      else l = l * 16 + d;
    }
    hi[k] = h;
    lo[k] = l;
    return true;
  }
  if (n === 0 || n > 20) return false;
  for (let i = 0; i < n; i++) {
    const c = t.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  if (n <= 15) {
    const x = Number(t);
    hi[k] = Math.floor(x / 4294967296);
    lo[k] = x >>> 0;
    return true;
  }
  const b = BigInt(t);
  if (b > U64_MAX) return false;
  hi[k] = Number(b >> 32n);
  lo[k] = Number(b & 0xffffffffn);
  return true;
}

