import { standaloneBudget, type FileBudget } from '../formats/decompress-budget.ts';
import { SNIFF_BYTES } from '../formats/sniff.ts';
import { gunzip, sniffGate } from './gunzip.ts';
import { untar } from './untar.ts';
import { unzip } from './unzip.ts';
import type { Ctx, NamedStream, UnpackReport } from './types.ts';

/**
 * Opens compressed files and bundles (DESIGN 2.1): a gzip is decompressed (gunzip.ts) and
 * looked at again, a tar (modern-tar) or zip (unzip.ts) gives its regular files, nested up to
 * MAX_ARCHIVE_DEPTH archives deep. Kinds are told by content, never by name.
 *
 * Everything streams: the yielded files are read chunk by chunk while the outer file is read,
 * so a 1 GB .tar.gz is never one buffer. The price is that yielded files must be consumed in
 * order: read (or cancel) one before asking for the next.
 *
 * The yielded streams never error: a corrupt or truncated gzip, tar or zip is reported through
 * `report` with the archive's name and the offset reached, the file being read simply ends
 * there, and the entries already read are kept. Every decompressor takes its output from the
 * given file's budget (decompress-budget.ts), and every member of a container (gzip, zip, tar)
 * whose first SNIFF_BYTES no reader takes stops there (sniffGate).
 */

/** tar and zip inside one another: a bundle at this depth is reported and not opened */
export const MAX_ARCHIVE_DEPTH = 3;
/** gzip inside gzip */
const MAX_GZIP_DEPTH = 4;
/** enough to see a tar header's `ustar` magic (offset 257) and checksum */
const PEEK_BYTES = 512;

type Container = 'gzip' | 'tar' | 'zip' | null;

/**
 * Yields the files `file` stands for: itself, or what its gzip, tar or zip layers hold. `budget`:
 * the given file's share of the load's decompression budget (one of its own by default).
 */
export async function* unpack(file: { name: string; blob: Blob } | NamedStream, report: UnpackReport, budget?: FileBudget): AsyncGenerator<NamedStream> {
  let stream = 'blob' in file ? file.blob.stream() : file.stream;
  if (!budget) {
    let read = 0;
    stream = stream.pipeThrough(counter((n) => (read += n)));
    budget = standaloneBudget(file.name, () => read);
  }
  yield* walk({ name: file.name, stream }, { report, budget }, 0, 0, null);
}

/** The container a file's first bytes show, or null for anything else. */
export function sniffContainer(head: Uint8Array): Container {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  if (head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b) {
    // local file header, or the end record of an empty zip
    if ((head[2] === 3 && head[3] === 4) || (head[2] === 5 && head[3] === 6)) return 'zip';
  }
  if (head.length >= 512 && isTarHeader(head)) return 'tar';
  return null;
}

/** `ustar` magic at 257 (POSIX or GNU), or an old-style header whose checksum adds up. */
function isTarHeader(h: Uint8Array): boolean {
  if (h[0] === 0) return false;
  const magic = String.fromCharCode(...h.subarray(257, 262));
  if (magic === 'ustar') return true;
  let stored = 0;
  let digits = 0;
  for (let i = 148; i < 156; i++) {
    const b = h[i];
    if (b >= 0x30 && b <= 0x37) {
      stored = stored * 8 + (b - 0x30);
      digits++;
    } else if (b === 0 || b === 0x20) {
      if (digits > 0) break;
    } else return false;
  }
  if (digits === 0) return false;
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i];
  return sum === stored;
}

