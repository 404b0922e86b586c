import { TRAMPOLINE } from '../formats/frames.ts';
import { Located, type Symbolizer } from '../formats/symbolizer.ts';
import type { DumpColumns } from '../formats/types.ts';
import { fmix32, pairKey, pairSlot, randomWords } from '../base/keyed-hash.ts';
import type { FrameTable } from './frame-table.ts';
import { sortByPage } from './page-sort.ts';
import type { StackTable } from './stack-table.ts';

/** A record's ips as 32-bit halves: which half comes first in a BigUint64Array's words. */
const LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** What an address's first sight counted, in the low two bits of its entry: nothing (the trampoline, no symbols), a hit, a miss. */
const enum Tally {
  None = 0,
  Hit = 1,
  Miss = 2,
}

/** The address table of one high half (IpPool's `tables`). */
interface AddressTable {
  hi: number;
  /** (lo, frame << 2 | Tally + 1) pairs, 0: free */
  slots: Int32Array;
  /** 32 - log2(slots) */
  shift: number;
  count: number;
}

/** Ips `tooManyAddresses` looks at: 2^14, in a table of 2^16 slots that stays in cache. */
const SAMPLE_BITS = 14;

/**
 * Whether a dump's distinct addresses are likely more than `room`, from a sample of its ips
 * taken at an even stride: n ips from D equally likely addresses repeat one another about
 * n^2 / 2D times (the birthday count), so fewer repeats than n^2 / 2room say D > room. Skewed
 * addresses (a call graph's callers near the root) repeat more, so the guess errs toward trying
 * the hash pass, whose own limit still holds. A random dump's 2^14 sampled ips of 7.7M
 * addresses repeat ~17 times, a call graph's of 100k ~1,300 or more: the hash pass's give-up
 * after 2^17 new addresses cost 59 ms of a 780 ms random dump, this costs ~1. Keyed as the
 * pool's table is (a file picks the addresses, not where they go).
 */
export function tooManyAddresses(c: DumpColumns, room: number, k0: number, k1: number): boolean {
  if (c.ips < 4 << SAMPLE_BITS) return false;
  const step = Math.floor(c.ips / (1 << SAMPLE_BITS));
  const slots = 1 << (SAMPLE_BITS + 2);
  const mask = slots - 1;
  const seen = new Int32Array(3 * slots);
  let n = 0;
  let repeats = 0;
  for (let b = 0, skip = 0; b < c.ipHi.length; b++) {
    const H = c.ipHi[b];
    const L = c.ipLo[b];
    let i = skip;
    for (; i < H.length; i += step) {
      const h = H[i] | 0;
      const l = L[i] | 0;
      let x = pairSlot(h, l, k0, k1, 32 - SAMPLE_BITS - 2);
      for (;;) {
        if (seen[3 * x + 2] === 0) {
          seen[3 * x] = l;
          seen[3 * x + 1] = h;
          seen[3 * x + 2] = 1;
          break;
        }
        if (seen[3 * x] === l && seen[3 * x + 1] === h) {
          repeats++;
          break;
        }
        x = (x + 1) & mask;
      }
      if (++n === 1 << SAMPLE_BITS) return 2 * repeats * room < n * n;
    }
    skip = i - H.length;
  }
  return 2 * repeats * room < n * n;
}

/**
 * What binary records' frames are read into: every record's frame ids (of the stack table's
 * frame table) in one pool, since a typed array per record would be 262,144 small buffers for
 * the GC to track. A frame is integers, (function, offset) or the address: no string per ip.
 * Frames enter the frame table here; stacks enter the stack table only at `seal`.
 *
 * A binary dump's columns are read so that each distinct address is symbolized and made a frame
 * once and a repeat costs no probe of a large table (`addColumns`): through a table of the
 * addresses when they are few (frames made in the order the ips first name them), else with the
 * ips sorted by the symbolizer's dense address keys, page by page, each distinct one symbolized
 * and made a frame in address order (page-sort.ts, `keyPass`). A new address of a function whose
 * name one symbol alone has, and that had no frame before, is appended to the frame table
 * without a look in its index (`FrameTable.appendSite`, `appendSiteRun` for a symbol's run of
 * addresses in a page): no other address can be that site.
 */
