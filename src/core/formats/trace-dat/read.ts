/**
 * The byte sources the trace.dat readers pull from, and the typed reads over them.
 *
 * A reader is a generator: `yield n` asks the driver for exactly n bytes of the file (never more
 * than MAX_PIECE, so no allocation follows an untrusted count) and gets them, or null at the end
 * of the input. A `Src` hides whether the bytes come from the file (through the driver), from a
 * window of it (a section: reads stop at its end), or from memory (a decompressed block, or file
 * bytes held back until the table that explains them arrives). Sources whose bytes are file
 * bytes count them used or unused; an in-memory copy of decompressed data only names what it
 * does not use (its compressed bytes were counted as a whole).
 */
import type { ParseContext } from '../types.ts';

/** Largest piece asked of the driver at once. */
export const MAX_PIECE = 1 << 16;
/** Largest text taken as one (a larger one is skipped with a diagnostic). */
export const MAX_TEXT = 1 << 24;

/** A pull of bytes: yields a byte count to the driver, gets the bytes (or null) back. */
export type Pull<T> = Generator<number, T, Uint8Array | null>;

/** What a file read adds up: every byte used or unused. */
export interface Counts {
  total: number;
  used: number;
  unused: number;
}

export interface Src {
  /** offset of the next byte: a file offset, or an offset into a decompressed block */
  pos: number;
  /** exactly n bytes (n <= MAX_PIECE for the file), null when they are not there */
  take(n: number): Pull<Uint8Array | null>;
  /** n bytes just taken are used */
  use(n: number): void;
  /** n bytes taken at `at` are not used, for `why` */
  unused(at: number, n: number, why: string): void;
  diag(at: number, msg: string): void;
}

/** The file itself, through the driver. */
export class FileSrc implements Src {
  pos = 0;
  constructor(
    readonly res: Counts,
    readonly ctx: ParseContext,
  ) {}
  *take(n: number): Pull<Uint8Array | null> {
    const b = yield n;
    if (b) this.pos += n;
    return b;
  }
  use(n: number): void {
    this.res.used += n;
  }
  unused(at: number, n: number, why: string): void {
    if (n <= 0) return;
    this.res.unused += n;
    this.ctx.diagnostics.atOffset(at, why);
  }
  diag(at: number, msg: string): void {
    this.ctx.diagnostics.atOffset(at, msg);
  }
}

/** A window of another source ending at `end`: reads past it get null (the parent is not read). */
export class WindowSrc implements Src {
  constructor(
    readonly parent: Src,
    readonly end: number,
  ) {}
  get pos(): number {
    return this.parent.pos;
  }
  *take(n: number): Pull<Uint8Array | null> {
    if (this.parent.pos + n > this.end) return null;
    return yield* this.parent.take(n);
  }
  use(n: number): void {
    this.parent.use(n);
  }
  unused(at: number, n: number, why: string): void {
    this.parent.unused(at, n, why);
  }
  diag(at: number, msg: string): void {
    this.parent.diag(at, msg);
  }
}

/**
 * Bytes in memory, as pieces (never joined as a whole). `file`: they are file bytes starting at
 * file offset `base` (counted like the file's); else a decompressed block whose unused parts are
 * named, with `where` saying which block, and `gaps` counting them.
 */
export class MemSrc implements Src {
  pos: number;
  private piece = 0;
  private inPiece = 0;
  gaps = 0;
  constructor(
    readonly pieces: Uint8Array[],
    readonly base: number,
    readonly sink: Src | null,
    readonly where: string,
  ) {
    this.pos = base;
  }
  // a generator for the Pull protocol's callers (yield*), though its pieces are all here already
  // eslint-disable-next-line require-yield
  *take(n: number): Pull<Uint8Array | null> {
    const ps = this.pieces;
    while (this.piece < ps.length && this.inPiece === ps[this.piece].length) {
      this.piece++;
      this.inPiece = 0;
    }
    if (this.piece >= ps.length) return n === 0 ? new Uint8Array(0) : null;
    const p = ps[this.piece];
    if (this.inPiece + n <= p.length) {
      const b = p.subarray(this.inPiece, this.inPiece + n);
      this.inPiece += n;
      this.pos += n;
      return b;
    }
    // spans pieces: copy, after checking the bytes are all there
    let have = p.length - this.inPiece;
    for (let i = this.piece + 1; i < ps.length && have < n; i++) have += ps[i].length;
    if (have < n) return null;
    const out = new Uint8Array(n);
    let o = 0;
    while (o < n) {
      const q = ps[this.piece];
      const k = Math.min(n - o, q.length - this.inPiece);
      out.set(q.subarray(this.inPiece, this.inPiece + k), o);
      o += k;
      this.inPiece += k;
      if (this.inPiece === q.length && o < n) {
        this.piece++;
        this.inPiece = 0;
      }
    }
    this.pos += n;
    return out;
  }
  use(n: number): void {
    if (this.sink) this.sink.use(n);
  }
  unused(at: number, n: number, why: string): void {
    if (n <= 0) return;
    if (this.sink) this.sink.unused(at, n, why);
    else {
      this.gaps += n;
      this.diag(at, why);
    }
  }
  diag(at: number, msg: string): void {
    if (this.sink) this.sink.diag(at, msg);
    else this.ctxDiag(at, msg);
  }
  /** set by the owner of a decompressed block: where its diagnostics go */
  ctxDiag: (at: number, msg: string) => void = () => {};
}

