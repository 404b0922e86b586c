import { DecompressBudget, type DecompressLimits } from '../formats/decompress-budget.ts';
import { Ingest, type Capture, type FileReport } from './ingest.ts';
import { inflation, modified, SLICE, source, stillSame } from '../unpack/load-source.ts';
import { unpack } from '../unpack/unpack.ts';
import { sniffKind } from '../formats/sniff.ts';
import type { NamedStream } from '../unpack/types.ts';
import { splitPoint, type TracePart, type TracePartReader } from './split-trace.ts';
import { columnSizer } from './column-sizer.ts';
import { startEarlyPart, type EarlyPart } from './early-part.ts';
import type { EventFilter } from './event-filter.ts';
import { macrotask } from '../base/macrotask.ts';

/** Bytes read between two turns of the event loop (readPlain's pump). */
const TURN_BYTES = 8 << 20;

/** A file as both the browser (File) and Node (fs.openAsBlob) hand it over. */
export interface NamedBlob {
  name: string;
  blob: Blob;
}

/**
 * How a load goes. `bytesRead` of `totalBytes` are the given files' own bytes (compressed, as
 * given), so bytesRead / totalBytes is the share done; inside a compressed file it is estimated
 * from the share of its decompressed bytes read when the decompressed size is known (a gzip's
 * trailer), since the compressed bytes run far ahead of the work (a 20 MB .gz can inflate to
 * 4 GB). `phase` says what is being done: `reading` a plain file, `inflating` a compressed one
 * (with `inflatedTotal` null when its decompressed size is unknown: the share is then unknown
 * too, and `bytesRead` only counts the compressed bytes read), `indexing` once every byte is read
 * (dumps, cookies, the capture's tables: one step with no progress of its own).
 */
export interface LoadProgress {
  /** the file being read (an archive's member as `archive/member`) */
  file: string;
  bytesRead: number;
  totalBytes: number;
  phase: 'reading' | 'inflating' | 'indexing';
  /** decompressed bytes of the current given file handed to the readers so far (its own bytes when it is not compressed) */
  inflatedBytes: number;
  /** what the compressed file being read decompresses to, when known; null when unknown or not compressed */
  inflatedTotal: number | null;
  /** MB/s handed to the readers (decompressed) since the load started */
  mbPerSecond: number;
}

export interface LoadOptions {
  onProgress?: (p: LoadProgress) => void;
  /** checked after every chunk; true stops the load with a CancelledError */
  isCancelled?: () => boolean;
  /** minimum milliseconds between progress reports */
  progressEveryMs?: number;
  /**
   * An ingest session to continue (an Add): the files are read into it after the ones it has,
   * and a cancelled or failed load rolls it back to where it stood. Without one, a new session.
   */
  session?: Ingest;
  /**
   * Asked once a file has been read: whether it changed since the load started, as the caller can
   * tell (the command line compares `fs.statSync` before and after). A message is a diagnostic
   * for the file; null when it did not change.
   */
  changedSince?: (file: NamedBlob) => string | null;
  /** the load's decompression limits (decompress-budget.ts: its defaults for what is not given) */
  decompressLimits?: Partial<DecompressLimits>;
  /**
   * Reads the second half of a large plain trace text file on another thread (split-trace.ts):
   * the file is read as two pieces at once and joined as one reader would have read it.
   */
  parts?: TracePartReader;
  /**
   * Each given file's own bytes (a compressed file's as given), in order, as the load reads them:
   * what a digest of every byte needs without a second read. A file read in pieces (`parts`) or
   * abandoned early (an unknown kind past its sniff) stops short of its end: bytes after the last
   * one given here were not seen.
   */
  onBytes?: (file: NamedBlob, chunk: Uint8Array) => void;
  /** a new session keeps each event's TGID and payload (event-details.ts); a large trace is then read on one thread */
  details?: boolean;
  /** a new session keeps only the events this matches (event-filter.ts), with their stack records; a large trace is then read on one thread */
  filter?: EventFilter;
}

