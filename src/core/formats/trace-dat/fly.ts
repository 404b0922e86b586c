/**
 * The flyrecord data of a trace.dat: each CPU's span of ring buffer pages at the offset its table
 * gives (version 6 after the `flyrecord` tag, version 7 in the BUFFER option), page aligned, in
 * file order. A version 7 span may be compressed: a u32 chunk count, then chunks of whole pages
 * (compress.ts). Padding between spans is used; what a span does not explain, and
 * every partial page, is reported.
 */
import { MAX_CHUNK_PAGES, readBlock, type Codec } from './compress.ts';
import type { DatCpuData } from './options.ts';
import type { Pull, Rd } from './read.ts';

export interface FlyCtx {
  rd: Rd;
  pageSize: number;
  /** a page of the file (its bytes counted by the page reader) */
  filePage(p: Uint8Array, at: number, cpu: number): void;
  /** a page of a decompressed chunk (its file bytes were counted with the chunk) */
  innerPage(p: Uint8Array, at: number, cpu: number): void;
  /** the codec when the spans are compressed */
  codec: Codec | null;
}

/** Reads `spans` (sorted here by offset) up to `end` (a file offset; Infinity: no end). */
export function* readSpans(c: FlyCtx, spans: DatCpuData[], end: number): Pull<boolean> {
  const { rd, pageSize } = c;
  const sorted = spans.filter((s) => s.size > 0).sort((a, b) => a.offset - b.offset);
  for (let i = 0; i < sorted.length; i++) {
    const sp = sorted[i];
    const prev = i > 0 ? sorted[i - 1] : null;
    if (prev && prev.offset === sp.offset) {
      // trace-cmd reads the same bytes for both CPUs; a forward read has them once
      rd.diag(
        sp.offset,
        `CPU ${sp.cpu} data at 0x${sp.offset.toString(16)} is CPU ${prev.cpu}'s too (the same offset): read once, its records counted as CPU ${prev.cpu}'s`,
      );
      continue;
    }
    if (sp.offset < rd.pos) {
      rd.diag(rd.pos, `CPU ${sp.cpu} data at 0x${sp.offset.toString(16)} overlaps what was read: skipped`);
      continue;
    }
    // the next span that starts after this one (spans at the same offset are read once)
    let j = i + 1;
    while (j < sorted.length && sorted[j].offset === sp.offset) j++;
    const nextAt = j < sorted.length ? sorted[j].offset : end;
    // compressed: the chunks say where they end (trace-cmd's size for them is 4 bytes short), up to the next span
    const spanEnd = c.codec ? Math.min(end, nextAt) : sp.offset + sp.size;
    if (spanEnd > end || sp.offset >= end) {
      rd.diag(sp.offset, `CPU ${sp.cpu} data (${sp.size} bytes at 0x${sp.offset.toString(16)}) goes beyond its section's end 0x${end.toString(16)}: skipped`);
      continue;
    }
    if (!(yield* padding(rd, sp.offset - rd.pos, prev ? `after CPU ${prev.cpu}'s data, before CPU ${sp.cpu}'s` : `before CPU ${sp.cpu}'s data`, i === 0)))
      return (void rd.truncated(`the padding before CPU ${sp.cpu} data`), false);
    if (c.codec) {
      if (!(yield* chunks(c, c.codec, sp.cpu, spanEnd))) return false;
      const took = rd.pos - sp.offset;
      if (took !== sp.size && took !== sp.size + 4) rd.diag(sp.offset, `CPU ${sp.cpu}: its compressed chunks take ${took} bytes, its table says ${sp.size}`);
    } else {
      while (rd.pos < spanEnd) {
        const at = rd.pos;
        const k = Math.min(spanEnd - at, pageSize);
        // a size that ends inside a page: trace-cmd reads the whole page (its commit says how much
        // of it is data), so it is read whole when the file has it before the next span
        const whole = k < pageSize && at + pageSize <= Math.min(end, nextAt);
        const p = yield* rd.src.take(whole ? pageSize : k);
        if (!p) return (void rd.truncated(`CPU ${sp.cpu} data`), false);
        if (whole) rd.diag(at, `CPU ${sp.cpu}: its size ${sp.size} ends ${k} bytes into a page: the whole page read, as trace-cmd reads it`);
        else if (k < pageSize) {
          rd.src.unused(at, k, `CPU ${sp.cpu}: a partial page of ${k} bytes`);
          continue;
        }
        c.filePage(p, at, sp.cpu);
      }
    }
  }
  return true;
}

