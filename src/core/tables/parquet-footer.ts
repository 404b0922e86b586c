/**
 * The key-value metadata of a Parquet file's footer (FileMetaData field 5), read with a small
 * Thrift compact-protocol walker that skips every other field: how `cli export` tells which
 * capture a flat folder's files hold (each table file carries `stackmap_explorer.capture_id`)
 * before it moves them into the per-capture layout. Bounded: every length is checked against the
 * bytes there are, nesting is limited, and nothing is allocated from a count read.
 */

/** The footer's last 8 bytes: the metadata's length (u32 LE) and `PAR1`. */
export const FOOTER_TAIL = 8;
const MAX_DEPTH = 32;

class Reader {
  pos = 0;
  constructor(private readonly b: Uint8Array) {}
  byte(): number {
    if (this.pos >= this.b.length) throw new Error('truncated');
    return this.b[this.pos++];
  }
  varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const c = this.byte();
      v += (c & 0x7f) * mul;
      if ((c & 0x80) === 0) return v;
      mul *= 128;
    }
    throw new Error('varint too long');
  }
  bytes(): Uint8Array {
    const n = this.varint();
    if (n > this.b.length - this.pos) throw new Error('length past the end');
    const out = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(type: number, depth: number): void {
    if (depth > MAX_DEPTH) throw new Error('nested too deep');
    switch (type) {
      case 1: // true
      case 2: // false (as a field; in a list a bool is one byte, see list)
        return;
      case 3:
        this.byte();
        return;
      case 4:
      case 5:
      case 6:
        this.varint();
        return;
      case 7:
        if (this.b.length - this.pos < 8) throw new Error('truncated');
        this.pos += 8;
        return;
      case 8:
        this.bytes();
        return;
      case 9:
      case 10: {
        const { size, elem } = this.listHeader();
        for (let i = 0; i < size; i++) elem === 1 || elem === 2 ? this.byte() : this.skip(elem, depth + 1);
        return;
      }
      case 11: {
        const size = this.varint();
        if (size === 0) return;
        const kv = this.byte();
        for (let i = 0; i < size; i++) {
          this.skip(kv >> 4, depth + 1);
          this.skip(kv & 15, depth + 1);
        }
        return;
      }
      case 12:
        this.struct(depth + 1, () => false);
        return;
      default:
        throw new Error(`unknown type ${type}`);
    }
  }
  listHeader(): { size: number; elem: number } {
    const h = this.byte();
    const size = h >> 4 === 15 ? this.varint() : h >> 4;
    // each element takes at least one byte: a size past the bytes left is a lie
    if (size > this.b.length - this.pos) throw new Error('list longer than the footer');
    return { size, elem: h & 15 };
  }
  /** Walks a struct; `field(id, type)` reads the field and returns true, or false to have it skipped. */
  struct(depth: number, field: (id: number, type: number) => boolean): void {
    if (depth > MAX_DEPTH) throw new Error('nested too deep');
    let id = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return;
      const type = h & 15;
      const delta = h >> 4;
      if (delta) id += delta;
      else {
        const z = this.varint();
        id = z % 2 ? -(z + 1) / 2 : z / 2;
      }
      if (!field(id, type)) this.skip(type, depth);
    }
  }
}

/**
 * The key-value metadata of a Parquet file, given its last bytes (at least the metadata and the
 * 8-byte tail); null when they are not a Parquet footer or cannot be read.
 */
export function parquetKeyValues(tail: Uint8Array): Map<string, string> | null {
  const n = tail.length;
  if (n < FOOTER_TAIL || tail[n - 4] !== 0x50 || tail[n - 3] !== 0x41 || tail[n - 2] !== 0x52 || tail[n - 1] !== 0x31) return null;
  const len = footerLength(tail.subarray(n - FOOTER_TAIL));
  if (len === null || len > n - FOOTER_TAIL) return null;
  const r = new Reader(tail.subarray(n - FOOTER_TAIL - len, n - FOOTER_TAIL));
  const out = new Map<string, string>();
  const dec = new TextDecoder();
  try {
    r.struct(0, (id, type) => {
      if (id !== 5 || type !== 9) return false;
      const { size, elem } = r.listHeader();
      if (elem !== 12) throw new Error('key_value_metadata is not a list of structs');
      for (let i = 0; i < size; i++) {
        let key: string | null = null;
        let value = '';
        r.struct(1, (fid, ftype) => {
          if (ftype !== 8 || (fid !== 1 && fid !== 2)) return false;
          const s = dec.decode(r.bytes());
          if (fid === 1) key = s;
          else value = s;
          return true;
        });
        if (key !== null) out.set(key, value);
      }
      return true;
    });
  } catch {
    return null;
  }
  return out;
}

/** The metadata's length from the 8-byte tail (`len` u32 LE, `PAR1`), null when it is no Parquet tail. */
export function footerLength(tail8: Uint8Array): number | null {
  if (tail8.length !== FOOTER_TAIL || tail8[4] !== 0x50 || tail8[5] !== 0x41 || tail8[6] !== 0x52 || tail8[7] !== 0x31) return null;
  return (tail8[0] | (tail8[1] << 8) | (tail8[2] << 16)) + tail8[3] * 2 ** 24;
}
