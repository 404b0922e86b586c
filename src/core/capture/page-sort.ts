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
 * A binary dump's ips sorted by the symbolizer's address keys, so that each distinct address is
 * symbolized once and in address order (ip-pool.ts, its key pass). Writes to `ids` per ip (from
 * `start`): -1 (`keyOf`'s; ALONE in ip-pool.ts) for an ip without an address key; -2 - (its
 * symbol + 1, or 0 where `locateOne` must say) for a key seen once in the dump; else (e << 1) | 1
 * at a key's first sight and e << 1 at the next, e the key's index among the keys seen again,
 * whose symbol + 1 (or 0) the returned table holds at e.
 *
 * The symbolizer's keys are 2^16 per page (a page of kernel text where a symbol starts), and a
 * random dump's ips jump across millions of them: marks per key (as bits, a few MB) or lookups
 * of each new address's symbol in ip order are a cache miss each. So the keys are sorted by page
 * first (a counting sort: the keyed ips of each page, then each one's key in the page into its
 * page's run, in ip order), and each page's run is read twice with a table of the page's 2^16
 * keys (256 KB, in cache): once to count each key and mark it in a bitmap of the page (8 KB),
 * once to write over each key what `ids` takes for it. Between the two, the page's distinct keys
 * are read from the bitmap in address order, walking the page's symbols (`Symbolizer.pageSymbols`,
 * a run of keys per symbol) beside them: the work is the page's distinct keys plus its 2^11 words,
 * not its 2^16 keys (a random dump's 3.4M distinct addresses lie in 795 pages, 52M keys). Then
 * the runs are read back in ip order, as they were written (one cursor per page). Every pass
 * reads and writes its arrays in order, or one of a few hundred streams in order, but for the
 * page's table. 4 bytes an ip, 4 a page, 4 a repeated key.
 *
 * Each loop is a function of its own (the keys' is `Symbolizer.keysOf`), called per block of ips
 * or per page, the first call a short one (`FIRST_CALL`): compiled once, with what its first
 * calls saw.
 */
export function sortByPage(sz: Symbolizer, c: DumpColumns, ids: Int32Array, start: number): Int32Array {
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
  // per key of the page being read: how often it comes (first read), then what `ids` takes for it
  const table = new Int32Array(PAGE_KEYS);
  // the page's keys seen, as bits, and as a list (to clear the table)
  const bits = new Int32Array(PAGE_WORDS);
  const keys = new Int32Array(PAGE_KEYS + 1);
  // the page's symbols, as runs of its keys
  const bounds = new Int32Array(PAGE_KEYS + 2);
  const codes = new Int32Array(PAGE_KEYS + 2);
  let repeated = new Int32Array(1 << 12);
  let r = 0;
  for (let p = 0; p < pages; p++) {
    const from = at[p];
    const to = at[p + 1];
    if (to === from) continue;
    if (r + PAGE_KEYS > repeated.length) {
      const grown = new Int32Array(Math.max(2 * repeated.length, r + PAGE_KEYS));
      grown.set(repeated.subarray(0, r));
      repeated = grown;
    }
    sz.pageSymbols(p, bounds, codes);
    count(runs, from, to, table, bits);
    r = seenKeys(table, bits, keys, bounds, codes, repeated, r);
    rewrite(runs, from, to, table);
    clear(table, keys);
  }
  // each keyed ip's entry, its page's run read in the order it was written
  cursor.set(at.subarray(0, pages));
  gather(ids, start, cut, runs, cursor);
  for (let q = cut; q < end; q += 1 << 18) gather(ids, q, Math.min(end, q + (1 << 18)), runs, cursor);
  return repeated.subarray(0, r);
}

/** The keys of `ids[from, to)` into their pages' runs, at each page's cursor. */
function scatter(ids: Int32Array, from: number, to: number, runs: Int32Array, cursor: Int32Array): void {
  for (let q = from; q < to; q++) {
    const k = ids[q];
    if (k >= 0) runs[cursor[k >>> PAGE_BITS]++] = k & PAGE_MASK;
  }
}

/** The runs' entries back into `ids[from, to)`, each key's from its page's cursor. */
function gather(ids: Int32Array, from: number, to: number, runs: Int32Array, cursor: Int32Array): void {
  for (let q = from; q < to; q++) {
    const k = ids[q];
    if (k >= 0) ids[q] = runs[cursor[k >>> PAGE_BITS]++];
  }
}

/** How often each key of the run [from, to) comes, into `table`, each key marked in `bits`. */
function count(runs: Int32Array, from: number, to: number, table: Int32Array, bits: Int32Array): void {
  for (let x = from; x < to; x++) {
    const off = runs[x];
    table[off]++;
    bits[off >>> 5] |= 1 << (off & 31);
  }
}

/**
 * The page's keys marked in `bits`, in address order (the bits cleared on the way), each one's
 * count in `table` replaced by what `ids` takes for it, without a branch but the symbol's; the
 * page's symbols are the runs of keys `bounds`/`codes`. Lists the keys in `keys` (a -1 after
 * them); returns the repeated keys so far (`r` before).
 */
function seenKeys(table: Int32Array, bits: Int32Array, keys: Int32Array, bounds: Int32Array, codes: Int32Array, repeated: Int32Array, r: number): number {
  let d = 0;
  let s = 0;
  for (let w = 0; w < PAGE_WORDS; w++) {
    let m = bits[w];
    if (m === 0) continue;
    bits[w] = 0;
    while (m !== 0) {
      const low = m & -m;
      m ^= low;
      const off = (w << 5) | (31 - Math.clz32(low));
      while (bounds[s + 1] <= off) s++;
      const v = codes[s] + 1;
      // -1 where the key came more than once, else 0
      const again = (1 - table[off]) >> 31;
      repeated[r] = v;
      table[off] = ((-2 - v) & ~again) | (((r << 1) | 1) & again);
      r -= again;
      keys[d++] = off;
    }
  }
  keys[d] = -1;
  return r;
}

/** Each key of the run [from, to) replaced by its entry; a repeated key's first sight keeps bit 0, the rest lose it. */
function rewrite(runs: Int32Array, from: number, to: number, table: Int32Array): void {
  for (let x = from; x < to; x++) {
    const o = runs[x];
    const t = table[o];
    runs[x] = t;
    table[o] = t & -2;
  }
}

/** The table's entries of the keys `seenKeys` listed back to 0. */
function clear(table: Int32Array, keys: Int32Array): void {
  for (let i = 0; keys[i] >= 0; i++) table[keys[i]] = 0;
}
