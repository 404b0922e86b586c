import { Growable } from '../base/growable.ts';
import { StringTable } from '../base/string-table.ts';
import { pairSlot, randomWords } from '../base/keyed-hash.ts';
import { frameFunction } from '../formats/frames.ts';

/**
 * How a frame is held. A symbolized return address (`vfs_read+0x1a`) is two integers, its
 * function's index and the offset; a raw address with no symbol (`0xffffffff81234567`) is its
 * two 32-bit halves; anything else (a bare name, `[FTRACE TRAMPOLINE]`, a perf frame with a
 * module) is its string. A dump from a kernel with many distinct return addresses has millions
 * of frames: as integers they cost no string, no string hash and nothing for the GC to trace;
 * a frame's string is made when something shows or exports it.
 */
export const enum FrameKind {
  Text = 0,
  Site = 1,
  Address = 2,
}

/** Where a frame table stood, for `truncate`. */
export interface FrameTableMark {
  frames: number;
  texts: number;
  functions: number;
}

const hex8 = (x: number) => x.toString(16).padStart(8, '0');

/** `hi:lo` (unsigned halves) as the address key `0x...`: lowercase, no leading zeros. */
export function addressText(hi: number, lo: number): string {
  return '0x' + (hi === 0 ? lo.toString(16) : hi.toString(16) + hex8(lo));
}

const isLowerHex = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 102);

/**
 * The value of the lowercase hex `s[from, to)`, at most 8 digits, else -1: without leading zeros
 * (`0` alone allowed) unless `padded` (the low word of a long address keeps them).
 */
function hexWord(s: string, from: number, to: number, padded = false): number {
  const n = to - from;
  if (n < 1 || n > 8) return -1;
  if (!padded && n > 1 && s.charCodeAt(from) === 48) return -1;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!isLowerHex(c)) return -1;
    v = v * 16 + (c <= 57 ? c - 48 : c - 87);
  }
  return v;
}

/**
 * Every distinct frame of a stack table, by dense index, deduplicated across its three forms: a
 * string that reads back as a site or an address is stored as those integers, so `vfs_read+0x1a`
 * from a text dump and the same function and offset from a symbolized binary dump are one frame,
 * as they were when every frame was its string. `name(i)` renders a frame's key (DESIGN 2.2),
 * always the same string the frame was first interned as.
 *
 * Integer frames are found by an open-addressing table of indices keyed by (kind, a, b) under a
 * random key per table (pairSlot: frames come from files, which must not pick a probe chain);
 * strings by a StringTable (keyed and guarded), which remembers for each string its frame.
 * Append-only, with `mark`/`truncate` for a rollback and `snapshot` for a capture.
 */
export class FrameTable {
  /** function names (a site frame's function, and each frame's by `functionOf`) */
  readonly functions: StringTable;
  /** every string interned so far, and the frame each stands for */
  private texts: StringTable;
  private textFrame: Growable<Int32Array>;
  /**
   * Per frame: its kind and two integers (a site's function and offset, an address's halves, a
   * string's index in `texts`); [0, count) in use. A snapshot shares them: frames [0,
   * sharedUpTo) are seen by one, so a truncate below that copies them first.
   */
  private kind: Uint8Array;
  private a: Int32Array;
  private b: Int32Array;
  private count = 0;
  private sharedUpTo = 0;
  /**
   * Integer frames by (kind, a, b): open addressing over pairs (b, frame + 1) (0: free), at most
   * half full. A probe compares `b` in the slot itself and reads the frame's columns only when
   * it matches: one cache miss per lookup in a table of millions.
   */
  private index: Int32Array;
  private shift: number;
  /** numeric frames in the index */
  private numeric = 0;
  /**
   * Site frames appended by `appendSite`, not in the index yet, and per function whether it has
   * some: a lookup of a site of such a function puts every frame in the index first (`reindex`).
   * A bulk load (a binary dump's new sites, ip-pool.ts) so costs no probe per frame, and the
   * index is built once if something later looks a site up by value.
   */
  private unindexed = 0;
  private unindexedFn: Uint8Array = new Uint8Array(0);
  /** per function: 1 once it has a site frame (for `hasSites`) */
  private siteFn: Uint8Array = new Uint8Array(0);
  private k0: number;
  private k1: number;
  private readOnly = false;
  /** the function of each frame, made by `functionOf` as far as asked */
  private fnOf: Int32Array = new Int32Array(0);
  private fnKnown = 0;
  /** every frame's name, made by `strings` (for code that reads every name) */
  private all: string[] | null = null;
  /** slots visited by integer lookups (test support: what a flood costs, counted) */
  probes = 0;

