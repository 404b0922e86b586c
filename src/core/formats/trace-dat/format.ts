/**
 * The text parts of a trace-cmd `trace.dat`: event `format:` files (as in
 * /sys/kernel/tracing/events/SYSTEM/NAME/format) and the decoding of one record's fields by them.
 */

export interface DatField {
  name: string;
  /** the declared type, e.g. `unsigned long`, `char`, `__data_loc char[]` */
  type: string;
  offset: number;
  size: number;
  signed: boolean;
  /** element count of a fixed array (`caller[8]`), 0 for a scalar */
  array: number;
  /** `__data_loc`: a u32 of (length << 16 | offset) pointing into the record */
  dataLoc: boolean;
}

export interface DatEventFormat {
  id: number;
  system: string;
  name: string;
  /** common_* fields first, as in the file */
  fields: DatField[];
  /** fields past MAX_FIELDS, not kept (each record's decoding walks the fields: issue 34, 15) */
  cut?: number;
}

/** Fields kept of one format (the kernel's largest have a few dozen). */
export const MAX_FIELDS = 1024;

const FIELD = /^\s*field:(.*);\s*offset:(\d+);\s*size:(\d+);(?:\s*signed:(-?\d+);)?/;

/** Parses one format file; null (and a reason) when it has no name, ID or fields. */
export function parseEventFormat(text: string, system: string): DatEventFormat | string {
  let name: string | null = null;
  let id: number | null = null;
  const fields: DatField[] = [];
  let cut = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('name: ')) name = line.slice(6).trim();
    else if (line.startsWith('ID: ')) id = /^\d+$/.test(line.slice(4).trim()) ? +line.slice(4).trim() : null;
    else {
      const m = FIELD.exec(line);
      if (m) {
        if (fields.length >= MAX_FIELDS) cut++;
        else {
          const f = parseField(m[1].trim(), +m[2], +m[3], m[4] === '1');
          if (f) fields.push(f);
        }
      }
    }
  }
  if (name === null) return 'event format without `name:`';
  if (id === null) return `event format ${name} without a numeric \`ID:\``;
  return cut > 0 ? { id, system, name, fields, cut } : { id, system, name, fields };
}

