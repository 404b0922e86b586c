/**
 * The `key=value` fields of an event's payload, as the kernel's print formats write them for the
 * common events: `call_site=__kmalloc+0x4c/0x90 ptr=000000003f0e9a5b bytes_req=64 bytes_alloc=64
 * gfp_flags=GFP_KERNEL`, `prev_comm=sh prev_pid=12 prev_prio=120 prev_state=S ==> next_comm=...`,
 * `comm=kworker/0:1 pid=8 prio=120 target_cpu=000`.
 *
 * One pass over the text, no regular expression: words are split at blanks; a word `K=V` whose
 * K is an identifier (`[A-Za-z_][A-Za-z0-9_.]*`) starts a field with value V (which may hold `=`
 * or be empty); another word that holds a letter or digit goes on the value before it, after one
 * blank (a comm with a blank in it); a word of punctuation only (sched_switch's `==>`) is left
 * out. A payload without such a word (`func <-parent`, a print's message) has no fields.
 */
export function payloadFields(payload: string, field: (key: string, value: string) => void): void {
  const n = payload.length;
  let key: string | null = null;
  let value = '';
  let i = 0;
  while (i < n) {
    while (i < n && payload.charCodeAt(i) === 32) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && payload.charCodeAt(i) !== 32) i++;
    const eq = keyEnd(payload, start, i);
    if (eq >= 0) {
      if (key !== null) field(key, value);
      key = payload.slice(start, eq);
      value = payload.slice(eq + 1, i);
    } else if (key !== null && hasAlnum(payload, start, i)) {
      value += ' ' + payload.slice(start, i);
    }
  }
  if (key !== null) field(key, value);
}

/**
 * payloadFields for the keys in `names` (identifiers) only: each one's first value as
 * payloadFields gives it, found by searching for `NAME=` at the start of a word (any such word is
 * a field's start to payloadFields too), without splitting the rest of the payload (an event
 * filter reads the few fields it names from every event it selects).
 */
export function payloadFieldsNamed(payload: string, names: readonly string[], field: (key: string, value: string) => void): void {
  const n = payload.length;
  for (let k = 0; k < names.length; k++) {
    const name = names[k];
    let at = payload.indexOf(name);
    while (at >= 0 && ((at > 0 && payload.charCodeAt(at - 1) !== 32) || payload.charCodeAt(at + name.length) !== 61)) at = payload.indexOf(name, at + 1);
    if (at < 0) continue;
    let i = at + name.length + 1;
    const from = i;
    while (i < n && payload.charCodeAt(i) !== 32) i++;
    let value = payload.slice(from, i);
    // the words after it up to the next field: a value with blanks (a comm), as payloadFields joins them
    for (;;) {
      while (i < n && payload.charCodeAt(i) === 32) i++;
      if (i >= n) break;
      const w = i;
      while (i < n && payload.charCodeAt(i) !== 32) i++;
      if (keyEnd(payload, w, i) >= 0) break;
      if (hasAlnum(payload, w, i)) value += ' ' + payload.slice(w, i);
    }
    field(name, value);
  }
}

/** `s[from, to)` as `K=...` with K an identifier: where its `=` is, or -1. */
function keyEnd(s: string, from: number, to: number): number {
  const c0 = s.charCodeAt(from);
  if (!(isLetter(c0) || c0 === 95)) return -1;
  for (let k = from + 1; k < to; k++) {
    const c = s.charCodeAt(k);
    if (c === 61) return k;
    if (!(isLetter(c) || isDigit(c) || c === 95 || c === 46)) return -1;
  }
  return -1;
}

function hasAlnum(s: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) {
    const c = s.charCodeAt(k);
    if (isLetter(c) || isDigit(c)) return true;
  }
  return false;
}

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number) => c >= 48 && c <= 57;
const hexDigit = (c: number) => (isDigit(c) ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1);

