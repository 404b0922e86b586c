import { frameKey } from './frames.ts';
import { DumpColumnsBuilder } from './dump-columns.ts';
import { JsonTokenizer, MAX_NEST, type Scalar } from './dump-json-tokenizer.ts';
import { BIN_MAX_RECORDS, recordsOf } from './stack-map-bin.ts';
import type { ChunkParser, DumpColumns, DumpRecord, ParseContext, ParsedDump } from './types.ts';

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
 * Streamed: a tokenizer over the decoded text (dump-json-tokenizer.ts) (UTF-8, or UTF-16 after its byte-order mark) that
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
/** Diagnostics per reason that name an entry; the rest are summed up. */
const NAMED_PER_REASON = 5;
/** the largest 64-bit address */
const U64_MAX = (1n << 64n) - 1n;

// container roles
const R_SKIP = 0;
const R_LIST = 1; // the list of entries
const R_WRAP = 2; // {"stacks": [...]}
const R_ENTRY = 3;
const R_IPS = 4;
const R_SYMS = 5;

// an entry's fields, by key
const F_OTHER = 0;
const F_ID = 1;
const F_REF = 2;
const F_IPS = 3;
const F_SYMS = 4;

export function createDumpJsonParser(ctx: ParseContext): ChunkParser<ParsedDump> {
  const r = new DumpJsonReader(ctx);
  return { push: (c) => r.push(c), end: () => r.end() };
}

/** The dump's mapping over the tokenizer: which values are kept, each entry checked and made a record. */
class DumpJsonReader extends JsonTokenizer {
  private readonly diag: ParseContext['diagnostics'];
  /** each container's role, by depth */
  private readonly roles = new Uint8Array(MAX_NEST);

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
    super();
    this.diag = ctx.diagnostics;
  }

  end(): ParsedDump {
    this.endText();
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

  /** Everything read at the end of the file: a token that ends there, or a document cut short. */
  private finish(): void {
    if (!this.endTokens()) return;
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
  protected fail(reason: string): void {
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

  /** Whether a key in the current object is wanted (in the wrapper and in an entry). */
  protected keyWanted(): boolean {
    const role = this.roles[this.depth - 1];
    return role === R_WRAP || role === R_ENTRY;
  }

  /** Whether a string value here is wanted. */
  protected valueKept(): boolean {
    if (!this.startValue()) return false;
    const role = this.depth === 0 ? -1 : this.roles[this.depth - 1];
    if (role === R_IPS || role === R_SYMS) return true;
    return role === R_ENTRY && (this.field === F_ID || this.field === F_REF);
  }

  protected keyRead(): void {
    if (this.roles[this.depth - 1] === R_ENTRY) this.field = fieldOf(this.key);
  }

  /**
   * A value begins (a scalar, or a container about to open). In the list of entries this is an
   * entry: the record cap is checked before it is read. False when reading stopped.
   */
  protected startValue(): boolean {
    if (this.depth > 0 && this.roles[this.depth - 1] === R_LIST) {
      if (this.cols.count >= BIN_MAX_RECORDS) {
        this.stopAtCap();
        return false;
      }
      this.entryLine = this.line;
    }
    return true;
  }

  /** A container opens at `depth`: its role, from its parent's and the key it is the value of. */
  protected entered(obj: boolean): void {
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
  }

  protected left(): void {
    if (this.roles[this.depth] === R_ENTRY) this.endEntry();
  }

  /** The lines through a whole entry (or the document) are used. */
  protected valueEnded(): void {
    if (this.depth === 0 || this.roles[this.depth - 1] === R_LIST) this.usedThrough = this.line;
  }

  protected scalar(v: Scalar): void {
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
