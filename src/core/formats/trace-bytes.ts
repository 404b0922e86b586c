/**
 * ASCII read straight from a trace text file's bytes, for trace-text-bytes.ts: a line is
 * read where it lies in the chunk, no text decoded. Each helper gives what its twin over a
 * string gives on the same characters (named beside it); a byte of 0x80 or more is never taken
 * for a character here (the caller then reads the line as text).
 */

/** `b[from, to)` as a string when every byte is ASCII, else null. */
export function asciiText(b: Uint8Array, from: number, to: number): string | null {
  let s = '';
  for (let i = from; i < to; i++) {
    const c = b[i];
    if (c >= 0x80) return null;
    s += String.fromCharCode(c);
  }
  return s;
}

/** Whether `b[from, to)` is `s`, every byte ASCII. */
export function sameAscii(b: Uint8Array, from: number, to: number, s: string): boolean {
  if (s.length !== to - from) return false;
  for (let k = 0; k < s.length; k++) {
    const c = b[from + k];
    if (c !== s.charCodeAt(k) || c >= 0x80) return false;
  }
  return true;
}

/** An ASCII string's bytes, to look for with `startsWithBytes`. */
export const asciiBytes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** Whether `b` holds `key` (asciiBytes) at `i` (as `text.startsWith(s, i)`). */
export function startsWithBytes(b: Uint8Array, i: number, key: Uint8Array): boolean {
  for (let k = 0; k < key.length; k++) if (b[i + k] !== key[k]) return false;
  return true;
}

/** The irq column of the latency flags, by byte: `.shHzZ` (types.ts contextOf). */
const IRQ = new Int8Array(128).fill(-1);
for (let k = 0; k < 6; k++) IRQ['.shHzZ'.charCodeAt(k)] = k;

/** types.ts `contextOf` over the flags `b[from, to)` (printable ASCII). */
export function contextOfBytes(b: Uint8Array, from: number, to: number): number {
  if (to - from < 4) return -1;
  const c = b[from + 2];
  const irq = c < 0x80 ? IRQ[c] : -1;
  if (irq < 0) return -1;
  const d = b[from + 3];
  const depth = d === 46 ? 0 : d >= 48 && d <= 57 ? d - 48 : d >= 97 && d <= 102 ? d - 87 : -1;
  return depth < 0 ? -1 : irq * 16 + depth;
}

/** Probes of IdsByBytes past which a key is not stored (a run of colliding keys stays short). */
const MAX_PROBES = 32;

/**
 * Ids of keys found by their bytes, in front of an intern table: a key seen before is not made
 * a string again. Open addressing over an FNV-1a hash of the bytes, a key checked byte for byte
 * against its string before its id is used, grown to stay at most half full. The hash is not
 * keyed: a key whose probe passes MAX_PROBES (keys chosen to collide) is not stored, so each
 * of its lines costs at most that many probes and the intern table's own lookup.
 */
export class IdsByBytes {
  private keys: (string | null)[];
  private ids: Int32Array;
  private hashes: Int32Array;
  private mask: number;
  private count = 0;
  /** where the last `find` would store its key (-1: nowhere), and its hash */
  private slot = -1;
  private hash = 0;

  constructor(bits = 10) {
    this.keys = new Array<string | null>(1 << bits).fill(null);
    this.ids = new Int32Array(1 << bits);
    this.hashes = new Int32Array(1 << bits);
    this.mask = (1 << bits) - 1;
  }

  /** The id stored for `b[from, to)`, or -1. */
  find(b: Uint8Array, from: number, to: number): number {
    let h = 0x811c9dc5;
    for (let i = from; i < to; i++) h = Math.imul(h ^ b[i], 0x01000193);
    h ^= h >>> 15;
    this.hash = h;
    const keys = this.keys;
    for (let i = h & this.mask, probes = 0; probes < MAX_PROBES; probes++, i = (i + 1) & this.mask) {
      const k = keys[i];
      if (k === null) {
        this.slot = i;
        return -1;
      }
      if (this.hashes[i] === h && sameAscii(b, from, to, k)) return this.ids[i];
    }
    this.slot = -1;
    return -1;
  }

  /** Stores `key`'s id where the last `find`, of the same key's bytes, did not find it. */
  put(key: string, id: number): void {
    if (this.slot < 0) return;
    this.keys[this.slot] = key;
    this.ids[this.slot] = id;
    this.hashes[this.slot] = this.hash;
    this.slot = -1;
    if (++this.count * 2 > this.keys.length) this.grow();
  }

  private grow(): void {
    const { keys, ids, hashes } = this;
    const size = keys.length * 2;
    this.keys = new Array<string | null>(size).fill(null);
    this.ids = new Int32Array(size);
    this.hashes = new Int32Array(size);
    this.mask = size - 1;
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j];
      if (k === null) continue;
      let i = hashes[j] & this.mask;
      while (this.keys[i] !== null) i = (i + 1) & this.mask;
      this.keys[i] = k;
      this.ids[i] = ids[j];
      this.hashes[i] = hashes[j];
    }
  }
}

/** The low `r` bytes of a little-endian word. */
const MASKS = [0, 0xff, 0xffff, 0xffffff];

/**
 * Short keys by slot (at most 32 bytes each; a longer one is not kept), as little-endian 32-bit
 * words, so a key is compared with the bytes four at a time through a DataView of their chunk:
 * the COMM and event name a line is checked against (sameAscii's compare, a character at a time,
 * was a sixth of the byte path's time). The caller keeps each slot's key the bytes of the string
 * the slot stands for.
 */
export class WordKeys {
  private readonly words: Int32Array;
  private readonly lens: Int32Array;

  constructor(slots: number) {
    this.words = new Int32Array(slots * 8);
    this.lens = new Int32Array(slots).fill(-1);
  }

  /** Whether `slot` holds `b[from, to)`; `dv` is a DataView of all of `b`. */
  has(slot: number, b: Uint8Array, dv: DataView, from: number, to: number): boolean {
    const len = to - from;
    if (this.lens[slot] !== len) return false;
    const words = this.words;
    const base = slot * 8;
    if (from + ((len + 3) & ~3) <= dv.byteLength) {
      let w = 0;
      for (const n4 = len >> 2; w < n4; w++) if (dv.getInt32(from + 4 * w, true) !== words[base + w]) return false;
      const r = len & 3;
      return r === 0 || (dv.getInt32(from + 4 * w, true) & MASKS[r]) === words[base + w];
    }
    // at the end of the buffer: a byte at a time
    for (let k = 0; k < len; k++) if (b[from + k] !== ((words[base + (k >> 2)] >>> ((k & 3) * 8)) & 0xff)) return false;
    return true;
  }

  /** `slot` now holds `b[from, to)` (nothing when it is longer than 32 bytes). */
  set(slot: number, b: Uint8Array, from: number, to: number): void {
    const len = to - from;
    if (len > 32) {
      this.lens[slot] = -1;
      return;
    }
    const base = slot * 8;
    this.words.fill(0, base, base + 8);
    for (let k = 0; k < len; k++) this.words[base + (k >> 2)] |= b[from + k] << ((k & 3) * 8);
    this.lens[slot] = len;
  }

  forget(slot: number): void {
    this.lens[slot] = -1;
  }
}
