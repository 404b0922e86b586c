import { createReadStream, readdirSync, statfsSync, statSync, type Stats } from 'node:fs';
import type { Readable } from 'node:stream';
import { basename, join } from 'node:path';
import type { Capture } from '../core/capture/ingest.ts';
import { loadFiles, type LoadOptions, type NamedBlob } from '../core/capture/load.ts';
import { nodeTraceParts } from './trace-parts.ts';
import { differs, FileBlob } from './file-blob.ts';
import { CAPTURE_ID_HEAD_BYTES, captureIdOf, Fnv1a64 } from '../core/tables/id.ts';
import type { CaptureSource } from '../core/tables/build.ts';
import { DEFAULT_DECOMPRESS_LIMITS } from '../core/formats/decompress-budget.ts';

/** A file given, as the capture's id and the `captures` table see it. */
export interface SourceFile extends CaptureSource {
  /** its name for the id: the base name, `stdin` for `-` */
  name: string;
  /** its first CAPTURE_ID_HEAD_BYTES bytes */
  head: Uint8Array;
}

export interface ReadOutcome {
  capture: Capture;
  /** files that could not be opened (missing, no permission, an empty folder, a folder inside a folder given), with the reason */
  failed: { file: string; reason: string }[];
  /** with `digests`: every file that was opened, its size, first bytes and digest of every byte */
  sources: SourceFile[];
}

/** The capture_id of what was read (id.ts): of the bytes the readers saw, standard input included. */
export const captureIdOfSources = (sources: readonly SourceFile[]): string => captureIdOf(sources);

/** Why a path is not a file to read, in words: "no such file", "is a directory". */
function cannotOpen(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'ENOENT') return 'no such file';
  if (err.code === 'EACCES' || err.code === 'EPERM') return 'permission denied';
  if (err.code === 'EISDIR') return 'is a directory';
  return err.message ?? String(e);
}

/** Blob parts of at most this many bytes while a stream is drained: its chunks joined as it goes, not held one by one. */
const DRAIN_PART = 64 * 2 ** 20;

const fmt = (n: number) => n.toLocaleString('en-US');

/**
 * A stream that cannot be opened twice or asked its size (standard input, a pipe, a device, a
 * file of /proc, /sys or tracefs) read to its end into a Blob of its chunks, which the readers
 * then stream as they do a file's. Held in memory (a pipe's size is known only at its end), so
 * bounded: past `limit` bytes (the budget one file may decompress to, 4 GiB) the read stops,
 * what was read is kept, and `over` says so.
 */
async function drain(stream: Readable, limit: number): Promise<{ blob: Blob; over: string | null }> {
  const parts: Blob[] = [];
  let chunks: Uint8Array<ArrayBuffer>[] = [];
  let held = 0;
  let total = 0;
  let over: string | null = null;
  for await (const c of stream) {
    let chunk = typeof c === 'string' ? new TextEncoder().encode(c) : new Uint8Array(c as Buffer);
    if (total + chunk.length > limit) {
      chunk = chunk.subarray(0, limit - total);
      over = `read stopped at ${fmt(limit)} bytes, the most read from a pipe, a device or a file that gives no size: what was read before is kept`;
    }
    chunks.push(chunk);
    held += chunk.length;
    total += chunk.length;
    if (held >= DRAIN_PART) {
      parts.push(new Blob(chunks));
      chunks = [];
      held = 0;
    }
    if (over) {
      stream.destroy();
      break;
    }
  }
  parts.push(new Blob(chunks));
  return { blob: new Blob(parts), over };
}

/**
 * Filesystems whose files say a size that is not their content's: /proc (0), sysfs (4096),
 * tracefs and debugfs (0 for `trace`, `stack_map*`). statfs's f_type, as <linux/magic.h> has them.
 */
const PSEUDO_FS = new Set([
  0x9fa0 /* proc */, 0x62656572 /* sysfs */, 0x74726163 /* tracefs */, 0x64626720 /* debugfs */, 0x27e0eb /* cgroup */, 0x63677270 /* cgroup2 */,
]);

