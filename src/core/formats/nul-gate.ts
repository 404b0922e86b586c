import type { DiagnosticLog } from './diagnostics.ts';
import type { ChunkParser } from './types.ts';
import { concatBytes } from '../base/bytes.ts';
import { indexOfByte } from './lines.ts';

/**
 * NUL bytes in a text file (a bit flipped in a space, a block of zeros from a damaged disk, or a
 * file padded with zeros to a block size), in front of a text reader:
 *
 * - a run of NULs that reaches the end of the file is padding: it is not handed to the reader and
 *   is reported once, with its offset and length;
 * - any other run is handed to the reader as it is (the line holding it is the reader's to judge,
 *   and usually reported unused by it) and reported once per run, by offset.
 *
 * A NUL is the code unit 0 of the file's encoding: one 0 byte in UTF-8, two at an even offset after a
 * UTF-16 byte-order mark. A trailing run is only counted while it lasts, never held as bytes, so a
 * gigabyte of zeros costs no memory; when text follows it after all it is handed over in pieces of
 * at most 64 KB.
 */

export const STRAY_NUL = 'NUL bytes inside the text (a damaged file?): handed to the reader as they are';
export const nulPadding = (count: number) => `${count.toLocaleString('en-US')} NUL bytes from here to the end of the file (padding): not read`;

const ZEROS = new Uint8Array(1 << 16);

/**
 * Whether `c` holds a 0 byte, four bytes a step (a word has one when (w - 0x01010101) & ~w has a
 * high bit set): where there is no memchr (a browser), the typed array's own search is a byte at a
 * time, 58 ms per 100 MB in Chromium against 16 for this.
 */
export function hasNulByWords(c: Uint8Array): boolean {
  const len = c.length;
  const off = c.byteOffset;
  let i = 0;
  const head = Math.min(len, (4 - (off & 3)) & 3);
  for (; i < head; i++) if (c[i] === 0) return true;
  const words = (len - i) >> 2;
  if (words > 0) {
    const w = new Int32Array(c.buffer, off + i, words);
    for (let j = 0; j < words; j++) {
      const x = w[j];
      if ((((x - 0x01010101) | 0) & ~x & -0x7f7f7f80) !== 0) return true;
    }
    i += words << 2;
  }
  for (; i < len; i++) if (c[i] === 0) return true;
  return false;
}

/** Node's memchr where there is one, else four bytes a step */
const hasNul: (c: Uint8Array) => boolean = (globalThis as { Buffer?: unknown }).Buffer ? (c) => indexOfByte(c, 0) >= 0 : hasNulByWords;

export function nulGate<R>(inner: ChunkParser<R>, diag: DiagnosticLog): ChunkParser<R> {
  /** bytes before the encoding is known (fewer than 2 seen) */
  let pre: Uint8Array | null = null;
  /** bytes per code unit: 1 (UTF-8), 2 (UTF-16 after a BOM); 0 until known */
  let unit = 0;
  /** a UTF-16 byte waiting for its pair */
  let odd = -1;
  /** bytes of the file before the current chunk */
  let offset = 0;
  /** NUL bytes held back (the run at the end of what came so far), and where that run began */
  let held = 0;
  let heldAt = 0;

  const release = () => {
    diag.atOffset(heldAt, STRAY_NUL);
    while (held > 0) {
      const n = Math.min(held, ZEROS.length);
      inner.push(ZEROS.subarray(0, n));
      held -= n;
    }
  };

  /** Start of the run of NUL units that ends `c` (c.length when there is none). */
  const trailing = (c: Uint8Array): number => {
    let j = c.length;
    if (unit === 1) while (j > 0 && c[j - 1] === 0) j--;
    else while (j > 1 && c[j - 1] === 0 && c[j - 2] === 0) j -= 2;
    return j;
  };

  /** Reports each run of NUL units in c[from, to) (c[from] is not inside a run). */
  const strays = (c: Uint8Array, from: number, to: number) => {
    if (unit === 1) {
      for (let i = c.indexOf(0, from); i >= 0 && i < to;) {
        diag.atOffset(offset + i, STRAY_NUL);
        while (i < to && c[i] === 0) i++;
        i = c.indexOf(0, i);
      }
      return;
    }
    for (let i = from; i + 1 < to; i += 2) {
      if (c[i] !== 0 || c[i + 1] !== 0) continue;
      diag.atOffset(offset + i, STRAY_NUL);
      while (i + 3 < to && c[i + 2] === 0 && c[i + 3] === 0) i += 2;
    }
  };

  const chunk = (c: Uint8Array) => {
    if (c.length === 0) return;
    if (held === 0 && unit === 1) {
      // a reader that looks at every byte (a browser's line scan): the chunk is handed over at
      // once, and only what the reader says it did not look at is searched here (50 ms per 100 MB
      // in Chromium spared); its stray NULs are reported after the reader's own diagnostics of
      // the chunk, not before
      if (c[c.length - 1] !== 0 && inner.scansEveryByte?.()) {
        inner.push(c);
        const k = Math.min(c.length, inner.nulFreeFrom!());
        if (k > 0 && hasNul(k === c.length ? c : c.subarray(0, k))) strays(c, 0, c.length);
        offset += c.length;
        return;
      }
      // the fast path: no NUL held, none in the chunk (one scan)
      if (!hasNul(c)) {
        inner.push(c);
        offset += c.length;
        return;
      }
    }
    const j = trailing(c);
    if (j === 0) {
      if (held === 0) heldAt = offset;
      held += c.length;
      offset += c.length;
      return;
    }
    let from = 0;
    if (held > 0) {
      // the held run was not the end: it and any NULs that continue it here are one stray run
      if (unit === 1) while (from < j && c[from] === 0) from++;
      else while (from + 1 < j && c[from] === 0 && c[from + 1] === 0) from += 2;
      release();
    }
    strays(c, from, j);
    inner.push(j === c.length ? c : c.subarray(0, j));
    if (j < c.length) {
      heldAt = offset + j;
      held = c.length - j;
    }
    offset += c.length;
  };

  const push16 = (c: Uint8Array) => {
    if (odd >= 0) {
      if (c.length === 0) return;
      const pair = new Uint8Array([odd, c[0]]);
      odd = -1;
      chunk(pair);
      c = c.subarray(1);
    }
    if (c.length % 2 === 1) {
      odd = c[c.length - 1];
      c = c.subarray(0, c.length - 1);
    }
    chunk(c);
  };

  const start = (c: Uint8Array) => {
    const bom16 = (c[0] === 0xff && c[1] === 0xfe) || (c[0] === 0xfe && c[1] === 0xff);
    unit = bom16 ? 2 : 1;
  };

  return {
    push(c: Uint8Array) {
      if (unit === 0) {
        const head = pre ? concatBytes([pre, c]) : c;
        if (head.length < 2) {
          pre = head.slice();
          return;
        }
        pre = null;
        start(head);
        c = head;
      }
      if (unit === 1) chunk(c);
      else push16(c);
    },
    end(): R {
      if (pre) {
        unit = 1;
        chunk(pre);
        pre = null;
      }
      if (odd >= 0) {
        // a last UTF-16 byte without its pair: a 0 ends the padding, anything else is text after it
        if (odd === 0) {
          if (held === 0) heldAt = offset;
          held++;
        } else {
          if (held > 0) release();
          inner.push(new Uint8Array([odd]));
        }
        odd = -1;
      }
      if (held > 0) diag.atOffset(heldAt, nulPadding(held));
      held = 0;
      return inner.end();
    },
  };
}
