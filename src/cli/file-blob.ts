import { open } from 'node:fs/promises';
import type { Stats } from 'node:fs';

/** Bytes per read of a file's stream: 64 KiB (node's Blob and read streams) made a 42 MB dump cost 640 round trips through the event loop and ~70 ms; 1 MiB costs ~10. */
export const PIECE = 2 ** 20;

/** How a file's second stat differs from its first (another file at the path, resized, written), or null when it does not. */
export function differs(a: Stats, b: Stats): string | null {
  const what: string[] = [];
  if (a.ino !== b.ino || a.dev !== b.dev) what.push('replaced by another file');
  if (a.size !== b.size) what.push(`size ${a.size} -> ${b.size} bytes`);
  if (a.mtimeMs !== b.mtimeMs) what.push(`modified at ${b.mtime.toISOString()}`);
  return what.length ? what.join(', ') : null;
}

/** Reads between two checks that the file did not change (`FileBlob.stream`). */
const CHECK_EVERY = 16;

/** The error a browser's File gives when the file changed under it since it was chosen. */
function notReadable(path: string, why: string): DOMException {
  return new DOMException(`${path} could not be read: ${why}`, 'NotReadableError');
}

/**
 * A file on disk as a Blob (what core/capture's loadFiles reads), read in PIECE-byte reads of
 * its own, each into a fresh buffer handed on as it is (no copy), and one read ahead while the
 * last is parsed. Like node's `openAsBlob` (and a browser's File), it is the file as it was when
 * opened: a read finds the size or modification time changed since `stat` (checked before the
 * first read, every CHECK_EVERY reads and after the last), or the file shorter than that, and
 * fails with NotReadableError, as theirs do.
 */
export class FileBlob extends Blob {
  private constructor(
    private readonly path: string,
    private readonly stat: Stats,
    private readonly start: number,
    private readonly end: number,
  ) {
    super([]);
  }

  /** The file at `path` as it is now (`stat` its stat, taken by the caller). */
  static of(path: string, stat: Stats): FileBlob {
    return new FileBlob(path, stat, 0, stat.size);
  }

  override get size(): number {
    return this.end - this.start;
  }

  override get type(): string {
    return '';
  }

  /** Blob.slice's rules: negative offsets from the end, clamped to the blob. */
  override slice(start = 0, end = this.size): FileBlob {
    const n = this.size;
    const at = (x: number) => Math.min(n, Math.max(0, x < 0 ? n + x : x));
    const a = at(start);
    const b = Math.max(a, at(end));
    return new FileBlob(this.path, this.stat, this.start + a, this.start + b);
  }

  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    let handle: Awaited<ReturnType<typeof open>> | null = null;
    let pos = this.start;
    let pieces = 0;
    const close = async () => {
      const h = handle;
      handle = null;
      await h?.close().catch(() => {});
    };
    return new ReadableStream<Uint8Array<ArrayBuffer>>(
      {
        pull: async (c) => {
          try {
            handle ??= await open(this.path, 'r');
            if (pos >= this.end) {
              await close();
              c.close();
              return;
            }
            // a stat before the first read, every CHECK_EVERY reads and after the last: a stat per
            // read cost the 105 MB trace's load 23 ms of its thread, and a change anywhere is
            // still seen before the stream ends (what a load keeps of a file is all or nothing)
            if (pieces++ % CHECK_EVERY === 0) await this.unchanged(handle);
            const piece = await this.readAt(handle, pos, Math.min(PIECE, this.end - pos));
            pos += piece.length;
            if (pos >= this.end) await this.unchanged(handle);
            c.enqueue(piece);
          } catch (e) {
            await close();
            throw e;
          }
        },
        cancel: close,
      },
      { highWaterMark: 1 },
    );
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    const h = await open(this.path, 'r');
    try {
      await this.unchanged(h);
      return (await this.readAt(h, this.start, this.size)).buffer;
    } finally {
      await h.close();
    }
  }

  override async text(): Promise<string> {
    return new TextDecoder().decode(await this.arrayBuffer());
  }

  override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return new Uint8Array(await this.arrayBuffer());
  }

  /** Fails when the file is not the one this blob was made of: its as differs() tells. */
  private async unchanged(h: Awaited<ReturnType<typeof open>>): Promise<void> {
    const d = differs(this.stat, await h.stat());
    if (d) throw notReadable(this.path, `it changed since it was opened (${d})`);
  }

  /** `n` bytes from `pos`, into a buffer of their own; fails when the file ends first. */
  private async readAt(h: Awaited<ReturnType<typeof open>>, pos: number, n: number): Promise<Uint8Array<ArrayBuffer>> {
    const buf = new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const { bytesRead } = await h.read(buf, got, n - got, pos + got);
      if (bytesRead === 0) throw notReadable(this.path, `it ended at byte ${pos + got}, before its ${this.stat.size} bytes`);
      got += bytesRead;
    }
    return buf;
  }
}
