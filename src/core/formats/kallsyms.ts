import { TRAMPOLINE } from './frames.ts';
import { LineSplitter, TOO_LONG } from './lines.ts';
import type { ChunkParser, LineCount, ParseContext } from './types.ts';

/** Symbols from `/proc/kallsyms` or `System.map`, sorted by address, for symbolizing raw ips. */
export interface SymbolFile {
  file: string;
  format: 'kallsyms' | 'System.map';
  /** code symbols only (t, T, w, W), ascending; equal addresses in file order */
  addrs: BigUint64Array;
  /** the same addresses as two 32-bit halves (what the Symbolizer searches: no BigInt per ip) */
  hi: Uint32Array;
  lo: Uint32Array;
  names: string[];
  /** every address was 0: kallsyms read without privilege */
  allZero: boolean;
  lines: LineCount;
}

const LINE = /^([0-9a-fA-F]{8,16}) ([a-zA-Z?]) (\S+)(?:\s+\[(\S+)\])?\s*$/;

/** Whether this machine stores the low 32-bit word of a u64 first (BigUint64Array and Uint32Array views share the native order). */
const LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

export function createKallsymsParser(ctx: ParseContext): ChunkParser<SymbolFile> {
  let his: number[] = [];
  let los: number[] = [];
  const names: string[] = [];
  let used = 0;
  let unused = 0;
  let modules = 0;
  let nonZero = 0;
  let total = 0;
  const splitter = new LineSplitter((line, lineNo) => {
    if (line.trim() === '') {
      used++;
      return;
    }
    const m = LINE.exec(line);
    if (!m) {
      unused++;
      ctx.diagnostics.atLine(lineNo, 'not a symbol line (ADDR TYPE NAME [module])');
      return;
    }
    used++;
    total++;
    const hex = m[1];
    const cut = hex.length - 8;
    const hi = cut > 0 ? parseInt(hex.slice(0, cut), 16) : 0;
    const lo = parseInt(hex.slice(cut), 16);
    if (hi !== 0 || lo !== 0) nonZero++;
    if (m[4]) modules++;
    const t = m[2];
    if (t === 't' || t === 'T' || t === 'w' || t === 'W') {
      his.push(hi);
      los.push(lo);
      names.push(m[3]);
      if (m[4] && ctx.modules && !ctx.modules.has(m[3])) ctx.modules.set(m[3], m[4]);
    }
  }, undefined, (lineNo) => {
    unused++;
    ctx.diagnostics.atLine(lineNo, TOO_LONG);
  });
  return {
    push: (c) => splitter.push(c),
    end: () => {
      const lineCount = splitter.end();
      const n = names.length;
      // a stable sort: symbols at one address keep their file order (the later one wins a lookup)
      const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => his[a] - his[b] || los[a] - los[b]);
      const hi = new Uint32Array(n);
      const lo = new Uint32Array(n);
      const addrs = new BigUint64Array(n);
      const words = new Uint32Array(addrs.buffer);
      const sorted: string[] = new Array(n);
      for (let k = 0; k < n; k++) {
        const i = order[k];
        hi[k] = his[i];
        lo[k] = los[i];
        words[2 * k + (LITTLE ? 0 : 1)] = los[i];
        words[2 * k + (LITTLE ? 1 : 0)] = his[i];
        sorted[k] = names[i];
      }
      his = [];
      los = [];
      const allZero = total > 0 && nonZero === 0;
      if (allZero) ctx.diagnostics.forFile('every address is 0: kallsyms was read without privilege (read it as root); it cannot symbolize');
      return {
        file: ctx.file,
        format: modules > 0 ? 'kallsyms' : 'System.map',
        addrs,
        hi,
        lo,
        names: sorted,
        allZero,
        lines: { total: lineCount, used, unused },
      };
    },
  };
}

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

/** At most this many buckets per symbol in the bucket index (and never more than 2^20). */
const BUCKETS_PER_SYMBOL = 4;

/**
 * A symbolizer over one symbol file: `sym+0xoff` when the ip falls inside a symbol (its size
 * being the distance to the next), else the address key. Counts hits and misses, so a map from
 * another boot or a KASLR-slid kernel can be told apart.
 *
 * Each ip is looked up on its own: no cache of ips seen (a dump of a kernel with millions of
 * distinct return addresses made such a cache the slowest part of a load, issue 21). The search
 * runs over the addresses' 32-bit halves (no BigInt per ip), and for the high half most symbols
 * share (the kernel's, `0xffffffff`) a bucket index of the low half narrows it first: bucket k
 * holds the last symbol at or below `base + k << bucketShift`, so an ip's symbol lies between
 * its bucket's entry and the next one's (a few symbols; a binary search between them, so a file
 * that crowds one bucket costs a log, not a scan).
 */
export class Symbolizer {
  /** ips inside a symbol, and outside every one, so far */
  hits = 0;
  misses = 0;
  /** The key of one ip (a bound function: usable as `ips.map(s.symbolize)`), counted. */
  readonly symbolize: (ip: bigint) => string;
  private readonly hi: Uint32Array;
  private readonly lo: Uint32Array;
  readonly names: string[];
  private readonly usable: boolean;
  /** the bucket index: symbols [first, last] share high half `bucketHi` */
  private readonly bucketHi: number = 0;
  private readonly bucketBase: number = 0;
  private readonly bucketShift: number = 0;
  private readonly buckets: Int32Array = new Int32Array(0);

