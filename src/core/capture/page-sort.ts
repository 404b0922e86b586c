import type { Symbolizer } from '../formats/symbolizer.ts';
import type { DumpColumns } from '../formats/types.ts';

/** Bits of a key page (the Symbolizer's: `keyOf(...) >>> PAGE_BITS`). */
const PAGE_BITS = 16;
const PAGE_MASK = (1 << PAGE_BITS) - 1;
const PAGE_KEYS = 1 << PAGE_BITS;
/**
 * The ips of a loop's first call (then calls of 2^18): a call that returns before its loop's code
 * is compiled leaves that code what the rest of the function does (a loop compiled while it runs,
 * on-stack replacement, is compiled again where the code after it first runs).
 */
const FIRST_CALL = 1 << 8;
/** 32-bit words of a page's bitmap of keys. */
const PAGE_WORDS = PAGE_KEYS >>> 5;

/**
 * What `sortByPage` asks for each key page its ips touch: a frame for each of the page's
 * distinct keys. `keys[0, n)` are the keys' offsets in the page (`key & 0xffff`), ascending, and
 * `table[off]` how many of the dump's ips have that key; the callback writes over each count the
 * key's frame (>= 0).
 */
export type PageFrames = (page: number, keys: Int32Array, n: number, table: Int32Array) => void;

/**
 * A binary dump's ips sorted by the symbolizer's address keys, so that each distinct address is
 * made a frame once, in address order (ip-pool.ts, its key pass): `framesOfPage` is called per
 * page with the page's distinct keys, ascending, and their counts, and writes each one's frame;
 * `ids` per ip (from `start`) then holds its frame, or -1 (`keyOf`'s) for
 * an ip without an address key, which the caller makes a frame of itself: the returned list
 * holds where those are in `ids`, ascending.
 *
 * The symbolizer's keys are 2^16 per page (a page of kernel text where a symbol starts), and a
 * random dump's ips jump across millions of them: marks per key (as bits, a few MB) or lookups
 * of each new address's symbol in ip order are a cache miss each. So the keys are sorted by page
 * first (a counting sort: the keyed ips of each page, then each one's key in the page into its
 * page's run, in ip order), and each page's run is read twice with a table of the page's 2^16
 * keys (256 KB, in cache): once to count each key and mark it in a bitmap of the page (8 KB),
 * once to write over each key its frame. Between the two, the page's distinct keys are listed
 * from the bitmap in address order: the work is the page's distinct keys plus its 2^11 words,
 * not its 2^16 keys (a random dump's 3.4M distinct addresses lie in 795 pages, 52M keys), and
 * the frames are made in address order, walking the page's symbols beside them (ip-pool.ts),
 * each symbol's name and function read once for all its addresses. Then the runs are read back
 * in ip order, as they were written (one cursor per page). Every pass reads and writes its
 * arrays in order, or one of a few hundred streams in order, but for the page's table. 4 bytes
 * an ip, 4 a page.
 *
 * Each loop is a function of its own (the keys' is `Symbolizer.keysOf`), called per block of ips
 * or per page, the first call a short one (`FIRST_CALL`): compiled once, with what its first
 * calls saw.
 */
export function sortByPage(sz: Symbolizer, c: DumpColumns, ids: Int32Array, start: number, framesOfPage: PageFrames): Int32Array {
  const pages = Math.ceil(sz.keySpace / PAGE_KEYS);
  // each ip's key (-1: none), and each page's keyed ips
  const at = new Int32Array(pages + 1);
  for (let b = 0, j = start; b < c.ipHi.length; j += c.ipHi[b++].length) {
    const n = c.ipHi[b].length;
    const cut = b === 0 ? Math.min(n, FIRST_CALL) : 0;
    if (cut > 0) sz.keysOf(c.ipHi[b], c.ipLo[b], 0, cut, ids, j, at);
    sz.keysOf(c.ipHi[b], c.ipLo[b], cut, n, ids, j + cut, at);
  }
  // page p's run is [at[p], at[p + 1])
  for (let p = 0, sum = 0; p <= pages; p++) {
    const m = at[p];
    at[p] = sum;
    sum += m;
  }
  const cursor = at.slice(0, pages);
  const runs = new Int32Array(at[pages]);
  const end = start + c.ips;
  const cut = Math.min(end, start + FIRST_CALL);
  scatter(ids, start, cut, runs, cursor);
  for (let q = cut; q < end; q += 1 << 18) scatter(ids, q, Math.min(end, q + (1 << 18)), runs, cursor);
  // per key of the page being read: how often it comes (first read), then its frame
  const table = new Int32Array(PAGE_KEYS);
  // the page's keys seen, as bits, and as a list
  const bits = new Int32Array(PAGE_WORDS);
  const keys = new Int32Array(PAGE_KEYS);
  for (let p = 0; p < pages; p++) {
    const from = at[p];
    const to = at[p + 1];
    if (to === from) continue;
    count(runs, from, to, table, bits);
    const n = listKeys(bits, keys);
    framesOfPage(p, keys, n, table);
    rewrite(runs, from, to, table);
    clear(table, keys, n);
  }
  // each keyed ip's frame, its page's run read in the order it was written; the others listed
  cursor.set(at.subarray(0, pages));
  const alone = new Int32Array(c.ips - at[pages]);
  let na = gather(ids, start, cut, runs, cursor, alone, 0);
  for (let q = cut; q < end; q += 1 << 18) na = gather(ids, q, Math.min(end, q + (1 << 18)), runs, cursor, alone, na);
  return alone;
}

/** The keys of `ids[from, to)` into their pages' runs, at each page's cursor. */
function scatter(ids: Int32Array, from: number, to: number, runs: Int32Array, cursor: Int32Array): void {
  for (let q = from; q < to; q++) {
    const k = ids[q];
    if (k >= 0) runs[cursor[k >>> PAGE_BITS]++] = k & PAGE_MASK;
  }
}

/** The runs' entries back into `ids[from, to)`, each key's from its page's cursor; each ip without a key into `alone` from `na` on. Returns the new `na`. */
function gather(ids: Int32Array, from: number, to: number, runs: Int32Array, cursor: Int32Array, alone: Int32Array, na: number): number {
  for (let q = from; q < to; q++) {
    const k = ids[q];
    if (k >= 0) ids[q] = runs[cursor[k >>> PAGE_BITS]++];
    else alone[na++] = q;
  }
  return na;
}

/** How often each key of the run [from, to) comes, into `table`, each key marked in `bits`. */
function count(runs: Int32Array, from: number, to: number, table: Int32Array, bits: Int32Array): void {
  for (let x = from; x < to; x++) {
    const off = runs[x];
    table[off]++;
    bits[off >>> 5] |= 1 << (off & 31);
  }
}

/** The page's keys marked in `bits` into `keys`, in address order (the bits cleared on the way); returns how many. */
function listKeys(bits: Int32Array, keys: Int32Array): number {
  let d = 0;
  for (let w = 0; w < PAGE_WORDS; w++) {
    let m = bits[w];
    if (m === 0) continue;
    bits[w] = 0;
    while (m !== 0) {
      const low = m & -m;
      m ^= low;
      keys[d++] = (w << 5) | (31 - Math.clz32(low));
    }
  }
  return d;
}

/** Each key of the run [from, to) replaced by its frame. */
function rewrite(runs: Int32Array, from: number, to: number, table: Int32Array): void {
  for (let x = from; x < to; x++) runs[x] = table[runs[x]];
}

/** The table's entries of the page's `n` keys back to 0. */
function clear(table: Int32Array, keys: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) table[keys[i]] = 0;
}