  constructor() {
    const key = randomWords(2);
    this.k0 = key[0] | 0;
    this.k1 = key[1] | 0;
    this.functions = new StringTable();
    this.texts = new StringTable();
    this.textFrame = new Growable(Int32Array);
    this.kind = new Uint8Array(1024);
    this.a = new Int32Array(1024);
    this.b = new Int32Array(1024);
    this.index = new Int32Array(2 << 10);
    this.shift = 32 - 10;
  }

  get size(): number {
    return this.count;
  }

  /**
   * Room for `extra` more frames in the columns (a dump's ip count: at most that many are new).
   * Only the columns: they fill in order, so capacity never used is never touched (the memory
   * is the operating system's until then), where the index is written all over.
   */
  reserve(extra: number): void {
    if (this.count + extra > this.kind.length) this.resize(this.count + extra);
  }

  /** The frame of a symbolized address: function `fn` (an index of `functions`) at offset `off` (unsigned 32-bit). */
  site(fn: number, off: number): number {
    return this.numericFrame(FrameKind.Site, fn, off | 0);
  }

  /**
   * A new site frame, function `fn` at offset `off`, appended without a look in the index: the
   * caller knows no frame of the table is this site (ip-pool.ts: each address once, of a function
   * no other symbol names and no frame named before its first).
   */
  appendSite(fn: number, off: number): number {
    const f = this.push(FrameKind.Site, fn, off | 0);
    this.appendedSites(fn, 1);
    return f;
  }

  /**
   * New site frames of function `fn`, one per `keys[from, to)`, at offsets `base + keys[i]`
   * (unsigned 32-bit), appended as `appendSite` appends one (the caller knows none is in the
   * table yet); returns the first's frame, the rest follow it.
   */
  appendSiteRun(fn: number, keys: Int32Array, from: number, to: number, base: number): number {
    const f0 = this.count;
    const n = to - from;
    if (n <= 0) return f0;
    if (this.readOnly) throw new Error('a snapshot of the frame table is read-only');
    if (f0 + n > 0x3fffffff) throw new RangeError('more than 2^30 distinct frames');
    if (f0 + n > this.kind.length) this.resize(Math.max(2 * f0, f0 + n));
    const kind = this.kind;
    const a = this.a;
    const b = this.b;
    for (let i = from, f = f0; i < to; i++, f++) {
      kind[f] = FrameKind.Site;
      a[f] = fn;
      b[f] = (base + keys[i]) | 0;
    }
    this.count = f0 + n;
    if (fn >= this.siteFn.length) this.siteFn = grownBytes(this.siteFn, fn);
    this.siteFn[fn] = 1;
    this.appendedSites(fn, n);
    return f0;
  }

  /** `n` sites of function `fn` appended without the index: a lookup of one of its sites indexes them first. */
  private appendedSites(fn: number, n: number): void {
    this.unindexed += n;
    if (fn >= this.unindexedFn.length) this.unindexedFn = grownBytes(this.unindexedFn, fn);
    this.unindexedFn[fn] = 1;
  }

  /** Whether function `fn` (an index of `functions`) has a site frame. */
  hasSites(fn: number): boolean {
    return fn < this.siteFn.length && this.siteFn[fn] === 1;
  }

  /** The frame of a raw address with no symbol, as unsigned halves. */
  address(hi: number, lo: number): number {
    return this.numericFrame(FrameKind.Address, hi | 0, lo | 0);
  }

  intern(s: string): number {
    return this.internRange(s, 0, s.length);
  }

  /** The frame whose key is `text[from, to)`, made on first sight. */
  internRange(text: string, from: number, to: number): number {
    const seen = this.textFrame.length;
    const t = this.texts.internRange(text, from, to);
    if (t < seen) return this.textFrame.get(t);
    const f = this.classify(this.texts.strings[t], t);
    this.textFrame.push(f);
    return f;
  }

