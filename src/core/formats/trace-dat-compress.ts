/**
 * Compressed blocks of a trace.dat version 7: `u32 compressed size, u32 uncompressed size, bytes`
 * (a compressed section holds one; a CPU's flyrecord data is a u32 count of them, each a run of
 * whole pages). Codecs: zlib (fflate) and zstd (fzstd), the two trace-cmd has.
 *
 * No allocation follows a declared count: the compressed bytes are gathered as they arrive (at
 * most what the section holds), and the output buffer is the declared uncompressed size only
 * after it passed the caller's cap; a codec that would write more than declared is stopped at
 * the declared size plus one byte and reported.
 */
import { unzlibSync } from 'fflate';
import { Decompress as ZstdStream } from 'fzstd';
import { join, type Pull, type Rd } from './trace-dat-read.ts';

export interface Codec {
  name: string;
  /** decompresses `src` into `out`; the bytes written */
  inflate(src: Uint8Array, out: Uint8Array): number;
}

const zlib: Codec = {
  name: 'zlib',
  inflate: (src, out) => unzlibSync(src, { out }).length,
};

/**
 * The largest window (the buffer a zstd decoder allocates) over the frames of `src`, walked by
 * their block headers; null when the bytes are not zstd frames.
 */
export function zstdWindow(src: Uint8Array): number | null {
  let o = 0;
  let most = 0;
  const u32 = (at: number) => (src[at] | (src[at + 1] << 8) | (src[at + 2] << 16) | (src[at + 3] << 24)) >>> 0;
  while (o < src.length) {
    if (o + 8 > src.length) return null;
    const magic = u32(o);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      o += 8 + u32(o + 4);
      continue;
    }
    if (magic !== 0xfd2fb528) return null;
    const fhd = src[o + 4];
    const fcsFlag = fhd >> 6;
    const single = (fhd >> 5) & 1;
    const dictBytes = [0, 1, 2, 4][fhd & 3];
    const fcsBytes = fcsFlag === 0 ? single : 1 << fcsFlag;
    let p = o + 5;
    let window: number;
    if (!single) {
      const wd = src[p++];
      const base = 2 ** (10 + (wd >> 3));
      window = base + (base / 8) * (wd & 7);
    } else window = 0;
    p += dictBytes;
    if (p + fcsBytes > src.length) return null;
    if (single) {
      let fcs = 0;
      for (let i = fcsBytes - 1; i >= 0; i--) fcs = fcs * 256 + src[p + i];
      window = fcsBytes === 2 ? fcs + 256 : fcs;
    }
    p += fcsBytes;
    most = Math.max(most, window);
    // the blocks: 3-byte headers (last, type, size); raw and compressed blocks carry size bytes, RLE one
    for (;;) {
      if (p + 3 > src.length) return null;
      const h = src[p] | (src[p + 1] << 8) | (src[p + 2] << 16);
      const type = (h >> 1) & 3;
      if (type === 3) return null;
      p += 3 + (type === 1 ? 1 : h >>> 3);
      if (h & 1) break;
    }
    if (fhd & 4) p += 4;
    o = p;
  }
  return o === src.length ? most : null;
}

class TooLong extends Error {}

/**
 * zstd into `out` (the declared size plus one byte), block by block (fzstd's stream): its window
 * must not exceed what the declared size needs, and it stops once it wrote more than declared.
 */
function zstdInflate(src: Uint8Array, out: Uint8Array): number {
  const w = zstdWindow(src);
  if (w === null) throw new Error('not zstd frames');
  if (w > 2 * out.length + (1 << 20)) throw new Error(`a zstd window of ${w} bytes for ${out.length - 1} declared`);
  let n = 0;
  const d = new ZstdStream((blk: Uint8Array) => {
    const k = Math.min(blk.length, out.length - n);
    out.set(blk.subarray(0, k), n);
    n += k;
    if (k < blk.length) throw new TooLong();
  });
  try {
    d.push(src, true);
  } catch (e) {
    if (e instanceof TooLong) return out.length;
    throw e;
  }
  return n;
}

const zstd: Codec = { name: 'zstd', inflate: zstdInflate };

/** The codec trace-cmd names `name`, null for one this reader does not have. */
export function codecOf(name: string): Codec | null {
  return name === 'zlib' ? zlib : name === 'zstd' ? zstd : null;
}

/** Largest uncompressed size of one metadata section taken (kallsyms of a big kernel is ~20 MB). */
export const MAX_SECTION_BLOCK = 256 << 20;
/** Largest flyrecord chunk taken, in pages (trace-cmd writes 10). */
export const MAX_CHUNK_PAGES = 256;

export interface Block {
  /** the uncompressed bytes */
  data: Uint8Array;
  /** file offset of the block's size words */
  at: number;
  /** file bytes the block took (8 + compressed size) */
  fileBytes: number;
}

/**
 * Reads one block from `rd` (a file source): its 8 header bytes and compressed bytes are
 * counted used when it decompresses to exactly its declared size, else unused with a diagnostic
 * naming offset and reason. `room`: file bytes the block may take (what is left of its section);
 * `cap(usize)`: null when the declared uncompressed size is acceptable, else why not.
 * Returns null when the block was not read (its bytes are accounted already).
 */
export function* readBlock(rd: Rd, codec: Codec, room: number, what: string, cap: (usize: number) => string | null): Pull<Block | null> {
  const at = rd.pos;
  const head = yield* rd.src.take(8);
  if (!head) {
    rd.truncated(`the size words of ${what}`);
    return null;
  }
  const dv = new DataView(head.buffer, head.byteOffset, 8);
  const csize = dv.getUint32(0, rd.little);
  const usize = dv.getUint32(4, rd.little);
  const whyNot = 8 + csize > room ? `its compressed size ${csize} goes beyond the ${room - 8} bytes left of the section` : cap(usize);
  if (whyNot !== null) {
    rd.src.unused(at, 8, `${what} at 0x${at.toString(16)}: ${whyNot}; not read`);
    if (8 + csize <= room) yield* rd.skipUnused(csize, `${what}: its compressed bytes, not read`);
    return null;
  }
  const parts: Uint8Array[] = [];
  let got = 0;
  const ok = yield* rd.pieces(csize, (b) => {
    parts.push(b.slice());
    got += b.length;
  });
  if (!ok) {
    rd.src.unused(at, 8 + got, `${what} at 0x${at.toString(16)}: cut short (${got} of ${csize} compressed bytes)`);
    rd.truncated(what);
    return null;
  }
  const out = new Uint8Array(usize + 1);
  let n: number;
  try {
    n = codec.inflate(join(parts, csize), out);
  } catch (e) {
    rd.src.unused(at, 8 + csize, `${what} at 0x${at.toString(16)}: ${codec.name} could not decompress it (${(e as Error).message || 'bad data'})`);
    return null;
  }
  if (n !== usize) {
    const said = n > usize ? `more than the ${usize} bytes it declares` : `${n} bytes, not the ${usize} it declares`;
    rd.src.unused(at, 8 + csize, `${what} at 0x${at.toString(16)}: decompresses to ${said}`);
    return null;
  }
  rd.src.use(8 + csize);
  return { data: out.subarray(0, usize), at, fileBytes: 8 + csize };
}
