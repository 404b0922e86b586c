/**
 * The key-value metadata of a Parquet file's footer, read by hyparquet's parquetMetadata (the
 * reader of the library whose writer wrote the file): how `cli export` tells which capture a flat
 * folder's files hold (each table file carries `stackmap_explorer.capture_id`) before it moves
 * them into the per-capture layout.
 *
 * What is read is bounded before hyparquet sees it: the 8-byte tail is checked here, and only a
 * metadata length that fits in the file (and under MAX_METADATA) is read. hyparquet's Thrift
 * reader checks string lengths against the bytes, every list element takes at least a byte, and
 * nesting deeper than the stack ends in a RangeError: a damaged footer ends in an error, which is
 * caught and said with the byte it is at.
 */

import { parquetMetadata } from 'hyparquet';

/** The footer's last 8 bytes: the metadata's length (u32 LE) and `PAR1`. */
export const FOOTER_TAIL = 8;
/** `PAR1` at the start */
const HEAD = 4;
/**
 * More metadata than this is no file of this tool (one row group of 131,072 rows takes a few KB
 * of metadata), and is not read: its length would otherwise decide an allocation.
 */
export const MAX_METADATA = 64 << 20;

/** Why a file's footer gives no key-value metadata: the byte of the file it is at, and what is wrong there. */
export interface FooterProblem {
  offset: number;
  reason: string;
}

export type FooterRead = { keyValues: Map<string, string> } | { problem: FooterProblem };

const problem = (offset: number, reason: string): FooterRead => ({ problem: { offset, reason } });

/**
 * The key-value metadata of a Parquet file of `size` bytes, through `read(offset, length)` (the
 * bytes there; fewer only if the file is shorter than it was said to be): the 8-byte tail first,
 * then the metadata it measures.
 */
export function readFooter(size: number, read: (offset: number, length: number) => Uint8Array): FooterRead {
  if (size < HEAD + FOOTER_TAIL) return problem(0, `${size} bytes: too short for Parquet ("PAR1", metadata, its length, "PAR1": 12 bytes at least)`);
  const tailAt = size - FOOTER_TAIL;
  const tail8 = read(tailAt, FOOTER_TAIL);
  if (tail8.length < FOOTER_TAIL) return problem(tailAt + tail8.length, `the file ended before the ${size} bytes it had (changed while read?)`);
  const len = footerLength(tail8);
  if (len === null) return problem(tailAt + 4, 'no "PAR1" at the end: not Parquet, or cut short');
  // the metadata lies between "PAR1" at the start and the tail: a longer length is a lie
  if (len > size - HEAD - FOOTER_TAIL)
    return problem(tailAt, `the metadata's length ${len} is more than the ${size - HEAD - FOOTER_TAIL} bytes between the "PAR1"s`);
  if (len > MAX_METADATA) return problem(tailAt, `the metadata's length ${len} is more than the ${MAX_METADATA} bytes of any table file of this tool`);
  const at = tailAt - len;
  const tail = read(at, len + FOOTER_TAIL);
  if (tail.length < len + FOOTER_TAIL) return problem(at + tail.length, `the file ended before the ${size} bytes it had (changed while read?)`);
  return footerKeyValues(tail, at);
}

/**
 * The key-value metadata from a file's last bytes (`tail`: at least the metadata and the 8-byte
 * tail); `base` is the file offset of tail[0], for the problem's offset.
 */
export function footerKeyValues(tail: Uint8Array, base = 0): FooterRead {
  const n = tail.length;
  if (n < FOOTER_TAIL) return problem(base, `${n} bytes: too short for a Parquet footer`);
  const len = footerLength(tail.subarray(n - FOOTER_TAIL));
  if (len === null) return problem(base + n - 4, 'no "PAR1" at the end: not Parquet, or cut short');
  if (len > n - FOOTER_TAIL) return problem(base + n - FOOTER_TAIL, `the metadata's length ${len} is more than the ${n - FOOTER_TAIL} bytes before it`);
  const at = base + n - FOOTER_TAIL - len;
  let kv: { key: string; value?: string }[] | undefined;
  try {
    // geoparquet off: nothing but the Thrift structure is parsed (no JSON from the file)
    kv = parquetMetadata(tail.subarray(n - FOOTER_TAIL - len), { geoparquet: false }).key_value_metadata;
  } catch (e) {
    // hyparquet's Thrift reader names a length or a type, not the byte: the metadata's start is
    // said. A TypeError is hyparquet meeting a Thrift value where FileMetaData has another.
    const message = e instanceof Error ? e.message : String(e);
    const why = e instanceof TypeError ? `a field is missing or of another type (${message})` : message;
    return problem(at, `the metadata (${len} bytes) is not Parquet's FileMetaData: ${why}`);
  }
  const out = new Map<string, string>();
  for (const { key, value } of kv ?? []) if (typeof key === 'string') out.set(key, value ?? '');
  return { keyValues: out };
}

/** footerKeyValues's map, or null when the bytes give none. */
export function parquetKeyValues(tail: Uint8Array): Map<string, string> | null {
  const r = footerKeyValues(tail);
  return 'keyValues' in r ? r.keyValues : null;
}

/** The metadata's length from the 8-byte tail (`len` u32 LE, `PAR1`), null when it is no Parquet tail. */
export function footerLength(tail8: Uint8Array): number | null {
  if (tail8.length !== FOOTER_TAIL || tail8[4] !== 0x50 || tail8[5] !== 0x41 || tail8[6] !== 0x52 || tail8[7] !== 0x31) return null;
  return (tail8[0] | (tail8[1] << 8) | (tail8[2] << 16)) + tail8[3] * 2 ** 24;
}
