import { crc32 } from '../base/crc32.ts';
import { ByteSource, FIRST_PIECE, RawInflate } from './inflate.ts';
import type { Ctx, NamedStream } from './types.ts';

/**
 * Each file of a zip, read front to back by its local headers (the central directory is at the
 * end, and a zip inside a tar.gz is a stream), every header checked: a zip cut inside a header,
 * a header that is not one, lengths that run past the end, a method or flag this reader lacks,
 * are each a diagnostic naming the reason and the offset, and the entries before are kept.
 * Deflate goes through fflate in pieces under the file's decompression budget, stored entries
 * pass through, and each entry's CRC-32 and sizes are checked against its header (or its data
 * descriptor): a mismatch is a diagnostic, the data is kept.
 *
 * An entry nobody reads to its end (a directory, macOS litter, content no reader takes, cut at
 * the sniff window) is skipped by its compressed size without inflating it; only an entry
 * written with a data descriptor (sizes after the data) must be inflated to find its end.
 * Symlinks (marked only in the central directory) come through as small files holding the link
 * target.
 */

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;
const END64 = 0x06064b50;
const DESCRIPTOR = 0x08074b50;

const METHODS: Record<number, string> = {
  1: 'shrink',
  6: 'implode',
  9: 'deflate64',
  12: 'bzip2',
  14: 'lzma',
  93: 'zstd',
  95: 'xz',
  98: 'ppmd',
  99: 'AES encryption',
};

/** Input fed to the inflater at once (see gunzip.ts). */
const IN_PIECE = 1 << 14;
const OUT_PIECE = 1 << 12;

