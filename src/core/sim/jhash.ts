/** The kernel's jhash2 (include/linux/jhash.h), over u32 words, in unsigned 32-bit arithmetic. */

/** jhash's initial value (JHASH_INITVAL in include/linux/jhash.h); insert-wasm.ts's jhash2 starts from it too */
export const JHASH_INITVAL = 0xdeadbeef;

// int32 arithmetic throughout (`| 0` wraps like u32 + and -; ^, << and >>> act on the same bits),
// which V8 keeps in registers; `>>> 0` after every step made each one a double. Same result.
const rol32 = (x: number, k: number) => (x << k) | (x >>> (32 - k));

export function jhash2(k: Uint32Array, length: number, initval: number): number {
  return jhash2i(k, length, initval) >>> 0;
}

/**
 * jhash2 as an int32 (the same 32 bits): what the simulator's insert path compares with keys.
 * An int32 result and an int32 `initval` stay small integers in V8, where a u32 >= 2^31 is a heap
 * number allocated per call.
 */
export function jhash2i(k: Uint32Array, length: number, initval: number): number {
  let a = (JHASH_INITVAL + (length << 2) + initval) | 0;
  let b = a;
  let c = a;
  let i = 0;
  while (length > 3) {
    a = (a + k[i]) | 0;
    b = (b + k[i + 1]) | 0;
    c = (c + k[i + 2]) | 0;
    // __jhash_mix
    a = (a - c) | 0;
    a ^= rol32(c, 4);
    c = (c + b) | 0;
    b = (b - a) | 0;
    b ^= rol32(a, 6);
    a = (a + c) | 0;
    c = (c - b) | 0;
    c ^= rol32(b, 8);
    b = (b + a) | 0;
    a = (a - c) | 0;
    a ^= rol32(c, 16);
    c = (c + b) | 0;
    b = (b - a) | 0;
    b ^= rol32(a, 19);
    a = (a + c) | 0;
    c = (c - b) | 0;
    c ^= rol32(b, 4);
    b = (b + a) | 0;
    length -= 3;
    i += 3;
  }
  if (length > 0) {
    if (length === 3) c = (c + k[i + 2]) | 0;
    if (length >= 2) b = (b + k[i + 1]) | 0;
    a = (a + k[i]) | 0;
    // __jhash_final
    c ^= b;
    c = (c - rol32(b, 14)) | 0;
    a ^= c;
    a = (a - rol32(c, 11)) | 0;
    b ^= a;
    b = (b - rol32(a, 25)) | 0;
    c ^= b;
    c = (c - rol32(b, 16)) | 0;
    a ^= c;
    a = (a - rol32(c, 4)) | 0;
    b ^= a;
    b = (b - rol32(a, 14)) | 0;
    c ^= b;
    c = (c - rol32(b, 24)) | 0;
  }
  return c;
}

export function stackHash(ips: BigUint64Array, seed: number): number {
  const words = new Uint32Array(ips.buffer, ips.byteOffset, ips.length * 2);
  const h = jhash2(littleEndianWords(words), words.length, seed);
  return h === 0 ? 1 : h;
}

const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
function littleEndianWords(w: Uint32Array): Uint32Array {
  if (LE) return w;
  const out = new Uint32Array(w.length);
  for (let i = 0; i < w.length; i += 2) {
    out[i] = w[i + 1];
    out[i + 1] = w[i];
  }
  return out;
}
