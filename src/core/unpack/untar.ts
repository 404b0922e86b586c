import { SNIFF_BYTES } from '../formats/sniff.ts';
import { ByteSource } from './inflate.ts';
import type { NamedStream, UnpackReport } from './types.ts';

/**
 * A tar's regular files for unpack.ts, read straight from its bytes: ustar, GNU and pax headers
 * read as modern-tar's decoder (strict) reads them (its rules and its words for what is wrong,
 * ported: unpack.ts used the decoder itself until issue 34). A member under SNIFF_BYTES is read
 * whole and handed on as `whole`, its stream made only if asked for, so a member no reader takes
 * costs no stream at all (issue 34: 400,000 one-byte members took 48 s, six web streams each,
 * one of them the decoder's). A larger member is streamed; only its own pieces are in memory.
 * A bad header, a cut-off archive or bytes after its end that are not zeros are reported once,
 * with the offset reached, and every member before is kept, whatever the chunks the bytes come in
 * (the decoder dropped the entries it had queued when it failed).
 */

/** modern-tar's names of the header types with no body (its FLAGTYPE); any other flag but the meta ones is a file */
const BODYLESS: Record<number, string | undefined> = {
  0x31: 'link',
  0x32: 'symlink',
  0x33: 'character-device',
  0x34: 'block-device',
  0x35: 'directory',
  0x36: 'fifo',
};
/** the longest pax or GNU long name header taken (modern-tar's) */
const MAX_META_SIZE = 8 << 20;
/** the most keys of a pax global header (modern-tar's) */
const MAX_GLOBAL_PAX_KEYS = 512;
/** pieces of a large member's body */
const PIECE = 1 << 16;

interface Header {
  name: string;
  /** modern-tar's type names; meta headers: `x`, `g`, `L`, `K` */
  type: string;
  size: number;
  linkname: string;
}

/** What pax and GNU long name headers set for the next entry, or every entry (pax `g`). */
interface Overrides {
  name?: string;
  linkname?: string;
  size?: number;
  pax?: Record<string, string>;
}

export async function* untar(
  src: NamedStream,
  report: UnpackReport,
  cleanName: (name: string) => string,
  skipSilently: (path: string) => boolean,
): AsyncGenerator<NamedStream> {
  const input = new ByteSource(src.stream.getReader());
  let failed = false;
  let current: string | null = null;
  const fail = (e: unknown) => {
    if (failed) return;
    failed = true;
    const inside = current === null ? '' : `, inside ${current}`;
    report(src.name, `tar archive is corrupt or truncated (${reason(e)})${inside}`, input.offset);
  };
  // modern-tar's words for a cut-off archive, or why the stream failed, as the decoder would have said it
  const truncated = () => input.error ?? new Error('Tar archive is truncated.');
  const globals: Overrides = {};
  let next: Overrides = {};
  try {
    for (;;) {
      const block = await input.exactly(512);
      if (block.length < 512) return fail(truncated());
      if (isZero(block)) {
        const second = await input.exactly(512);
        if (second.length < 512) return fail(truncated());
        if (!isZero(second)) return fail(new Error('Invalid tar header.'));
        // the end: anything after it must be zeros
        for (let b = await input.next(); b; b = await input.next()) if (!isZero(b)) return fail(new Error('Invalid EOF.'));
        if (input.error !== null) fail(input.error);
        return;
      }
      let h: Header;
      try {
        h = parseHeader(block);
      } catch (e) {
        return fail(e);
      }
      if (h.type === 'x' || h.type === 'g' || h.type === 'L' || h.type === 'K') {
        if (h.size > MAX_META_SIZE) return fail(new Error('Tar metadata entry exceeds maximum size.'));
        const padded = h.size + (-h.size & 511);
        const data = await input.exactly(padded);
        if (data.length < padded) return fail(truncated());
        const o =
          h.type === 'L'
            ? { name: readString(data, 0, h.size) }
            : h.type === 'K'
              ? { linkname: readString(data, 0, h.size) }
              : parsePax(data.subarray(0, h.size));
        if (next.pax) next = {};
        const target = h.type === 'g' ? globals : next;
        if (target === globals && o.pax && Object.keys(o.pax).length > MAX_GLOBAL_PAX_KEYS) return fail(new Error('Too many global attributes.'));
        Object.assign(target, o);
        continue;
      }
      override(h, globals);
      override(h, next);
      next = {};
      // a bodyless type keeps no size; a folder named as a file (a trailing slash) keeps its body, which is skipped
      const body = h.type === 'file' ? h.size : 0;
      const pad = -body & 511;
      const name = cleanName(h.name);
      const type = h.type === 'file' && h.name.endsWith('/') ? 'directory' : h.type;
      if (type !== 'file') {
        if (type !== 'directory' && name !== '' && !skipSilently(name)) {
          const link = h.linkname ? ` to ${h.linkname}` : '';
          report(`${src.name}/${name}`, `${type}${link} in a tar: not read (only regular files are)`);
        }
        if ((await input.skip(body + pad)) < body + pad) return fail(truncated());
        continue;
      }
      if (name === '' || skipSilently(name)) {
        if ((await input.skip(body + pad)) < body + pad) return fail(truncated());
        continue;
      }
      const path = `${src.name}/${name}`;
      current = name;
      if (body < SNIFF_BYTES) {
        const bytes = await input.exactly(body);
        if (bytes.length < body) {
          // cut short: its bytes, then the error where the stream's reader would have met it
          yield { name: path, stream: replay(bytes.length > 0 ? [bytes] : [], () => fail(truncated())) };
          return;
        }
        yield wholeMember(path, bytes);
      } else {
        let left = body;
        const stream = new ReadableStream<Uint8Array>(
          {
            async pull(c) {
              if (left === 0) return c.close();
              const b = await input.next(Math.min(left, PIECE));
              if (!b) {
                left = -1;
                fail(truncated());
                return c.close();
              }
              left -= b.length;
              c.enqueue(b);
            },
          },
          { highWaterMark: 0 },
        );
        yield { name: path, stream };
        if (left < 0) return;
        // what the reader left unread (it stopped early, or cancelled)
        if ((await input.skip(left)) < left) return fail(truncated());
      }
      current = null;
      if ((await input.skip(pad)) < pad) return fail(truncated());
    }
  } finally {
    await input.cancel();
  }
}

