import { SNIFF_BYTES, sniffKind } from '../formats/sniff.ts';
import { crc32 } from '../base/crc32.ts';
import { ByteSource, FIRST_PIECE, RawInflate } from './inflate.ts';
import type { Ctx, NamedStream, UnpackReport } from './types.ts';

/**
 * gzip (RFC 1952) for unpack.ts: each member's header read here (bounded: a name or comment
 * over 64 KiB is refused, not gathered), its deflate data inflated by fflate in pieces under the
 * file's decompression budget, and its trailer checked (CRC-32 and ISIZE: a mismatch is a
 * diagnostic, the data is kept). Every member of a multi-member file is read; bytes after the
 * last one that are not gzip (junk, zero padding) are a diagnostic and everything before them is
 * kept. The platform's DecompressionStream is not used: it fails on bytes after the last member
 * and drops the output it still held.
 */

/** Output pieces: a tar decoder reading this does not run far ahead of its own reader. */
const OUT_PIECE = 1 << 12;
/** Input fed to the inflater at once: what one piece inflates to (at most ~1,032 times it) bounds the overshoot of a limit. */
const IN_PIECE = 1 << 14;
/** Longest file name or comment taken in a gzip header. */
const MAX_HEADER_TEXT = 1 << 16;

export function gunzip(src: NamedStream, ctx: Ctx): NamedStream {
  const input = new ByteSource(src.stream.getReader());
  const out = members(src.name, input, ctx);
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        const r = await out.next();
        if (r.done) c.close();
        else c.enqueue(r.value);
      },
      async cancel() {
        await out.return(undefined);
        await input.cancel();
      },
    },
    { highWaterMark: 0 },
  );
  return { name: src.name, stream };
}

const hex = (n: number) => '0x' + n.toString(16).padStart(8, '0');

async function* members(name: string, input: ByteSource, ctx: Ctx): AsyncGenerator<Uint8Array> {
  const { report, budget } = ctx;
  const say = (message: string, at: number) => report(name, message, at);
  // the stream ended early: because reading it failed (then that is the reason), or the file is cut
  const cut = (message: string, at: number) => {
    const failed = input.failure();
    return failed ? say(failed, input.offset) : say(message, at);
  };
  try {
    for (let member = 0; ; member++) {
      const at = input.offset;
      const head = await input.exactly(10);
      if (member > 0) {
        if (head.length === 0) return input.failure() ? cut('', at) : undefined;
        if (head[0] !== 0x1f || (head.length > 1 && head[1] !== 0x8b)) {
          const read = member > 1 ? ` (${member} members read)` : '';
          return say(
            `bytes after the gzip data${read} are not gzip (junk or padding, found in the bytes from offset ${at}): ignored; everything before them is kept`,
            at,
          );
        }
      }
      if (head.length < 10) return cut(`gzip data is truncated (the stream ends inside a member's header, after ${head.length} of its 10 bytes)`, at);
      if (head[2] !== 8) return say(`gzip member at offset ${at}: compression method ${head[2]}, not deflate (8): not read`, at);
      const flags = head[3];
      if (flags & 0xe0) return say(`gzip member at offset ${at}: reserved header flags 0x${flags.toString(16)} set (corrupt?): not read`, at);
      if (flags & 4) {
        const x = await input.exactly(2);
        const xlen = x.length === 2 ? x[0] | (x[1] << 8) : -1;
        if (xlen < 0 || (await input.skip(xlen)) < xlen)
          return cut(`gzip data is truncated (the stream ends inside the extra field of the member at offset ${at})`, input.offset);
      }
      for (const [bit, what] of [
        [8, 'file name'],
        [16, 'comment'],
      ] as const) {
        if (!(flags & bit)) continue;
        const end = await skipZeroTerminated(input);
        if (end === 'cut') return cut(`gzip data is truncated (the stream ends inside the ${what} of the member at offset ${at})`, input.offset);
        if (end === 'long')
          return say(`gzip member at offset ${at}: a ${what} longer than ${MAX_HEADER_TEXT.toLocaleString('en-US')} bytes (corrupt?): not read`, at);
      }
      if (flags & 2 && (await input.skip(2)) < 2)
        return cut(`gzip data is truncated (the stream ends inside the header CRC of the member at offset ${at})`, input.offset);

      // the deflate data, then the trailer
      const queue: Uint8Array[] = [];
      let crc = 0;
      let size = 0;
      const inf = new RawInflate((d) => {
        const take = budget.grant(d.length);
        const kept = take < d.length ? d.subarray(0, take) : d;
        if (kept.length === 0) return;
        crc = crc32(kept, crc);
        size += kept.length;
        queue.push(kept);
      });
      // a small first piece, doubling: what fflate copies of a piece past the member's end stays in proportion to the member
      for (let piece = FIRST_PIECE; ; piece = Math.min(2 * piece, IN_PIECE)) {
        const from = input.offset;
        const chunk = await input.next(piece);
        if (!chunk) return cut('gzip data is truncated (the stream ends inside a member)', from);
        let tail: Uint8Array | null;
        try {
          tail = inf.push(chunk);
        } catch (e) {
          // what was inflated before the bad bytes is still handed out
          yield* pieces(queue);
          return say(`gzip data is corrupt or truncated (${reason(e)})`, from);
        }
        yield* pieces(queue);
        if (budget.over !== null) return say(budget.over, input.offset);
        if (tail) {
          input.unread(tail);
          break;
        }
      }
      const trailerAt = input.offset;
      const t = await input.exactly(8);
      if (t.length < 8) return cut(`gzip data is truncated (the stream ends inside the trailer of the member at offset ${at})`, trailerAt);
      const wantCrc = (t[0] | (t[1] << 8) | (t[2] << 16) | (t[3] << 24)) >>> 0;
      const isize = (t[4] | (t[5] << 8) | (t[6] << 16) | (t[7] << 24)) >>> 0;
      if (crc !== wantCrc)
        say(
          `gzip member at offset ${at}: its data's CRC-32 is ${hex(crc)}, its trailer says ${hex(wantCrc)} (the data is damaged): what was read is kept`,
          trailerAt,
        );
      if (size % 2 ** 32 !== isize)
        say(
          `gzip member at offset ${at}: ${size} bytes decompressed, its trailer says ${isize} (mod 2^32; damaged or cut?): what was read is kept`,
          trailerAt + 4,
        );
    }
  } finally {
    await input.cancel();
  }
}

