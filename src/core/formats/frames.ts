/** Frame keys: the identity of a frame used for stack dedup (DESIGN 2.2). */

export const TRAMPOLINE = '[FTRACE TRAMPOLINE]';
export const TRAMPOLINE_IP = 0x7fffffffn;

const SYM_OFF = /^(.+?)\+(0x[0-9a-fA-F]+)(?:\/0x[0-9a-fA-F]+)?(?:\s+\[[^\]]+\])?$/;
const SYM_ADDR = /^(.+?)\s+[<(](?:0x)?[0-9a-fA-F]+[>)]$/;
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
  let m = SYM_OFF.exec(s);
  if (m) return m[1] + '+' + m[2].toLowerCase();
  m = SYM_ADDR.exec(s);
  if (m) return frameKey(m[1]);
  m = BARE_ADDR.exec(s);
  if (m && (s.startsWith('0x') || s.length === 16)) return '0x' + m[1].toLowerCase().replace(/^0+(?=.)/, '');
  m = SYM_MODULE.exec(s);
  if (m) return m[1];
  return s;
}

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
