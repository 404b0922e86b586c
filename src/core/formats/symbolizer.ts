/**
 * The Symbolizer: ips located in one symbol file (kallsyms.ts reads it) by binary search over its
 * sorted 32-bit halves, narrowed by a page index; `sym+0xoff` keys, address keys, and dense
 * address keys per page for callers that dedupe addresses.
 */
import { TRAMPOLINE } from './frames.ts';
import type { SymbolFile } from './kallsyms.ts';

/** Largest gap after the last symbol still taken as inside it. */
const LAST_SYMBOL_SPAN = 0x10000;

const hex8 = (x: number) => x.toString(16).padStart(8, '0');
/** `hi * 2^32 + lo` in lowercase hex, no leading zeros, no BigInt. */
const hex64 = (hi: number, lo: number) => (hi === 0 ? lo.toString(16) : hi.toString(16) + hex8(lo));

/** The address key of `hi:lo` (as `addressKey` of the same ip). */
export function addressKeyOf(hi: number, lo: number): string {
  if (hi === 0 && lo === 0x7fffffff) return TRAMPOLINE;
  return '0x' + hex64(hi, lo);
}

/** What `locate` writes for an ip that is not inside a symbol (else the symbol's index). */
export const enum Located {
  /** outside every symbol: a miss, kept as its address */
  Miss = -1,
  /** the ftrace trampoline's marker ip, not counted */
  Trampoline = -2,
  /** no usable symbols: kept as its address, not counted */
  Raw = -3,
  /** inside a symbol at an offset of 2^32 or more: the caller takes `resolve`'s string */
  Wide = -4,
}

/** Bits of an index page: the page index narrows an ip to the 64 KiB page it lies in. */
const PAGE_BITS = 16;
const PAGE_MASK = (1 << PAGE_BITS) - 1;
/** Buckets per symbol the bucket index may hold, at most (and never more than 2^22 in all). */
const BUCKETS_PER_SYMBOL = 8;
const MAX_BUCKETS = 1 << 22;

/** names[i] is the only symbol of that name, per symbol file (made once, when a symbolizer first asks) */
const uniqueNamesOf = new WeakMap<readonly string[], Uint8Array>();

/**
 * A symbolizer over one symbol file: `sym+0xoff` when the ip falls inside a symbol (its size
 * being the distance to the next), else the address key. Counts hits and misses, so a map from
 * another boot or a KASLR-slid kernel can be told apart.
 *
 * Each ip is looked up on its own, by binary search over the sorted symbol table's 32-bit halves
 * (no BigInt, no cache of ips seen: a dump of a kernel with millions of distinct return addresses
 * made such a cache the slowest part of a load, issue 21). For the highest high half (the
 * kernel's text, `0xffffffff`, which most symbols share), a page index narrows the search first: the span from the first
 * such symbol to the last in 64 KiB pages, each page that holds a symbol's start with its own
 * run of buckets (bucket k of a page holds the last symbol at or below the page's start plus
 * `k << shift`, so an ip's symbol lies between its bucket's entry and the next one's: a binary
 * search between them, mostly of none or one step), each page without one naming the symbol
 * that covers it. The gaps in a kernel's layout (the gigabyte between the kernel's text and the
 * modules) then cost four bytes a page, not buckets; a file that crowds a bucket costs a log.
 *
 * The same pages number the addresses they hold (`keyOf`): a dense key per address inside a
 * page with a symbol, for a caller that sorts addresses by page and key (ip-pool.ts).
 */
export class Symbolizer {
  /** ips inside a symbol, and outside every one, so far */
  hits = 0;
  misses = 0;
  /** The key of one ip (a bound function: usable as `ips.map(s.symbolize)`), counted. */
  readonly symbolize: (ip: bigint) => string;
  private readonly hi: Uint32Array;
  private readonly lo: Uint32Array;
  /** each low half with its top bit flipped: unsigned order as int32 order */
  private readonly loSigned: Int32Array;
  readonly names: string[];
  private readonly usable: boolean;
  /** the page index over the symbols whose high half is `topHi` (-1: none; a high half is unsigned) */
  private readonly topHi: number = -1;
  /** the first page's start (unsigned, a multiple of the page) */
  private readonly base: number = 0;
  private readonly pages: number = 0;
  /** per page: where its buckets start, or ~s for a page where no symbol starts (s covers it, or -1) */
  private readonly pageAt: Int32Array = new Int32Array(0);
  /** per page: its first address key, or -1 for a page where no symbol starts */
  private readonly pageKey: Int32Array = new Int32Array(0);
  private readonly shift: number = 0;
  private readonly buckets: Int32Array = new Int32Array(0);
  /** address keys `keyOf` gives: [0, keySpace) */
  readonly keySpace: number = 0;
  /** the offset `locateOne` found */
  offset = 0;

