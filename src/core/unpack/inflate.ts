import { Inflate } from 'fflate';

/**
 * The two pieces gunzip.ts and unzip.ts are built from: a byte source over a stream that can
 * give back what was not used, and raw deflate through fflate that says where its data ended.
 */

/**
 * Work counters for tests (bytes copied by ByteSource and by fflate's Inflate as far as its state
 * shows, pieces pushed into it), so a test can bound the work per input byte without timing it.
 */
export const inflateWorkForTests = { copied: 0, pushes: 0 };

/** Bytes from a stream, with the offset consumed so far and a way to give back the unused tail of a read. */
export class ByteSource {
  /** bytes handed out so far (less those given back) */
  offset = 0;
  /** bytes given back or not yet handed out, the next to read last; views, never copies */
  private held: Uint8Array[] = [];
  private done = false;
  /** why the underlying stream failed, if it did (it then reads as ended): see `failure` */
  error: unknown = null;
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** The next bytes, at most `max` of them, or null at the end. */
  async next(max = Infinity): Promise<Uint8Array | null> {
    let b = this.held.pop();
    while (!b || b.length === 0) {
      if (this.held.length > 0) {
        b = this.held.pop();
        continue;
      }
      if (this.done) return null;
      try {
        const r = await this.reader.read();
        if (r.done) {
          this.done = true;
          return null;
        }
        b = r.value;
      } catch (e) {
        this.error = e;
        this.done = true;
        return null;
      }
    }
    if (b.length > max) {
      this.held.push(b.subarray(max));
      b = b.subarray(0, max);
    }
    this.offset += b.length;
    return b;
  }

  /**
   * Gives back the last bytes read and not used (the tail of what next() returned), without
   * copying: bytes just before the held ones in the same buffer extend that view, others are
   * kept as a view of their own.
   */
  unread(b: Uint8Array): void {
    if (b.length === 0) return;
    const top = this.held[this.held.length - 1];
    if (top && top.buffer === b.buffer && b.byteOffset + b.length === top.byteOffset) {
      this.held[this.held.length - 1] = new Uint8Array(b.buffer, b.byteOffset, b.length + top.length);
    } else this.held.push(b);
    this.offset -= b.length;
  }

  /**
   * When the stream ended because reading it failed, the diagnostic for that (in place of
   * "truncated"/"cut short", which would blame the file); null when it simply ended.
   */
  failure(): string | null {
    if (this.error === null) return null;
    const why = this.error instanceof Error ? this.error.message : String(this.error);
    return `reading the file failed at offset ${this.offset} (${why || 'no reason given'}): what was read before is kept`;
  }

  /** n bytes, or fewer when the stream ends first (for headers: n is small). */
  async exactly(n: number): Promise<Uint8Array> {
    const first = await this.next(n);
    if (!first || first.length === n) return first ?? new Uint8Array(0);
    const out = new Uint8Array(n);
    out.set(first);
    let got = first.length;
    while (got < n) {
      const b = await this.next(n - got);
      if (!b) return out.subarray(0, got);
      out.set(b, got);
      got += b.length;
    }
    return out;
  }

  /** Skips n bytes without looking at them; the number skipped (fewer at the end). */
  async skip(n: number): Promise<number> {
    let left = n;
    while (left > 0) {
      const b = await this.next(Math.min(left, 1 << 20));
      if (!b) break;
      left -= b.length;
    }
    return n - left;
  }

  async cancel(): Promise<void> {
    this.held = [];
    this.done = true;
    await this.reader.cancel().catch(() => {});
  }
}

/**
 * What fflate's Inflate keeps (fflate 0.8's fields, the ones its own Gunzip reads to find a
 * member's end). A pin, not the public API: fflate's streaming classes say nothing of where the
 * deflate data ended (its Gunzip and Unzip find that through these same fields), and gzip
 * members and zip entries need it. package.json pins fflate to exactly 0.8.3, and inflate.test.ts
 * ('RawInflate finds the end of the deflate data') holds the end and the bytes after it to
 * node:zlib's for every block type in pieces of 1, 7 and 4,096 bytes: a version that moves the
 * fields fails there. Upgrade by hand, with that test.
 */
interface InflateState {
  /** pending input, from the byte holding the next bit */
  p: Uint8Array;
  /** the output window kept for back-references */
  o: Uint8Array;
  /** f: the final block was begun; l: a block is under way; p: the bit position within `p` */
  s: { f?: number; l?: unknown; p?: number };
}

/** The first piece of deflate data to feed at once; callers double it up to their own piece size. */
export const FIRST_PIECE = 64;

/**
 * Raw deflate (RFC 1951) through fflate's streaming Inflate, fed in pieces: `push` gives back
 * the bytes after the end of the deflate data once it ended (the gzip trailer, the next zip
 * entry), and output comes through `onData` as it is inflated. Bad data throws.
 *
 * fflate copies what it has not used of a push (at the end, the bytes after the deflate data),
 * so callers start each stream with a small piece (FIRST_PIECE, doubling): a stream's bytes
 * after its end then cost at most about twice its own length, not a whole piece each.
 */
export class RawInflate {
  private readonly inf: Inflate;
  ended = false;
  constructor(onData: (data: Uint8Array) => void) {
    this.inf = new Inflate((d) => {
      if (d.length > 0) {
        inflateWorkForTests.copied += d.length;
        onData(d);
      }
    });
  }
  /**
   * Feeds `chunk`; null while the deflate data goes on, else the bytes after its end (maybe
   * none): a view of `chunk`'s own tail where they all lie in it (so ByteSource.unread takes it
   * back without a copy), else fflate's copy of them.
   */
  push(chunk: Uint8Array): Uint8Array | null {
    if (this.ended) return chunk;
    const st = this.inf as unknown as InflateState;
    const pending = st.p.length;
    this.inf.push(chunk, false);
    inflateWorkForTests.pushes++;
    // fflate joins pending input to the chunk (a copy), then keeps a copy of what it did not use and of its window
    inflateWorkForTests.copied += (pending > 0 ? pending + chunk.length : 0) + st.p.length + st.o.length;
    if (st.s.f && !st.s.l) {
      this.ended = true;
      const unused = Math.max(0, st.p.length - (((st.s.p ?? 0) + 7) >> 3));
      return unused <= chunk.length ? chunk.subarray(chunk.length - unused) : st.p.subarray(st.p.length - unused);
    }
    return null;
  }
}