/** Whether a file's reported size cannot be trusted: 0 (a file of /proc says 0 and holds 121,437 symbols), or on such a filesystem. */
function sizeUntrusted(path: string, stat: Stats): boolean {
  return stat.size === 0 || onPseudoFs(path);
}

/** Whether a path is on /proc, /sys, tracefs or debugfs, whose files say no size. */
function onPseudoFs(path: string): boolean {
  try {
    return PSEUDO_FS.has(Number(statfsSync(path).type));
  } catch {
    return false;
  }
}

/**
 * A folder given as a capture: the files directly in it, by name, as the page's folder drop
 * gives them (an `index.json` among them is read as any file: of no known kind, a note). Hidden
 * files (`.DS_Store`, an export's `.x.tmp-PID`) are left out, and pipes, devices and sockets in it
 * too (a folder is its files, never something that may not end). A folder inside it is not
 * entered: it is said in `skipped`, as is a folder of /proc, /sys or tracefs as a whole (its
 * `trace_pipe` never ends: its files are given one by one).
 */
export function folderFiles(dir: string): { files: string[]; skipped: ReadOutcome['failed'] } | { error: string } {
  if (onPseudoFs(dir)) return { error: 'a folder of /proc, /sys or tracefs is not read as a capture (trace_pipe there never ends): give its files one by one' };
  const files: string[] = [];
  const folders: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    let st: Stats;
    try {
      st = statSync(path);
    } catch {
      // a link to nothing: given as it is, so the read says why it is not there
      files.push(path);
      continue;
    }
    if (st.isDirectory()) folders.push(path);
    else if (st.isFile()) files.push(path);
  }
  if (files.length === 0) {
    return {
      error: folders.length
        ? `a folder with no files directly in it (the ${folders.length === 1 ? 'folder' : `${folders.length} folders`} in it ${folders.length === 1 ? 'is' : 'are'} not entered: give ${folders.length === 1 ? 'it' : 'them'} instead)`
        : 'an empty folder (no files in it)',
    };
  }
  return {
    files,
    skipped: folders.map((f) => ({ file: f, reason: "a folder inside the capture's folder: not entered (a capture is the files directly in its folder)" })),
  };
}

/**
 * Opens each file as a Blob and loads them through the same path as the browser's worker. A
 * path that is missing or a folder is reported (`failed`) and the others are read; each file is
 * stat'ed before it is opened and again once it has been read, and one that changed in between
 * gets a diagnostic (a file truncated or rewritten under the reader fails the read itself, and
 * load.ts reports that). A folder is the files directly in it (folderFiles); a bundle (.tar,
 * .tar.gz, .zip) is unpacked by the load. A large trace text file is read on two threads (trace-parts.ts).
 */