  /** The frame whose key is `s`, if there is one. */
  lookup(s: string): number | undefined {
    const t = this.texts.lookup(s);
    if (t !== undefined && t < this.textFrame.length) return this.textFrame.get(t);
    const plus = s.lastIndexOf('+0x');
    if (plus > 0) {
      const off = hexWord(s, plus + 3, s.length);
      const fn = off >= 0 ? this.functions.lookup(s.slice(0, plus)) : undefined;
      if (fn !== undefined) {
        const f = this.find(FrameKind.Site, fn, off | 0);
        if (f >= 0) return f;
      }
    }
    const addr = this.addressOf(s);
    if (addr !== null) {
      const f = this.find(FrameKind.Address, addr[0] | 0, addr[1] | 0);
      if (f >= 0) return f;
    }
    return undefined;
  }

  kindOf(f: number): FrameKind {
    return this.kind[f] as FrameKind;
  }

  /** The key of frame `f`: `sym+0xoff`, `0x...`, or its string. */
  name(f: number): string {
    const k = this.kind[f];
    const a = this.a[f];
    const b = this.b[f];
    if (k === FrameKind.Site) return this.functions.strings[a] + '+0x' + (b >>> 0).toString(16);
    if (k === FrameKind.Address) return addressText(a >>> 0, b >>> 0);
    return this.texts.strings[a];
  }

  /** The offset of `sym+0xoff` in frame `f`'s key (a site's own, read from the key otherwise), NaN for a key without one. */
  offsetOf(f: number): number {
    const k = this.kind[f];
    if (k === FrameKind.Site) return this.b[f] >>> 0;
    if (k === FrameKind.Address) return NaN;
    const key = this.texts.strings[this.a[f]];
    const plus = key.lastIndexOf('+0x');
    if (plus <= 0 || plus + 3 >= key.length) return NaN;
    const v = Number(key.slice(plus + 1));
    return Number.isSafeInteger(v) ? v : NaN;
  }

  /** Every frame's key by index (made once and kept: for exports and searches that read them all). */
  get strings(): readonly string[] {
    const n = this.size;
    let all = this.all;
    if (all === null) all = this.all = [];
    for (let f = all.length; f < n; f++) all.push(this.name(f));
    if (all.length > n) all.length = n;
    return all;
  }

  /** The function (an index of `functions`) of frame `f`: a site's own, else its key without `+0xoff`. */
  functionOf(f: number): number {
    if (this.kind[f] === FrameKind.Site) return this.a[f];
    if (f >= this.fnKnown) this.functionsUpTo(f + 1);
    return this.fnOf[f];
  }

  /** Every frame's function, [0, size). */
  functionIds(): Int32Array {
    this.functionsUpTo(this.size);
    return this.fnOf.subarray(0, this.size);
  }

  private functionsUpTo(n: number): void {
    const from = this.fnKnown;
    if (this.fnOf.length < n) {
      const grown = new Int32Array(Math.max(n, 2 * this.fnOf.length));
      grown.set(this.fnOf.subarray(0, from));
      this.fnOf = grown;
    }
    const fnOf = this.fnOf;
    const kind = this.kind;
    // a site's function is its `a`: copied at once (a dump's millions of frames are nearly all
    // sites), then every other frame's found from its name
    fnOf.set(this.a.subarray(from, n), from);
    for (let f = from; f < n; f++) if (kind[f] !== FrameKind.Site) fnOf[f] = this.internFunction(frameFunction(this.name(f)));
    this.fnKnown = n;
  }

  /** A function name's index (a snapshot finds it or adds it to its own copy). */
  private internFunction(name: string): number {
    return this.readOnly ? (this.functions.lookup(name) ?? this.functionsOwn(name)) : this.functions.intern(name);
  }

  /** In a snapshot, a function name no frame of the live table has named: kept beside the shared table. */
  private functionsOwn(name: string): number {
    const own = (this.ownFunctions ??= new Map());
    let i = own.get(name);
    if (i === undefined) {
      i = this.functions.size + own.size;
      own.set(name, i);
      this.ownFunctionNames.push(name);
    }
    return i;
  }
  private ownFunctions: Map<string, number> | null = null;
  private ownFunctionNames: string[] = [];

  /** The name of function `i` (as `functions.strings[i]`, and a snapshot's own). */
  functionName(i: number): string {
    const n = this.functions.size;
    return i < n ? this.functions.strings[i] : this.ownFunctionNames[i - n];
  }

  /** Function names in use so far, [0, count). */
  functionNames(): string[] {
    return [...this.functions.strings, ...this.ownFunctionNames];
  }

