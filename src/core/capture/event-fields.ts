/**
 * Functions an event's own fields name (issue 36): a kmem event's `call_site=` (`__kmalloc+0x4c/0x90`,
 * a bare symbol, or a raw address), an `ip=` field, the function tracer's `FUNC <-PARENT` payload.
 * The kernel stack of the event holds that function, so a v4/v7 id that resolves to a stack
 * without it was written for another stack (field-evidence.ts). Imports nothing.
 */

/** Which field of an event's payload names its functions. */
export const FieldKind = { None: 0, CallSite: 1, Ip: 2, Function: 3 } as const;

/** The kind for an event name, decided on its first payload (an event's format is fixed). */
export function fieldKindOf(name: string, line: string, from: number, to: number): number {
  if (name === 'function') return FieldKind.Function;
  if (fieldAt(line, from, to, 'call_site=') >= 0) return FieldKind.CallSite;
  if (fieldAt(line, from, to, 'ip=') >= 0) return FieldKind.Ip;
  return FieldKind.None;
}

/** Where `key` begins a field in line[from, to) (at its start or after a space), -1 if nowhere. */
function fieldAt(line: string, from: number, to: number, key: string): number {
  let k = line.indexOf(key, from);
  while (k >= 0 && k + key.length <= to) {
    if (k === from || line.charCodeAt(k - 1) === 32) return k;
    k = line.indexOf(key, k + 1);
  }
  return -1;
}

/** line[from, to) up to the first space (or the end). */
function word(line: string, from: number, to: number): string {
  let e = from;
  while (e < to && line.charCodeAt(e) !== 32) e++;
  return line.slice(from, e);
}

/**
 * The functions the payload line[from, to) names, into `out` ([a, b]: one of them must be in the
 * stack; b null for one), as written with their field (`call_site=name+0x4c/0x90`, `ip=0xffff...`,
 * or the function tracer's bare `name`): false when none.
 */
export function fieldFunctions(kind: number, line: string, from: number, to: number, out: [string | null, string | null]): boolean {
  out[0] = out[1] = null;
  if (kind === FieldKind.Function) {
    // `FUNC <-PARENT`
    const arrow = line.indexOf(' <-', from);
    if (arrow < 0 || arrow >= to) return false;
    let s = from;
    while (s < arrow && line.charCodeAt(s) === 32) s++;
    const fn = word(line, s, arrow);
    const parent = word(line, arrow + 3, to);
    if (!fn || !parent) return false;
    out[0] = fn;
    out[1] = parent;
    return true;
  }
  const key = kind === FieldKind.CallSite ? 'call_site=' : kind === FieldKind.Ip ? 'ip=' : null;
  if (key === null) return false;
  const k = fieldAt(line, from, to, key);
  if (k < 0) return false;
  const v = word(line, k + key.length, to);
  if (!v || v === '0' || v === '(null)' || /^(0x)?0+$/.test(v)) return false;
  out[0] = key + v;
  return true;
}

/**
 * fieldFunctions over a payload's bytes `b[from, to)` (UTF-8, `b[to]` not a `-`), as ranges of
 * `b` instead of strings: `out` [a0, a1, b0, b1], each name's bytes (b0 -1 for one). A `call_site=`
 * or `ip=` name's range holds its field, as fieldFunctions writes it. Decoded, each range is the
 * string fieldFunctions gives (a range starts after an ASCII byte and ends at a space or `to`).
 */
