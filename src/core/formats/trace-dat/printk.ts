/**
 * `trace_printk` in a trace.dat: the saved printk formats (`/sys/kernel/tracing/printk_formats`,
 * `0xADDR : "format"` lines) and the `bprint` event, whose record holds the caller's ip, the
 * address of its format and the arguments packed as the kernel's vbin_printf packs them: each
 * integer aligned to its size (8-byte ones to 4), `%c` one byte, `%s` inline with its NUL, `%*d`
 * widths as ints, `%p` (and `%pS`, `%ps`, `%pF`, `%pf`, `%px`, `%pK`) a long, any other `%pX`
 * already rendered by the kernel as a string. The text is `ip_symbol: formatted`, as the kernel's
 * `trace` file and `trace-cmd report` show it.
 */

/** Parses printk_formats text into `out`; returns the number of lines it could not read. */
export function parsePrintkFormats(text: string, out: Map<string, string>): number {
  let bad = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const m = /^0x([0-9a-fA-F]+) : "(.*)"$/.exec(line);
    if (!m) {
      bad++;
      continue;
    }
    // the kernel escapes newline, tab and the double quote (t_show in trace_printk.c)
    const fmt = m[2].replace(/\\(["nt])/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : '"'));
    out.set(m[1].toLowerCase().replace(/^0+(?=.)/, ''), fmt);
  }
  return bad;
}

/** How a pointer-sized value is shown: a symbol (ps/pf), symbol+offset (pS/pF), else hex. */
export type SymbolOf = (hi: number, lo: number, withOffset: boolean) => string | null;

interface Spec {
  minus: boolean;
  plus: boolean;
  space: boolean;
  hash: boolean;
  zero: boolean;
  width: number;
  prec: number;
}

const latin1 = new TextDecoder('latin1');

/** The read position in a bprint record's packed arguments (one, reused: no closures per call). */
class ArgCursor {
  buf: Uint8Array = new Uint8Array(0);
  v: DataView = new DataView(new ArrayBuffer(0));
  o = 0;
  little = true;
  /** the next integer of `size` bytes, aligned as vbin_printf aligns it; null past the end */
  num(size: number): bigint | null {
    const align = size === 8 ? 4 : size;
    this.o = (this.o + align - 1) & ~(align - 1);
    const { o, v, little } = this;
    if (o + size > this.buf.length) {
      this.o = this.buf.length;
      return null;
    }
    this.o += size;
    if (size === 1) return BigInt(v.getUint8(o));
    if (size === 2) return BigInt(v.getUint16(o, little));
    if (size === 4) return BigInt(v.getUint32(o, little));
    const lo = v.getUint32(little ? o : o + 4, little);
    const hi = v.getUint32(little ? o + 4 : o, little);
    return (BigInt(hi) << 32n) | BigInt(lo);
  }
  /** the next inline NUL-terminated string; null past the end */
  str(): string | null {
    const b = this.buf;
    if (this.o >= b.length) return null;
    let e = this.o;
    while (e < b.length && b[e] !== 0) e++;
    const s = latin1.decode(b.subarray(this.o, e));
    this.o = Math.min(b.length, e + 1);
    return s;
  }
}
const cursor = new ArgCursor();

/**
 * Formats `fmt` with the arguments packed in `buf` (little or big endian, kernel long of
 * `longSize` bytes). Arguments past the end of `buf` print as `?`.
 */
export function formatBinary(fmt: string, buf: Uint8Array, little: boolean, longSize: number, sym: SymbolOf): string {
  const cur = cursor;
  cur.buf = buf;
  cur.v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  cur.o = 0;
  cur.little = little;
  let out = '';
  let i = 0;
  while (i < fmt.length) {
    const c = fmt[i];
    if (c !== '%') {
      const next = fmt.indexOf('%', i);
      const end = next < 0 ? fmt.length : next;
      out += fmt.slice(i, end);
      i = end;
      continue;
    }
    i++;
    if (fmt[i] === '%') {
      out += '%';
      i++;
      continue;
    }
    const sp: Spec = { minus: false, plus: false, space: false, hash: false, zero: false, width: 0, prec: -1 };
    for (; i < fmt.length; i++) {
      const f = fmt[i];
      if (f === '-') sp.minus = true;
      else if (f === '+') sp.plus = true;
      else if (f === ' ') sp.space = true;
      else if (f === '#') sp.hash = true;
      else if (f === '0') sp.zero = true;
      else break;
    }
    if (fmt[i] === '*') {
      const w = cur.num(4);
      sp.width = w === null ? 0 : Number(BigInt.asIntN(32, w));
      if (sp.width < 0) {
        sp.minus = true;
        sp.width = -sp.width;
      }
      i++;
    } else while (i < fmt.length && fmt[i] >= '0' && fmt[i] <= '9') sp.width = sp.width * 10 + (fmt.charCodeAt(i++) - 48);
    if (fmt[i] === '.') {
      i++;
      sp.prec = 0;
      if (fmt[i] === '*') {
        const p = cur.num(4);
        sp.prec = p === null ? 0 : Math.max(0, Number(BigInt.asIntN(32, p)));
        i++;
      } else while (i < fmt.length && fmt[i] >= '0' && fmt[i] <= '9') sp.prec = sp.prec * 10 + (fmt.charCodeAt(i++) - 48);
    }
    let size = 4;
    if (fmt.startsWith('hh', i)) ((size = 1), (i += 2));
    else if (fmt[i] === 'h') ((size = 2), i++);
    else if (fmt.startsWith('ll', i)) ((size = 8), (i += 2));
    else if (fmt[i] === 'l' || fmt[i] === 'z' || fmt[i] === 'Z' || fmt[i] === 't') ((size = longSize), i++);
    else if (fmt[i] === 'L' || fmt[i] === 'j') ((size = 8), i++);
    const conv = fmt[i++] ?? '';
    switch (conv) {
      case 'd':
      case 'i':
      case 'u':
      case 'x':
      case 'X':
      case 'o': {
        const x = cur.num(size);
        out += x === null ? '?' : pad(integer(x, size, conv, sp), sp, true);
        break;
      }
      case 'c': {
        const x = cur.num(1);
        out += x === null ? '?' : pad(String.fromCharCode(Number(x)), sp, false);
        break;
      }
      case 's': {
        const s = cur.str();
        out += s === null ? '?' : pad(sp.prec >= 0 ? s.slice(0, sp.prec) : s, sp, false);
        break;
      }
      case 'p': {
        const ext = /[A-Za-z0-9]/.test(fmt[i] ?? '') ? fmt[i] : '';
        let j = i;
        while (j < fmt.length && /[A-Za-z0-9]/.test(fmt[j])) j++;
        i = j;
        if (ext === '' || 'SsFfxKe'.includes(ext)) {
          const x = cur.num(longSize);
          if (x === null) {
            out += '?';
            break;
          }
          const hi = Number(x >> 32n);
          const lo = Number(x & 0xffffffffn);
          const named = ext === 'S' || ext === 'F' ? sym(hi, lo, true) : ext === 's' || ext === 'f' ? sym(hi, lo, false) : null;
          out += pad(named ?? '0x' + x.toString(16), sp, false);
        } else {
          const s = cur.str();
          out += s === null ? '?' : pad(s, sp, false);
        }
        break;
      }
      case 'n':
        break;
      default:
        // not a conversion the kernel knows: printed as written
        out += '%' + conv;
    }
  }
  return out;
}

function integer(x: bigint, size: number, conv: string, sp: Spec): string {
  const bits = size * 8;
  const signed = conv === 'd' || conv === 'i';
  const val = signed ? BigInt.asIntN(bits, x) : BigInt.asUintN(bits, x);
  const neg = val < 0n;
  const mag = neg ? -val : val;
  let digits = conv === 'x' ? mag.toString(16) : conv === 'X' ? mag.toString(16).toUpperCase() : conv === 'o' ? mag.toString(8) : mag.toString(10);
  if (sp.prec >= 0) {
    if (sp.prec === 0 && mag === 0n) digits = '';
    digits = digits.padStart(sp.prec, '0');
  }
  let prefix = neg ? '-' : signed && sp.plus ? '+' : signed && sp.space ? ' ' : '';
  if (sp.hash && mag !== 0n && (conv === 'x' || conv === 'X')) prefix += conv === 'x' ? '0x' : '0X';
  if (sp.hash && conv === 'o' && !digits.startsWith('0')) digits = '0' + digits;
  if (sp.zero && !sp.minus && sp.prec < 0 && prefix.length + digits.length < sp.width) digits = digits.padStart(sp.width - prefix.length, '0');
  return prefix + digits;
}

function pad(s: string, sp: Spec, _numeric: boolean): string {
  if (s.length >= sp.width) return s;
  return sp.minus ? s.padEnd(sp.width, ' ') : s.padStart(sp.width, ' ');
}

/** The text of a bprint record: `ip_symbol: formatted`, one trailing newline dropped. */
export function bprintText(
  ipText: string,
  fmt: string | undefined,
  fmtAddr: string,
  args: Uint8Array,
  little: boolean,
  longSize: number,
  sym: SymbolOf,
): string {
  if (fmt === undefined) return `${ipText}: (NO FORMAT FOUND at ${fmtAddr})`;
  let s = formatBinary(fmt, args, little, longSize, sym);
  if (s.endsWith('\n')) s = s.slice(0, -1);
  return `${ipText}: ${s}`;
}
