/**
 * A streaming reader of trace-cmd's binary `trace.dat` (version 6, either byte order): the
 * header, header_page, ftrace and event formats, kallsyms, printk formats, saved cmdlines,
 * options and the flyrecord per-CPU ring buffer pages, whose events go to the same TraceSink as
 * trace text. `kernel_stack` records become full stack records symbolized through the file's own
 * kallsyms. Version 7 is recognized and reported, not read.
 *
 * The reader is a generator that asks for a number of bytes at a time (never more than
 * MAX_PIECE, so no allocation follows an untrusted count); the driver hands it exactly those
 * bytes as chunks arrive. Every byte is counted as used or named in a diagnostic.
 */
import { createKallsymsParser, Symbolizer } from './kallsyms.ts';
import { createPageReader } from './trace-dat-pages.ts';
import { parseEventFormat, parseHeaderPage, type DatEventFormat, type PageHeader } from './trace-dat-format.ts';
import { TRACE_DAT_MAGIC } from './sniff.ts';
import type { ByteCount, ChunkParser, ParseContext, TraceSink } from './types.ts';

/** Largest piece the reader asks for at once. */
const MAX_PIECE = 1 << 16;
/** Largest format text taken as one (a larger one is skipped with a diagnostic). */
const MAX_TEXT = 1 << 20;

export interface TraceDatResult extends ByteCount {
  version: number | null;
  littleEndian: boolean | null;
  cpus: number | null;
  events: number;
  /** events per CPU (index = cpu) */
  perCpu: number[];
  lostMarkers: number;
}

/** A request for exactly `n` bytes; the reply is those bytes, or null at end of input. */
type Reader = Generator<number, void, Uint8Array | null>;

const ascii = new TextDecoder('latin1');
const utf8 = new TextDecoder('utf-8');