export class CancelledError extends Error {
  constructor() {
    super('cancelled');
  }
}

/**
 * Streams every file chunk by chunk (`Blob.stream()`, never one big string) into one ingest
 * session and returns the capture. Compressed files and bundles (.gz, .tar, .tar.gz, .zip) are
 * opened on the way (unpack.ts) and their files read as if dropped one by one. The browser's
 * ingest worker and the Node command line both load through here, so they see the same numbers.
 *
 * Each file fails alone: a file that cannot be read (a folder, gone, truncated or rewritten
 * while being read: NotReadableError) keeps what was read of it, and a reader that throws loses
 * only its own file; either is a diagnostic naming the file, and the other files load.
 */
/** Members of one given file that no reader takes, each reported with its own diagnostics; the rest are counted in one. */
export const MEMBER_CAP = 100;

export async function loadFiles(files: readonly NamedBlob[], opts: LoadOptions = {}): Promise<Capture> {
  const ingest = opts.session ?? new Ingest({ details: opts.details, filter: opts.filter });
  await readFiles(ingest, files, opts);
  return ingest.finish();
}

/**
 * Reads the files into `ingest` (without finishing it) and returns the report of each file
 * read, archives' members included. On cancel (CancelledError) or any failure the session is
 * rolled back to where it stood before, as if this call had not happened. A file that fails
 * alone (see loadFiles) is not a failure of the call: it gets a diagnostic, and, when nothing
 * of it is kept, no report.
 */
export async function readFiles(ingest: Ingest, files: readonly NamedBlob[], opts: LoadOptions = {}): Promise<FileReport[]> {
  const mark = ingest.mark();
  // a large trace after other files: the other thread reads its part from now (early-part.ts)
  const early = opts.parts && !ingest.trace.details && !ingest.trace.filter ? await startEarlyPart(files, opts.parts) : null;
  try {
    return await read(ingest, files, opts, early);
  } catch (e) {
    ingest.rollback(mark);
    throw e;
  } finally {
    // a load that ended (or failed) before the trace's turn
    if (early && !early.taken) early.tail.cancel();
  }
}

/** An error's words for a diagnostic: `NotReadableError: The blob could not be read`. */
export function reason(e: unknown): string {
  if (e instanceof Error) {
    const name = e.name && e.name !== 'Error' ? `${e.name}: ` : '';
    return `${name}${e.message}`.slice(0, 300);
  }
  return String(e).slice(0, 300);
}