/**
 * A field's value as an integer, where it is one a double holds exactly: decimal (`-12`, `002`)
 * of at most 15 digits, or `0x` hex of at most 13 digits; NaN otherwise (kernel addresses,
 * hashed pointers of 16 digits, flags, names stay text only).
 */
export function fieldInteger(v: string): number {
  const n = v.length;
  if (n > 2 && v.charCodeAt(0) === 48 && (v.charCodeAt(1) | 32) === 120) {
    if (n - 2 > 13) return NaN;
    let x = 0;
    for (let k = 2; k < n; k++) {
      const h = hexDigit(v.charCodeAt(k));
      if (h < 0) return NaN;
      x = x * 16 + h;
    }
    return x;
  }
  const neg = n > 1 && v.charCodeAt(0) === 45;
  const from = neg ? 1 : 0;
  if (n - from < 1 || n - from > 15) return NaN;
  let x = 0;
  for (let k = from; k < n; k++) {
    const c = v.charCodeAt(k);
    if (!isDigit(c)) return NaN;
    x = x * 10 + (c - 48);
  }
  return neg ? -x : x;
}

/**
 * A payload's fields read from its bytes, one asked at a time (an event filter's RawFields over a
 * text trace's payload): the same value payloadFields gives for a key (its first), found by
 * searching the bytes for `NAME=` at the start of a word; no string made but the value asked for.
 * `at` points it at the next payload (the caller's buffer, read before the next call).
 */
export class PayloadBytes {
  private b: Uint8Array = new Uint8Array(0);
  private from = 0;
  private to = 0;
  private decoder: TextDecoder | null = null;
  /** `int`'s reading of a value as a number: the filter's (u64), given by the caller to keep this layer below it */
  constructor(private readonly number: (text: string) => bigint | undefined) {}

  at(b: Uint8Array, from: number, to: number): this {
    this.b = b;
    this.from = from;
    this.to = to;
    return this;
  }

  int(name: string): bigint | undefined {
    const t = this.text(name);
    return t === undefined ? undefined : this.number(t);
  }

  text(name: string): string | undefined {
    const { b, to } = this;
    const len = name.length;
    const c0 = name.charCodeAt(0);
    for (let i = this.from; i + len < to; i++) {
      if (b[i] !== c0 || (i > this.from && b[i - 1] !== 32) || b[i + len] !== 61) continue;
      let k = 1;
      while (k < len && b[i + k] === name.charCodeAt(k)) k++;
      if (k < len) continue;
      let j = i + len + 1;
      const v = j;
      while (j < to && b[j] !== 32) j++;
      let value = this.decode(v, j);
      // the words after it up to the next field: a value with blanks (a comm), as payloadFields joins them
      for (;;) {
        while (j < to && b[j] === 32) j++;
        if (j >= to) break;
        const w = j;
        while (j < to && b[j] !== 32) j++;
        if (keyEndBytes(b, w, j) >= 0) break;
        if (hasAlnumBytes(b, w, j)) value += ' ' + this.decode(w, j);
      }
      return value;
    }
    return undefined;
  }

  private decode(from: number, to: number): string {
    const b = this.b;
    let s = '';
    // a short ASCII value (numbers, flags, names) made without the decoder
    if (to - from <= 64) {
      for (let i = from; i < to; i++) {
        const c = b[i];
        if (c >= 0x80) return (this.decoder ??= new TextDecoder()).decode(b.subarray(from, to));
        s += String.fromCharCode(c);
      }
      return s;
    }
    return (this.decoder ??= new TextDecoder()).decode(b.subarray(from, to));
  }
}

function keyEndBytes(b: Uint8Array, from: number, to: number): number {
  const c0 = b[from];
  if (!(isLetter(c0) || c0 === 95)) return -1;
  for (let k = from + 1; k < to; k++) {
    const c = b[k];
    if (c === 61) return k;
    if (!(isLetter(c) || isDigit(c) || c === 95 || c === 46)) return -1;
  }
  return -1;
}

function hasAlnumBytes(b: Uint8Array, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (isLetter(b[k]) || isDigit(b[k])) return true;
  return false;
}
