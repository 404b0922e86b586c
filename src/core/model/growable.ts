type TypedArrayCtor<T> = { new (n: number): T; BYTES_PER_ELEMENT: number };
type Typed = Int32Array | Float64Array | Uint8Array | Int16Array | Uint32Array;

/**
 * An append-only typed array that doubles its capacity; `view()` trims to the length.
 *
 * `frozen()` hands out a read-only view of the first `length` values that shares the buffer
 * (no copy), for a capture that must stay as it was while the session behind it goes on
 * (ingest.ts). The live array then copies its buffer before it would overwrite a value a
 * frozen view can see (`set` below that length, or a `push` after `truncate`).
 */
export class Growable<T extends Typed> {
  private data: T;
  length = 0;
  /** values [0, sharedUpTo) of `data` are seen by a frozen view */
  private sharedUpTo = 0;
  private readonly readOnly: boolean;
  constructor(private readonly ctor: TypedArrayCtor<T>, initial = 1024) {
    this.data = new ctor(initial);
    this.readOnly = false;
  }
  push(v: number): void {
    if (this.readOnly) throw new Error('a frozen column is read-only');
    if (this.length === this.data.length) this.realloc(this.data.length * 2);
    else if (this.length < this.sharedUpTo) this.realloc(this.data.length);
    this.data[this.length++] = v;
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
  /** A copy trimmed to length (safe to transfer). */
  view(): T {
    return this.data.slice(0, this.length) as T;
  }
  /** A read-only view of the values so far, sharing the buffer: later pushes, sets and truncates here do not show in it. */
  frozen(): Growable<T> {
    this.sharedUpTo = Math.max(this.sharedUpTo, this.length);
    const f = Object.create(Growable.prototype) as Growable<T>;
    Object.assign(f, { ctor: this.ctor, data: this.data, length: this.length, sharedUpTo: this.length, readOnly: true });
    return f;
  }
  private realloc(capacity: number): void {
    const next = new this.ctor(capacity);
    (next as Typed).set(this.data.subarray(0, this.length) as never);
    this.data = next;
    this.sharedUpTo = 0;
  }
}

/** Interns strings to dense indices. */
export class StringTable {
  readonly strings: string[] = [];
  private index = new Map<string, number>();
  private readOnly = false;
  intern(s: string): number {
    if (this.readOnly) {
      const known = this.lookup(s);
      if (known === undefined) throw new Error('a snapshot of a string table is read-only');
      return known;
    }
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.index.set(s, i);
    }
    return i;
  }
  lookup(s: string): number | undefined {
    const i = this.index.get(s);
    // a snapshot shares the index with the live table, which may have interned more since
    return i !== undefined && this.strings[i] === s ? i : undefined;
  }
  get size(): number {
    return this.strings.length;
  }
  /** Forgets the strings from index `n` on (a rollback). */
  truncate(n: number): void {
    if (this.readOnly) throw new Error('a snapshot of a string table is read-only');
    for (let i = n; i < this.strings.length; i++) this.index.delete(this.strings[i]);
    this.strings.length = n;
  }
  /**
   * The strings so far, as a table that no longer grows: its own copy of the list (pointers
   * only), sharing the index, which `lookup` bounds by that list's length.
   */
  snapshot(): StringTable {
    const s = Object.create(StringTable.prototype) as StringTable;
    Object.assign(s, { strings: this.strings.slice(), index: this.index, readOnly: true });
    return s;
  }
}