  mark(): FrameTableMark {
    return { frames: this.size, texts: this.textFrame.length, functions: this.functions.size };
  }

  /** Forgets every frame, string and function name added since `m` (a rollback). */
  truncate(m: FrameTableMark): void {
    if (this.readOnly) throw new Error('a snapshot of the frame table is read-only');
    if (m.frames > this.count) throw new RangeError(`cannot truncate ${this.count} frames to ${m.frames}`);
    this.count = m.frames;
    if (m.frames < this.sharedUpTo) this.resize(this.kind.length);
    this.textFrame.truncate(m.texts);
    this.texts.truncate(m.texts);
    this.functions.truncate(m.functions);
    this.fnKnown = Math.min(this.fnKnown, m.frames);
    if (this.all && this.all.length > m.frames) this.all.length = m.frames;
    // which functions have a site frame, from the frames left (a new array: a snapshot shares the old)
    const siteFn = new Uint8Array(this.siteFn.length);
    for (let f = 0; f < this.count; f++) if (this.kind[f] === FrameKind.Site) siteFn[this.a[f]] = 1;
    this.siteFn = siteFn;
    // a new index (a snapshot may still probe the old one)
    this.rehash(this.index.length >>> 1, true);
  }

  /** The table as it is now, read-only, sharing its arrays; later interns and truncates here do not show in it. */
  snapshot(): FrameTable {
    this.sharedUpTo = Math.max(this.sharedUpTo, this.count);
    const s = Object.create(FrameTable.prototype) as FrameTable;
    Object.assign(s, {
      functions: this.functions.snapshot(),
      texts: this.texts.snapshot(),
      textFrame: this.textFrame.frozen(),
      kind: this.kind,
      a: this.a,
      b: this.b,
      count: this.count,
      sharedUpTo: this.count,
      index: this.index,
      shift: this.shift,
      numeric: this.numeric,
      unindexed: this.unindexed,
      unindexedFn: this.unindexed > 0 ? this.unindexedFn.slice() : new Uint8Array(0),
      siteFn: this.siteFn,
      k0: this.k0,
      k1: this.k1,
      readOnly: true,
      fnOf: new Int32Array(0),
      fnKnown: 0,
      all: null,
      probes: this.probes,
      ownFunctions: null,
      ownFunctionNames: [],
    });
    return s;
  }

  /** `s` as an address key's halves, or null (only the exact form `name` renders: `0x`, lowercase, no leading zeros). */
  private addressOf(s: string): [number, number] | null {
    const n = s.length;
    if (n < 3 || n > 18 || s.charCodeAt(0) !== 48 || s.charCodeAt(1) !== 120) return null;
    if (n <= 10) {
      const lo = hexWord(s, 2, n);
      return lo >= 0 ? [0, lo] : null;
    }
    const hi = hexWord(s, 2, n - 8);
    const lo = hexWord(s, n - 8, n, true);
    return hi > 0 && lo >= 0 ? [hi, lo] : null;
  }

  /** A string seen for the first time (its index `t` in `texts`): the frame it reads back as. */
  private classify(s: string, t: number): number {
    const plus = s.lastIndexOf('+0x');
    if (plus > 0) {
      const off = hexWord(s, plus + 3, s.length);
      if (off >= 0) return this.site(this.functions.intern(s.slice(0, plus)), off);
    }
    const addr = this.addressOf(s);
    if (addr !== null) return this.address(addr[0], addr[1]);
    return this.push(FrameKind.Text, t, 0);
  }

  private push(kind: FrameKind, a: number, b: number): number {
    if (this.readOnly) throw new Error('a snapshot of the frame table is read-only');
    const f = this.count;
    if (f >= 0x3fffffff) throw new RangeError('more than 2^30 distinct frames');
    if (f === this.kind.length) this.resize(2 * f);
    this.kind[f] = kind;
    this.a[f] = a;
    this.b[f] = b;
    this.count = f + 1;
    if (kind === FrameKind.Site && this.siteFn[a] !== 1) {
      if (a >= this.siteFn.length) this.siteFn = grownBytes(this.siteFn, a);
      this.siteFn[a] = 1;
    }
    return f;
  }

  /** New frame columns of `capacity` (not shared with any snapshot). */
  private resize(capacity: number): void {
    const n = this.count;
    const kind = new Uint8Array(capacity);
    kind.set(this.kind.subarray(0, n));
    const a = new Int32Array(capacity);
    a.set(this.a.subarray(0, n));
    const b = new Int32Array(capacity);
    b.set(this.b.subarray(0, n));
    this.kind = kind;
    this.a = a;
    this.b = b;
    this.sharedUpTo = 0;
  }

