import { pairSlot, randomWords } from '../base/keyed-hash.ts';
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

/** How an ip symbolized: not counted (the trampoline, or no usable symbols), inside a symbol, outside every symbol. */
const enum Kind {
  Uncounted = 0,
  Hit = 1,
  Miss = 2,
}

/** Turns an ip given as two 32-bit halves into a frame key and what kind of answer it was. */
interface Resolver {
  /** the key of `hi:lo`; sets `kind` */
  resolve(hi: number, lo: number): string;
  kind: Kind;
}

/** Resolves every ip to its address key (no symbols loaded). */
class AddressResolver implements Resolver {
  kind = Kind.Uncounted;
  resolve(hi: number, lo: number): string {
    return addressKeyOf(hi, lo);
  }
}

/** id + 1 in the low 30 bits of a table entry, the kind above */
const ID_MASK = 0x3fffffff;

/**
 * Frame keys of raw ips, each made once per distinct ip: an ip gets a dense id and its key
 * string when first seen; later occurrences cost one probe. The table is open addressing over
 * one Uint32Array of (lo, id + 1 | kind << 30) pairs (0: free), the high half kept per id: 8 bytes
 * a slot, up to 3/4 full, so 100,000 distinct ips fit in 1 MB (a probe of a dump's millions of
 * ips stays in the cache). Counts symbol hits and misses per occurrence, as a per-ip symbolizer
 * would. The slots are keyed (pairSlot, a random key per table): ips come from files, and with
 * a fixed hash a file can pick ips that all land in one chain.
 */
export class IpFrames {
  hits = 0;
  misses = 0;
  /** slots visited by lookups so far (test support: what a flood costs, counted) */
  probes = 0;
  private readonly k0: number;
  private readonly k1: number;
  /** frame key of each id */
  readonly keys: string[] = [];
  /** high half of each id's ip */
  private hiOf = new Uint32Array(1024);
  private table = new Uint32Array(2 << 11);
  private shift = 32 - 11;

  constructor(private readonly resolver: Resolver = new AddressResolver()) {
    const key = randomWords(2);
    this.k0 = key[0] | 0;
    this.k1 = key[1] | 0;
  }

  get size(): number {
    return this.keys.length;
  }

  key(id: number): string {
    return this.keys[id];
  }

  /** The id of the ip `hi:lo` (unsigned 32-bit halves), counting it as a hit or miss. */
  idOf(hi: number, lo: number): number {
    const t = this.table;
    const mask = (t.length >>> 1) - 1;
    let h = pairSlot(hi, lo, this.k0, this.k1, this.shift);
    for (;;) {
      this.probes++;
      const e = t[2 * h + 1];
      if (e === 0) return this.add(hi, lo, h);
      const id = (e & ID_MASK) - 1;
      if (t[2 * h] === lo && this.hiOf[id] === hi) {
        const kind = e >>> 30;
        if (kind === Kind.Hit) this.hits++;
        else if (kind === Kind.Miss) this.misses++;
        return id;
      }
      h = (h + 1) & mask;
    }
  }

  /**
   * Writes into `out` from `at` on the ids of the `n` ips `hi[from + i]:lo[from + i]` (a
   * dump's ip columns): the probe of `idOf` in one loop, hits and misses summed once.
   */
  idsOfHalves(hi: Uint32Array, lo: Uint32Array, from: number, n: number, out: Int32Array, at: number): void {
    let hits = 0;
    let misses = 0;
    let probes = 0;
    const k0 = this.k0;
    const k1 = this.k1;
    let t = this.table;
    let hiOf = this.hiOf;
    let mask = (t.length >>> 1) - 1;
    let shift = this.shift;
    for (let i = 0; i < n; i++) {
      const H = hi[from + i];
      const L = lo[from + i];
      let h = pairSlot(H, L, k0, k1, shift);
      for (;;) {
        probes++;
        const e = t[2 * h + 1];
        if (e === 0) {
          out[at + i] = this.add(H, L, h);
          // add counted it and may have grown the arrays
          t = this.table;
          hiOf = this.hiOf;
          mask = (t.length >>> 1) - 1;
          shift = this.shift;
          break;
        }
        const id = (e & ID_MASK) - 1;
        if (t[2 * h] === L && hiOf[id] === H) {
          const kind = e >>> 30;
          hits += kind & 1;
          misses += kind >>> 1;
          out[at + i] = id;
          break;
        }
        h = (h + 1) & mask;
      }
    }
    this.hits += hits;
    this.misses += misses;
    this.probes += probes;
  }

  /** Writes the ids of a record's ips into `out` from `at` on. */
  idsInto(ips: BigUint64Array, out: Int32Array, at: number): void {
    const n = ips.length;
    const w = new Uint32Array(ips.buffer, ips.byteOffset, 2 * n);
    const l = LITTLE ? 0 : 1;
    for (let i = 0; i < n; i++) out[at + i] = this.idOf(w[2 * i + 1 - l], w[2 * i + l]);
  }

  /** Ids of a record's ips, in order. */
  idsOf(ips: BigUint64Array): Int32Array {
    const out = new Int32Array(ips.length);
    this.idsInto(ips, out, 0);
    return out;
  }

