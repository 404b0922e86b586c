/**
 * Keys for the hash tables built from input (string tables, the stack table's child table, the
 * ip cache): names, frames and ips come from files anyone can write, so a table whose hash is
 * fixed can be flooded (keys chosen to share a probe chain make every lookup walk all of it). A
 * random key per process is mixed into each hash; a table whose chains still grow long (keys that
 * collide whatever the key: a weakness of the fast hash) takes a fresh key and HalfSipHash-2-4
 * (a keyed pseudo-random function, the Linux kernel's hsiphash for its hash tables).
 */

/** `n` random 32-bit words (crypto.getRandomValues: Node, browsers and their workers). */
export function randomWords(n: number): Uint32Array {
  return globalThis.crypto.getRandomValues(new Uint32Array(n));
}

/** This process's key for the fast hashes: two words, drawn once. */
export const PROCESS_KEY: readonly [number, number] = (() => {
  const w = randomWords(2);
  return [w[0] | 0, w[1] | 0];
})();

/** murmur3's 32-bit finalizer: a bijection whose every output bit depends on every input bit. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * The slot of the integer pair (a, b) in a table of 2^(32 - shift) slots, under key (k0, k1): b
 * xor a keyed multiple of a, through murmur's finalizer with the key again. Which pairs crowd
 * together cannot be worked out without the key (over 1,000 keys, frames chosen to crowd the old
 * fixed hash cost 0.95-1.05x the probes of random ones; plain multiply-shift with a random odd
 * multiplier let them cost up to 6.9x). Three multiplies, once per ip of a dump.
 */
export function pairSlot(a: number, b: number, k0: number, k1: number, shift: number): number {
  return fmix32(b ^ pairKey(a, k0, k1)) >>> shift;
}

/** pairSlot's part that depends on `a` alone: a loop over pairs of one `a` works it out once (`fmix32(b ^ pairKey(a, k0, k1)) >>> shift`). */
export function pairKey(a: number, k0: number, k1: number): number {
  return Math.imul(a ^ k0, 0x85ebca6b) ^ k1;
}

/** HalfSipHash's state v0..v3 (one hash at a time: JavaScript runs a thread's code one call at a time) */
const v = new Int32Array(4);

function sipRounds(n: number): void {
  let v0 = v[0];
  let v1 = v[1];
  let v2 = v[2];
  let v3 = v[3];
  for (let r = 0; r < n; r++) {
    v0 = (v0 + v1) | 0;
    v1 = (v1 << 5) | (v1 >>> 27);
    v1 ^= v0;
    v0 = (v0 << 16) | (v0 >>> 16);
    v2 = (v2 + v3) | 0;
    v3 = (v3 << 8) | (v3 >>> 24);
    v3 ^= v2;
    v0 = (v0 + v3) | 0;
    v3 = (v3 << 7) | (v3 >>> 25);
    v3 ^= v0;
    v2 = (v2 + v1) | 0;
    v1 = (v1 << 13) | (v1 >>> 19);
    v1 ^= v2;
    v2 = (v2 << 16) | (v2 >>> 16);
  }
  v[0] = v0;
  v[1] = v1;
  v[2] = v2;
  v[3] = v3;
}

/** One message word: two compression rounds. */
function word(m: number): void {
  v[3] ^= m;
  sipRounds(2);
  v[0] ^= m;
}

/**
 * HalfSipHash-2-4 (Aumasson and Bernstein's 32-bit SipHash) of the UTF-16 code units of
 * `s[from, to)`, read as little-endian bytes (two units a word), under the key (k0, k1); as an
 * int32. Every code unit counts, lone surrogates too (no UTF-8 step maps two strings to one).
 */
export function halfSipHash(k0: number, k1: number, s: string, from: number, to: number): number {
  v[0] = k0;
  v[1] = k1;
  v[2] = 0x6c796765 ^ k0;
  v[3] = 0x74656462 ^ k1;
  let i = from;
  for (; i + 1 < to; i += 2) word(s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16));
  // the last word: the length in bytes in its top byte, an odd last unit in its low half
  word(((2 * (to - from)) << 24) | (i < to ? s.charCodeAt(i) : 0));
  v[2] ^= 0xff;
  sipRounds(4);
  return v[1] ^ v[3];
}
