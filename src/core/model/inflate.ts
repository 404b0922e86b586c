import { Inflate } from 'fflate';

/**
 * The two pieces gunzip.ts and unzip.ts are built from: a byte source over a stream that can
 * give back what was not used, and raw deflate through fflate that says where its data ended.
 */

/** Bytes from a stream, with the offset consumed so far and a way to give back the unused tail of a read. */
export class ByteSource {
  /** bytes handed out so far (less those given back) */
  offset = 0;
  private held: Uint8Array | null = null;
  private done = false;
  /** why the underlying stream failed, if it did (it then reads as ended) */
  error: unknown = null;
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** The next bytes, at most `max` of them, or null at the end. */
  async next(max = Infinity): Promise<Uint8Array | null> {
    let b = this.held;
    this.held = null;
    while (!b || b.length === 0) {
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
      this.held = b.subarray(max);
      b = b.subarray(0, max);
    }
    this.offset += b.length;
    return b;
  }

  /** Gives back the last bytes read and not used (the tail of what next() returned). */
  unread(b: Uint8Array): void {
    if (b.length === 0) return;
    if (this.held) {
      const j = new Uint8Array(b.length + this.held.length);
      j.set(b);
      j.set(this.held, b.length);
      this.held = j;
    } else this.held = b;
    this.offset -= b.length;
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
    this.held = null;
    this.done = true;
    await this.reader.cancel().catch(() => {});
  }
}

/** What fflate's Inflate keeps (fflate 0.8's fields, the ones its own Gunzip reads to find a member's end). */
interface InflateState {
  /** pending input, from the byte holding the next bit */
  p: Uint8Array;
  /** f: the final block was begun; l: a block is under way; p: the bit position within `p` */
  s: { f?: number; l?: unknown; p?: number };
}

/**
 * Raw deflate (RFC 1951) through fflate's streaming Inflate, fed in pieces: `push` gives back
 * the bytes after the end of the deflate data once it ended (the gzip trailer, the next zip
 * entry), and output comes through `onData` as it is inflated. Bad data throws.
 */
export class RawInflate {
  private readonly inf: Inflate;
  ended = false;
  constructor(onData: (data: Uint8Array) => void) {
    this.inf = new Inflate((d) => {
      if (d.length > 0) onData(d);
    });
  }
  /** Feeds `chunk`; null while the deflate data goes on, else the bytes after its end (maybe none). */
  push(chunk: Uint8Array): Uint8Array | null {
    if (this.ended) return chunk;
    this.inf.push(chunk, false);
    const st = this.inf as unknown as InflateState;
    if (st.s.f && !st.s.l) {
      this.ended = true;
      return st.p.subarray(((st.s.p ?? 0) + 7) >> 3);
    }
    return null;
  }
}