/**
 * The bytes between spans: used when they are zeros (page alignment), else not used and named
 * (data no CPU's size covers, e.g. a page left out of a span one page short: trace-cmd does not
 * read it either). Before the first span they may start with the trace clock as version 6
 * writes it there (a u64 size, then its text): those bytes are used.
 */
function* padding(rd: Rd, n: number, where: string, first: boolean): Pull<boolean> {
  const at = rd.pos;
  let got = 0;
  let head: Uint8Array | null = null;
  let firstNonZero = -1;
  let lastNonZero = -1;
  const ok = yield* rd.pieces(n, (b, o) => {
    if (!head) head = b.slice(0, 8);
    for (let k = 0; k < b.length; k++) {
      if (b[k] !== 0) {
        if (firstNonZero < 0) firstNonZero = o + k;
        lastNonZero = o + k;
      }
    }
    got += b.length;
  });
  const h = head as Uint8Array | null;
  const clock = first && h !== null && h.length === 8 ? 8 + new DataView(h.buffer).getUint32(rd.little ? 0 : 4, rd.little) : -1;
  const clockHigh = h !== null && h.length === 8 ? new DataView(h.buffer).getUint32(rd.little ? 4 : 0, rd.little) : 1;
  if (firstNonZero < 0 || (clock > 8 && clockHigh === 0 && clock <= got && lastNonZero < at + clock)) rd.src.use(got);
  else
    rd.src.unused(
      at,
      got,
      `${got} bytes ${where} are not zero padding (the first non-zero at 0x${firstNonZero.toString(16)}; data no CPU's size covers): not read, as trace-cmd does not`,
    );
  return ok;
}

/** One CPU's compressed span: a u32 count, then that many chunks of whole pages, before `spanEnd`. */
function* chunks(c: FlyCtx, codec: Codec, cpu: number, spanEnd: number): Pull<boolean> {
  const { rd, pageSize } = c;
  const countAt = rd.pos;
  const count = yield* rd.u32();
  if (count === null) return (void rd.truncated(`CPU ${cpu} chunk count`), false);
  // each chunk takes at least its 8 size bytes: the count cannot claim more than the span holds
  const most = Math.floor((spanEnd - rd.pos) / 8);
  if (count > most) rd.diag(countAt, `CPU ${cpu}: ${count} compressed chunks claimed, at most ${most} fit in its data: reading what is there`);
  const maxChunk = MAX_CHUNK_PAGES * pageSize;
  const cap = (usize: number) =>
    usize === 0 || usize % pageSize !== 0
      ? `its uncompressed size ${usize} is not a whole number of ${pageSize}-byte pages`
      : usize > maxChunk
        ? `its uncompressed size ${usize} is beyond ${MAX_CHUNK_PAGES} pages`
        : null;
  for (let i = 0; i < Math.min(count, most) && rd.pos + 8 <= spanEnd; i++) {
    const at = rd.pos;
    const b = yield* readBlock(rd, codec, spanEnd - at, `CPU ${cpu} chunk ${i}`, cap);
    if (!b) {
      // only its size words read (it claims more than is left) or the input ended: stop here
      if (rd.pos <= at + 8) break;
      continue;
    }
    for (let o = 0; o + pageSize <= b.data.length; o += pageSize) c.innerPage(b.data.subarray(o, o + pageSize), b.at, cpu);
  }
  return true;
}