export function createTraceDatParser(ctx: ParseContext, sink: TraceSink): ChunkParser<TraceDatResult> {
  const res: TraceDatResult = { total: 0, used: 0, unused: 0, version: null, littleEndian: null, cpus: null, events: 0, perCpu: [], lostMarkers: 0 };
  let pos = 0; // file offset of the next byte the reader gets
  const diag = (at: number, msg: string) => ctx.diagnostics.atOffset(at, msg);
  const unused = (at: number, n: number, why: string) => {
    if (n <= 0) return;
    res.unused += n;
    diag(at, why);
  };

  // ------------------------------------------------------------ the reader
  function* read(): Reader {
    const take = function* (n: number): Generator<number, Uint8Array | null, Uint8Array | null> {
      const b = yield n;
      if (b) pos += n;
      return b;
    };
    /** Reads n bytes in pieces, giving each to `each`; false when the input ends first. */
    const pieces = function* (n: number, each: (b: Uint8Array) => void): Generator<number, boolean, Uint8Array | null> {
      let left = n;
      while (left > 0) {
        const k = Math.min(left, MAX_PIECE);
        const b = yield* take(k);
        if (!b) return false;
        each(b);
        left -= k;
      }
      return true;
    };
    const truncated = (what: string) => diag(pos, `trace.dat ends inside ${what}`);
    const cstr = function* (max: number): Generator<number, string | null, Uint8Array | null> {
      const bytes: number[] = [];
      for (;;) {
        const b = yield* take(1);
        if (!b) return null;
        res.used++;
        if (b[0] === 0) return ascii.decode(new Uint8Array(bytes));
        if (bytes.length >= max) return null;
        bytes.push(b[0]);
      }
    };

    const magic = yield* take(10);
    if (!magic || TRACE_DAT_MAGIC.some((c, i) => magic[i] !== c)) return void truncated('the magic');
    res.used += 10;
    const ver = yield* cstr(16);
    if (ver === null || !/^\d+$/.test(ver)) return void diag(pos, 'trace.dat version is not a number');
    res.version = +ver;
    if (res.version === 7) return void ctx.diagnostics.forFile('trace-cmd trace.dat version 7 (sections): not read yet; convert it with `trace-cmd convert --file-version 6` or `trace-cmd report > trace.txt`');
    if (res.version !== 6) return void ctx.diagnostics.forFile(`trace-cmd trace.dat version ${ver}: only version 6 is read`);
    const h = yield* take(6);
    if (!h) return void truncated('the header');
    res.used += 6;
    const little = h[0] === 0;
    res.littleEndian = little;
    const longSize = h[1];
    const pageSize = new DataView(h.buffer, h.byteOffset + 2, 4).getUint32(0, little);
    if (longSize !== 4 && longSize !== 8) return void diag(pos - 5, `long size ${longSize}: not 4 or 8`);
    if (pageSize < 64 || pageSize > 1 << 20 || pageSize % 4 !== 0) return void diag(pos - 4, `page size ${pageSize}: not read`);

    const u32 = function* (): Generator<number, number | null, Uint8Array | null> {
      const b = yield* take(4);
      if (!b) return null;
      res.used += 4;
      return new DataView(b.buffer, b.byteOffset, 4).getUint32(0, little);
    };
    const u64 = function* (): Generator<number, number | null, Uint8Array | null> {
      const b = yield* take(8);
      if (!b) return null;
      res.used += 8;
      const v = new DataView(b.buffer, b.byteOffset, 8);
      const lo = v.getUint32(little ? 0 : 4, little);
      const hi = v.getUint32(little ? 4 : 0, little);
      return hi * 2 ** 32 + lo;
    };
    /** A text block of `size` bytes: its text when small enough, else skipped as unused. */
    const text = function* (size: number, what: string): Generator<number, string | null, Uint8Array | null> {
      const at = pos;
      if (size > MAX_TEXT) {
        const ok = yield* pieces(size, (b) => unused(at, b.length, `${what} of ${size} bytes: too large, skipped`));
        if (!ok) truncated(what);
        return null;
      }
      const parts: Uint8Array[] = [];
      const ok = yield* pieces(size, (b) => parts.push(b.slice()));
      if (!ok) {
        for (const p of parts) unused(at, p.length, `${what}: cut short`);
        truncated(what);
        return null;
      }
      res.used += size;
      const all = new Uint8Array(size);
      let o = 0;
      for (const p of parts) all.set(p, (o += p.length) - p.length);
      return utf8.decode(all);
    };
    const tag = function* (want: string): Generator<number, boolean, Uint8Array | null> {
      const at = pos;
      const got = yield* cstr(32);
      if (got === want) return true;
      diag(at, got === null ? `trace.dat ends before \`${want}\`` : `expected \`${want}\`, found \`${got.slice(0, 32)}\``);
      return false;
    };

    // header_page, header_event
    let page: PageHeader = { commitOffset: 8, commitSize: longSize, dataOffset: 8 + longSize };
    if (!(yield* tag('header_page'))) return;
    let n = yield* u64();
    if (n === null) return void truncated('header_page');
    const hp = yield* text(n, 'header_page');
    if (hp === null) return;
    page = parseHeaderPage(hp, longSize);
    if (!(yield* tag('header_event'))) return;
    n = yield* u64();
    if (n === null || (yield* text(n, 'header_event')) === null) return void truncated('header_event');

    // ftrace formats, then event formats by system
    const formats = new Map<number, DatEventFormat>();
    const addFormat = (t: string, system: string, at: number) => {
      const f = parseEventFormat(t, system);
      if (typeof f === 'string') diag(at, f);
      else formats.set(f.id, f);
    };
    let count = yield* u32();
    if (count === null) return void truncated('the ftrace format count');
    for (let i = 0; i < count; i++) {
      const at = pos;
      const sz = yield* u64();
      const t = sz === null ? null : yield* text(sz, 'an ftrace format');
      if (t === null) return void truncated('the ftrace formats');
      addFormat(t, 'ftrace', at);
    }
    const systems = yield* u32();
    if (systems === null) return void truncated('the event system count');
    for (let s = 0; s < systems; s++) {
      const sys = yield* cstr(256);
      const k = sys === null ? null : yield* u32();
      if (sys === null || k === null) return void truncated('the event systems');
      for (let i = 0; i < k; i++) {
        const at = pos;
        const sz = yield* u64();
        const t = sz === null ? null : yield* text(sz, 'an event format');
        if (t === null) return void truncated('the event formats');
        addFormat(t, sys, at);
      }
    }

    // kallsyms (fed to the kallsyms reader piece by piece), printk formats, cmdlines
    const ksize = yield* u32();
    if (ksize === null) return void truncated('the kallsyms size');
    const kparser = createKallsymsParser({ file: ctx.file, diagnostics: ctx.diagnostics });
    if (!(yield* pieces(ksize, (b) => kparser.push(b)))) return void truncated('kallsyms');
    res.used += ksize;
    const syms = kparser.end();
    const symbolizer = syms.addrs.length > 0 ? new Symbolizer(syms) : null;
    const psize = yield* u32();
    if (psize === null || (yield* text(psize, 'printk formats')) === null) return void truncated('the printk formats');
    const csize = yield* u64();
    const cmd = csize === null ? null : yield* text(csize, 'saved cmdlines');
    if (cmd === null) return void truncated('the saved cmdlines');
    const comms = new Map<number, string>();
    for (const line of cmd.split('\n')) {
      const m = /^(\d+) (.*)$/.exec(line);
      if (m) comms.set(+m[1], m[2]);
    }
    const cpus = yield* u32();
    if (cpus === null) return void truncated('the CPU count');
    res.cpus = cpus;

    // options, then flyrecord (or latency: the rest is text)
    for (;;) {
      const at = pos;
      const kind = yield* take(10);
      if (!kind) return void truncated('the section tag');
      res.used += 10;
      const name = ascii.decode(kind).replace(/[\s\0]+$/, '');
      if (name === 'options') {
        for (;;) {
          const ob = yield* take(2);
          if (!ob) return void truncated('the options');
          res.used += 2;
          const id = new DataView(ob.buffer, ob.byteOffset, 2).getUint16(0, little);
          if (id === 0) break;
          const sz = yield* u32();
          if (sz === null || !(yield* pieces(sz, () => {}))) return void truncated('an option');
          res.used += sz;
        }
        continue;
      }
      if (name === 'latency') {
        const lat = pos;
        for (;;) {
          const b = yield* take(1);
          if (!b) return;
          unused(lat, 1, 'latency trace text: not read');
        }
      }
      if (name !== 'flyrecord') return void diag(at, `unknown section \`${name}\``);
      break;
    }
    if (cpus > 4096) return void diag(pos, `${cpus} CPUs: not read`);
    const spans: { cpu: number; offset: number; size: number }[] = [];
    for (let c = 0; c < cpus; c++) {
      const off = yield* u64();
      const size = off === null ? null : yield* u64();
      if (off === null || size === null) return void truncated('the CPU data offsets');
      res.perCpu.push(0);
      if (size > 0) spans.push({ cpu: c, offset: off, size });
    }
    spans.sort((a, b) => a.offset - b.offset);
    const readPage = createPageReader({ res, sink, little, longSize, page, formats, comms, symbolizer, diag, unused });
    for (const sp of spans) {
      if (sp.offset < pos) {
        diag(pos, `CPU ${sp.cpu} data at 0x${sp.offset.toString(16)} overlaps what was read: skipped`);
        continue;
      }
      if (!(yield* pieces(sp.offset - pos, (b) => (res.used += b.length)))) return void truncated(`the padding before CPU ${sp.cpu} data`);
      let left = sp.size;
      while (left > 0) {
        const at = pos;
        const k = Math.min(left, pageSize);
        const p = yield* take(k);
        if (!p) return void truncated(`CPU ${sp.cpu} data`);
        left -= k;
        if (k < pageSize) {
          unused(at, k, `CPU ${sp.cpu}: a partial page of ${k} bytes`);
          continue;
        }
        readPage(p, at, sp.cpu);
      }
    }
    const tailAt = pos;
    for (;;) {
      const b = yield* take(1);
      if (!b) break;
      unused(tailAt, 1, 'bytes after the last CPU data');
    }

  }

  // ------------------------------------------------------------ the driver
  const gen = read();
  let want = 0;
  let done = false;
  let out = new Uint8Array(0);
  let filled = 0;
  const ask = (r: IteratorResult<number, void>) => {
    if (r.done) {
      done = true;
      return;
    }
    want = r.value;
    out = new Uint8Array(want);
    filled = 0;
  };
  ask(gen.next());
  /** Hands over every request already whole (a request of 0 bytes is whole at once). */
  const settle = () => {
    while (!done && filled === want) ask(gen.next(out));
  };
  settle();

  return {
    push(chunk: Uint8Array) {
      res.total += chunk.length;
      let i = 0;
      while (i < chunk.length) {
        if (done) {
          unused(pos, chunk.length - i, 'bytes after what the reader could read');
          return;
        }
        const k = Math.min(want - filled, chunk.length - i);
        out.set(chunk.subarray(i, i + k), filled);
        filled += k;
        i += k;
        settle();
      }
    },
    end(): TraceDatResult {
      if (!done) {
        const left = filled;
        for (let i = 0; i < 64 && !done; i++) ask(gen.next(null));
        done = true;
        if (left > 0) unused(pos, left, 'trace.dat cut short: the last bytes do not make a whole piece');
      }
      res.unused = res.total - res.used;
      return res;
    },
  };
}