export function fieldRanges(kind: number, b: Uint8Array, from: number, to: number, out: Int32Array): boolean {
  out[2] = -1;
  if (kind === FieldKind.Function) {
    // `FUNC <-PARENT`
    let arrow = -1;
    for (let k = from; k + 3 <= to; k++) {
      if (b[k] === 32 && b[k + 1] === 60 && b[k + 2] === 45) {
        arrow = k;
        break;
      }
    }
    if (arrow < 0) return false;
    let s = from;
    while (s < arrow && b[s] === 32) s++;
    const fnEnd = wordEnd(b, s, arrow);
    const parentEnd = wordEnd(b, arrow + 3, to);
    if (fnEnd === s || parentEnd === arrow + 3) return false;
    out[0] = s;
    out[1] = fnEnd;
    out[2] = arrow + 3;
    out[3] = parentEnd;
    return true;
  }
  const key = kind === FieldKind.CallSite ? CALL_SITE : kind === FieldKind.Ip ? IP : null;
  if (key === null) return false;
  let k = -1;
  for (let i = from; i + key.length <= to; i++) {
    if ((i === from || b[i - 1] === 32) && keyAt(b, i, key)) {
      k = i;
      break;
    }
  }
  if (k < 0) return false;
  const v = k + key.length;
  const e = wordEnd(b, v, to);
  if (e === v || zeroValue(b, v, e)) return false;
  out[0] = k;
  out[1] = e;
  return true;
}

const CALL_SITE = [...'call_site='].map((c) => c.charCodeAt(0));
const IP = [...'ip='].map((c) => c.charCodeAt(0));

function keyAt(b: Uint8Array, i: number, key: number[]): boolean {
  for (let k = 0; k < key.length; k++) if (b[i + k] !== key[k]) return false;
  return true;
}

/** The end of the word at `from` (the first space, or `to`). */
function wordEnd(b: Uint8Array, from: number, to: number): number {
  let e = from;
  while (e < to && b[e] !== 32) e++;
  return e;
}

/** fieldFunctions' values that name nothing: `0`, `(null)`, `0x0`, zeros. */
function zeroValue(b: Uint8Array, v: number, e: number): boolean {
  const NULL = '(null)';
  if (e - v === NULL.length) {
    let k = 0;
    while (k < NULL.length && b[v + k] === NULL.charCodeAt(k)) k++;
    if (k === NULL.length) return true;
  }
  let i = v;
  if (e - v > 2 && b[i] === 48 && b[i + 1] === 120) i += 2;
  if (i === e) return false;
  while (i < e && b[i] === 48) i++;
  return i === e;
}

/** A noted value (fieldFunctions) as its field and value: `call_site`, `ip`, or '' for a function tracer's name. */
export function splitNoted(noted: string): [field: string, value: string] {
  if (noted.startsWith('call_site=')) return ['call_site', noted.slice(10)];
  if (noted.startsWith('ip=')) return ['ip', noted.slice(3)];
  return ['', noted];
}

/** A raw address as written (`0xffffffff81234567` or `ffffffff81234567`), or null when it is a symbol. */
export function addressOf(v: string): bigint | null {
  const m = /^(?:0x)?([0-9a-fA-F]{8,16})$/.exec(v);
  return m ? BigInt('0x' + m[1]) : null;
}

/**
 * The function a symbolic value names: `__kmalloc+0x4c/0x90` -> `__kmalloc`, a module suffix
 * (` [ext4]`) dropped; null for an address.
 */
export function functionOfField(v: string): string | null {
  if (addressOf(v) !== null) return null;
  let e = v.length;
  const plus = v.indexOf('+');
  if (plus > 0) e = plus;
  const sp = v.indexOf(' ');
  if (sp > 0 && sp < e) e = sp;
  const name = v.slice(0, e);
  return name && name !== '0x0' ? name : null;
}

/**
 * The call site a symbolic value names, as `name+0xoff` (offset in lowercase hex, as frame keys
 * print it), when it has an offset: `__kmalloc+0x4c/0x90` -> `__kmalloc+0x4c`; null otherwise.
 */
export function siteOfField(v: string): string | null {
  const m = /^([^+\s]+)\+(0x[0-9a-fA-F]+)(?:\/0x[0-9a-fA-F]+)?(?:\s.*)?$/.exec(v);
  if (!m) return null;
  const off = Number(m[2]);
  return Number.isSafeInteger(off) ? `${m[1]}+0x${off.toString(16)}` : null;
}

/** A function's name with the compiler's clone suffixes dropped (`.isra.0`, `.constprop.3`, `.cold`, `.part.1`). */
export function baseFunction(name: string): string {
  const dot = name.indexOf('.', 1);
  return dot > 0 ? name.slice(0, dot) : name;
}