const u16 = (b: Uint8Array, o: number) => b[o] | (b[o + 1] << 8);
const u32 = (b: Uint8Array, o: number) => (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;
const u64 = (b: Uint8Array, o: number) => u32(b, o) + u32(b, o + 4) * 2 ** 32;
const hex = (n: number) => '0x' + n.toString(16).padStart(8, '0');

interface Entry {
  at: number;
  name: string;
  flags: number;
  method: number;
  crc: number;
  csize: number;
  usize: number;
  /** sizes and CRC come after the data */
  descriptor: boolean;
  zip64: boolean;
}

/** How an entry's data went: read whole, or the archive cannot be read past it. */
type Outcome = 'next' | 'stop';

export async function* unzip(src: NamedStream, ctx: Ctx, cleanName: (n: string) => string, skipSilently: (n: string) => boolean): AsyncGenerator<NamedStream> {
  const input = new ByteSource(src.stream.getReader());
  const say = (message: string, at?: number) => ctx.report(src.name, message, at);
  // the stream ended early: because reading it failed (then that is the reason), or the archive is cut
  const cut = (message: string, at: number) => {
    const failed = input.failure();
    return failed ? say(failed, input.offset) : say(message, at);
  };
  let files = 0;
  try {
    for (;;) {
      const at = input.offset;
      const sig = await input.exactly(4);
      if (sig.length === 0) {
        if (input.failure()) return cut('', at);
        if (files === 0) say('zip archive with no entries and no central directory (empty or cut short)', at);
        else say(`zip archive ends at offset ${at} without its central directory (cut short?): the ${files} entries before are kept`, at);
        return;
      }
      if (sig.length < 4) return cut(`zip archive cut short inside a header at offset ${at} (${sig.length} of 4 signature bytes)`, at);
      const s = u32(sig, 0);
      if (s === CENTRAL || s === END || s === END64) {
        // the central directory: every entry has been seen
        if (files === 0) say(s === END ? 'zip archive with no files (an empty archive)' : 'zip archive whose central directory follows no entries', at);
        return;
      }
      if (s !== LOCAL) {
        const bytes = [...sig].map((b) => b.toString(16).padStart(2, '0')).join(' ');
        return say(
          `zip archive is corrupt at offset ${at}: no local file header there (bytes ${bytes})${files > 0 ? `; the ${files} entries before are kept` : ''}`,
          at,
        );
      }
      const h = await input.exactly(26);
      if (h.length < 26) return cut(`zip archive cut short inside the local file header at offset ${at} (${4 + h.length} of its 30 bytes)`, at);
      const nameLen = u16(h, 22);
      const extraLen = u16(h, 24);
      const rawName = await input.exactly(nameLen);
      if (rawName.length < nameLen)
        return cut(`zip archive cut short inside the name of the entry at offset ${at} (a name length of ${nameLen}, ${rawName.length} bytes there)`, at + 30);
      const extra = await input.exactly(extraLen);
      if (extra.length < extraLen)
        return cut(
          `zip archive cut short inside the extra field of the entry at offset ${at} (an extra field length of ${extraLen}, ${extra.length} bytes there)`,
          at + 30 + nameLen,
        );
      const flags = u16(h, 2);
      const e: Entry = {
        at,
        name: new TextDecoder(flags & 0x800 ? 'utf-8' : 'latin1').decode(rawName),
        flags,
        method: u16(h, 4),
        crc: u32(h, 10),
        csize: u32(h, 14),
        usize: u32(h, 18),
        descriptor: (flags & 8) !== 0,
        zip64: false,
      };
      const bad = zip64Sizes(e, extra);
      const name = cleanName(e.name);
      const full = `${src.name}/${name}`;
      const where: Where = { full, archive: src.name, name };
      if (bad) say(`entry ${name} at offset ${at}: ${bad}`, at + 30 + nameLen);
      files++;
      const discard = e.name.endsWith('/') || name === '' || skipSilently(name);
      if (e.flags & 1 || e.method === 99) {
        ctx.report(full, 'encrypted zip entry: not read', at);
        if ((await skipData(e, input, ctx, where)) === 'stop') return;
        continue;
      }
      if (e.method !== 0 && e.method !== 8) {
        ctx.report(
          full,
          `zip entry compressed with method ${e.method}${METHODS[e.method] ? ` (${METHODS[e.method]})` : ''}, which this reader lacks: not read`,
          at,
        );
        if ((await skipData(e, input, ctx, where)) === 'stop') return;
        continue;
      }
      const run: Run = { discard, finished: false, outcome: 'next' };
      const body = entryData(e, input, ctx, where, run);
      if (discard) {
        for await (const _ of body) {
          // nobody reads it: skipped, or inflated to find its end
        }
      } else {
        const stream = new ReadableStream<Uint8Array>(
          {
            async pull(c) {
              const r = await body.next();
              if (r.done) c.close();
              else c.enqueue(r.value);
            },
            cancel() {
              run.discard = true;
            },
          },
          { highWaterMark: 0 },
        );
        yield { name: full, stream };
        // the reader stopped (or was done): what is left of the entry is skipped
        run.discard = true;
        for await (const _ of body) {
          // drained
        }
      }
      if (run.outcome === 'stop') return;
      if (ctx.budget.over !== null) return say(`${ctx.budget.over}; the archive's later entries are not read`, input.offset);
    }
  } finally {
    await input.cancel();
  }
}

/** Where an entry is: its full name (archive/entry) for its data's diagnostics, the archive's for the archive's */
interface Where {
  full: string;
  archive: string;
  name: string;
}

interface Run {
  /** drop the data: skip it by its size where known */
  discard: boolean;
  finished: boolean;
  outcome: Outcome;
}

/** Reads the zip64 extra field where a size says 0xffffffff; the reason when the extra field is malformed. */
function zip64Sizes(e: Entry, extra: Uint8Array): string | null {
  let o = 0;
  while (o + 4 <= extra.length) {
    const id = u16(extra, o);
    const n = u16(extra, o + 2);
    if (o + 4 + n > extra.length) return `an extra field (id 0x${id.toString(16)}) of ${n} bytes runs past the ${extra.length} the header gives: ignored`;
    if (id === 1) {
      e.zip64 = true;
      let p = o + 4;
      const need = (e.usize === 0xffffffff ? 8 : 0) + (e.csize === 0xffffffff ? 8 : 0);
      if (n < need) return `its zip64 extra field holds ${n} bytes, the sizes need ${need}`;
      if (e.usize === 0xffffffff) ((e.usize = u64(extra, p)), (p += 8));
      if (e.csize === 0xffffffff) e.csize = u64(extra, p);
    }
    o += 4 + n;
  }
  return null;
}

/** Skips an entry that is not read; 'stop' when its end cannot be found. */
async function skipData(e: Entry, input: ByteSource, ctx: Ctx, w: Where): Promise<Outcome> {
  if (e.descriptor && e.csize === 0) {
    ctx.report(
      w.archive,
      `zip entry ${w.name} at offset ${e.at} has its sizes after its data: its end cannot be found without reading it, so the rest of the archive is not read`,
      e.at,
    );
    return 'stop';
  }
  const from = input.offset;
  const got = await input.skip(e.csize);
  if (got < e.csize) {
    ctx.report(w.archive, input.failure() ?? `zip archive cut short inside the data of ${w.name} (${got} of ${e.csize} compressed bytes)`, from + got);
    return 'stop';
  }
  if (e.descriptor) return (await descriptor(e, input, ctx, w, null)) ? 'next' : 'stop';
  return 'next';
}

/**
 * The entry's bytes as they are decompressed (none once `run.discard` is set: then the rest is
 * skipped by its size, or inflated to find its end). Sets `run.outcome` to 'stop' when the
 * archive cannot be read past it.
 */
async function* entryData(e: Entry, input: ByteSource, ctx: Ctx, w: Where, run: Run): AsyncGenerator<Uint8Array> {
  const report = (m: string, at?: number) => ctx.report(w.full, m, at);
  const archive = (m: string, at?: number) => ctx.report(w.archive, m, at);
  const dataAt = input.offset;
  const known = !(e.descriptor && e.csize === 0);
  let left = known ? e.csize : Infinity;
  let crc = 0;
  let size = 0;
  let whole = true;
  const stop = () => void (run.outcome = 'stop');
  if (!known && e.method === 0) {
    archive(
      `zip entry ${w.name} at offset ${e.at} is stored with its sizes after its data: its end cannot be found, so the rest of the archive is not read`,
      e.at,
    );
    return stop();
  }
  const queue: Uint8Array[] = [];
  const inf =
    e.method === 8
      ? new RawInflate((d) => {
          const take = ctx.budget.grant(d.length);
          const kept = take < d.length ? d.subarray(0, take) : d;
          if (kept.length === 0) return;
          crc = crc32(kept, crc);
          size += kept.length;
          if (!run.discard) queue.push(kept);
        })
      : null;
  // a small first piece, doubling (see RawInflate): what fflate copies past the entry's end stays in proportion to it
  for (let piece = FIRST_PIECE; ; piece = Math.min(2 * piece, IN_PIECE)) {
    if (run.discard && known) {
      // nobody reads the rest: skipped by its size, not inflated (the data is whole only if the deflate data had ended)
      if (!inf || !inf.ended) whole = false;
      const got = await input.skip(left);
      if (got < left) {
        archive(input.failure() ?? `zip archive cut short inside the data of ${w.name} (${e.csize - left + got} of ${e.csize} compressed bytes)`, input.offset);
        return stop();
      }
      left = 0;
      break;
    }
    if (left === 0) {
      if (inf && !inf.ended)
        report(`zip entry's deflate data goes on past its compressed size of ${e.csize} bytes (corrupt?): what was read is kept`, input.offset);
      break;
    }
    const from = input.offset;
    const chunk = await input.next(Math.min(left, inf ? piece : IN_PIECE));
    if (!chunk) {
      archive(
        input.failure() ??
          `zip archive cut short inside the data of ${w.name}${known ? ` (${e.csize - left} of ${e.csize} compressed bytes)` : ''}: what was read of it is kept`,
        from,
      );
      for (const d of queue) yield* pieces(d);
      return stop();
    }
    left -= chunk.length;
    if (!inf) {
      crc = crc32(chunk, crc);
      size += chunk.length;
      if (!run.discard) yield* pieces(chunk);
      continue;
    }
    let tail: Uint8Array | null;
    try {
      tail = inf.push(chunk);
    } catch (err) {
      for (const d of queue.splice(0)) yield* pieces(d);
      report(
        `zip entry could not be decompressed (${err instanceof Error ? err.message : String(err)}) in the bytes from offset ${from}: what was read before is kept`,
        from,
      );
      if (!known) return stop();
      run.discard = true;
      continue;
    }
    for (const d of queue.splice(0)) yield* pieces(d);
    if (ctx.budget.over !== null) {
      report(ctx.budget.over, input.offset);
      return stop();
    }
    if (tail) {
      input.unread(tail);
      if (known && tail.length + left > 0) {
        const short = tail.length + left;
        const endAt = input.offset;
        // a wrong size in the header: when the next header starts where the deflate data ends, read on from there
        const next = await input.exactly(4);
        input.unread(next);
        const sig = next.length === 4 ? u32(next, 0) : -1;
        if (sig === LOCAL || sig === CENTRAL || sig === END) {
          report(
            `zip entry's deflate data ends ${short} bytes before its compressed size of ${e.csize}, where the next header is: read on from there (the header's size is wrong)`,
            endAt,
          );
          e.csize -= short;
          break;
        }
        report(`zip entry's deflate data ends ${short} bytes before its compressed size of ${e.csize} (corrupt?): those bytes are skipped`, endAt);
        left = short;
        run.discard = true;
        continue;
      }
      break;
    }
  }
  run.finished = true;
  if (e.descriptor) {
    if (!(await descriptor(e, input, ctx, w, whole ? { crc, size, csize: input.offset - dataAt } : null))) return stop();
  } else if (whole) check(e, ctx, w.full, crc, size, input.offset);
}

/** Reads a data descriptor (its signature optional, sizes of 4 or 8 bytes); false when it is cut short. */
async function descriptor(e: Entry, input: ByteSource, ctx: Ctx, w: Where, got: { crc: number; size: number; csize: number } | null): Promise<boolean> {
  const at = input.offset;
  const first = await input.exactly(4);
  const signed = first.length === 4 && u32(first, 0) === DESCRIPTOR;
  const rest = await input.exactly((signed ? 4 : 0) + (e.zip64 ? 16 : 8));
  const body = signed ? rest : new Uint8Array([...first, ...rest]);
  const need = 4 + (e.zip64 ? 16 : 8);
  if (first.length < 4 || body.length < need) {
    ctx.report(w.archive, input.failure() ?? `zip archive cut short inside the data descriptor after ${w.name}`, at);
    return false;
  }
  e.crc = u32(body, 0);
  e.csize = e.zip64 ? u64(body, 4) : u32(body, 4);
  e.usize = e.zip64 ? u64(body, 12) : u32(body, 8);
  if (got) {
    if (got.csize !== e.csize) ctx.report(w.full, `zip entry's data descriptor gives ${e.csize} compressed bytes, its data took ${got.csize} (corrupt?)`, at);
    check(e, ctx, w.full, got.crc, got.size, at);
  }
  return true;
}

function check(e: Entry, ctx: Ctx, full: string, crc: number, size: number, at: number): void {
  if (crc !== e.crc) ctx.report(full, `zip entry's CRC-32 is ${hex(crc)}, its header says ${hex(e.crc)} (the data is damaged): what was read is kept`, at);
  if (size !== e.usize) ctx.report(full, `zip entry decompressed to ${size} bytes, its header says ${e.usize} (damaged?): what was read is kept`, at);
}

function* pieces(d: Uint8Array): Generator<Uint8Array> {
  for (let i = 0; i < d.length; i += OUT_PIECE) yield d.subarray(i, i + OUT_PIECE);
}
