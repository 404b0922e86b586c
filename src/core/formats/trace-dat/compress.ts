/**
 * Compressed blocks of a trace.dat version 7: `u32 compressed size, u32 uncompressed size, bytes`
 * (a compressed section holds one; a CPU's flyrecord data is a u32 count of them, each a run of
 * whole pages). Codecs: zlib (fflate) and zstd (zstd.ts), the two trace-cmd has.
 *
 * No allocation follows a declared count: the compressed bytes are gathered as they arrive (at
 * most what the section holds), and the output buffer is the declared uncompressed size only
 * after it passed the caller's cap and the file's decompression budget; a codec that would
 * write more than declared is stopped at the declared size plus one byte and reported. Blocks
 * the budget refuses are reported with the same words, so they group into one diagnostic.
 */
import { Unzlib } from 'fflate';
import type { FileBudget } from '../decompress-budget.ts';
import { join, type Pull, type Rd } from './read.ts';
import { ZstdTooLong, zstdDecompressInto } from '../zstd.ts';

export interface Codec {
  name: string;
  /** decompresses `src` into `out`; the bytes written (out.length when there was more) */
  inflate(src: Uint8Array, out: Uint8Array): number;
  /** the file's decompression budget, asked before each block */
  budget: FileBudget;
}

const TOO_LONG = new Error('more than declared');
/** zlib input handed to fflate at once: what one piece inflates to (at most ~1,032 times it) is all that can pass the end */
const ZLIB_PIECE = 1 << 12;

const inflaters = new Map<string, (src: Uint8Array, out: Uint8Array) => number>(
  Object.entries({
    // fflate's stream, fed in pieces and stopped once past `out` (a one-shot inflate into `out`
    // keeps inflating what does not fit: a bomb's whole work)
    zlib: (src, out) => {
      let n = 0;
      const z = new Unzlib((d) => {
        const k = Math.min(d.length, out.length - n);
        out.set(d.subarray(0, k), n);
        n += k;
        if (k < d.length || n >= out.length) throw TOO_LONG;
      });
      try {
        if (src.length === 0) z.push(src, true);
        for (let i = 0; i < src.length; i += ZLIB_PIECE) z.push(src.subarray(i, i + ZLIB_PIECE), i + ZLIB_PIECE >= src.length);
      } catch (e) {
        if (e === TOO_LONG) return out.length;
        throw e;
      }
      return n;
    },
    // linear in its input, and never past `out` (see zstd.ts for why not fzstd)
    zstd: (src, out) => {
      try {
        return zstdDecompressInto(src, out);
      } catch (e) {
        if (e instanceof ZstdTooLong) return out.length;
        throw e;
      }
    },
  }),
);

/** The codec trace-cmd names `name` over the file's budget, null for one this reader does not have. */
export function codecOf(name: string, budget: FileBudget): Codec | null {
  // a Map: a name from the file such as `constructor` finds nothing
  const inflate = inflaters.get(name);
  return inflate ? { name, inflate, budget } : null;
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
  const refused = codec.budget.take(usize);
  if (refused !== null) {
    rd.src.unused(at, 8 + csize, `compressed block ${refused}`);
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