  constructor(syms: SymbolFile) {
    // a SymbolFile made by hand may lack the halves: derive them from addrs
    const n = syms.addrs.length;
    this.hi = syms.hi ?? Uint32Array.from(syms.addrs, (a) => Number(a >> 32n));
    this.lo = syms.lo ?? Uint32Array.from(syms.addrs, (a) => Number(a & 0xffffffffn));
    // a loop, not Int32Array.from's mapping callback (100 ns a symbol: 5 ms of 50,000)
    const loSigned = new Int32Array(n);
    for (let i = 0; i < n; i++) loSigned[i] = (this.lo[i] ^ 0x80000000) | 0;
    this.loSigned = loSigned;
    this.names = syms.names;
    this.usable = !syms.allZero && n > 0;
    this.symbolize = (ip: bigint): string => this.resolveCounted(Number(ip >> 32n) >>> 0, Number(ip & 0xffffffffn));
    if (!this.usable) return;
    const H = this.hi;
    const L = this.lo;
    const top = H[n - 1];
    let first = n - 1;
    while (first > 0 && H[first - 1] === top) first--;
    const base = L[first] - (L[first] & PAGE_MASK);
    const pages = Math.floor((L[n - 1] - base) / 2 ** PAGE_BITS) + 1;
    const starts = new Int32Array(pages);
    for (let i = first; i < n; i++) starts[Math.floor((L[i] - base) / 2 ** PAGE_BITS)]++;
    let used = 0;
    for (let p = 0; p < pages; p++) if (starts[p] > 0) used++;
    // the finest buckets the budget allows, at least one per page
    const budget = Math.min(MAX_BUCKETS, Math.max(64, BUCKETS_PER_SYMBOL * (n - first)));
    let shift = 0;
    while (shift < PAGE_BITS && used * (2 ** (PAGE_BITS - shift) + 1) > budget) shift++;
    const per = 2 ** (PAGE_BITS - shift);
    // a bucket's width: `2 ** shift` in the loop was a power computed per bucket (11 ms of 400,000)
    const step = 2 ** shift;
    const pageAt = new Int32Array(pages);
    const pageKey = new Int32Array(pages);
    const buckets = new Int32Array(used * (per + 1));
    // a: the last symbol at or below the address being indexed (first - 1: below the top half's first)
    let a = first - 1;
    let k = 0;
    let key = 0;
    for (let p = 0; p < pages; p++) {
      const start = base + p * 2 ** PAGE_BITS;
      if (starts[p] === 0) {
        while (a + 1 < n && L[a + 1] < start) a++;
        pageAt[p] = ~a;
        pageKey[p] = -1;
        continue;
      }
      pageAt[p] = k;
      pageKey[p] = key;
      key += 2 ** PAGE_BITS;
      a = fillBuckets(buckets, k, per, start, step, L, a, n);
      k += per + 1;
    }
    this.topHi = top;
    this.base = base;
    this.pages = pages;
    this.pageAt = pageAt;
    this.pageKey = pageKey;
    this.shift = shift;
    this.buckets = buckets;
    this.keySpace = key;
  }

  /**
   * A key for the address `hi:lo` (unsigned halves), dense in [0, keySpace) and the same for the
   * same address only; -1 for an address outside the pages where a symbol starts (the caller
   * takes `locateOne` for it).
   */
  keyOf(hi: number, lo: number): number {
    if (hi !== this.topHi) return -1;
    const d = lo - this.base;
    if (d < 0) return -1;
    const p = d >>> PAGE_BITS;
    if (p >= this.pages) return -1;
    const k = this.pageKey[p];
    return k < 0 ? -1 : k + (d & PAGE_MASK);
  }

  /**
   * `keyOf` of the ips [from, to) of `hi`/`lo` into `keys` (ip `from` at `at`), each key's page
   * (`key >>> 16`) counted in `pageCounts`: one loop over a block of a dump's ips (ip-pool.ts), in
   * 32-bit integer arithmetic (the halves' differences wrap; a page past the index is one no key
   * has).
   */
  keysOf(hi: Uint32Array, lo: Uint32Array, from: number, to: number, keys: Int32Array, at: number, pageCounts: Int32Array): void {
    const top = this.topHi | 0;
    const base = this.base | 0;
    const pages = this.pages;
    const pageKey = this.pageKey;
    for (let i = from, j = at; i < to; i++, j++) {
      let k = -1;
      const p = ((lo[i] | 0) - base) >>> PAGE_BITS;
      if ((hi[i] | 0) === top && p < pages) {
        const q = pageKey[p];
        if (q >= 0) {
          k = q + ((lo[i] | 0) & PAGE_MASK);
          pageCounts[k >>> PAGE_BITS]++;
        }
      }
      keys[j] = k;
    }
  }

