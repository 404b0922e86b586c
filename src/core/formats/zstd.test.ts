import { decompress as fzstdDecompress } from 'fzstd';
import { describe, expect, it } from 'vitest';
import { fixture } from '../testing/formats.ts';
import { BLOCK_MAX, ZstdError, ZstdTooLong, zstdDecompressInto } from './zstd.ts';
import { ZSTD_FIXTURES } from '../testing/zstd-data.ts';

// The decoder against files the zstd command line made (fixtures/zstd/README.md) and against
// hand-built frames for what the encoder did not write; the expected bytes are the generated
// contents those files were made from (and fzstd's reading of the same files).

const fx = (name: string) => fixture('zstd/' + name);

/** Decodes into a buffer of `room` bytes; the bytes written, or the error's class name. */
function decode(src: Uint8Array, room: number): { n: number; out: Uint8Array } | string {
  const out = new Uint8Array(room);
  try {
    return { n: zstdDecompressInto(src, out), out };
  } catch (e) {
    if (e instanceof ZstdError) return 'ZstdError';
    if (e instanceof ZstdTooLong) return 'ZstdTooLong';
    throw e;
  }
}

const frameOf = (blocks: number[][], fhd = 0x00, extra: number[] = [0x58]) => new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, fhd, ...extra, ...blocks.flat()]);
/** a 3-byte block header: last, type, size */
const blockHeader = (last: number, type: number, size: number) => {
  const h = last | (type << 1) | (size << 3);
  return [h & 255, (h >> 8) & 255, (h >> 16) & 255];
};