const latin1 = new TextDecoder('latin1');
const utf8 = new TextDecoder('utf-8');

/** Typed reads in the file's byte order over a source. */
export class Rd {
  constructor(
    readonly src: Src,
    readonly little: boolean,
  ) {}
  get pos(): number {
    return this.src.pos;
  }
  diag(at: number, msg: string): void {
    this.src.diag(at, msg);
  }
  truncated(what: string): void {
    this.src.diag(this.src.pos, `trace.dat ends inside ${what}`);
  }
  *bytes(n: number): Pull<Uint8Array | null> {
    const b = yield* this.src.take(n);
    if (b) this.src.use(n);
    return b;
  }
  *u16(): Pull<number | null> {
    const b = yield* this.bytes(2);
    return b && new DataView(b.buffer, b.byteOffset, 2).getUint16(0, this.little);
  }
  *u32(): Pull<number | null> {
    const b = yield* this.bytes(4);
    return b && new DataView(b.buffer, b.byteOffset, 4).getUint32(0, this.little);
  }
  /** a u64 as a number (exact below 2^53) */
  *u64(): Pull<number | null> {
    const b = yield* this.bytes(8);
    return b && u64At(b, 0, this.little);
  }
  /** a NUL-terminated string of at most `max` bytes; null when longer or cut */
  *cstr(max: number): Pull<string | null> {
    const bytes: number[] = [];
    for (;;) {
      const b = yield* this.bytes(1);
      if (!b) return null;
      if (b[0] === 0) return latin1.decode(new Uint8Array(bytes));
      if (bytes.length >= max) return null;
      bytes.push(b[0]);
    }
  }
  /** reads n bytes in pieces, each given to `each` (not counted: `each` decides); false when cut */
  *pieces(n: number, each: (b: Uint8Array, at: number) => void): Pull<boolean> {
    let left = n;
    while (left > 0) {
      const k = Math.min(left, MAX_PIECE);
      const at = this.src.pos;
      const b = yield* this.src.take(k);
      if (!b) return false;
      each(b, at);
      left -= k;
    }
    return true;
  }
  /** n bytes (read in pieces, joined), used; null when cut (what was read is reported) */
  *blob(n: number): Pull<Uint8Array | null> {
    const at = this.src.pos;
    const parts: Uint8Array[] = [];
    let got = 0;
    const ok = yield* this.pieces(n, (b) => {
      parts.push(b.slice());
      got += b.length;
    });
    if (!ok) {
      this.src.unused(at, got, 'cut short');
      return null;
    }
    this.src.use(n);
    return join(parts, n);
  }
  /** n bytes used as they pass (padding, options not read); false when cut */
  *skipUsed(n: number): Pull<boolean> {
    return yield* this.pieces(n, (b) => this.src.use(b.length));
  }
  /** n bytes not used, one diagnostic for them; false when cut */
  *skipUnused(n: number, why: string): Pull<boolean> {
    const at = this.src.pos;
    let got = 0;
    const ok = yield* this.pieces(n, (b) => (got += b.length));
    this.src.unused(at, got, why);
    return ok;
  }
  /** Every byte left in the source, not used, for `why` (one diagnostic). */
  *restUnused(why: string): Pull<void> {
    const at = this.src.pos;
    let n = 0;
    for (;;) {
      const b = yield* this.src.take(1);
      if (!b) break;
      n++;
    }
    this.src.unused(at, n, why);
  }
  /** A text block of `size` bytes: its text when at most MAX_TEXT, else skipped as unused. */
  *text(size: number, what: string): Pull<string | null> {
    const at = this.src.pos;
    if (size > MAX_TEXT) {
      if (!(yield* this.skipUnused(size, `${what} of ${size} bytes: too large, skipped`))) this.truncated(what);
      return null;
    }
    const parts: Uint8Array[] = [];
    const ok = yield* this.pieces(size, (b) => parts.push(b.slice()));
    if (!ok) {
      let n = 0;
      for (const p of parts) n += p.length;
      this.src.unused(at, n, `${what}: cut short`);
      this.truncated(what);
      return null;
    }
    this.src.use(size);
    return utf8.decode(join(parts, size));
  }
}

/** The u64 at `o` of `b` as a number. */
export function u64At(b: Uint8Array, o: number, little: boolean): number {
  const v = new DataView(b.buffer, b.byteOffset + o, 8);
  const lo = v.getUint32(little ? 0 : 4, little);
  const hi = v.getUint32(little ? 4 : 0, little);
  return hi * 2 ** 32 + lo;
}

/** Pieces of known total length as one array. */
export function join(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1 && parts[0].length === size) return parts[0];
  const all = new Uint8Array(size);
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.length;
  }
  return all;
}