  /** per key page (`keyOf(...) >>> 16`): the page it numbers (made when `pageSymbols` first asks) */
  private keyPages: Int32Array | null = null;

  /**
   * The symbols of key page `page` (the keys `page << 16` up, `keyOf`'s): writes `m` runs of the
   * page's 2^16 addresses and returns `m`. Run i is the offsets [bounds[i], bounds[i + 1]) in the
   * page (bounds[m] = 2^16), every address of which `locateOne` finds in symbol `codes[i]` at an
   * offset below 2^32 (`offsetIn` gives it), or -1 where the caller must ask `locateOne` (below
   * every symbol, in the last one, 2^32 or more past a symbol, the trampoline's marker). A run per
   * symbol that starts in the page, and one for the symbol before: a caller that symbolizes a
   * page's addresses in order (ip-pool.ts) walks these, with nothing to search per address.
   * `bounds` and `codes` hold at least as many runs as the page has symbol starts, plus two.
   */
  pageSymbols(page: number, bounds: Int32Array, codes: Int32Array): number {
    const H = this.hi;
    const L = this.lo;
    const n = L.length;
    const top = this.topHi;
    const start = this.keyPageStart(page);
    bounds[0] = 0;
    if (top === 0 && start <= 0x7fffffff && 0x7fffffff < start + 2 ** PAGE_BITS) {
      codes[0] = -1;
      bounds[1] = 2 ** PAGE_BITS;
      return 1;
    }
    // the symbol at the page's start; every one after it has the high half `top`
    let a = this.below(top, start);
    let m = 0;
    for (;;) {
      // a is inside the top half at an offset below 2^32 unless it is below it or the last symbol
      codes[m++] = a >= 0 && a < n - 1 && H[a] === top ? a : -1;
      if (a + 1 >= n || L[a + 1] - start >= 2 ** PAGE_BITS) break;
      const next = L[a + 1] - start;
      // symbols at one address: the last one is found
      a++;
      while (a + 1 < n && L[a + 1] - start === next) a++;
      bounds[m] = next;
    }
    bounds[m] = 2 ** PAGE_BITS;
    return m;
  }

  /** The high half of every keyed address (`keyOf`'s: the kernel text's). */
  get keyedHi(): number {
    return this.topHi;
  }

  /** The low half of key page `page`'s first address (its key `page << 16`; unsigned). */
  keyPageStart(page: number): number {
    let pageOf = this.keyPages;
    if (pageOf === null) {
      pageOf = this.keyPages = new Int32Array(Math.ceil(this.keySpace / 2 ** PAGE_BITS));
      for (let p = 0; p < this.pages; p++) if (this.pageKey[p] >= 0) pageOf[this.pageKey[p] >>> PAGE_BITS] = p;
    }
    return this.base + pageOf[page] * 2 ** PAGE_BITS;
  }

  /** The offset of the address `lo` (low half) in symbol `s`, as `locateOne` gives it when it finds `s` (`pageSymbols`' symbols). */
  offsetIn(s: number, lo: number): number {
    return (lo - this.lo[s]) | 0;
  }

  /** The last symbol at or below the ip `hi:lo` (unsigned halves), or -1 when it is below every one. */
  private below(hi: number, lo: number): number {
    const S = this.loSigned;
    if (hi === this.topHi) {
      const d = lo - this.base;
      if (d >= 0) {
        const p = d >>> PAGE_BITS;
        if (p >= this.pages) return S.length - 1;
        const at = this.pageAt[p];
        if (at < 0) return ~at;
        const q = at + ((d & PAGE_MASK) >>> this.shift);
        const ls = (lo ^ 0x80000000) | 0;
        let a = this.buckets[q];
        let b = this.buckets[q + 1];
        while (a < b) {
          const mid = (a + b + 1) >> 1;
          if (S[mid] <= ls) a = mid;
          else b = mid - 1;
        }
        return a;
      }
    }
    const H = this.hi;
    const L = this.lo;
    if (hi < H[0] || (hi === H[0] && lo < L[0])) return -1;
    let a = 0;
    let b = H.length - 1;
    while (a < b) {
      const mid = (a + b + 1) >> 1;
      const mh = H[mid];
      if (mh < hi || (mh === hi && L[mid] <= lo)) a = mid;
      else b = mid - 1;
    }
    return a;
  }