describe('zstd decoder', () => {
  it.each(Object.keys(ZSTD_FIXTURES))('%s decodes to what the zstd command line compressed', (name) => {
    const want = ZSTD_FIXTURES[name]();
    const src = fx(name);
    const r = decode(src, want.length + 1);
    expect(typeof r).toBe('object');
    const { n, out } = r as { n: number; out: Uint8Array };
    expect(n).toBe(want.length);
    expect(Buffer.from(out.subarray(0, n)).equals(Buffer.from(want))).toBe(true);
    // fzstd (a second decoder) reads the fixture the same
    expect(Buffer.from(fzstdDecompress(src)).equals(Buffer.from(want))).toBe(true);
  });

  it('a buffer one byte short: ZstdTooLong, nothing written past it', () => {
    for (const name of ['trace.l19.zst', 'trace.stream.zst', 'mixed.ultra22.zst', 'random.l3.zst', 'two-frames.zst']) {
      const want = ZSTD_FIXTURES[name]();
      const out = new Uint8Array(want.length + 64).fill(0xee);
      const view = out.subarray(0, want.length - 1);
      expect(() => zstdDecompressInto(fx(name), view), name).toThrow(ZstdTooLong);
      expect(
        out.subarray(want.length - 1).every((b) => b === 0xee),
        name,
      ).toBe(true);
    }
  });

  it('every cut of a file and flipped bytes are a ZstdError or ZstdTooLong, never another exception', () => {
    const src = fx('trace.l19.zst');
    const room = ZSTD_FIXTURES['trace.l19.zst']().length + 1;
    const seen = new Set<string>();
    for (let cut = 0; cut < src.length; cut += 97) {
      const r = decode(src.subarray(0, cut), room);
      seen.add(typeof r === 'string' ? r : 'ok');
    }
    let x = 99;
    for (let k = 0; k < 200; k++) {
      const b = src.slice();
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      b[x % b.length] ^= 1 << (x >>> 29);
      const r = decode(b, room);
      seen.add(typeof r === 'string' ? r : 'ok');
    }
    // a cut is never read as whole: only the uncut file decodes
    expect(seen.has('ZstdError')).toBe(true);
    expect([...seen].every((s) => ['ok', 'ZstdError', 'ZstdTooLong'].includes(s))).toBe(true);
  });

  it('direct Huffman weights, RLE literals and RLE sequence tables (hand-built)', () => {
    // literals "abba": Huffman, one stream; 98 direct weights (symbols 0..97), 'a' weight 1, 'b' implied 1
    const weights = new Array(49).fill(0);
    weights[48] = 0x01; // symbols 96 (weight 0, high nibble) and 97 (weight 1)
    const tree = [127 + 98, ...weights];
    const stream = [0x16]; // bits read from the top: 0 (a), 1 (b), 1 (b), 0 (a), marker above them
    const compSize = tree.length + stream.length;
    // literals header, 3 bytes: type 2, size format 0, regenerated 4, compressed compSize
    const v = 2 | (0 << 2) | (4 << 4) | (compSize << 14);
    const lits = [v & 255, (v >> 8) & 255, (v >> 16) & 255, ...tree, ...stream];
    const block1 = [...lits, 0]; // no sequences
    // block 2: RLE literals 'z' x5, one sequence: literal length 5 (code 5), new offset 1 (offset value 4: code 2, extra 0), match 10 (code 7)
    const block2 = [0x29, 0x7a, 1, 0x54, 5, 2, 7, 0x04];
    const f = frameOf([
      [...blockHeader(0, 2, block1.length), ...block1],
      [...blockHeader(1, 2, block2.length), ...block2],
    ]);
    const r = decode(f, 100) as { n: number; out: Uint8Array };
    expect(new TextDecoder().decode(r.out.subarray(0, r.n))).toBe('abba' + 'z'.repeat(15));
  });

  it('a block whose sequences ask for more than 128 KiB stops at the first one (fzstd ran 66 s on 8 KB of these)', () => {
    // no literals, 40,000 sequences over RLE tables: offset code 0 (a repeat), match length code 52 with 16 extra bits of ones (131,074 each)
    const ns = 40000;
    const body = [0x00, 255, (ns - 0x7f00) & 255, (ns - 0x7f00) >> 8, 0x54, 0, 0, 52, ...new Array(ns * 2).fill(0xff), 0x01];
    const f = frameOf([[...blockHeader(1, 2, body.length), ...body]], 0x00, [0x58]);
    expect(body.length).toBeLessThan(BLOCK_MAX);
    expect(() => zstdDecompressInto(f, new Uint8Array(1 << 20))).toThrow(/sequences write more than 131072 bytes/);
  });

  it('the frame checks: content size, reserved bits, dictionaries, skippable frames, a 128 KiB block', () => {
    const raw = (data: number[], fcs: number) => new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x20, fcs, ...blockHeader(1, 0, data.length), ...data]);
    expect((decode(raw([1, 2, 3], 3), 10) as { n: number }).n).toBe(3);
    expect(decode(raw([1, 2, 3], 4), 10)).toBe('ZstdError'); // declares 4, holds 3
    expect(decode(frameOf([blockHeader(1, 0, 0)], 0x08), 10)).toBe('ZstdError'); // reserved bit
    expect(decode(frameOf([blockHeader(1, 0, 0)], 0x01, [0x58, 7]), 10)).toBe('ZstdError'); // dictionary 7
    const skip = new Uint8Array([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
    const both = new Uint8Array([...skip, ...raw([5], 1), ...skip]);
    expect((decode(both, 10) as { n: number }).n).toBe(1);
    // an RLE block of 128 KiB + 1
    expect(decode(frameOf([[...blockHeader(1, 1, BLOCK_MAX + 1), 0]]), BLOCK_MAX + 10)).toBe('ZstdError');
    expect((decode(frameOf([[...blockHeader(1, 1, BLOCK_MAX), 0]]), BLOCK_MAX) as { n: number }).n).toBe(BLOCK_MAX);
  });

  it('a frame declaring a 2 TB window allocates nothing for it: it decodes into the buffer given', () => {
    // window descriptor 0xf8: 2^41 bytes; one RLE block of 1000
    const f = frameOf([[...blockHeader(1, 1, 1000), 0x41]], 0x00, [0xf8]);
    expect((decode(f, 1000) as { n: number }).n).toBe(1000);
  });
});
