/** `/proc/kallsyms` and `System.map` read into a SymbolFile: code symbols sorted by address (symbolizer.ts looks ips up in it). */
import { isSpace } from './event-line.ts';
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

/**
 * One line's fields, as the regex `^([0-9a-fA-F]{8,16}) ([a-zA-Z?]) (\S+)(?:\s+\[(\S+)\])?\s*$`
 * reads them (kallsyms.property.test.ts holds the scanner to it), in one pass over the line with
 * no match array or substrings but the name and module: ADDR as two 32-bit halves.
 */
export interface SymbolLine {
  hi: number;
  lo: number;
  /** the type letter's code */
  type: number;
  name: string;
  /** the module in brackets, or null */
  module: string | null;
}

/** A hex digit's value, or -1. */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

/** Reads `line` into `out` as a symbol line; false when it is not one (what the regex does not match). */
export function scanSymbolLine(line: string, out: SymbolLine): boolean {
  const n = line.length;
  // ADDR: 8 to 16 hex digits, then a space
  // each digit shifted in: the low half's top digit moves to the high half
  let hi = 0;
  let lo = 0;
  let d = 0;
  for (let v = 0; d <= 16 && d < n && (v = hexValue(line.charCodeAt(d))) >= 0; d++) {
    hi = ((hi << 4) | (lo >>> 28)) >>> 0;
    lo = ((lo << 4) | v) >>> 0;
  }
  if (d < 8 || d > 16 || line.charCodeAt(d) !== 32) return false;
  // TYPE: a letter or `?`, then a space
  const t = line.charCodeAt(d + 1);
  if (!(((t | 0x20) >= 97 && (t | 0x20) <= 122) || t === 63) || line.charCodeAt(d + 2) !== 32) return false;
  // NAME: the longest run of non-blanks (a shorter one leaves a non-blank where a blank or the end must be)
  const n0 = d + 3;
  let e = n0;
  while (e < n && !isSpace(line.charCodeAt(e))) e++;
  if (e === n0) return false;
  // then blanks to the end, or blanks, `[MODULE]` (a run of non-blanks that ends in `]`), blanks to the end
  let k = e;
  while (k < n && isSpace(line.charCodeAt(k))) k++;
  let module: string | null = null;
  if (k < n) {
    if (line.charCodeAt(k) !== 91) return false;
    let m = k + 1;
    while (m < n && !isSpace(line.charCodeAt(m))) m++;
    // `[`, at least one character, `]`
    if (m - k < 3 || line.charCodeAt(m - 1) !== 93) return false;
    let r = m;
    while (r < n && isSpace(line.charCodeAt(r))) r++;
    if (r < n) return false;
    module = line.slice(k + 1, m - 1);
  }
  out.hi = hi;
  out.lo = lo;
  out.type = t;
  out.name = line.slice(n0, e);
  out.module = module;
  return true;
}

/** Whether `line` is blank: only what `\s` matches (String.prototype.trim's white space). */
function blank(line: string): boolean {
  for (let i = 0; i < line.length; i++) if (!isSpace(line.charCodeAt(i))) return false;
  return true;
}

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
  const m: SymbolLine = { hi: 0, lo: 0, type: 0, name: '', module: null };
  const splitter = new LineSplitter(
    (line, lineNo) => {
      if (!scanSymbolLine(line, m)) {
        if (blank(line)) used++;
        else {
          unused++;
          ctx.diagnostics.atLine(lineNo, 'not a symbol line (ADDR TYPE NAME [module])');
        }
        return;
      }
      used++;
      total++;
      const { hi, lo } = m;
      if (hi !== 0 || lo !== 0) nonZero++;
      if (m.module !== null) modules++;
      const t = m.type | 0x20;
      // t, T, w, W: code
      if (t === 116 || t === 119) {
        his.push(hi);
        los.push(lo);
        names.push(m.name);
        if (m.module !== null && ctx.modules && !ctx.modules.has(m.name)) ctx.modules.set(m.name, m.module);
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
      // a stable sort: symbols at one address keep their file order (the later one wins a lookup);
      // none when the file is in address order already (System.map, most of a kallsyms)
      const order = ascending(his, los) ? null : Array.from({ length: n }, (_, i) => i).sort((a, b) => his[a] - his[b] || los[a] - los[b]);
      const hi = new Uint32Array(n);
      const lo = new Uint32Array(n);
      const addrs = new BigUint64Array(n);
      const words = new Uint32Array(addrs.buffer);
      const sorted: string[] = new Array(n);
      for (let k = 0; k < n; k++) {
        const i = order === null ? k : order[k];
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

/** Whether the addresses (high and low halves) never go down. */
function ascending(his: readonly number[], los: readonly number[]): boolean {
  for (let i = 1; i < his.length; i++) {
    const h = his[i] - his[i - 1];
    if (h < 0 || (h === 0 && los[i] < los[i - 1])) return false;
  }
  return true;
}