  /** Frame keys of a record's ips, leaf first as given. */
  keysOf(ips: BigUint64Array): string[] {
    const ids = this.idsOf(ips);
    const out: string[] = new Array(ids.length);
    for (let i = 0; i < ids.length; i++) out[i] = this.keys[ids[i]];
    return out;
  }

  /** A first sight of `hi:lo`, at free slot `h`: resolves it, counts it, gives it the next id. */
  private add(hi: number, lo: number, h: number): number {
    const id = this.keys.length;
    if (id >= ID_MASK - 1) throw new RangeError('more than 2^30 distinct ips');
    const key = this.resolver.resolve(hi, lo);
    const kind = this.resolver.kind;
    if (kind === Kind.Hit) this.hits++;
    else if (kind === Kind.Miss) this.misses++;
    this.keys.push(key);
    if (id === this.hiOf.length) {
      const grown = new Uint32Array(2 * id);
      grown.set(this.hiOf);
      this.hiOf = grown;
    }
    this.hiOf[id] = hi;
    const t = this.table;
    t[2 * h] = lo;
    t[2 * h + 1] = (id + 1) | (kind << 30);
    if (4 * this.keys.length > 3 * (t.length >>> 1)) this.rehash();
    return id;
  }

  private rehash(): void {
    const old = this.table;
    const t = new Uint32Array(old.length * 2);
    this.shift--;
    const mask = (t.length >>> 1) - 1;
    for (let q = 0; q < old.length; q += 2) {
      const e = old[q + 1];
      if (e === 0) continue;
      let h = pairSlot(this.hiOf[(e & ID_MASK) - 1], old[q], this.k0, this.k1, this.shift);
      while (t[2 * h + 1] !== 0) h = (h + 1) & mask;
      t[2 * h] = old[q];
      t[2 * h + 1] = e;
    }
    this.table = t;
  }
}

/**
 * A symbolizer over one symbol file: `sym+0xoff` when the ip falls inside a symbol (its size
 * being the distance to the next), else the address key. Counts hits and misses, so a map from
 * another boot or a KASLR-slid kernel can be told apart.
 *
 * The search runs over the addresses' 32-bit halves (no BigInt per ip), and each distinct ip is
 * resolved once: `frames`, the per-ip cache that `symbolize` and whole records (DumpIndex.add,
 * given this Symbolizer) share.
 */
export class Symbolizer implements Resolver {
  kind: Kind = Kind.Uncounted;
  readonly frames: IpFrames;
  /** The key of one ip (a bound function: usable as `ips.map(s.symbolize)`). */
  readonly symbolize: (ip: bigint) => string;
  private readonly hi: Uint32Array;
  private readonly lo: Uint32Array;
  private readonly names: string[];
  private readonly usable: boolean;

  constructor(syms: SymbolFile) {
    // a SymbolFile made by hand may lack the halves: derive them from addrs
    const n = syms.addrs.length;
    this.hi = syms.hi ?? Uint32Array.from(syms.addrs, (a) => Number(a >> 32n));
    this.lo = syms.lo ?? Uint32Array.from(syms.addrs, (a) => Number(a & 0xffffffffn));
    this.names = syms.names;
    this.usable = !syms.allZero && n > 0;
    this.frames = new IpFrames(this);
    const frames = this.frames;
    this.symbolize = (ip: bigint): string => frames.key(frames.idOf(Number(ip >> 32n) >>> 0, Number(ip & 0xffffffffn)));
  }

  get hits(): number {
    return this.frames.hits;
  }
  get misses(): number {
    return this.frames.misses;
  }

  /** The key of the ip `hi:lo` (unsigned halves), and in `kind` whether it was a hit. */
  resolve(hi: number, lo: number): string {
    const H = this.hi;
    const L = this.lo;
    const n = H.length;
    if (!this.usable || (hi === 0 && lo === 0x7fffffff)) {
      this.kind = Kind.Uncounted;
      return addressKeyOf(hi, lo);
    }
    // the last symbol at or below the ip
    if (hi < H[0] || (hi === H[0] && lo < L[0])) return this.miss(hi, lo);
    let a = 0;
    let b = n - 1;
    while (a < b) {
      const mid = (a + b + 1) >> 1;
      const mh = H[mid];
      if (mh < hi || (mh === hi && L[mid] <= lo)) a = mid;
      else b = mid - 1;
    }
    // ip - addr[a], as dHi:dLo
    let dHi = hi - H[a];
    let dLo = lo - L[a];
    if (dLo < 0) {
      dLo += 0x100000000;
      dHi--;
    }
    if (a + 1 < n) {
      const eh = H[a + 1];
      if (hi > eh || (hi === eh && lo >= L[a + 1])) return this.miss(hi, lo);
    } else if (dHi > 0 || dLo >= LAST_SYMBOL_SPAN) return this.miss(hi, lo);
    this.kind = Kind.Hit;
    return this.names[a] + '+0x' + hex64(dHi, dLo);
  }

  private miss(hi: number, lo: number): string {
    this.kind = Kind.Miss;
    return addressKeyOf(hi, lo);
  }
}
