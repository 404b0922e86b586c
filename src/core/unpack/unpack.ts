import { createTarDecoder } from 'modern-tar';
import { standaloneBudget, type FileBudget } from '../formats/decompress-budget.ts';
import { SNIFF_BYTES } from '../formats/sniff.ts';
import { gunzip, sniffGate } from './gunzip.ts';
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
    const entries = kind === 'tar' ? untar(file, report) : unzip(file, ctx, cleanName, skipSilently);
    // a zip entry is inflated on its own; a tar member is decompressed with its tar, or read
    const verb = kind === 'zip' || gate === 'decompressed' ? 'decompressed' : 'read';
    for await (const entry of entries) yield* walk(entry, ctx, depth + 1, gz, verb);
    return;
  }
  // the gate stops nothing shorter than its window
  if (!gate || (src.whole && src.whole.length < SNIFF_BYTES)) yield file;
  else yield { name: src.name, stream: file.stream.pipeThrough(sniffGate(src.name, report, gate)) };
}

/**
 * Each regular file of a tar, streamed by modern-tar's decoder (web streams, backpressured:
 * only the current entry's chunks are in memory). Strict mode, so a bad header checksum or a
 * cut-off archive is an error, which is reported here once. A member under SNIFF_BYTES is read
 * whole first and handed on as `whole` (its stream made only if asked for), so that a member no
 * reader takes costs no stream of ours (issue 34: 400,000 one-byte members took 48 s).
 */
async function* untar(src: NamedStream, report: UnpackReport): AsyncGenerator<NamedStream> {
  let offset = 0;
  let failed = false;
  let current: string | null = null;
  const fail = (e: unknown) => {
    if (failed) return;
    failed = true;
    const inside = current === null ? '' : `, inside ${current}`;
    report(src.name, `tar archive is corrupt or truncated (${reason(e)})${inside}`, offset);
  };
  const entries = src.stream.pipeThrough(counter((n) => (offset += n))).pipeThrough(createTarDecoder({ strict: true }));
  const reader = entries.getReader();
  try {
    for (;;) {
      let next: ReadableStreamReadResult<{ header: { name: string; size?: number; type?: string; linkname?: string }; body: ReadableStream<Uint8Array> }>;
      try {
        next = await reader.read();
      } catch (e) {
        fail(e);
        break;
      }
      if (next.done) break;
      const { header, body } = next.value;
      const name = cleanName(header.name);
      const type = header.type ?? 'file';
      if (type === 'directory' || name === '' || skipSilently(name)) {
        await body.cancel().catch(() => {});
        continue;
      }
      if (type !== 'file') {
        const link = header.linkname ? ` to ${header.linkname}` : '';
        report(`${src.name}/${name}`, `${type}${link} in a tar: not read (only regular files are)`);
        await body.cancel().catch(() => {});
        continue;
      }
      current = name;
      if (header.size !== undefined && header.size < SNIFF_BYTES) {
        const { chunks, error } = await drain(body);
        // cut short: its bytes, then the error reported where the reader of the stream would have met it
        yield error === undefined ? wholeMember(`${src.name}/${name}`, chunks) : { name: `${src.name}/${name}`, stream: replay(chunks, () => fail(error.why)) };
      } else {
        const g = guard(body, fail);
        yield { name: `${src.name}/${name}`, stream: g.stream };
        await g.dispose();
      }
      current = null;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
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

/** Every chunk of a (short) stream, and the error that ended it early, if one did. */
async function drain(body: ReadableStream<Uint8Array>): Promise<{ chunks: Uint8Array[]; error?: { why: unknown } }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  for (;;) {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await reader.read();
    } catch (why) {
      return { chunks, error: { why } };
    }
    if (r.done) return { chunks };
    if (r.value.length > 0) chunks.push(r.value);
  }
}

/** A file read whole: its bytes as `whole`, its stream made when first asked for. */
function wholeMember(name: string, chunks: Uint8Array[]): NamedStream {
  const whole = concat(chunks);
  let stream: ReadableStream<Uint8Array> | null = null;
  return {
    name,
    whole,
    get stream() {
      return (stream ??= replay(whole.length > 0 ? [whole] : [], () => {}));
    },
  };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) (out.set(c, o), (o += c.length));
  return out;
}

/** A stream of `chunks`, then `atEnd()` (where guard reports an error), then its end. */
function replay(chunks: Uint8Array[], atEnd: () => void): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(c) {
        if (i < chunks.length) return c.enqueue(chunks[i++]);
        atEnd();
        c.close();
      },
      cancel() {
        i = chunks.length;
      },
    },
    { highWaterMark: 0 },
  );
}

/** A stream that ends instead of erroring: the error goes to `onError`. */
function guard(inner: ReadableStream<Uint8Array>, onError: (e: unknown) => void): { stream: ReadableStream<Uint8Array>; dispose: () => Promise<void> } {
  const reader = inner.getReader();
  let finished = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        try {
          const { done, value } = await reader.read();
          if (!done) {
            c.enqueue(value);
            return;
          }
        } catch (e) {
          onError(e);
        }
        finished = true;
        c.close();
      },
      cancel(why) {
        finished = true;
        return reader.cancel(why).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  const dispose = async () => {
    if (finished) return;
    finished = true;
    await reader.cancel().catch(() => {});
  };
  return { stream, dispose };
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

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
