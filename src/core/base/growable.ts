import { fmix32, halfSipHash, PROCESS_KEY, randomWords } from './keyed-hash.ts';

type TypedArrayCtor<T> = { new (n: number): T; BYTES_PER_ELEMENT: number };
type Typed = Int32Array | Float64Array | Uint8Array | Int16Array | Uint32Array | Int8Array;

/**
 * An append-only typed array that doubles its capacity; `view()` trims to the length.
 *
 * `frozen()` hands out a read-only view of the first `length` values that shares the buffer
 * (no copy), for a capture that must stay as it was while the session behind it goes on
 * (ingest.ts). The live array then copies its buffer before it would overwrite a value a
 * frozen view can see (`set` below that length, or a `push` after `truncate`).
 */
export class Growable<T extends Typed> {
  protected data: T;
  length = 0;
  /** values [0, sharedUpTo) of `data` are seen by a frozen view */
  protected sharedUpTo = 0;
  protected readonly readOnly: boolean;
  constructor(private readonly ctor: TypedArrayCtor<T>, initial = 1024) {
    this.data = new ctor(initial);
    this.readOnly = false;
  }
  push(v: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    const n = this.length;
    if (n === this.data.length) this.realloc(Math.max(this.data.length * 2, 16));
    else if (n < this.sharedUpTo) this.realloc(this.data.length);
    this.data[n] = v;
    this.length = n + 1;
  }
  /** Pushes `src[from, to)` at once (one copy, not a push per value). */
  append(src: Typed, from: number, to: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    const n = this.length;
    const end = n + to - from;
    if (end > this.data.length) this.realloc(Math.max(this.data.length * 2, end, 16));
    else if (n < this.sharedUpTo) this.realloc(this.data.length);
    (this.data as Typed).set(src.subarray(from, to) as never, n);
    this.length = end;
  }
  get(i: number): number {
    return this.data[i];
  }
  set(i: number, v: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    if (i < this.sharedUpTo) this.realloc(this.data.length);
    this.data[i] = v;
  }
  /** Drops the values from `n` on (a rollback); `n` at most the length. */
  truncate(n: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    if (n < 0 || n > this.length) throw new RangeError(`cannot truncate ${this.length} values to ${n}`);
    this.length = n;
  }
  /** The contents without copying, for read-only loops once nothing more is pushed. */
  raw(): T {
    return this.data.subarray(0, this.length) as T;
  }
  /** The contents to write in place (`set` without its check per value): copied first if a frozen view shares them. */
  writable(): T {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    if (this.sharedUpTo > 0) this.realloc(this.data.length);
    return this.data.subarray(0, this.length) as T;
  }
  /** A copy trimmed to length (safe to transfer). */
  view(): T {
    return this.data.slice(0, this.length) as T;
  }
  /** Drops the capacity beyond the length (at a finish: the doubling's slack is not kept). */
  trim(): void {
    if (this.readOnly || this.data.length === this.length) return;
    this.realloc(Math.max(this.length, 1));
  }
  /** Bytes held (capacity, not length). */
  get byteLength(): number {
    return this.data.byteLength;
  }
  /** A read-only view of the values so far, sharing the buffer: later pushes, sets and truncates here do not show in it. */
  frozen(): Growable<T> {
    this.sharedUpTo = Math.max(this.sharedUpTo, this.length);
    const f = Object.create(Growable.prototype) as Growable<T>;
    Object.assign(f, { ctor: this.ctor, data: this.data, length: this.length, sharedUpTo: this.length, readOnly: true });
    return f;
  }
  protected realloc(capacity: number): void {
    const next = new this.ctor(capacity);
    (next as Typed).set(this.data.subarray(0, this.length) as never);
    this.data = next;
    this.sharedUpTo = 0;
  }
}

/**
 * Growables of one element type each, with a push of their own: V8 keeps type feedback per
 * function, so Growable's one push, shared by columns of every element type, stores through a
 * polymorphic path. A column pushed for every line read (trace-columns.ts) is one of these.
 */
export class Float64Column extends Growable<Float64Array> {
  constructor(initial?: number) {
    super(Float64Array, initial);
  }
  override push(v: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    const n = this.length;
    if (n === this.data.length) this.realloc(Math.max(this.data.length * 2, 16));
    else if (n < this.sharedUpTo) this.realloc(this.data.length);
    this.data[n] = v;
    this.length = n + 1;
  }
}

export class Int32Column extends Growable<Int32Array> {
  constructor(initial?: number) {
    super(Int32Array, initial);
  }
  override push(v: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    const n = this.length;
    if (n === this.data.length) this.realloc(Math.max(this.data.length * 2, 16));
    else if (n < this.sharedUpTo) this.realloc(this.data.length);
    this.data[n] = v;
    this.length = n + 1;
  }
}

