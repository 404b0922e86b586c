/**
 * A capture's id for the tables' `capture_id` column: the same files give the same id on any
 * machine and in any order, so a fleet folder of Parquet files (DIR/<table>/<capture_id>.parquet)
 * names each capture once and a second export of the same capture replaces its files.
 */

import { Fnv1a64 } from '../query/stack-hash.ts';

export { Fnv1a64 };

/** How many first bytes of each file the id reads. */
export const CAPTURE_ID_HEAD_BYTES = 4096;

/** What the id is made of, per file: the name given (no folder), its size, its first bytes, and a digest of all of it. */
export interface CaptureFileId {
  name: string;
  size: number;
  /** the file's first bytes: up to CAPTURE_ID_HEAD_BYTES are read (more are ignored) */
  head: Uint8Array;
  /** FNV-1a 64 of the file's whole content (contentDigest): two files differing in any byte differ here */
  digest: string;
}

/**
 * A file's content digest for its capture_id: FNV-1a 64 over every byte, read in chunks from
 * `chunks` (a file's stream). A trace.dat's first 4 KiB are a static header, so the head alone
 * gave two captures differing in one data byte the same id.
 */
export async function contentDigest(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const h = new Fnv1a64();
  for await (const c of chunks) h.update(c);
  return h.hex();
}

/**
 * `capture_id`: FNV-1a 64 (16 lowercase hex digits) over the capture's files sorted by name
 * (then size, then first bytes), each as its name in UTF-8, a 0 byte, its size in decimal, a 0
 * byte, the length of the head read in decimal, a 0 byte, its first min(size, 4096) bytes, a 0
 * byte and its content digest (16 hex digits). A renamed, grown or rewritten file changes it, and
 * so does any byte of any file.
 */
export function captureIdOf(files: readonly CaptureFileId[]): string {
  const enc = new TextEncoder();
  const zero = new Uint8Array(1);
  const heads = files.map((f) => ({ name: f.name, size: f.size, head: f.head.subarray(0, CAPTURE_ID_HEAD_BYTES), digest: f.digest }));
  heads.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.size - b.size || compareBytes(a.head, b.head)));
  const h = new Fnv1a64();
  for (const f of heads) {
    h.update(enc.encode(f.name)).update(zero);
    h.update(enc.encode(String(f.size))).update(zero);
    h.update(enc.encode(String(f.head.length))).update(zero);
    h.update(f.head).update(zero);
    h.update(enc.encode(f.digest));
  }
  return h.hex();
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