  private slotOf(kind: number, a: number, b: number, shift: number): number {
    return pairSlot(a, b ^ Math.imul(kind, 0x9e3779b9), this.k0, this.k1, shift);
  }

  /** Frame (kind, a, b), or -1 (a snapshot skips entries the live table added after it). */
  private find(kind: number, a: number, b: number): number {
    if (kind === FrameKind.Site && this.unindexed > 0 && this.unindexedFn[a] === 1) this.reindex();
    const index = this.index;
    const mask = (index.length >>> 1) - 1;
    const n = this.count;
    let h = this.slotOf(kind, a, b, this.shift);
    for (;;) {
      this.probes++;
      const e = index[2 * h + 1];
      if (e === 0) return -1;
      const f = e - 1;
      if (index[2 * h] === b && f < n && this.a[f] === a && this.kind[f] === kind) return f;
      h = (h + 1) & mask;
    }
  }

  private numericFrame(kind: number, a: number, b: number): number {
    if (kind === FrameKind.Site && this.unindexed > 0 && this.unindexedFn[a] === 1) this.reindex();
    const index = this.index;
    const mask = (index.length >>> 1) - 1;
    let h = this.slotOf(kind, a, b, this.shift);
    let probes = 1;
    for (;;) {
      const e = index[2 * h + 1];
      if (e === 0) break;
      if (index[2 * h] === b) {
        const f = e - 1;
        if (this.a[f] === a && this.kind[f] === kind) {
          this.probes += probes;
          return f;
        }
      }
      h = (h + 1) & mask;
      probes++;
    }
    this.probes += probes;
    const f = this.push(kind, a, b);
    index[2 * h] = b;
    index[2 * h + 1] = f + 1;
    // grown fourfold once large: each rebuild touches every slot of a new table, and on a machine
    // where fresh memory costs (page faults) that, more than the probes, is what a rebuild costs
    if (2 * ++this.numeric > index.length >>> 1) this.rehash(index.length >= 1 << 21 ? 2 * index.length : index.length, false);
    return f;
  }

  /** Every frame in the index (some were appended without it). */
  private reindex(): void {
    this.rehash(this.index.length >>> 1, true);
  }

  /**
   * The index again, with `slots` slots or as many more (doubling) as keep it at most half full:
   * from every frame in use when `all` (frames appended without it count too), else from every
   * frame but the sites of functions with appended ones, which stay out until a lookup of such a
   * function puts them in (`reindex`). A bulk load appends millions of sites: a growth of the
   * index for a few looked-up ones among them must not insert them all (in a random dump's load,
   * one growth at 4.3M frames cost 630 ms of cache misses, the index's own frames ~0.1M).
   */
  private rehash(slots: number, all: boolean): void {
    const K = this.kind;
    const A = this.a;
    const B = this.b;
    const apart = all ? new Uint8Array(0) : this.unindexedFn;
    const out = (f: number) => K[f] === FrameKind.Text || (K[f] === FrameKind.Site && A[f] < apart.length && apart[A[f]] === 1);
    let numeric = 0;
    for (let f = 0; f < this.count; f++) if (!out(f)) numeric++;
    while (2 * numeric > slots) slots *= 2;
    const index = new Int32Array(2 * slots);
    const shift = 32 - Math.log2(slots);
    const mask = slots - 1;
    for (let f = 0; f < this.count; f++) {
      if (out(f)) continue;
      let h = this.slotOf(K[f], A[f], B[f], shift);
      while (index[2 * h + 1] !== 0) h = (h + 1) & mask;
      index[2 * h] = B[f];
      index[2 * h + 1] = f + 1;
    }
    this.index = index;
    this.shift = shift;
    this.numeric = numeric;
    if (all) {
      this.unindexed = 0;
      // a new array, not cleared in place: a snapshot may share the old one
      this.unindexedFn = new Uint8Array(0);
    }
  }
}

/** `a` grown to hold index `i` (doubling), zeros beyond its old length. */
function grownBytes(a: Uint8Array, i: number): Uint8Array {
  const b = new Uint8Array(Math.max(i + 1, 2 * a.length, 64));
  b.set(a);
  return b;
}