export class Uint8Column extends Growable<Uint8Array> {
  constructor(initial?: number) {
    super(Uint8Array, initial);
  }
  override push(v: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    const n = this.length;
    if (n === this.data.length) this.realloc(Math.max(this.data.length * 2, 16));
    else if (n < this.sharedUpTo) this.realloc(this.data.length);
    this.data[n] = v;
    this.length = n + 1;
  }
}

/**
 * Integers as small as they come: stored in an Int8Array until a value needs 16 bits, then an
 * Int16Array, then an Int32Array (each widening copies once). The same operations and frozen
 * views as Growable; `raw()` gives the current width, `view()` a full-width copy. Each width has
 * its own field and its own stores, so every store site sees one array type.
 */
export class SmallInts {
  private d8: Int8Array | null;
  private d16: Int16Array | null = null;
  private d32: Int32Array | null = null;
  length = 0;
  /** values [0, sharedUpTo) are seen by a frozen view */
  private sharedUpTo = 0;
  private readonly readOnly: boolean = false;
  constructor(initial = 1024) {
    this.d8 = new Int8Array(initial);
  }
  private get data(): Int8Array | Int16Array | Int32Array {
    return this.d8 ?? this.d16 ?? this.d32!;
  }
  get byteLength(): number {
    return this.data.byteLength;
  }
  push(v: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    const n = this.length;
    // a value that fits the current width, with room, where no frozen view looks: stored at once
    if (n >= this.sharedUpTo) {
      const d8 = this.d8;
      if (d8 !== null) {
        if ((v << 24) >> 24 === v && n < d8.length) {
          d8[n] = v;
          this.length = n + 1;
          return;
        }
      } else {
        const d16 = this.d16;
        if (d16 !== null) {
          if ((v << 16) >> 16 === v && n < d16.length) {
            d16[n] = v;
            this.length = n + 1;
            return;
          }
        } else {
          const d32 = this.d32!;
          if ((v | 0) === v && n < d32.length) {
            d32[n] = v;
            this.length = n + 1;
            return;
          }
        }
      }
    }
    this.room(v, n + 1);
    this.put(n, v);
    this.length = n + 1;
  }
  /** Pushes `src[from, to)` at once: as wide as the widest of them needs, then one copy. */
  append(src: Int32Array | Int16Array | Int8Array, from: number, to: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    if (to <= from) return;
    const have = this.d8 !== null ? 8 : this.d16 !== null ? 16 : 32;
    let bits: 8 | 16 | 32 = have;
    // values of an array no wider than this column's fit it: only a wider one is looked through
    if (src.BYTES_PER_ELEMENT * 8 > have) {
      let lo = 0;
      let hi = 0;
      for (let i = from; i < to; i++) {
        const v = src[i];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      const loBits = this.bitsFor(lo);
      const hiBits = this.bitsFor(hi);
      bits = loBits > hiBits ? loBits : hiBits;
    }
    const n = this.length;
    const end = n + to - from;
    const d = this.data;
    if (bits !== have || end > d.length) this.realloc(bits, Math.max(end > d.length ? d.length * 2 : d.length, end, 16));
    else if (n < this.sharedUpTo) this.realloc(bits, d.length);
    this.data.set(src.subarray(from, to), n);
    this.length = end;
  }
  get(i: number): number {
    const d8 = this.d8;
    if (d8 !== null) return d8[i];
    const d16 = this.d16;
    return d16 !== null ? d16[i] : this.d32![i];
  }
  set(i: number, v: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    this.room(v, this.length, i < this.sharedUpTo);
    this.put(i, v);
  }
  truncate(n: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    if (n < 0 || n > this.length) throw new RangeError(`cannot truncate ${this.length} values to ${n}`);
    this.length = n;
  }
  raw(): Int8Array | Int16Array | Int32Array {
    return this.data.subarray(0, this.length);
  }
  /** A copy at full width (safe to transfer). */
  view(): Int32Array {
    return Int32Array.from(this.raw());
  }
  trim(): void {
    if (this.readOnly || this.data.length === this.length) return;
    this.realloc(this.bitsFor(0), Math.max(this.length, 1));
  }
  frozen(): SmallInts {
    this.sharedUpTo = Math.max(this.sharedUpTo, this.length);
    const f = Object.create(SmallInts.prototype) as SmallInts;
    Object.assign(f, { d8: this.d8, d16: this.d16, d32: this.d32, length: this.length, sharedUpTo: this.length, readOnly: true });
    return f;
  }
  private put(i: number, v: number): void {
    if (this.d8 !== null) this.d8[i] = v;
    else if (this.d16 !== null) this.d16[i] = v;
    else this.d32![i] = v;
  }
  /** The bits the column needs to hold its values and `v`. */
  private bitsFor(v: number): 8 | 16 | 32 {
    const have = this.d8 !== null ? 8 : this.d16 !== null ? 16 : 32;
    const need = (v << 24) >> 24 === v ? 8 : (v << 16) >> 16 === v ? 16 : 32;
    return have > need ? have : need;
  }
  /** Makes room for `v` among `size` values: wider, larger, or a copy of a buffer a frozen view shares. */
  private room(v: number, size: number, shared = false): void {
    const bits = this.bitsFor(v);
    const d = this.data;
    const wider = bits !== (this.d8 !== null ? 8 : this.d16 !== null ? 16 : 32);
    if (wider || size > d.length) this.realloc(bits, Math.max(d.length * (size > d.length ? 2 : 1), 16));
    else if (shared || this.length < this.sharedUpTo) this.realloc(bits, d.length);
  }
  private realloc(bits: 8 | 16 | 32, capacity: number): void {
    const old = this.raw();
    const next = bits === 8 ? new Int8Array(capacity) : bits === 16 ? new Int16Array(capacity) : new Int32Array(capacity);
    next.set(old);
    this.d8 = bits === 8 ? (next as Int8Array) : null;
    this.d16 = bits === 16 ? (next as Int16Array) : null;
    this.d32 = bits === 32 ? (next as Int32Array) : null;
    this.sharedUpTo = 0;
  }
}

/**
 * FNV-1a over the UTF-16 code units of `s[from, to)`, then murmur3's finalizer (as an int32): FNV-1a alone
 * spreads its low bits (the table's slot) poorly over strings that differ in a few characters. Keyed
 * (keyed-hash.ts): `k0` is FNV's start, `k1` enters before the finalizer; (0, 0) is the fixed hash
 * this table had before, which names can be chosen to flood.
 */
export function hashRange(s: string, from: number, to: number, k0 = PROCESS_KEY[0], k1 = PROCESS_KEY[1]): number {
  let h = 0x811c9dc5 ^ k0;
  for (let i = from; i < to; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return fmix32(h ^ k1) | 0;
}

/**
 * The guard against probe chains that grow long: a table re-keys (a fresh random key, and
 * HalfSipHash from then on) once its probes since it was last built pass this many per lookup,
 * plus GUARD_SLACK. Random keys cost 1-3 probes a lookup at most half full (about 5 an insert,
 * counting the growth rehashes), so only keys that collide on purpose (or by a weakness of the
 * fast hash) reach it; their cost stays within this bound, amortized.
 */
export const GUARD_PROBES_PER_LOOKUP = 16;
export const GUARD_SLACK = 4096;
/** Re-keys at most this often; then the guard stands down (only a forced collision, `hashMaskForTests`, gets there). */
const MAX_REKEYS = 3;

export interface StringTableOptions {
  /** the fast hash's key; [0, 0] is the fixed hash of old (tests: what a flood costs without the key) */
  keyForTests?: readonly [number, number];
  /** false: never re-key, however long the chains (tests: the guard's bound can fail) */
  guardForTests?: boolean;
}

/**
 * Interns strings to dense indices. Looked up by an integer hash of the characters and a compare
 * with the one string of that hash (an open-addressing table of indices), so `internRange` finds
 * a string inside a longer text without slicing it: a string is made only on first sight.
 *
 * The hash is keyed (PROCESS_KEY), and a table whose lookups walk long chains anyway re-keys
 * (GUARD_PROBES_PER_LOOKUP): names chosen to collide cost what random ones cost.
 */
export class StringTable {
  readonly strings: string[] = [];
  private hashes: number[] = [];
  /** slot -> index + 1 (0: empty); its length is a power of two, at most half full */
  private table = new Int32Array(64);
  private readOnly = false;
  /** slots visited so far, by lookups, inserts and rebuilds (test support: what a flood costs, counted) */
  probes = 0;
  /** times the table took a new key */
  rekeys = 0;
  /** probes and lookups since the table was last built with a new key */
  private spent = 0;
  private lookups = 0;
  private k0: number;
  private k1: number;
  /** HalfSipHash (after a re-key) instead of the fast hash */
  private strong = false;
  private guard: boolean;
  /** `hashMaskForTests`: keep only these bits of each hash, to force collisions (tests: the guard's bound) */
  constructor(
    private readonly hashMaskForTests = 0xffffffff,
    options: StringTableOptions = {},
  ) {
    [this.k0, this.k1] = options.keyForTests ?? PROCESS_KEY;
    this.guard = options.guardForTests ?? true;
  }
  intern(s: string): number {
    return this.internRange(s, 0, s.length);
  }
  /** The index of `text[from, to)`, interned on first sight. */
  internRange(text: string, from: number, to: number): number {
    let h = this.hash(text, from, to);
    const found = this.find(text, from, to, h);
    if (this.overBudget()) {
      this.rekey();
      h = this.hash(text, from, to);
    }
    if (found >= 0) return found;
    if (this.readOnly) throw new Error('a snapshot of a string table is read-only');
    const i = this.strings.length;
    this.strings.push(from === 0 && to === text.length ? text : text.slice(from, to));
    this.hashes.push(h);
    if ((i + 1) * 2 > this.table.length) this.rehash(this.table.length * 2);
    this.place(h, i);
    return i;
  }
  lookup(s: string): number | undefined {
    const i = this.find(s, 0, s.length, this.hash(s, 0, s.length));
    if (this.overBudget()) this.rekey();
    return i >= 0 ? i : undefined;
  }
  get size(): number {
    return this.strings.length;
  }
  /** Forgets the strings from index `n` on (a rollback). */
  truncate(n: number): void {
    if (this.readOnly) throw new Error('a snapshot of a string table is read-only');
    this.strings.length = n;
    this.hashes.length = n;
    // a new table: a snapshot may still probe the old one
    this.rehash(this.table.length);
  }
  /**
   * The strings so far, as a table that no longer grows: its own copy of the list (pointers
   * only), sharing the hash table, whose entries past that list's length it skips. (The live
   * table only adds entries to a shared hash table; a truncate, growth or re-key gives it a new one.)
   */
  snapshot(): StringTable {
    const s = Object.create(StringTable.prototype) as StringTable;
    Object.assign(s, {
      strings: this.strings.slice(),
      hashes: this.hashes.slice(),
      table: this.table,
      readOnly: true,
      hashMaskForTests: this.hashMaskForTests,
      probes: this.probes,
      rekeys: this.rekeys,
      spent: 0,
      lookups: 0,
      k0: this.k0,
      k1: this.k1,
      strong: this.strong,
      guard: false,
    });
    return s;
  }
  /** The chains walked since the last re-key cost more than random keys could (a live table with its guard up). */
  private overBudget(): boolean {
    return this.guard && this.spent > GUARD_PROBES_PER_LOOKUP * this.lookups + GUARD_SLACK && !this.readOnly;
  }
  private hash(text: string, from: number, to: number): number {
    return (this.strong ? halfSipHash(this.k0, this.k1, text, from, to) : hashRange(text, from, to, this.k0, this.k1)) & this.hashMaskForTests;
  }
  private find(text: string, from: number, to: number, h: number): number {
    const t = this.table;
    const mask = t.length - 1;
    const len = to - from;
    const strings = this.strings;
    const n = strings.length;
    let found = -1;
    let probes = 0;
    for (let k = h & mask; probes <= mask; k = (k + 1) & mask) {
      probes++;
      const e = t[k];
      if (e === 0) break;
      const i = e - 1;
      if (i < n && this.hashes[i] === h) {
        const s = strings[i];
        if (s.length === len && text.startsWith(s, from)) {
          found = i;
          break;
        }
      }
    }
    this.probes += probes;
    this.spent += probes;
    this.lookups++;
    return found;
  }
  private place(h: number, i: number): void {
    const t = this.table;
    const mask = t.length - 1;
    let k = h & mask;
    let probes = 1;
    while (t[k] !== 0) {
      k = (k + 1) & mask;
      probes++;
    }
    t[k] = i + 1;
    this.probes += probes;
    this.spent += probes;
  }
  private rehash(slots: number): void {
    while (this.strings.length * 2 > slots) slots *= 2;
    this.table = new Int32Array(slots);
    for (let i = 0; i < this.strings.length; i++) this.place(this.hashes[i], i);
  }
  /** A fresh random key and HalfSipHash: every string hashed again, into a new table (a snapshot keeps the old). */
  private rekey(): void {
    const w = randomWords(2);
    this.k0 = w[0] | 0;
    this.k1 = w[1] | 0;
    this.strong = true;
    this.hashes = this.strings.map((s) => this.hash(s, 0, s.length));
    this.rehash(this.table.length);
    this.spent = 0;
    this.lookups = 0;
    if (++this.rekeys >= MAX_REKEYS) this.guard = false;
  }
}