  constructor(syms: SymbolFile) {
    // a SymbolFile made by hand may lack the halves: derive them from addrs
    const n = syms.addrs.length;
    this.hi = syms.hi ?? Uint32Array.from(syms.addrs, (a) => Number(a >> 32n));
    this.lo = syms.lo ?? Uint32Array.from(syms.addrs, (a) => Number(a & 0xffffffffn));
    this.names = syms.names;
    this.usable = !syms.allZero && n > 0;
    this.symbolize = (ip: bigint): string => this.resolveCounted(Number(ip >> 32n) >>> 0, Number(ip & 0xffffffffn));
    if (this.usable) {
      const H = this.hi;
      const L = this.lo;
      const hi = H[n - 1];
      let first = n - 1;
      while (first > 0 && H[first - 1] === hi) first--;
      const base = L[first];
      const span = L[n - 1] - base;
      const count = n - first;
      let shift = 0;
      const most = Math.min(1 << 20, Math.max(16, BUCKETS_PER_SYMBOL * count));
      while (shift < 32 && Math.floor(span / 2 ** shift) + 1 > most) shift++;
      const nb = Math.floor(span / 2 ** shift) + 2;
      const buckets = new Int32Array(nb);
      let a = first;
      for (let k = 0; k < nb; k++) {
        const at = base + k * 2 ** shift;
        while (a + 1 < n && L[a + 1] <= at) a++;
        buckets[k] = a;
      }
      this.bucketHi = hi;
      this.bucketBase = base;
      this.bucketShift = shift;
      this.buckets = buckets;
    }
  }

  /**
   * For the `count` ips `hi[from + i]:lo[from + i]`: writes to `sym[at + i]` the index of the
   * symbol it is inside (or a `Located` code) and to `off[at + i]` its offset there (the low 32
   * bits, unsigned in an int). Counts hits and misses.
   */
  locate(hi: Uint32Array, lo: Uint32Array, from: number, count: number, sym: Int32Array, off: Int32Array, at: number): void {
    let hits = 0;
    let misses = 0;
    if (!this.usable) {
      for (let i = 0; i < count; i++) sym[at + i] = hi[from + i] === 0 && lo[from + i] === 0x7fffffff ? Located.Trampoline : Located.Raw;
      return;
    }
    const H = this.hi;
    const L = this.lo;
    const n = H.length;
    const bHi = this.bucketHi;
    const base = this.bucketBase;
    const shift = this.bucketShift;
    const buckets = this.buckets;
    const nb = buckets.length - 1;
    for (let i = 0; i < count; i++) {
      const h = hi[from + i];
      const l = lo[from + i];
      let a: number;
      const k = h === bHi && l >= base ? (l - base) >>> shift : -1;
      if (k >= 0 && k < nb) {
        // the last symbol at or below the ip lies in [buckets[k], buckets[k + 1]]
        a = buckets[k];
        let b = buckets[k + 1];
        while (a < b) {
          const mid = (a + b + 1) >> 1;
          if (L[mid] <= l) a = mid;
          else b = mid - 1;
        }
      } else {
        if (h === 0 && l === 0x7fffffff) {
          sym[at + i] = Located.Trampoline;
          continue;
        }
        if (h < H[0] || (h === H[0] && l < L[0])) {
          sym[at + i] = Located.Miss;
          misses++;
          continue;
        }
        a = 0;
        let b = n - 1;
        while (a < b) {
          const mid = (a + b + 1) >> 1;
          const mh = H[mid];
          if (mh < h || (mh === h && L[mid] <= l)) a = mid;
          else b = mid - 1;
        }
      }
      if (h === 0 && l === 0x7fffffff) {
        sym[at + i] = Located.Trampoline;
        continue;
      }
      // ip - addr[a]
      const dHi = h - H[a] - (l < L[a] ? 1 : 0);
      const dLo = (l - L[a]) >>> 0;
      if (a === n - 1 && (dHi > 0 || dLo >= LAST_SYMBOL_SPAN)) {
        sym[at + i] = Located.Miss;
        misses++;
        continue;
      }
      hits++;
      if (dHi > 0) {
        sym[at + i] = Located.Wide;
        continue;
      }
      sym[at + i] = a;
      off[at + i] = dLo | 0;
    }
    this.hits += hits;
    this.misses += misses;
  }

  /** The key of the ip `hi:lo` (unsigned halves), not counted. */
  resolve(hi: number, lo: number): string {
    const h = this.hits;
    const m = this.misses;
    const key = this.resolveCounted(hi, lo);
    this.hits = h;
    this.misses = m;
    return key;
  }

  /** The key of the ip `hi:lo`, counted as a hit or miss. */
  resolveCounted(hi: number, lo: number): string {
    this.oneHi[0] = hi;
    this.oneLo[0] = lo;
    this.locate(this.oneHi, this.oneLo, 0, 1, this.oneSym, this.oneOff, 0);
    const s = this.oneSym[0];
    if (s >= 0) return this.names[s] + '+0x' + (this.oneOff[0] >>> 0).toString(16);
    if (s === Located.Wide) return this.wide(hi, lo);
    return addressKeyOf(hi, lo);
  }

  private readonly oneHi = new Uint32Array(1);
  private readonly oneLo = new Uint32Array(1);
  private readonly oneSym = new Int32Array(1);
  private readonly oneOff = new Int32Array(1);

  /** The key of an ip 2^32 or more past its symbol's start. */
  private wide(hi: number, lo: number): string {
    const H = this.hi;
    const L = this.lo;
    let a = 0;
    let b = H.length - 1;
    while (a < b) {
      const mid = (a + b + 1) >> 1;
      if (H[mid] < hi || (H[mid] === hi && L[mid] <= lo)) a = mid;
      else b = mid - 1;
    }
    const d = ((BigInt(hi) << 32n) | BigInt(lo)) - ((BigInt(H[a]) << 32n) | BigInt(L[a]));
    return this.names[a] + '+0x' + d.toString(16);
  }
}