  /**
   * The symbol the ip `hi:lo` is inside (its offset there in `offset`, the low 32 bits, unsigned
   * in an int), or a `Located` code. Not counted.
   */
  locateOne(hi: number, lo: number): number {
    if (hi === 0 && lo === 0x7fffffff) return Located.Trampoline;
    if (!this.usable) return Located.Raw;
    const a = this.below(hi, lo);
    if (a < 0) return Located.Miss;
    const H = this.hi;
    const L = this.lo;
    // ip - addr[a]
    const dHi = hi - H[a] - (lo < L[a] ? 1 : 0);
    const dLo = (lo - L[a]) >>> 0;
    if (a === H.length - 1 && (dHi > 0 || dLo >= LAST_SYMBOL_SPAN)) return Located.Miss;
    if (dHi > 0) return Located.Wide;
    this.offset = dLo | 0;
    return a;
  }

  /**
   * For the `count` ips `hi[from + i]:lo[from + i]`: writes to `sym[at + i]` the index of the
   * symbol it is inside (or a `Located` code) and to `off[at + i]` its offset there (the low 32
   * bits, unsigned in an int). Counts hits and misses.
   */
  locate(hi: Uint32Array, lo: Uint32Array, from: number, count: number, sym: Int32Array, off: Int32Array, at: number): void {
    let hits = 0;
    let misses = 0;
    for (let i = 0; i < count; i++) {
      const s = this.locateOne(hi[from + i], lo[from + i]);
      sym[at + i] = s;
      if (s >= 0) {
        off[at + i] = this.offset;
        hits++;
      } else if (s === Located.Miss) misses++;
      else if (s === Located.Wide) hits++;
    }
    this.hits += hits;
    this.misses += misses;
  }

  /** Per symbol: 1 where no other symbol of the file has its name (a static function's name may repeat). */
  uniqueNames(): Uint8Array {
    let u = uniqueNamesOf.get(this.names);
    if (!u) {
      const names = this.names;
      u = new Uint8Array(names.length).fill(1);
      const firstOf = new Map<string, number>();
      for (let i = 0; i < names.length; i++) {
        const j = firstOf.get(names[i]);
        if (j === undefined) firstOf.set(names[i], i);
        else u[i] = u[j] = 0;
      }
      uniqueNamesOf.set(this.names, u);
    }
    return u;
  }

  /** The key of the ip `hi:lo` (unsigned halves), not counted. */
  resolve(hi: number, lo: number): string {
    const s = this.locateOne(hi, lo);
    if (s >= 0) return this.names[s] + '+0x' + (this.offset >>> 0).toString(16);
    if (s === Located.Wide) return this.wideKey(hi, lo);
    return addressKeyOf(hi, lo);
  }

  /** The key of the ip `hi:lo`, counted as a hit or miss. */
  resolveCounted(hi: number, lo: number): string {
    const s = this.locateOne(hi, lo);
    if (s >= 0 || s === Located.Wide) this.hits++;
    else if (s === Located.Miss) this.misses++;
    return s >= 0 ? this.names[s] + '+0x' + (this.offset >>> 0).toString(16) : s === Located.Wide ? this.wideKey(hi, lo) : addressKeyOf(hi, lo);
  }

  /** The key of an ip 2^32 or more past the start of the symbol it is inside (`Located.Wide`). */
  wideKey(hi: number, lo: number): string {
    const a = this.below(hi, lo);
    const d = ((BigInt(hi) << 32n) | BigInt(lo)) - ((BigInt(this.hi[a]) << 32n) | BigInt(this.lo[a]));
    return this.names[a] + '+0x' + d.toString(16);
  }
}

/**
 * A page's `per + 1` buckets from `buckets[k]` on: each the last symbol (of `L[0, n)`, from `a`
 * on) at or below the page's `start` plus `j * step`. Returns the last one. A function of its
 * own, called per page: the constructor runs once a load, and its loop, inline, stayed in V8's
 * interpreter for most of its 400,000 buckets (13-20 ms of the first Symbolizer).
 */
function fillBuckets(buckets: Int32Array, k: number, per: number, start: number, step: number, L: Uint32Array, a: number, n: number): number {
  for (let j = 0; j <= per; j++) {
    const at = start + j * step;
    while (a + 1 < n && L[a + 1] <= at) a++;
    buckets[k++] = a;
  }
  return a;
}