/** A header block as modern-tar's parseUstarHeader reads it (strict): its errors are its own words. */
function parseHeader(b: Uint8Array): Header {
  if (!checksumRight(b)) throw new Error('Invalid tar header checksum.');
  let name = readString(b, 0, 100);
  readOctal(b, 100, 8);
  readNumeric(b, 108, 8);
  readNumeric(b, 116, 8);
  const size = readNumeric(b, 124, 12);
  readNumeric(b, 136, 12);
  const flag = b[156];
  const type = META_FLAGS.has(flag) ? String.fromCharCode(flag) : (BODYLESS[flag] ?? 'file');
  const linkname = readString(b, 157, 100);
  if (readString(b, 257, 6) === 'ustar') {
    const prefix = readString(b, 345, 155);
    if (prefix) name = `${prefix}/${name}`;
  }
  return { name, type, size, linkname };
}

/** pax (x, g) and GNU long name and link (L, K) */
const META_FLAGS = new Set([0x78, 0x67, 0x4c, 0x4b]);

/** modern-tar's applyOverrides, for the fields read here; a bodyless type's size is 0 */
function override(h: Header, o: Overrides): void {
  if (o.name !== undefined) h.name = o.name;
  if (o.linkname !== undefined) h.linkname = o.linkname;
  if (o.size !== undefined) h.size = o.size;
  if (h.type !== 'file') h.size = 0;
}

/** A pax header's records (`length key=value\n`), as modern-tar's parsePax reads them. */
function parsePax(buffer: Uint8Array): Overrides {
  const o: Overrides = {};
  const pax: Record<string, string> = Object.create(null);
  let isPax = false;
  let offset = 0;
  while (offset < buffer.length) {
    const space = buffer.indexOf(32, offset);
    if (space === -1) break;
    const length = parseInt(utf8.decode(buffer.subarray(offset, space)), 10);
    if (!(length > 0)) break;
    const end = offset + length;
    const record = utf8.decode(buffer.subarray(space + 1, end - 1));
    const eq = record.indexOf('=');
    if (eq > 0) {
      const key = record.slice(0, eq);
      const value = record.slice(eq + 1);
      pax[key] = value;
      isPax = true;
      if (key === 'path') o.name = value;
      else if (key === 'linkpath') o.linkname = value;
      else if (key === 'size' && /^\d+$/.test(value) && Number.isSafeInteger(+value)) o.size = +value;
    }
    offset = end;
  }
  if (isPax) o.pax = pax;
  return o;
}

function isZero(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) if (b[i] !== 0) return false;
  return true;
}

const utf8 = new TextDecoder();

function readString(b: Uint8Array, offset: number, size: number): string {
  if (b[offset] === 0) return '';
  const end = b.indexOf(0, offset);
  return utf8.decode(b.subarray(offset, end === -1 || end > offset + size ? offset + size : end));
}

function readOctal(b: Uint8Array, offset: number, size: number): number {
  let value = 0;
  for (let i = offset; i < offset + size; i++) {
    const c = b[i];
    if (c === 0) break;
    if (c === 32) continue;
    if (c < 48 || c > 55) throw new Error('Invalid tar number.');
    value = value * 8 + (c - 48);
  }
  return value;
}

function readNumeric(b: Uint8Array, offset: number, size: number): number {
  if (!(b[offset] & 128)) return readOctal(b, offset, size);
  let result = b[offset] & 127;
  for (let i = 1; i < size; i++) result = result * 256 + b[offset + i];
  if (!Number.isSafeInteger(result)) throw new Error('TAR number too large');
  return result;
}

function checksumRight(b: Uint8Array): boolean {
  const stored = readOctal(b, 148, 8);
  let sum = 8 * 0x20;
  for (let i = 0; i < 512; i++) if (i < 148 || i >= 156) sum += b[i];
  return stored === sum;
}

/** A file read whole: its bytes as `whole`, its stream made when first asked for. */
function wholeMember(name: string, whole: Uint8Array): NamedStream {
  let stream: ReadableStream<Uint8Array> | null = null;
  return {
    name,
    whole,
    get stream() {
      return (stream ??= replay(whole.length > 0 ? [whole] : [], () => {}));
    },
  };
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

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