export class IpPool {
  ids = new Int32Array(1 << 16);
  length = 0;
  /**
   * each symbol's function in the frame table << 1, | 1 when its new sites may be appended
   * without the index (decided when first met); -1 until a frame names it
   */
  private fnOfSym: Int32Array;
  private unique: Uint8Array | null = null;
  private trampoline = -1;
  private readonly frames: FrameTable;
  /** dumps read through `addColumns` so far */
  private dumps = 0;
  /**
   * Every address this pool made a frame of, with that frame << 2 | Tally + 1 (0: a free slot): a
   * table per high half (a 64-bit kernel's text has one, 0xffffffff; the trampoline marker's 0 is
   * another), each open addressing over (lo, entry) pairs, keyed (pairSlot, a random key per pool:
   * a file picks the addresses, not where they go), at most half full. Two words a slot, not
   * three: 8-15% less time over 8.9M ips of 33k-100k addresses (the table then misses the L2
   * less), and pairs never straddle a cache line. Null once a dump had more distinct addresses than
   * they take (`addColumns`) and went the way of address keys.
   */
  private tables: AddressTable[] | null = [];
  /** addresses in every table */
  private hashCount = 0;
  private readonly k0: number;
  private readonly k1: number;
  /** counts by Tally of the ips read so far, not yet added to the symbolizer's */
  private readonly tally = new Float64Array(3);
  /** the most new addresses a dump's hash pass takes before it gives up (0: never tried); by default the rule at `hashPass` */
  private readonly hashLimitForTests: number | undefined;

  constructor(
    private readonly table: StackTable,
    private readonly symbolizer: Symbolizer | null,
    opts: { hashLimitForTests?: number } = {},
  ) {
    this.hashLimitForTests = opts.hashLimitForTests;
    this.frames = table.frames;
    const n = symbolizer ? symbolizer.names.length : 0;
    this.fnOfSym = new Int32Array(n).fill(-1);
    const key = randomWords(2);
    this.k0 = key[0] | 0;
    this.k1 = key[1] | 0;
  }

  /** Room for `n` more ids. */
  reserve(n: number): void {
    const start = this.length;
    if (start + n > this.ids.length) {
      const next = new Int32Array(Math.max(2 * this.ids.length, start + n));
      next.set(this.ids.subarray(0, start));
      this.ids = next;
    }
  }

  /**
   * Appends the frames of every ip of a binary dump's columns, block after block; returns where
   * they start (record r's are at that plus its block's start plus `c.start[r]`). Counts the
   * symbolizer's hits and misses as `Symbolizer.locate` would.
   */
  addColumns(c: DumpColumns): number {
    const start = this.length;
    this.reserve(c.ips);
    this.dumps++;
    if (this.hashPass(c, start)) return start;
    this.tables = null;
    // a symbol met in an earlier dump may have made a frame of an address this one repeats, and
    // the key pass knows this dump's addresses alone: its new sites go through the frame index now
    if (this.dumps > 1) for (let s = 0; s < this.fnOfSym.length; s++) if (this.fnOfSym[s] > 0) this.fnOfSym[s] &= -2;
    this.keyPass(c, start);
    return start;
  }

  /**
   * One pass, each address looked up in `tables` (a dump of few distinct addresses, as walks down
   * a call graph make: a table that stays in cache). Gives up, undoing the frames it made, once
   * the dump's new addresses pass a sixteenth of its ips (at least 2^16, at most 2^20), or 2^17
   * of them came in fewer than twice as many ips: a dump of millions of distinct addresses is
   * read by `keyPass`, whose tables grow with its ips and its repeated addresses, not its probes.
   */
  private hashPass(c: DumpColumns, start: number): boolean {
    if (this.tables === null || this.hashLimitForTests === 0) return false;
    if (c.ips === 0) return true;
    const before = this.hashCount;
    const given = this.hashLimitForTests !== undefined;
    const room = given ? this.hashLimitForTests! : Math.min(1 << 20, Math.max(1 << 16, c.ips >>> 4));
    if (!given && tooManyAddresses(c, room, this.k0, this.k1)) return false;
    const limit = before + room;
    const frames = this.frames;
    const mark = frames.mark();
    const k0 = this.k0;
    const k1 = this.k1;
    const ids = this.ids;
    // the first ip's high half in locals; any other's table through `other`
    const main = this.tableOf(c.ipHi[0][0] | 0);
    const hi0 = main.hi;
    // pairSlot(hi0, l, k0, k1, shift), its high half's part worked out once
    const hiKey = pairKey(hi0, k0, k1);
    let hash = main.slots;
    let shift = main.shift;
    let mask = (hash.length >> 1) - 1;
    let hits = 0;
    let misses = 0;
    let j = start;
    for (let b = 0; b < c.ipHi.length; b++) {
      const H = c.ipHi[b];
      const L = c.ipLo[b];
      for (let i = 0; i < H.length; i++) {
        const h = H[i] | 0;
        const l = L[i] | 0;
        let e: number;
        if (h !== hi0) e = this.other(h, l, before, limit, given, j - start);
        else {
          let x = fmix32(l ^ hiKey) >>> shift;
          for (;;) {
            e = hash[2 * x + 1];
            if (e === 0 || hash[2 * x] === l) break;
            x = (x + 1) & mask;
          }
          if (e === 0) {
            e = this.insert(main, x, h, l, before, limit, given, j - start);
            // the table may have grown
            hash = main.slots;
            shift = main.shift;
            mask = (hash.length >> 1) - 1;
          }
        }
        if (e === 0) {
          this.undo(mark);
          return false;
        }
        const t = e - 1;
        ids[j++] = t >> 2;
        hits += t & Tally.Hit;
        misses += (t & Tally.Miss) >> 1;
      }
    }
    this.length = j;
    this.tally[Tally.Hit] += hits;
    this.tally[Tally.Miss] += misses;
    this.settle();
    return true;
  }

