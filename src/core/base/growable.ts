type TypedArrayCtor<T> = { new (n: number): T; BYTES_PER_ELEMENT: number };
type Typed = Int32Array | Float64Array | Uint8Array | Int16Array | Uint32Array | Int8Array;

/** `a`, or a copy of it with room for `need` values, at least twice its length (columns kept by hand, outside a Growable). */
export function grow<T extends Int32Array | Float64Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

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
  constructor(
    private readonly ctor: TypedArrayCtor<T>,
    initial = 1024,
  ) {
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
  /**
   * Pushes `src[from, to)` at once (one copy, not a push per value). `exact`: when it must grow,
   * to just the new length, not double (a join's last append: no slack for the trim to copy away).
   */
  append(src: Typed, from: number, to: number, exact = false): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    const n = this.length;
    const end = n + to - from;
    if (end > this.data.length) this.realloc(exact ? end : Math.max(this.data.length * 2, end, 16));
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
  /**
   * Drops the capacity beyond the length (at a finish: the doubling's slack is not kept), unless
   * it is at most `keep` of the length: a column sized ahead (`reserve`) is not copied whole to
   * shed a few percent.
   */
  trim(keep = 0): void {
    if (this.readOnly || this.data.length - this.length <= this.length * keep) return;
    this.realloc(Math.max(this.length, 1));
  }
  /** Room for `capacity` values in all, made at once (one copy) when there is less. */
  reserve(capacity: number): void {
    if (this.readOnly || capacity <= this.data.length) return;
    this.realloc(capacity);
  }
  /** Bytes held (capacity, not length). */
  get byteLength(): number {
    return this.data.byteLength;
  }
  /** Values held without growing. */
  get capacity(): number {
    return this.data.length;
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
  /** Values held without growing. */
  get capacity(): number {
    return this.data.length;
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
  /** Pushes `src[from, to)` at once: as wide as the widest of them needs, then one copy; `exact` as Growable's. */
  append(src: Int32Array | Int16Array | Int8Array, from: number, to: number, exact = false): void {
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
    if (bits !== have || end > d.length) this.realloc(bits, Math.max(end > d.length ? (exact ? end : d.length * 2) : d.length, end, exact ? 1 : 16));
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
  /** As Growable's. */
  trim(keep = 0): void {
    if (this.readOnly || this.data.length - this.length <= this.length * keep) return;
    this.realloc(this.bitsFor(0), Math.max(this.length, 1));
  }
  /** As Growable's: at the current width. */
  reserve(capacity: number): void {
    if (this.readOnly || capacity <= this.data.length) return;
    this.realloc(this.bitsFor(0), capacity);
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
