/** `/proc/kallsyms` and `System.map` read into a SymbolFile: code symbols sorted by address (symbolizer.ts looks ips up in it). */
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
  const splitter = new LineSplitter(
    (line, lineNo) => {
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
    },
    undefined,
    (lineNo) => {
      unused++;
      ctx.diagnostics.atLine(lineNo, TOO_LONG);
    },
  );
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