async function* pieces(queue: Uint8Array[]): AsyncGenerator<Uint8Array> {
  // fflate hands out copies (they are not overwritten by the next push); pieces of at most 4 KB
  for (const d of queue) for (let i = 0; i < d.length; i += OUT_PIECE) yield d.subarray(i, i + OUT_PIECE);
  queue.length = 0;
}

/** Skips a zero-terminated string of at most MAX_HEADER_TEXT bytes. */
async function skipZeroTerminated(input: ByteSource): Promise<'ok' | 'cut' | 'long'> {
  let n = 0;
  for (;;) {
    const b = await input.next(MAX_HEADER_TEXT + 1 - n);
    if (!b) return 'cut';
    const z = b.indexOf(0);
    if (z >= 0) {
      input.unread(b.subarray(z + 1));
      return 'ok';
    }
    n += b.length;
    if (n > MAX_HEADER_TEXT) return 'long';
  }
}

/**
 * Member content passes through as it comes; once its first SNIFF_BYTES have passed, content
 * no reader takes is stopped there, so an unknown file is not decompressed (or read) to its end:
 * the stream above it is cancelled, and a zip entry's or tar member's rest is skipped, not
 * inflated. Looking ahead instead would run a tar decoder ahead of its reader.
 */
export function sniffGate(name: string, report: UnpackReport, verb = 'decompressed'): TransformStream<Uint8Array, Uint8Array> {
  let seen: Uint8Array[] | null = [];
  let len = 0;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, c) {
      if (seen) {
        seen.push(chunk);
        len += chunk.length;
        if (len >= SNIFF_BYTES) {
          const head = new Uint8Array(len);
          let o = 0;
          for (const p of seen) (head.set(p, o), (o += p.length));
          seen = null;
          if (sniffKind(head) === 'unknown') {
            const keep = Math.max(0, SNIFF_BYTES - (len - chunk.length));
            c.enqueue(chunk.subarray(0, keep));
            report(
              name,
              `the ${verb === 'decompressed' ? 'decompressed data' : 'member'} is not a format this app reads: not ${verb} past the first ${SNIFF_BYTES.toLocaleString('en-US')} bytes`,
            );
            c.terminate();
            return;
          }
        }
      }
      c.enqueue(chunk);
    },
  });
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
