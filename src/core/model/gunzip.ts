import { Gunzip } from 'fflate';
import { SNIFF_BYTES, sniffKind } from '../formats/sniff.ts';
import type { Ctx, NamedStream, UnpackReport } from './unpack.ts';

/** Decompression for unpack.ts: gzip members through fflate, with limits, and the sniff gate on inflated content. */

/** Bounds on what decompression may produce (a bomb is stopped there, what was read is kept). */
export interface InflateLimits {
  /** bytes one compressed file may inflate to */
  maxBytes: number;
  /** inflated / compressed, checked once past `ratioAfter` inflated bytes */
  maxRatio: number;
  ratioAfter: number;
}

export const DEFAULT_LIMITS: InflateLimits = { maxBytes: 4 * 2 ** 30, maxRatio: 1000, ratioAfter: 1 << 20 };

/**
 * Decompresses with fflate's streaming Gunzip (the platform's DecompressionStream fails on bytes
 * after the last member and drops the output it still held): every member of a multi-member gzip
 * is read; bytes after the last one that are not gzip (junk, zero padding) are a diagnostic and
 * everything inflated before them is kept; a bomb stops at the size or ratio limit.
 */
const OUT_PIECE = 1 << 12;

export function gunzip(src: NamedStream, ctx: Ctx): NamedStream {
  const reader = src.stream.getReader();
  const { report, limits } = ctx;
  let inOffset = 0;
  let outBytes = 0;
  let members = 1;
  let stopped = false;
  const queue: Uint8Array[] = [];
  let over: string | null = null;
  const g = new Gunzip((data) => {
    if (over) return;
    // a bomb stops at the size or ratio limit, checked as the output comes (one push can inflate a lot)
    const ratioCap = Math.max(limits.ratioAfter, limits.maxRatio * inOffset);
    const cap = Math.min(limits.maxBytes, ratioCap);
    let take = data.length;
    if (outBytes + take > cap) {
      take = Math.max(0, cap - outBytes);
      over =
        cap === limits.maxBytes
          ? `decompresses to more than ${limits.maxBytes.toLocaleString('en-US')} bytes (the limit): stopped, what was read is kept`
          : `decompresses to over ${limits.maxRatio.toLocaleString('en-US')} times its size (a decompression bomb?): stopped after ${(outBytes + take).toLocaleString('en-US')} bytes, what was read is kept`;
    }
    // fflate may hand out a view of its window, which the next push overwrites; and pieces of at
    // most 4 KB keep a tar decoder behind from running ahead of its reader
    for (let i = 0; i < take; i += OUT_PIECE) queue.push(data.slice(i, Math.min(take, i + OUT_PIECE)));
    outBytes += take;
  });
  g.onmember = () => members++;
  const stop = async (message: string, offset?: number) => {
    if (stopped) return;
    stopped = true;
    report(src.name, message, offset);
    await reader.cancel().catch(() => {});
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        while (queue.length === 0 && !stopped) {
          const { done, value } = await reader.read().catch((e: unknown) => {
            void stop(`gzip file could not be read (${reason(e)})`, inOffset);
            return { done: true as const, value: undefined };
          });
          if (stopped) break;
          const at = inOffset;
          try {
            if (done) {
              // fflate does not always throw at a cut. Between members (after a whole one) it
              // waits for a header (fflate 0.8 internals: v > 0); inside one, v is 0
              const inMember = (g as unknown as { v: number }).v === 0;
              g.push(new Uint8Array(0), true);
              if (inMember) await stop('gzip data is truncated (the stream ends inside a member)', at);
              stopped = true;
            } else {
              inOffset += value.length;
              g.push(value, false);
            }
          } catch (e) {
            const why = reason(e);
            if (why === 'invalid gzip data' && outBytes > 0) {
              await stop(
                `bytes after the gzip data${members > 1 ? ` (${members} members read)` : ''} are not gzip (junk or padding, found in the bytes from offset ${at}): ignored; everything before them is kept`,
                at,
              );
            } else await stop(`gzip data is corrupt or truncated (${why})`, at);
          }
          if (over) await stop(over, inOffset);
        }
        const chunk = queue.shift();
        if (chunk) c.enqueue(chunk);
        else c.close();
      },
      cancel() {
        stopped = true;
        queue.length = 0;
        return reader.cancel().catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  return { name: src.name, stream };
}

/**
 * Inflated content passes through as it comes; once its first SNIFF_BYTES have passed, content
 * no reader takes is stopped there, so an unknown file is not inflated to its end (a bomb of
 * zeros). Looking ahead instead would run a tar decoder ahead of its reader.
 */
export function sniffGate(name: string, report: UnpackReport): TransformStream<Uint8Array, Uint8Array> {
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
            report(name, `the decompressed data is not a format this app reads: not decompressed past the first ${SNIFF_BYTES.toLocaleString('en-US')} bytes`);
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
