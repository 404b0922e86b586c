/**
 * A capture's id for the tables' `capture_id` column: the same files give the same id on any
 * machine and in any order, so a fleet folder of Parquet files (DIR/<table>/<capture_id>.parquet)
 * names each capture once and a second export of the same capture replaces its files.
 */

/** How many first bytes of each file the id reads. */
export const CAPTURE_ID_HEAD_BYTES = 4096;

/** What the id is made of, per file: the name given (no folder), its size, its first bytes. */
export interface CaptureFileId {
  name: string;
  size: number;
  /** the file's first bytes: up to CAPTURE_ID_HEAD_BYTES are read (more are ignored) */
  head: Uint8Array;
}

/**
 * FNV-1a 64 over bytes, in four 16-bit limbs (as stack-hash.ts's fnv1a64 over UTF-8: every
 * product stays exact in a double; the prime 0x100000001b3 is 2^40 + 0x1b3).
 */
export class Fnv1a64 {
  private h0 = 0x2325;
  private h1 = 0x8422;
  private h2 = 0x9ce4;
  private h3 = 0xcbf2;

  update(bytes: Uint8Array): this {
    let { h0, h1, h2, h3 } = this;
    for (let i = 0; i < bytes.length; i++) {
      h0 ^= bytes[i];
      const t0 = h0 * 0x1b3;
      const t1 = h1 * 0x1b3 + (t0 >>> 16);
      const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
      const t3 = h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16);
      h0 = t0 & 0xffff;
      h1 = t1 & 0xffff;
      h2 = t2 & 0xffff;
      h3 = t3 & 0xffff;
    }
    Object.assign(this, { h0, h1, h2, h3 });
    return this;
  }

  /** 16 lowercase hex digits */
  hex(): string {
    const hex = (x: number) => x.toString(16).padStart(4, '0');
    return hex(this.h3) + hex(this.h2) + hex(this.h1) + hex(this.h0);
  }
}

/**
 * `capture_id`: FNV-1a 64 (16 lowercase hex digits) over the capture's files sorted by name
 * (then size, then first bytes), each as its name in UTF-8, a 0 byte, its size in decimal, a 0
 * byte, the length of the head read in decimal, a 0 byte and its first min(size, 4096) bytes.
 * Two captures differing only in a byte past the first 4 KiB of every file share an id; a
 * renamed, grown or rewritten file changes it.
 */
export function captureIdOf(files: readonly CaptureFileId[]): string {
  const enc = new TextEncoder();
  const zero = new Uint8Array(1);
  const heads = files.map((f) => ({ name: f.name, size: f.size, head: f.head.subarray(0, CAPTURE_ID_HEAD_BYTES) }));
  heads.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.size - b.size || compareBytes(a.head, b.head)));
  const h = new Fnv1a64();
  for (const f of heads) {
    h.update(enc.encode(f.name)).update(zero);
    h.update(enc.encode(String(f.size))).update(zero);
    h.update(enc.encode(String(f.head.length))).update(zero);
    h.update(f.head);
  }
  return h.hex();
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