  /**
   * Whether the hash pass may take one more new address: not once the dump's new addresses
   * reach `limit`, nor once 2^17 of them came in fewer than twice as many ips (`read`, this
   * dump's so far): a dump of millions of distinct addresses is read by `keyPass`, whose tables
   * grow with its ips and its repeated addresses, not its probes.
   */
  private room(before: number, limit: number, given: boolean, read: number): boolean {
    const fresh = this.hashCount - before;
    return !(this.hashCount >= limit || (!given && fresh >= 1 << 17 && 2 * fresh > read));
  }

  /** The table of high half `hi`, made empty if there is none. */
  private tableOf(hi: number): AddressTable {
    const tables = this.tables!;
    for (const t of tables) if (t.hi === hi) return t;
    const t: AddressTable = { hi, slots: new Int32Array(2 << 12), shift: 32 - 12, count: 0 };
    tables.push(t);
    return t;
  }

  /** The entry of an ip whose high half is not the dump's first ip's (made now if new), or 0 when `room` says no. */
  private other(h: number, l: number, before: number, limit: number, given: boolean, read: number): number {
    const t = this.tableOf(h);
    const hash = t.slots;
    const mask = (hash.length >> 1) - 1;
    let x = pairSlot(h, l, this.k0, this.k1, t.shift);
    for (;;) {
      const e = hash[2 * x + 1];
      if (e !== 0 && hash[2 * x] === l) return e;
      if (e === 0) break;
      x = (x + 1) & mask;
    }
    return this.insert(t, x, h, l, before, limit, given, read);
  }

  /** A new address `h:l` in table `t` at free slot `x`, made a frame; its entry, or 0 when `room` says no. */
  private insert(t: AddressTable, x: number, h: number, l: number, before: number, limit: number, given: boolean, read: number): number {
    if (!this.room(before, limit, given, read)) return 0;
    const e = this.first(h >>> 0, l >>> 0, false) + 1;
    t.slots[2 * x] = l;
    t.slots[2 * x + 1] = e;
    this.hashCount++;
    if (2 * ++t.count > t.slots.length >> 1) this.grow(t);
    return e;
  }

  /** Table `t` with twice the slots. */
  private grow(t: AddressTable): Int32Array {
    const old = t.slots;
    const slots = old.length;
    const shift = t.shift - 1;
    const mask = slots - 1;
    const hash = new Int32Array(2 * slots);
    for (let q = 0; q < old.length; q += 2) {
      if (old[q + 1] === 0) continue;
      let x = pairSlot(t.hi, old[q], this.k0, this.k1, shift);
      while (hash[2 * x + 1] !== 0) x = (x + 1) & mask;
      hash[2 * x] = old[q];
      hash[2 * x + 1] = old[q + 1];
    }
    t.slots = hash;
    t.shift = shift;
    return hash;
  }

  /** Forgets the frames (and functions) made since `mark`, and what this pool knew of them. */
  private undo(mark: ReturnType<FrameTable['mark']>): void {
    this.frames.truncate(mark);
    const fnOfSym = this.fnOfSym;
    for (let s = 0; s < fnOfSym.length; s++) {
      if (fnOfSym[s] >> 1 >= mark.functions) fnOfSym[s] = -1;
    }
    if (this.trampoline >= mark.frames) this.trampoline = -1;
    this.tally.fill(0);
  }

