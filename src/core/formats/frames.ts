/** Frame keys: the identity of a frame used for stack dedup (DESIGN 2.2). */
import { isSpace } from './event-line.ts';

export const TRAMPOLINE = '[FTRACE TRAMPOLINE]';
export const TRAMPOLINE_IP = 0x7fffffffn;

const BARE_ADDR = /^(?:0x)?([0-9a-fA-F]{8,16})$/;
const SYM_MODULE = /^(\S+)\s+\[[^\]]+\]$/;

/**
 * Turns a printed frame (what follows ` => ` or `[i] `) into its key:
 * `sym+0xoff` when an offset is known (size and module dropped), the bare `sym` when only that
 * is printed, lowercase `0x...` for an address with no symbol, and bracketed markers as they are.
 */
export function frameKey(printed: string): string {
  const s = printed.trim();
  if (s.charCodeAt(0) === 91 /* [ */) return s; // [FTRACE TRAMPOLINE], [unknown/kretprobe'd]
  const off = symOff(s);
  if (off) return off;
  const sym = symAddr(s);
  if (sym !== null) return frameKey(sym);
  let m = BARE_ADDR.exec(s);
  if (m && (s.startsWith('0x') || s.length === 16)) return '0x' + m[1].toLowerCase().replace(/^0+(?=.)/, '');
  m = SYM_MODULE.exec(s);
  if (m) return m[1];
  return s;
}

// The two forms below were regexes with a lazy symbol (`^(.+?)\+...$`, `^(.+?)\s+[<(]...$`)
// that take quadratic time on a long frame of blanks; scanned from the end they are linear.

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
/** JavaScript's `\s` (event-line.ts). */
const isBlank = isSpace;

/** After `0x` and hex digits from `i`: the end of the hex, or -1 without them. */
function hexAt(s: string, i: number): number {
  if (s.charCodeAt(i) !== 48 || s.charCodeAt(i + 1) !== 120) return -1;
  let k = i + 2;
  while (k < s.length && isHex(s.charCodeAt(k))) k++;
  return k === i + 2 ? -1 : k;
}

/**
 * `sym+0xoff[/0xsize][ [module]]` as `sym+0xoff` (lowercase offset), else null. As the lazy
 * regex did, the first `+` after which the rest parses wins; each try reads only the hex and
 * blanks up to the next `+`, so the scan is linear.
 */
function symOff(s: string): string | null {
  const lastClose = s.charCodeAt(s.length - 1) === 93 /* ] */ ? s.lastIndexOf(']', s.length - 2) : -2;
  for (let plus = s.indexOf('+', 1); plus > 0; plus = s.indexOf('+', plus + 1)) {
    const offEnd = hexAt(s, plus + 1);
    if (offEnd < 0) continue;
    let k = offEnd;
    if (s.charCodeAt(k) === 47 /* / */) {
      k = hexAt(s, k + 1);
      if (k < 0) continue;
    }
    if (k !== s.length) {
      // \s+\[[^\]]+\]$
      let b = k;
      while (b < s.length && isBlank(s.charCodeAt(b))) b++;
      if (b === k || s.charCodeAt(b) !== 91 /* [ */ || lastClose === -2 || lastClose > b || b + 2 > s.length - 1) continue;
    }
    return s.slice(0, plus) + '+' + s.slice(plus + 1, offEnd).toLowerCase();
  }
  return null;
}

/** `sym <ffffffff81234567>` or `sym (ffffffff814b260e)`: the `sym`, else null. */
function symAddr(s: string): string | null {
  const close = s.charCodeAt(s.length - 1);
  if (close !== 62 /* > */ && close !== 41 /* ) */) return null;
  const lt = s.lastIndexOf('<', s.length - 2);
  const lp = s.lastIndexOf('(', s.length - 2);
  const open = Math.max(lt, lp);
  if (open < 2) return null;
  let h = open + 1;
  if (s.charCodeAt(h) === 48 && s.charCodeAt(h + 1) === 120) h += 2;
  if (h >= s.length - 1) return null;
  for (let k = h; k < s.length - 1; k++) if (!isHex(s.charCodeAt(k))) return null;
  if (!isBlank(s.charCodeAt(open - 1))) return null;
  let k = open - 1;
  while (k > 0 && isBlank(s.charCodeAt(k - 1))) k--;
  return k > 0 ? s.slice(0, k) : null;
}

/**
 * Where the key of the printed frame `s[start, end)` ends when it is the common form
 * `sym+0xoff[/0xsize]` in printable ASCII without blanks and with a lowercase offset: then
 * frameKey gives `s.slice(start, keyEnd)` exactly, and a table can intern that range without a
 * string being made. -1 for anything else (frameKey decides). `start` and `end` are past any
 * leading and trailing spaces or tabs.
 */
export function simpleFrameKeyEnd(s: string, start: number, end: number): number {
  if (end - start < 4 || s.charCodeAt(start) === 91 /* [ */) return -1;
  let plus = -1;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c <= 32 || c >= 0x7f) return -1;
    if (c === 43 /* + */ && plus < 0 && i > start) plus = i;
  }
  if (plus < 0 || s.charCodeAt(plus + 1) !== 48 || s.charCodeAt(plus + 2) !== 120) return -1;
  let k = plus + 3;
  while (k < end && isLowerHex(s.charCodeAt(k))) k++;
  if (k === plus + 3) return -1;
  const keyEnd = k;
  if (k < end) {
    if (s.charCodeAt(k) !== 47 /* / */ || s.charCodeAt(k + 1) !== 48 || s.charCodeAt(k + 2) !== 120) return -1;
    k += 3;
    const h = k;
    while (k < end && isHex(s.charCodeAt(k))) k++;
    if (k === h || k !== end) return -1;
  }
  return keyEnd;
}

const isLowerHex = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 102);

/** The function name of a frame key: `sym` of `sym+0xoff`. */
export function frameFunction(key: string): string {
  const plus = key.lastIndexOf('+0x');
  return plus > 0 ? key.slice(0, plus) : key;
}

/** Key for a raw instruction pointer with no symbol. */
export function addressKey(ip: bigint): string {
  if (ip === TRAMPOLINE_IP) return TRAMPOLINE;
  return '0x' + ip.toString(16);
}

/**
 * The module a printed frame names, `vfs_read+0x9/0x10 [ext4]` (as `stack_trace` and the stack
 * map print a module's frame): noted in `modules` under its function (`vfs_read`), the first
 * module seen for a function kept. Frame keys drop the module (DESIGN 2.2); this keeps it beside
 * them for the tables' `frames.module`. `s[start, end)` is the printed frame, trimmed.
 */
export function noteFrameModule(s: string, start: number, end: number, modules: Map<string, string> | undefined): void {
  if (!modules || end - start < 4 || s.charCodeAt(end - 1) !== 93 /* ] */ || s.charCodeAt(start) === 91 /* [ */) return;
  const open = s.lastIndexOf('[', end - 2);
  if (open <= start || !isBlank(s.charCodeAt(open - 1)) || open + 1 >= end - 1) return;
  let symEnd = start;
  while (symEnd < open && s.charCodeAt(symEnd) !== 43 /* + */ && !isBlank(s.charCodeAt(symEnd))) symEnd++;
  if (symEnd === start) return;
  const symbol = s.slice(start, symEnd);
  if (!modules.has(symbol)) modules.set(symbol, s.slice(open + 1, end - 1));
}