/** `gate`: src is a container's member, sniffed before it is read (or decompressed) further: the verb for its diagnostic */
async function* walk(src: NamedStream, ctx: Ctx, depth: number, gz: number, gate: string | null): AsyncGenerator<NamedStream> {
  const report = ctx.report;
  // a member read whole has its head in memory: no stream is made to look at it
  const { head, stream } = src.whole ? { head: src.whole, stream: null } : await peek(src.stream, PEEK_BYTES);
  const file: NamedStream = stream ? { name: src.name, stream } : src;
  const kind = sniffContainer(head);
  if (kind === 'gzip') {
    if (gz >= MAX_GZIP_DEPTH) {
      report(src.name, `gzip nested more than ${MAX_GZIP_DEPTH} deep: not opened`);
      await stream?.cancel().catch(() => {});
      return;
    }
    yield* walk(gunzip(file, ctx), ctx, depth, gz + 1, 'decompressed');
    return;
  }
  if (kind === 'tar' || kind === 'zip') {
    if (depth >= MAX_ARCHIVE_DEPTH) {
      report(src.name, `${kind} archive nested more than ${MAX_ARCHIVE_DEPTH} deep: not opened`);
      await stream?.cancel().catch(() => {});
      return;
    }
    const entries = kind === 'tar' ? untar(file, report, cleanName, skipSilently) : unzip(file, ctx, cleanName, skipSilently);
    // a zip entry is inflated on its own; a tar member is decompressed with its tar, or read
    const verb = kind === 'zip' || gate === 'decompressed' ? 'decompressed' : 'read';
    for await (const entry of entries) yield* walk(entry, ctx, depth + 1, gz, verb);
    return;
  }
  // the gate stops nothing shorter than its window
  if (!gate || (src.whole && src.whole.length < SNIFF_BYTES)) yield file;
  else yield { name: src.name, stream: file.stream.pipeThrough(sniffGate(src.name, report, gate)) };
}

/** Entry paths without a leading `./` or `/`, nor trailing `/`: loops, not regexes (`/\/+$/` backtracks: 1.96 s on 65,000 slashes). */
export function cleanName(name: string): string {
  let start = 0;
  for (;;) {
    if (name.charCodeAt(start) === 0x2f) start += 1;
    else if (name.charCodeAt(start) === 0x2e && name.charCodeAt(start + 1) === 0x2f) start += 2;
    else break;
  }
  let end = name.length;
  while (end > start && name.charCodeAt(end - 1) === 0x2f) end--;
  return name.slice(start, end);
}

/** macOS resource forks and folder litter, which no one means to load. */
function skipSilently(path: string): boolean {
  const parts = path.split('/');
  const base = parts[parts.length - 1];
  return parts.includes('__MACOSX') || base.startsWith('._') || base === '.DS_Store';
}

/** Reads up to `n` leading bytes and gives them back with a stream that still starts at 0. */
async function peek(stream: ReadableStream<Uint8Array>, n: number): Promise<{ head: Uint8Array; stream: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let len = 0;
  let ended = false;
  // a read that fails here fails the replayed stream after the bytes before it, where its reader names it
  let failed: { why: unknown } | null = null;
  while (len < n) {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await reader.read();
    } catch (why) {
      failed = { why };
      ended = true;
      break;
    }
    const { done, value } = r;
    if (done) {
      ended = true;
      break;
    }
    if (value.length === 0) continue;
    chunks.push(value);
    len += value.length;
  }
  const head = new Uint8Array(len);
  let o = 0;
  for (const c of chunks) {
    head.set(c, o);
    o += c.length;
  }
  const replay = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        const first = chunks.shift();
        if (first) {
          c.enqueue(first);
          return;
        }
        if (failed) return c.error(failed.why);
        if (ended) {
          c.close();
          return;
        }
        const { done, value } = await reader.read();
        if (done) c.close();
        else c.enqueue(value);
      },
      cancel(why) {
        chunks.length = 0;
        return reader.cancel(why);
      },
    },
    { highWaterMark: 0 },
  );
  return { head, stream: replay };
}

/** Passes chunks through, telling `onChunk` each one's length. */
function counter(onChunk: (n: number) => void): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, c) {
      onChunk(chunk.length);
      c.enqueue(chunk);
    },
  });
}