function parseField(decl: string, offset: number, size: number, signed: boolean): DatField | null {
  let dataLoc = false;
  let d = decl;
  if (d.startsWith('__data_loc ')) {
    dataLoc = true;
    d = d.slice(11);
  } else if (d.startsWith('__rel_loc ')) {
    dataLoc = true;
    d = d.slice(10);
  }
  const m = splitDecl(d);
  if (!m) return null;
  let type = m.type;
  const array = m.array !== null && m.array !== '' ? +m.array : 0;
  if (dataLoc) type += '[]';
  return { name: m.name, type, offset, size, signed, array, dataLoc };
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 13 || c === 10 || c === 11 || c === 12;
const isIdent = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * A C declaration `TYPE NAME` or `TYPE NAME[N]` split from its end in one backward pass (the
 * regex it replaces, `^(.*?)\s*([A-Za-z_]\w*)\s*(?:\[(\d*)\])?$`, retried every split of a long
 * line: quadratic on a crafted format file). `array`: the digits in the brackets, '' for `[]`,
 * null without brackets; blanks may follow the name but not the brackets. The name is the longest run of word characters at the end that starts
 * with a letter or underscore; the type is what precedes it, trailing blanks dropped.
 */
export function splitDecl(d: string): { type: string; name: string; array: string | null } | null {
  let end = d.length;
  while (end > 0 && isSpace(d.charCodeAt(end - 1))) end--;
  let array: string | null = null;
  // blanks may follow the name, not the brackets (as the regex had it)
  if (end > 0 && d.charCodeAt(end - 1) === 93 && end < d.length) return null;
  if (end > 0 && d.charCodeAt(end - 1) === 93) {
    let i = end - 1;
    while (i > 0 && isDigit(d.charCodeAt(i - 1))) i--;
    if (i === 0 || d.charCodeAt(i - 1) !== 91) return null;
    array = d.slice(i, end - 1);
    end = i - 1;
    while (end > 0 && isSpace(d.charCodeAt(end - 1))) end--;
  }
  let start = end;
  while (start > 0 && isIdent(d.charCodeAt(start - 1))) start--;
  while (start < end && isDigit(d.charCodeAt(start))) start++;
  if (start === end) return null;
  let typeEnd = start;
  while (typeEnd > 0 && isSpace(d.charCodeAt(typeEnd - 1))) typeEnd--;
  return { type: d.slice(0, typeEnd), name: d.slice(start, end), array };
}

/** Byte offsets and sizes of a ring buffer page header (from the `header_page` format). */
export interface PageHeader {
  commitOffset: number;
  commitSize: number;
  dataOffset: number;
}

export function parseHeaderPage(text: string, longSize: number): PageHeader {
  const h: PageHeader = { commitOffset: 8, commitSize: longSize, dataOffset: 8 + longSize };
  for (const line of text.split('\n')) {
    const m = FIELD.exec(line);
    if (!m) continue;
    const name = splitDecl(m[1])?.name;
    if (name === 'commit') {
      h.commitOffset = +m[2];
      h.commitSize = +m[3];
    } else if (name === 'data') h.dataOffset = +m[2];
  }
  return h;
}

const dec = new TextDecoder('utf-8', { fatal: false });

/** Reads an unsigned/signed integer of 1, 2, 4 or 8 bytes as a decimal string. */
export function readInt(v: DataView, at: number, size: number, signed: boolean, little: boolean): string {
  switch (size) {
    case 1:
      return String(signed ? v.getInt8(at) : v.getUint8(at));
    case 2:
      return String(signed ? v.getInt16(at, little) : v.getUint16(at, little));
    case 4:
      return String(signed ? v.getInt32(at, little) : v.getUint32(at, little));
    case 8:
      return String(signed ? v.getBigInt64(at, little) : v.getBigUint64(at, little));
  }
  return '?';
}

function cString(b: Uint8Array, from: number, to: number): string {
  let e = from;
  while (e < to && b[e] !== 0) e++;
  return dec.decode(b.subarray(from, e));
}

/**
 * `name=value` for every non-common field of a record `rec` (the event's bytes from
 * common_type on). Fields beyond the record are printed as `name=?`.
 */
export function formatPayload(fmt: DatEventFormat, rec: Uint8Array, little: boolean): string {
  const v = new DataView(rec.buffer, rec.byteOffset, rec.byteLength);
  const out: string[] = [];
  for (const f of fmt.fields) {
    if (f.name.startsWith('common_')) continue;
    out.push(f.name + '=' + fieldValue(f, rec, v, little));
  }
  return out.join(' ');
}

function fieldValue(f: DatField, rec: Uint8Array, v: DataView, little: boolean): string {
  if (f.offset + f.size > rec.length) return '?';
  if (f.dataLoc) {
    if (f.size !== 4) return '?';
    const w = v.getUint32(f.offset, little);
    const off = w & 0xffff;
    const len = w >>> 16;
    if (off + len > rec.length) return '?';
    return isChar(f.type) ? cString(rec, off, off + len) : hexBytes(rec, off, off + len);
  }
  if (f.array === 0 && f.size === 0) {
    // a flexible array (`u32 buf[]`): the rest of the record
    const el = /\b(?:u64|long long)\b/.test(f.type) ? 8 : /\b(?:u8|char)\b/.test(f.type) ? 1 : /\b(?:u16|short)\b/.test(f.type) ? 2 : 4;
    if (el === 1) return isChar(f.type) ? cString(rec, f.offset, rec.length) : hexBytes(rec, f.offset, rec.length);
    const parts: string[] = [];
    for (let o = f.offset; o + el <= rec.length; o += el) parts.push(readInt(v, o, el, false, little));
    return '{' + parts.join(',') + '}';
  }
  if (f.array > 0 || /\[\d*\]$/.test(f.type)) {
    if (isChar(f.type)) return cString(rec, f.offset, f.offset + f.size);
    const el = f.array > 0 ? f.size / f.array : 0;
    if (el === 1 || el === 2 || el === 4 || el === 8) {
      const parts: string[] = [];
      for (let i = 0; i < f.array; i++) parts.push(readInt(v, f.offset + i * el, el, f.signed, little));
      return '{' + parts.join(',') + '}';
    }
    return hexBytes(rec, f.offset, f.offset + f.size);
  }
  if (f.size === 1 || f.size === 2 || f.size === 4 || f.size === 8) return readInt(v, f.offset, f.size, f.signed, little);
  return hexBytes(rec, f.offset, f.offset + f.size);
}

const isChar = (type: string) => /^(?:const\s+)?(?:unsigned\s+)?char\b/.test(type);

function hexBytes(b: Uint8Array, from: number, to: number): string {
  let s = '0x';
  for (let i = from; i < to; i++) s += b[i].toString(16).padStart(2, '0');
  return s;
}
