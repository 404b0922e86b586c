import { addressKey } from './frames.ts';
import { LineSplitter, TOO_LONG } from './lines.ts';
import type { ChunkParser, LineCount, ParseContext } from './types.ts';

/** Symbols from `/proc/kallsyms` or `System.map`, sorted by address, for symbolizing raw ips. */
export interface SymbolFile {
  file: string;
  format: 'kallsyms' | 'System.map';
  /** code symbols only (t, T, w, W), ascending */
  addrs: BigUint64Array;
  names: string[];
  /** every address was 0: kallsyms read without privilege */
  allZero: boolean;
  lines: LineCount;
}

const LINE = /^([0-9a-fA-F]{8,16}) ([a-zA-Z?]) (\S+)(?:\s+\[(\S+)\])?\s*$/;

export function createKallsymsParser(ctx: ParseContext): ChunkParser<SymbolFile> {
  const addrs: bigint[] = [];
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
    const addr = BigInt('0x' + m[1]);
    if (addr !== 0n) nonZero++;
    if (m[4]) modules++;
    const t = m[2];
    if (t === 't' || t === 'T' || t === 'w' || t === 'W') {
      addrs.push(addr);
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
      const order = addrs.map((_, i) => i).sort((a, b) => (addrs[a] < addrs[b] ? -1 : addrs[a] > addrs[b] ? 1 : 0));
      const allZero = total > 0 && nonZero === 0;
      if (allZero) ctx.diagnostics.forFile('every address is 0: kallsyms was read without privilege (read it as root); it cannot symbolize');
      return {
        file: ctx.file,
        format: modules > 0 ? 'kallsyms' : 'System.map',
        addrs: BigUint64Array.from(order.map((i) => addrs[i])),
        names: order.map((i) => names[i]),
        allZero,
        lines: { total: lineCount, used, unused },
      };
    },
  };
}

/** Largest gap after the last symbol still taken as inside it. */
const LAST_SYMBOL_SPAN = 0x10000n;

/**
 * A symbolizer over one symbol file: `sym+0xoff` when the ip falls inside a symbol (its size
 * being the distance to the next), else the address key. Counts hits and misses, so a map from
 * another boot or a KASLR-slid kernel can be told apart.
 */
export class Symbolizer {
  hits = 0;
  misses = 0;
  constructor(private readonly syms: SymbolFile) {}

  readonly symbolize = (ip: bigint): string => {
    const a = this.syms.addrs;
    if (this.syms.allZero || a.length === 0 || ip === 0x7fffffffn) return addressKey(ip);
    let lo = 0;
    let hi = a.length - 1;
    if (ip < a[0]) return this.miss(ip);
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (a[mid] <= ip) lo = mid;
      else hi = mid - 1;
    }
    const end = lo + 1 < a.length ? a[lo + 1] : a[lo] + LAST_SYMBOL_SPAN;
    if (ip >= end) return this.miss(ip);
    this.hits++;
    return this.syms.names[lo] + '+0x' + (ip - a[lo]).toString(16);
  };

  private miss(ip: bigint): string {
    this.misses++;
    return addressKey(ip);
  }
}
