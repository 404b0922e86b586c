type TypedArrayCtor<T> = { new (n: number): T; BYTES_PER_ELEMENT: number };
type Typed = Int32Array | Float64Array | Uint8Array | Int16Array | Uint32Array;

/** An append-only typed array that doubles its capacity; `view()` trims to the length. */
export class Growable<T extends Typed> {
  private data: T;
  length = 0;
  constructor(private readonly ctor: TypedArrayCtor<T>, initial = 1024) {
    this.data = new ctor(initial);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new this.ctor(this.data.length * 2);
      (next as Typed).set(this.data as never);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  get(i: number): number {
    return this.data[i];
  }
  set(i: number, v: number): void {
    this.data[i] = v;
  }
  /** The contents without copying, for read-only loops once nothing more is pushed. */
  raw(): T {
    return this.data.subarray(0, this.length) as T;
  }
  /** A copy trimmed to length (safe to transfer). */
  view(): T {
    return this.data.slice(0, this.length) as T;
  }
}

/** Interns strings to dense indices. */
export class StringTable {
  readonly strings: string[] = [];
  private index = new Map<string, number>();
  intern(s: string): number {
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.index.set(s, i);
    }
    return i;
  }
  lookup(s: string): number | undefined {
    return this.index.get(s);
  }
}