  /**
   * The ips by address key (the symbolizer's dense keys of addresses inside the pages where
   * symbols start), a page at a time: `sortByPage` (page-sort.ts) lists each page's distinct keys
   * in address order, each made a frame here once (`pageFrames`), and leaves each keyed ip's
   * frame in `ids`; then a pass in ip order makes the frames of the ips without a key. Frames so
   * come in address order, the unkeyed ones after them, not in the order the ips first name them
   * (the address table's order): a pass in ip order to number them so was the slowest part of a
   * random dump's load, a symbol's name and function looked up per ip at random (34 ns an ip of
   * 8.9M, 300 ms), where in address order a symbol's addresses come together.
   */
  private keyPass(c: DumpColumns, start: number): void {
    const sz = this.symbolizer;
    const end = start + c.ips;
    if (sz !== null && sz.keySpace > 0) this.unkeyed(c, start, sortByPage(sz, c, this.ids, start, this.pageFrames));
    else this.unkeyed(c, start, null);
    this.length = end;
    this.settle();
  }

  /** Bounds and codes of a key page's symbols (`Symbolizer.pageSymbols`), made when a key pass first asks. */
  private pageRuns: { bounds: Int32Array; codes: Int32Array } | null = null;

  /**
   * The frames of a key page's distinct keys (`PageFrames`, page-sort.ts), in address order, a
   * run of the page's symbols at a time: a symbol whose new sites may be appended without the
   * index (`siteOf`) has its keys appended at once (`FrameTable.appendSiteRun`), any other key
   * is made on its own, by `siteOf` or, where the run says `locateOne` must, by `first`. Counts
   * each key's ips as hits or misses.
   */
  private readonly pageFrames = (page: number, keys: Int32Array, n: number, table: Int32Array): void => {
    const sz = this.symbolizer!;
    const runs = (this.pageRuns ??= { bounds: new Int32Array((1 << 16) + 2), codes: new Int32Array((1 << 16) + 2) });
    const bounds = runs.bounds;
    const codes = runs.codes;
    sz.pageSymbols(page, bounds, codes);
    const pageLo = sz.keyPageStart(page);
    const hi = sz.keyedHi;
    const frames = this.frames;
    let hits = 0;
    let misses = 0;
    let s = 0;
    for (let i = 0; i < n;) {
      while (bounds[s + 1] <= keys[i]) s++;
      const end = bounds[s + 1];
      let k = i + 1;
      while (k < n && keys[k] < end) k++;
      const sym = codes[s];
      if (sym >= 0 && (this.functionOfSym(sym) & 1) === 1) {
        // keys [i, k), each a new site of a function no other frame has a site of at that offset
        const f0 = frames.appendSiteRun(this.fnOfSym[sym] >> 1, keys, i, k, sz.offsetIn(sym, pageLo));
        if (f0 + (k - i) > 1 << 29) throw new RangeError('more than 2^29 distinct frames');
        for (let x = i; x < k; x++) {
          const off = keys[x];
          hits += table[off];
          table[off] = f0 + x - i;
        }
      } else {
        for (let x = i; x < k; x++) {
          const off = keys[x];
          const lo = pageLo + off;
          const t = sym >= 0 ? this.siteOf(sym, sz.offsetIn(sym, lo), false) : this.first(hi, lo, false);
          const count = table[off];
          table[off] = t >> 2;
          hits += count & -(t & Tally.Hit);
          misses += count & -((t & Tally.Miss) >> 1);
        }
      }
      i = k;
    }
    this.tally[Tally.Hit] += hits;
    this.tally[Tally.Miss] += misses;
  };

  /**
   * The frames of the ips of `c` (the first at `ids[start]`) at the places `alone` lists
   * (ascending) in `ids`, or of every one (null), in ip order.
   */
  private unkeyed(c: DumpColumns, start: number, alone: Int32Array | null): void {
    const ids = this.ids;
    let hits = 0;
    let misses = 0;
    const n = alone === null ? c.ips : alone.length;
    for (let x = 0, b = 0, blockStart = start; x < n; x++) {
      const j = alone === null ? start + x : alone[x];
      while (j >= blockStart + c.ipHi[b].length) blockStart += c.ipHi[b++].length;
      const t = this.first(c.ipHi[b][j - blockStart], c.ipLo[b][j - blockStart], true);
      ids[j] = t >> 2;
      hits += t & Tally.Hit;
      misses += (t & Tally.Miss) >> 1;
    }
    this.tally[Tally.Hit] += hits;
    this.tally[Tally.Miss] += misses;
  }