async function read(ingest: Ingest, files: readonly NamedBlob[], opts: LoadOptions, early: EarlyPart | null): Promise<FileReport[]> {
  const started = performance.now();
  const totalBytes = files.reduce((n, f) => n + f.blob.size, 0);
  const every = opts.progressEveryMs ?? 50;
  const isCancelled = () => opts.isCancelled?.() ?? false;
  /** bytes of the given files before the current one */
  let before = 0;
  /** bytes handed to the readers in this load */
  let fed = 0;
  let last = -Infinity;
  const reports: FileReport[] = [];
  const diagnose = (file: string, message: string, offset?: number) => ingest.report(file, message, offset);
  // a File's metadata, once asked for, is its snapshot: Chromium then fails a read started after the
  // file was modified with NotReadableError (a stream already running may read on, so the last byte
  // is read once more at the end: stillSame); Node's openAsBlob checks its own snapshot
  const stamps = files.map((f) => modified(f.blob));
  const budget = new DecompressBudget(opts.decompressLimits);
  /** the early part has not read yet: every chunk read here gives the event loop a turn (see pump) */
  const earlyStarting = () => early !== null && !early.taken && !early.settled && early.bytes === 0;
  for (const [index, f] of files.entries()) {
    const size = f.blob.size;
    const fileMark = ingest.mark();
    const reportsBefore = reports.length;
    const { compressed, total: trailerTotal, plain } = await inflation(f.blob);
    let inflatedTotal = trailerTotal;
    let inflated = 0;
    let whole = false;
    /** bytes of this file read by a part reader on another thread */
    let tailBytes = 0;
    const onBytes = opts.onBytes;
    const src = source(f.blob, isCancelled, onBytes && ((c) => onBytes(f, c)));
    const fileBudget = budget.forFile(f.name, () => src.state.bytes);
    const report = (file: string, force: boolean) => {
      if (!opts.onProgress) return;
      const now = performance.now();
      if (!force && now - last < every) return;
      last = now;
      // the trailer spoke of the last member only (or of the size mod 4 GiB): unknown after all
      if (inflatedTotal !== null && inflated > inflatedTotal) inflatedTotal = null;
      let within = src.state.bytes + tailBytes;
      if (whole) within = size;
      else if (compressed && inflatedTotal !== null) within = inflatedTotal === 0 ? size : Math.min(size, Math.round((size * inflated) / inflatedTotal));
      const secs = Math.max((now - started) / 1000, 1e-6);
      opts.onProgress({
        file,
        bytesRead: before + within,
        totalBytes,
        phase: compressed ? 'inflating' : 'reading',
        inflatedBytes: inflated,
        inflatedTotal: compressed ? inflatedTotal : null,
        mbPerSecond: fed / 1e6 / secs,
      });
    };

    /** Reads one file unpack yields into the session; a reader that throws loses only this file. */
    const readOne = async (inner: NamedStream): Promise<FileReport | null> => {
      const mark = ingest.mark();
      let at = 0;
      const reader = inner.stream.getReader();
      /** the reader threw: nothing of this file is kept, the next one is read */
      const fail = async (e: unknown) => {
        await reader.cancel().catch(() => {});
        ingest.rollback(mark);
        diagnose(inner.name, `the reader failed at byte ${at} (${reason(e)}): nothing of this file is kept`, at);
        return null;
      };
      let parser: ReturnType<Ingest['open']>;
      try {
        parser = ingest.open(inner.name, fileBudget);
      } catch (e) {
        return fail(e);
      }
      let cut: string | null = null;
      for (;;) {
        let r: ReadableStreamReadResult<Uint8Array>;
        try {
          r = await reader.read();
        } catch (e) {
          // a layer failed (the file's own bytes end cleanly, see source()): keep what came, as for a cut
          if (src.state.stopped || isCancelled()) throw new CancelledError();
          cut = reason(e);
          break;
        }
        if (src.state.stopped || isCancelled()) {
          await reader.cancel().catch(() => {});
          throw new CancelledError();
        }
        if (r.done) break;
        try {
          parser.push(r.value);
        } catch (e) {
          return fail(e);
        }
        at += r.value.length;
        inflated += r.value.length;
        fed += r.value.length;
        report(inner.name, false);
      }
      reader.releaseLock();
      let rep: FileReport;
      try {
        rep = parser.end();
      } catch (e) {
        return fail(e);
      }
      if (cut !== null) diagnose(inner.name, `could not be read past byte ${at} (${cut}): what was read before is kept`, at);
      report(inner.name, true);
      return rep;
    };

    /**
     * A file with no container read straight from its Blob's chunks into the session, without
     * unpack's stages (what they would do to it is nothing): each chunk, in pieces of at most
     * SLICE bytes, goes to the reader while the next one is being read. The state it leaves
     * is what source() would leave, so the same diagnostics follow.
     */
    const readPlain = async (): Promise<FileReport | null> => {
      const st = src.state;
      const mark = ingest.mark();
      let at = 0;
      let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
      // a large trace: its second half read on another thread meanwhile, from a line boundary
      // (started when the load began, when files came before it)
      const pre = early !== null && early.index === index ? early : null;
      if (pre) pre.taken = true;
      const split = pre ? pre.split : ingest.trace.details || ingest.trace.filter ? null : await splitPoint(f.blob, opts.parts);
      /** the other thread has said it reads (its first progress) */
      let tailRunning = false;
      const onTail = (n: number) => {
        tailRunning = true;
        const more = n - tailBytes;
        tailBytes = n;
        inflated += more;
        fed += more;
        report(f.name, false);
      };
      const tail = pre ? pre.tail : split === null ? null : opts.parts!.start(f.blob, split, f.name, onTail);
      if (pre) {
        pre.listener = onTail;
        if (pre.bytes > 0) onTail(pre.bytes);
      }
      // a part given up (cancelled, or this read failed) is not waited for
      tail?.part.catch(() => {});
      const fail = async (e: unknown) => {
        st.abandoned = true;
        tail?.cancel();
        await reader?.cancel().catch(() => {});
        ingest.rollback(mark);
        diagnose(f.name, `the reader failed at byte ${at} (${reason(e)}): nothing of this file is kept`, at);
        return null;
      };
      let parser: ReturnType<Ingest['open']>;
      try {
        parser = ingest.open(f.name, fileBudget);
      } catch (e) {
        return fail(e);
      }
      // the trace columns sized once for the whole file, both threads' halves (columnSizer)
      const sized = columnSizer(ingest.trace, size);
      /** Reads `blob` (the file, or a piece of it ending at `end`) into the parser; false when the parser failed (fail() was called). */
      const pump = async (blob: Blob, end: number): Promise<boolean> => {
        let sinceTurn = 0;
        let pending: Promise<ReadableStreamReadResult<Uint8Array>>;
        try {
          reader = blob.stream().getReader();
          pending = reader.read();
        } catch (e) {
          pending = Promise.reject(e);
        }
        for (;;) {
          if (isCancelled()) {
            st.stopped = true;
            tail?.cancel();
            pending.catch(() => {});
            await reader?.cancel().catch(() => {});
            throw new CancelledError();
          }
          let r: ReadableStreamReadResult<Uint8Array>;
          try {
            r = await pending;
          } catch (e) {
            st.failed = true;
            st.error = e;
            return true;
          }
          if (r.done) {
            st.ended = true;
            return true;
          }
          const chunk = r.value;
          st.bytes += chunk.length;
          onBytes?.(f, chunk);
          // the next chunk is read while this one is parsed; after the last one, the read that
          // ends the stream is awaited first (a change after it is for stillSame to see, as on the
          // stream path, whose peek reads a small file to its end before anything is parsed)
          pending = reader!.read();
          pending.catch(() => {});
          // A turn of the event loop, before each chunk until the other thread reads and then every
          // TURN_BYTES: a chunk already read resolves in this task, so without it nothing queued
          // runs until the file ends, and a page's nested worker starts only through this thread's
          // tasks (its script's fetch): its half waited for this one (1 GiB: 4.2 s, then 4.5 s).
          // A cancel and the other thread's progress arrive as messages too.
          sinceTurn += chunk.length;
          if ((tail && !tailRunning) || earlyStarting() || sinceTurn >= TURN_BYTES) {
            sinceTurn = 0;
            await macrotask();
          }
          if (st.bytes >= end) {
            const next = await pending.then(
              (v) => ({ v }),
              () => null,
            );
            if (next) pending = Promise.resolve(next.v);
          }
          for (let o = 0; o < chunk.length; o += SLICE) {
            const piece = o === 0 && chunk.length <= SLICE ? chunk : chunk.subarray(o, o + SLICE);
            try {
              parser.push(piece);
            } catch (e) {
              await fail(e);
              return false;
            }
            at += piece.length;
            inflated += piece.length;
            fed += piece.length;
            sized(at);
            report(f.name, false);
            if (isCancelled()) break;
          }
        }
      };
      if (!(await pump(tail ? f.blob.slice(0, split!) : f.blob, tail ? split! : size))) return null;
      let part: TracePart | undefined;
      if (tail) {
        if (st.failed || st.bytes !== split) tail.cancel();
        else {
          try {
            part = await tail.part;
            st.bytes += part.bytes;
            inflated += part.bytes - tailBytes;
            fed += part.bytes - tailBytes;
            tailBytes = 0;
          } catch {
            // the other thread could not read it: this one reads the rest
            inflated -= tailBytes;
            fed -= tailBytes;
            tailBytes = 0;
            st.ended = false;
            if (!(await pump(f.blob.slice(split!), size - split!))) return null;
          }
        }
      }
      let rep: FileReport;
      try {
        rep = parser.end(part);
      } catch (e) {
        return fail(e);
      }
      report(f.name, true);
      return rep;
    };

    if (plain) {
      const r = await readPlain();
      if (r) reports.push(r);
    } else {
      const members = unpack({ name: f.name, stream: src.stream }, diagnose, fileBudget);
      /** members no reader takes, past the first MEMBER_CAP: counted here, not each a report and a log */
      let unread = 0;
      let unreadBytes = 0;
      let unreadFirst = '';
      let unknownKept = 0;
      try {
        for (;;) {
          let next: IteratorResult<NamedStream>;
          try {
            next = await members.next();
          } catch (e) {
            if (src.state.stopped || isCancelled()) throw new CancelledError();
            diagnose(f.name, `could not be unpacked past byte ${src.state.bytes} (${reason(e)}): the files read before are kept`, src.state.bytes);
            break;
          }
          if (next.done) break;
          const whole = next.value.whole;
          // a member read whole that no reader takes, past the cap: counted without opening a reader
          // for it (what readOne would keep of it is rolled back below: its kind is the same sniff's)
          if (unknownKept >= MEMBER_CAP && whole && sniffKind(whole) === 'unknown') {
            if (isCancelled()) throw new CancelledError();
            if (unread === 0) unreadFirst = next.value.name;
            unread++;
            unreadBytes += whole.length;
            inflated += whole.length;
            fed += whole.length;
            report(next.value.name, false);
            continue;
          }
          const mark = ingest.mark();
          const r = await readOne(next.value);
          if (r && r.kind === 'unknown') {
            if (unknownKept >= MEMBER_CAP) {
              ingest.rollback(mark);
              if (unread === 0) unreadFirst = r.file;
              unread++;
              unreadBytes += r.size;
              continue;
            }
            unknownKept++;
          }
          if (r) reports.push(r);
        }
        if (unread > 0)
          diagnose(
            f.name,
            `${unread} more members that no reader takes (${unreadBytes} bytes, the first ${unreadFirst}), past the first ${MEMBER_CAP} reported one by one: not listed`,
          );
      } finally {
        await members.return(undefined).catch(() => {});
        await src.stream.cancel().catch(() => {});
      }
    }
    if (src.state.stopped || isCancelled()) throw new CancelledError();
    const s = src.state;
    if (s.failed && s.bytes === 0) {
      // nothing came: no report of an empty file of unknown kind, only why
      ingest.rollback(fileMark);
      reports.length = reportsBefore;
      diagnose(f.name, `could not be read (${reason(s.error)}): a folder, or a file that is gone or unreadable`);
    } else if (s.failed) {
      diagnose(
        f.name,
        `could not be read past byte ${s.bytes} of ${size} (${reason(s.error)}): it was changed, cut short or became unreadable while being read; what was read before is kept`,
        s.bytes,
      );
    } else if (s.ended && s.bytes !== size) {
      diagnose(
        f.name,
        `changed while being read: ${s.bytes} bytes were read where it had ${size} when the load started (${s.bytes < size ? 'cut short' : 'grown'}); what was read is kept`,
      );
    } else if (!(await stillSame(f.blob, stamps[index]))) {
      // one more byte read at the end checks the snapshot again: changed after its last chunk
      diagnose(f.name, 'changed while being read (its last byte can no longer be read as it was): what was read may mix its old and new contents');
    }
    const changed = opts.changedSince?.(f);
    if (changed) diagnose(f.name, changed);
    fileBudget.close();
    whole = true;
    report(f.name, true);
    before += size;
  }
  return reports;
}
