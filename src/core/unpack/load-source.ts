import { sniffContainer } from './unpack.ts';

// The bytes of one given file as loadFiles reads them: a counted stream that ends where a read
// fails, whether it is a compressed container, and whether a File changed under the reader.

/**
 * The given file's own bytes, counted. A read that fails (the file is a folder, gone, or changed
 * under the reader) ends the stream there instead of failing it, so every layer above (gzip, tar,
 * the readers) sees a file cut short and keeps what came; `error` keeps why. `ended`: the file ran
 * to its end by itself; `abandoned`: a layer stopped reading it early (junk after a gzip, an
 * unknown file past its sniff window, a reader that failed); `stopped`: the load was cancelled.
 */
export function source(blob: Blob, isCancelled: () => boolean, onBytes?: (chunk: Uint8Array) => void) {
  const state = { bytes: 0, error: null as unknown, failed: false, ended: false, abandoned: false, stopped: false };
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        if (isCancelled()) {
          state.stopped = true;
          await reader?.cancel().catch(() => {});
          c.close();
          return;
        }
        let r: ReadableStreamReadResult<Uint8Array>;
        try {
          reader ??= blob.stream().getReader();
          r = await reader.read();
        } catch (e) {
          state.failed = true;
          state.error = e;
          c.close();
          return;
        }
        if (r.done) {
          state.ended = true;
          c.close();
          return;
        }
        state.bytes += r.value.length;
        onBytes?.(r.value);
        c.enqueue(r.value);
      },
      cancel() {
        state.abandoned = true;
        return reader?.cancel().catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

/**
 * Whether a given file is compressed as a whole (gzip, zip: what unpack inflates first) and, for
 * a gzip, what its trailer says it inflates to (ISIZE, the last member's size mod 2^32: a lower
 * bound for a multi-member file, so it is dropped once the bytes read pass it). `plain`: its first
 * bytes show no container at all (no gzip, zip or tar), so it is read without unpack's stages.
 */
export async function inflation(blob: Blob): Promise<{ compressed: boolean; total: number | null; plain: boolean }> {
  try {
    const head = new Uint8Array(await blob.slice(0, PEEK).arrayBuffer());
    const kind = sniffContainer(head);
    if (kind === 'zip') return { compressed: true, total: null, plain: false };
    if (kind !== 'gzip') return { compressed: false, total: null, plain: kind === null && (head.length === PEEK || head.length === blob.size) };
    if (blob.size < 18) return { compressed: true, total: null, plain: false };
    const tail = new DataView(await blob.slice(blob.size - 4).arrayBuffer());
    return { compressed: true, total: tail.getUint32(0, true), plain: false };
  } catch {
    // unreadable: the stream will say so
    return { compressed: false, total: null, plain: false };
  }
}

/** Bytes sniffContainer looks at (a tar header). */
export const PEEK = 512;
/** The largest piece of a chunk handed to a reader at once (an in-memory Blob streams as one chunk). */
export const SLICE = 1 << 20;

/** A File's lastModified (asking takes its snapshot), or null for a plain Blob. */
export function modified(blob: Blob): number | null {
  const t = (blob as Partial<File>).lastModified;
  return typeof t === 'number' ? t : null;
}

/** Whether a File still reads as the snapshot taken at the start: its last byte read once more, and its lastModified unchanged. */
export async function stillSame(blob: Blob, stamp: number | null): Promise<boolean> {
  if (stamp === null) return true;
  try {
    if (blob.size > 0) await blob.slice(blob.size - 1).arrayBuffer();
  } catch {
    return false;
  }
  return modified(blob) === stamp;
}