  /** The tallies into the symbolizer's counts. */
  private settle(): void {
    const sz = this.symbolizer;
    if (sz) {
      sz.hits += this.tally[Tally.Hit];
      sz.misses += this.tally[Tally.Miss];
    }
    this.tally.fill(0);
  }

  /**
   * The frame of the ip `hi:lo` << 2, with what it counts (Tally) in the low bits. `alone`: the
   * ip has no address key (a page where no symbol starts, inside a long function) or is read on
   * its own, so a site it names must be found through the index (and its symbol's later sites too).
   */
  private first(hi: number, lo: number, alone: boolean): number {
    const sz = this.symbolizer;
    const frames = this.frames;
    if (sz === null) {
      if (hi === 0 && lo === 0x7fffffff) return this.trampolineFrame() << 2;
      return frames.address(hi, lo) << 2;
    }
    const s = sz.locateOne(hi, lo);
    if (s >= 0) return this.siteOf(s, sz.offset, alone);
    if (s === Located.Miss) return (frames.address(hi, lo) << 2) | Tally.Miss;
    if (s === Located.Raw) return frames.address(hi, lo) << 2;
    if (s === Located.Trampoline) return this.trampolineFrame() << 2;
    return (frames.intern(sz.wideKey(hi, lo)) << 2) | Tally.Hit;
  }

  /** The frame of symbol `s` at offset `off` (unsigned 32-bit) << 2 | Tally.Hit (`alone` as for `first`). */
  private siteOf(s: number, off: number, alone: boolean): number {
    const frames = this.frames;
    let e = this.functionOfSym(s);
    if (alone && (e & 1) === 1) e = this.fnOfSym[s] = e & -2;
    const f = (e & 1) === 1 ? frames.appendSite(e >> 1, off) : frames.site(e >> 1, off);
    if (f >= 1 << 29) throw new RangeError('more than 2^29 distinct frames');
    return (f << 2) | Tally.Hit;
  }

  /**
   * Symbol `s`'s function in the frame table << 1, | 1 when its new sites may be appended without
   * the index: its name is no other symbol's and no frame named a site of it before (`fnOfSym`).
   */
  private functionOfSym(s: number): number {
    const e = this.fnOfSym[s];
    if (e >= 0) return e;
    const frames = this.frames;
    const fn = frames.functions.intern(this.symbolizer!.names[s]);
    const unique = (this.unique ??= this.symbolizer!.uniqueNames());
    return (this.fnOfSym[s] = (fn << 1) | (unique[s] === 1 && !frames.hasSites(fn) ? 1 : 0));
  }

  private trampolineFrame(): number {
    return this.trampoline >= 0 ? this.trampoline : (this.trampoline = this.frames.intern(TRAMPOLINE));
  }

  /** Appends the frames of the `n` ips `hi[from + i]:lo[from + i]`, each on its own; returns where they start. */
  addHalves(hi: Uint32Array, lo: Uint32Array, from: number, n: number): number {
    const start = this.length;
    this.reserve(n);
    const ids = this.ids;
    const tally = this.tally;
    for (let i = 0; i < n; i++) {
      const t = this.first(hi[from + i], lo[from + i], true);
      ids[start + i] = t >> 2;
      tally[t & 3]++;
    }
    this.length = start + n;
    this.settle();
    return start;
  }

  /** Appends the frames of `ips`; returns where they start. */
  add(ips: BigUint64Array): number {
    const w = new Uint32Array(ips.buffer, ips.byteOffset, 2 * ips.length);
    const n = ips.length;
    const hi = new Uint32Array(n);
    const lo = new Uint32Array(n);
    const l = LITTLE ? 0 : 1;
    for (let i = 0; i < n; i++) {
      hi[i] = w[2 * i + 1 - l];
      lo[i] = w[2 * i + l];
    }
    return this.addHalves(hi, lo, 0, n);
  }

  keys(start: number, n: number): string[] {
    const out: string[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = this.frames.name(this.ids[start + i]);
    return out;
  }

  /** Interns the stack of frames [start, start + n) into the stack table. */
  intern(start: number, n: number): number {
    return this.table.internOwnFrameIds(this.ids, start, start + n);
  }
}
