import type { DumpColumns } from './types.ts';

// The columns a dump reader fills (stack_map_bin, dump JSON): one builder for both.

/** ips per block of the ip columns (1 MB per half): a block, once full, is never copied again */
const IP_BLOCK = 1 << 18;
/** high-half values given a shared block (`finishedHi`): a dump has one or two (the trampoline's 0 is one ip, not a block) */
const SHARED_HI = 4;

/**
 * The records as read, as columns: record fields in typed arrays, every record's ips in blocks
 * of halves arrays (no BigInt and no buffer per record). Sized by what arrives, never by a count
 * in the file: the record columns double, the first ip block doubles up to IP_BLOCK ips, then
 * each new block is IP_BLOCK ips, so the ips are copied at most while the first block fills.
 * `record` says where the record's ips go; the reader writes them into `hi` and `lo` there.
 */
export class DumpColumnsBuilder {
  count = 0;
  slot = new Uint32Array(256);
  refCount = new Uint32Array(256);
  where = new Uint32Array(256);
  block = new Uint16Array(256);
  start = new Int32Array(256);
  depth = new Uint8Array(256);
  ips = 0;
  private readonly hiBlocks: Uint32Array[] = [];
  private readonly loBlocks: Uint32Array[] = [];
  /** the block being filled, and how much of it is */
  hi = new Uint32Array(1024);
  lo = new Uint32Array(1024);
  private fill = 0;
  /** a full block of each high half that filled a block alone (`finishedHi`) */
  private readonly sharedHi = new Map<number, Uint32Array>();

  /** Starts a record of `nr` ips; returns where its ips go in `hi` and `lo`. */
  record(slot: number, refCount: number, where: number, nr: number): number {
    const r = this.count;
    if (r === this.slot.length) {
      const n = 2 * r;
      this.slot = grown(this.slot, n, r);
      this.refCount = grown(this.refCount, n, r);
      this.where = grown(this.where, n, r);
      this.block = grown(this.block, n, r);
      this.start = grown(this.start, n, r);
      this.depth = grown(this.depth, n, r);
    }
    let at = this.fill;
    if (at + nr > this.hi.length) {
      if (this.hi.length < IP_BLOCK) {
        const size = Math.max(2 * this.hi.length, at + nr);
        this.hi = grown(this.hi, size, at);
        this.lo = grown(this.lo, size, at);
      } else {
        const hi = this.finishedHi(at);
        this.hiBlocks.push(hi);
        this.loBlocks.push(this.lo.subarray(0, at));
        // a block of one high half is kept as a view of that value's block: its own is written again
        if (hi.buffer === this.hi.buffer) this.hi = new Uint32Array(IP_BLOCK);
        this.lo = new Uint32Array(IP_BLOCK);
        at = 0;
      }
    }
    this.slot[r] = slot;
    this.refCount[r] = refCount;
    this.where[r] = where;
    this.block[r] = this.hiBlocks.length;
    this.start[r] = at;
    this.depth[r] = nr;
    this.count = r + 1;
    this.fill = at + nr;
    this.ips += nr;
    return at;
  }

  /**
   * The high halves of the block being filled, its first `n`: where every one is the same value
   * (every address of a 64-bit kernel's text is 0xffffffff........), a view of a block of that
   * value shared by every such block, so 4 bytes an ip are neither kept nor faulted in (34 MB of
   * a 262,144-stack dump); else the block itself. At most SHARED_HI values get a shared block.
   */
  private finishedHi(n: number): Uint32Array {
    const hi = this.hi;
    if (n === 0) return hi.subarray(0, 0);
    const v = hi[0];
    let same = this.sharedHi.get(v);
    if (same === undefined && this.sharedHi.size >= SHARED_HI) return hi.subarray(0, n);
    for (let i = 1; i < n; i++) if (hi[i] !== v) return hi.subarray(0, n);
    if (same === undefined) this.sharedHi.set(v, (same = new Uint32Array(IP_BLOCK).fill(v)));
    return same.subarray(0, n);
  }

  /** The columns trimmed to what was read (the record columns copied when more than a quarter would be slack). */
  done(): DumpColumns {
    const fit = <T extends Uint32Array | Int32Array | Uint16Array | Uint8Array>(a: T, n: number): T =>
      (4 * n < 3 * a.length ? a.slice(0, n) : a.subarray(0, n)) as T;
    const r = this.count;
    return {
      count: r,
      ips: this.ips,
      slot: fit(this.slot, r),
      refCount: fit(this.refCount, r),
      where: fit(this.where, r),
      block: fit(this.block, r),
      start: fit(this.start, r),
      depth: fit(this.depth, r),
      ipHi: [...this.hiBlocks, this.finishedHi(this.fill)],
      ipLo: [...this.loBlocks, this.lo.subarray(0, this.fill)],
    };
  }
}

function grown<T extends Uint32Array | Int32Array | Uint16Array | Uint8Array>(a: T, n: number, keep: number): T {
  const b = new (a.constructor as new (k: number) => T)(n);
  b.set(a.subarray(0, keep) as never);
  return b;
}
