import { describe, expect, it } from 'vitest';
import { fmix32, halfSipHash, PROCESS_KEY, randomWords } from './keyed-hash.ts';

describe('HalfSipHash-2-4', () => {
  // The reference implementation's test vectors (veorq/SipHash, vectors.h, vectors_hsip32): key
  // bytes 00..07, message bytes 00..n-1, the 32-bit output's bytes. Here the even lengths, as
  // strings whose code units hold the bytes pairwise, little-endian.
  const vectors = (
    'a9359f5b fa62a603 2a6e4689 5863fc23 d0b8848f 94b07934 57f0872f d6fff87c d9b5ac84 465b8d9b e34d1045 70f367fe 27400c63 4f567b5f b0644000 509e338b ' +
    'fee72112 6a434f8c e75cc6ec 63688b0f b6bc1840 2442fd2e 7705d548 b6d499c8 69e12ce3 369764c6 3b85f3d4 1e692a3a a5c5b940 7dbc8140 d4e76c73 bd83997a'
  ).split(' ');
  it.each(vectors.map((hex, j) => [2 * j, hex] as const))('the reference vector for %i bytes', (n, hex) => {
    let s = '';
    for (let u = 0; u < n / 2; u++) s += String.fromCharCode((2 * u) | ((2 * u + 1) << 8));
    const out = halfSipHash(0x03020100, 0x07060504, `xx${s}y`, 2, 2 + s.length) >>> 0;
    const bytes = [out & 0xff, (out >>> 8) & 0xff, (out >>> 16) & 0xff, out >>> 24].map((b) => b.toString(16).padStart(2, '0')).join('');
    expect(bytes).toBe(hex);
  });

  it('tells apart lone surrogates and an odd last unit', () => {
    const h = (s: string) => halfSipHash(1, 2, s, 0, s.length);
    const all = ['\ud800', '\ud801', '\udc00', 'a', 'a\u0000', '\u0000a', '', 'ab', 'abc'].map(h);
    expect(new Set(all).size).toBe(all.length);
  });
});

describe('keys', () => {
  it('are random words (two draws of 4 words differ), the process key drawn once', () => {
    expect(Array.from(randomWords(4))).not.toEqual(Array.from(randomWords(4)));
    expect(PROCESS_KEY).toHaveLength(2);
  });

  it("fmix32 is murmur3's finalizer (against its five steps done in BigInt)", () => {
    expect(fmix32(0)).toBe(0);
    const ref = (h: bigint) => {
      const m = (x: bigint) => x & 0xffffffffn;
      h ^= h >> 16n;
      h = m(h * 0x85ebca6bn);
      h ^= h >> 13n;
      h = m(h * 0xc2b2ae35n);
      return h ^ (h >> 16n);
    };
    for (const x of [1, 0xdeadbeef, 0x7fffffff, 0xffffffff]) expect(fmix32(x) >>> 0).toBe(Number(ref(BigInt(x >>> 0))));
  });
});