export async function readFiles(
  paths: string[],
  opts: Pick<LoadOptions, 'onProgress' | 'progressEveryMs' | 'details' | 'filter'> & {
    partMinBytes?: number;
    digests?: boolean;
    /** the most bytes read from a pipe, a device or a file whose size says 0 (default: 4 GiB, the decompression budget of one file) */
    drainLimit?: number;
  } = {},
): Promise<ReadOutcome> {
  const { drainLimit = DEFAULT_DECOMPRESS_LIMITS.fileBytes, ...loadOpts } = opts;
  const files: NamedBlob[] = [];
  const given = new Map<Blob, string>();
  const failed: ReadOutcome['failed'] = [];
  const opened = new Map<Blob, { path: string; stat: Stats }>();
  /** a drained file's name and why its read stopped short */
  const cut: { name: string; over: string }[] = [];
  const drained = async (name: string, path: string, stream: Readable) => {
    const { blob, over } = await drain(stream, drainLimit);
    files.push({ name, blob });
    given.set(blob, path);
    if (over) cut.push({ name, over });
  };
  // a folder given: its files in its place, in the order of their names
  const expanded: string[] = [];
  for (const path of paths) {
    let folder = false;
    try {
      folder = path !== '-' && statSync(path).isDirectory();
    } catch {
      // missing or unreadable: said below, where the path is opened
    }
    if (!folder) {
      expanded.push(path);
      continue;
    }
    let inside: ReturnType<typeof folderFiles>;
    try {
      inside = folderFiles(path);
    } catch (e) {
      failed.push({ file: path, reason: cannotOpen(e) });
      continue;
    }
    if ('error' in inside) failed.push({ file: path, reason: inside.error });
    else {
      expanded.push(...inside.files);
      failed.push(...inside.skipped);
    }
  }
  for (const path of expanded) {
    try {
      // standard input, a pipe (<(cmd), /dev/stdin) or a device: read to its end, then sniffed like a file
      if (path === '-') {
        await drained('stdin', path, process.stdin);
        continue;
      }
      const stat = statSync(path);
      if (stat.isDirectory()) {
        failed.push({ file: path, reason: 'is a directory' });
        continue;
      }
      // a file whose size is not its content's (/proc/kallsyms says 0): to its end, as a pipe is
      if (stat.isFIFO() || stat.isCharacterDevice() || stat.isSocket() || (stat.isFile() && sizeUntrusted(path, stat))) {
        await drained(basename(path), path, createReadStream(path));
        continue;
      }
      const blob = FileBlob.of(path, stat);
      files.push({ name: basename(path), blob });
      given.set(blob, path);
      opened.set(blob, { path, stat });
    } catch (e) {
      failed.push({ file: path, reason: cannotOpen(e) });
    }
  }
  const changedSince = (f: NamedBlob): string | null => {
    const o = opened.get(f.blob);
    if (!o) return null;
    let now: Stats;
    try {
      now = statSync(o.path);
    } catch (e) {
      return `changed while being read: it is gone now (${cannotOpen(e)})`;
    }
    const d = differs(o.stat, now);
    return d && `changed while being read (${d}): what was read may mix its old and new contents`;
  };
  const byBlob = new Map([...opened].map(([blob, o]) => [blob, o.path]));
  // a large trace's second thread (a load that keeps details or filters reads each file on one thread, load.ts)
  const parts = nodeTraceParts(byBlob, loadOpts.partMinBytes);
  // the digests as the load reads the bytes (FNV-1a 64 of every byte, no second read), each
  // continued from where the load stopped for a file it did not read to the end itself
  const digests = new Map<Blob, { h: Fnv1a64; bytes: number }>();
  const onBytes = loadOpts.digests
    ? (f: NamedBlob, chunk: Uint8Array) => {
        let d = digests.get(f.blob);
        if (!d) digests.set(f.blob, (d = { h: new Fnv1a64(), bytes: 0 }));
        d.h.update(chunk);
        d.bytes += chunk.length;
      }
    : undefined;
  let capture: Capture;
  try {
    capture = await loadFiles(files, { ...loadOpts, changedSince, parts, onBytes });
  } finally {
    parts.close();
  }
  for (const c of cut) capture.diagnostics.push({ file: c.name, where: 'file', message: c.over, count: 1 });
  const sources: SourceFile[] = [];
  if (loadOpts.digests) {
    for (const f of files) {
      const head = new Uint8Array(await f.blob.slice(0, CAPTURE_ID_HEAD_BYTES).arrayBuffer());
      const d = digests.get(f.blob) ?? { h: new Fnv1a64(), bytes: 0 };
      if (d.bytes < f.blob.size) for await (const c of f.blob.slice(d.bytes).stream() as unknown as AsyncIterable<Uint8Array>) d.h.update(c);
      sources.push({ name: f.name, path: given.get(f.blob) ?? f.name, size: f.blob.size, head, digest: d.h.hex() });
    }
  }
  return { capture, failed, sources };
}
