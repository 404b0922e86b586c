/**
 * The body of a trace.dat version 7 (trace-cmd 3.x), after the 16-byte initial header: the
 * compression name and version, the offset of the first options section, then sections one
 * after another, each `u16 id, u16 flags (1: compressed), u32 description string, u64 size`.
 * Metadata sections (header info, formats, kallsyms, printk, cmdlines, options, strings) hold one
 * compressed block when flagged; a BUFFER section holds page-aligned CPU data whose table is in
 * a BUFFER option, which trace-cmd writes AFTER the data: read forward, such a section is held
 * as stored (compressed chunks stay compressed) until its option arrives, then read.
 * The options sections chain by DONE's next offset; sections are read in file order, so a loop
 * in the chain ends the walk like any other pointer backwards (reported).
 */
import { codecOf, MAX_SECTION_BLOCK, readBlock, type Codec } from './compress.ts';
import { standaloneBudget } from '../decompress-budget.ts';
import { readSpans } from './fly.ts';
import { applyOption, optionBytes, OPT, OPT_NAME, tsMap, type DatBuffer, type DatOptions } from './options.ts';
import { MemSrc, Rd, WindowSrc, type Pull } from './read.ts';
import { cmdlines, emptyMeta, eventFormats, ftraceFormats, headerInfo, kallsyms, printkFormats } from './sections.ts';
import { emptyOptions } from './options.ts';
import type { DatBody } from './types.ts';

/** What a version's body reader gets from the header. */
/** Highest CPU id read. */
const MAX_CPU = 4096;

interface Held {
  at: number;
  flags: number;
  dataAt: number;
  pieces: Uint8Array[];
}

const hex = (n: number) => '0x' + n.toString(16);

export function* readV7(rd: Rd, b: DatBody): Pull<void> {
  const { res, ctx } = b;
  const cname = yield* rd.cstr(64);
  const cver = cname === null ? null : yield* rd.cstr(64);
  if (cname === null || cver === null) return void rd.truncated('the compression name and version');
  res.compression = cname;
  let codec: Codec | null = null;
  if (cname !== 'none') {
    codec = codecOf(cname, ctx.inflate ?? standaloneBudget(ctx.file, () => res.total));
    if (!codec)
      ctx.diagnostics.forFile(
        `trace.dat compression \`${cname}\` ${cver}: no codec for it here (zlib and zstd are read); its compressed sections are reported, the rest is read`,
      );
  }
  const first = yield* rd.u64();
  if (first === null) return void rd.truncated('the first options offset');
  const meta = emptyMeta();
  const opts = emptyOptions();
  const seen = new Map<number, number>(); // section offset -> id
  const held: Held[] = [];
  let expect = first; // the next options section of the chain, 0 when it ended
  const little = rd.little;

  const fly = function* (r: Rd, buf: DatBuffer, flags: number, end: number): Pull<void> {
    const compressed = (flags & 1) !== 0;
    if (compressed && !codec)
      return void (yield* r.skipUnused(end - r.pos, `BUFFER section at ${hex(buf.offset)}: compressed with \`${cname}\`, no codec for it`));
    for (const c of buf.cpus) {
      if (c.cpu >= MAX_CPU) {
        r.diag(buf.offset, `BUFFER section at ${hex(buf.offset)}: CPU id ${c.cpu} beyond ${MAX_CPU - 1}, its data not read`);
        c.size = 0;
      } else while (res.perCpu.length <= c.cpu) res.perCpu.push(0);
    }
    const ps = buf.pageSize >= 64 && buf.pageSize <= 1 << 20 && buf.pageSize % 4 === 0 ? buf.pageSize : b.pageSize;
    const page = b.pages(meta, tsMap(opts));
    if (!(yield* readSpans({ rd: r, pageSize: ps, filePage: page.file, innerPage: page.inner, codec: compressed ? codec : null }, buf.cpus, end))) return;
    if (r.pos < end) yield* r.skipUnused(end - r.pos, `BUFFER section at ${hex(buf.offset)}: bytes after its last CPU data`);
  };

  /** metadata sections whose content was read (by offset) */
  const done = new Set<number>();
  /** every section the options point at is read (without pointers yet: the formats are) */
  const metaReady = () => (opts.pointers.length > 0 ? opts.pointers.every((p) => done.has(p.offset)) : meta.formats.size > 0);
  /**
   * Reads held BUFFER sections whose option has arrived, once the metadata they need is read
   * too (`final`: the file ended, read what has an option whatever else is missing).
   */
  const release = function* (final: boolean): Pull<void> {
    if (!final && !metaReady()) return;
    for (let i = 0; i < held.length; i++) {
      const h = held[i];
      const buf = opts.buffers.find((x) => x.offset === h.at && !x.latency);
      if (!buf) continue;
      held.splice(i--, 1);
      const size = h.pieces.reduce((n, p) => n + p.length, 0);
      const mem = new MemSrc(h.pieces, h.dataAt, rd.src, '');
      yield* fly(new Rd(mem, little), buf, h.flags, h.dataAt + size);
    }
  };

  for (;;) {
    const at = rd.pos;
    const head = yield* rd.src.take(16);
    if (!head) break;
    const dv = new DataView(head.buffer, head.byteOffset, 16);
    const id = dv.getUint16(0, little);
    const flags = dv.getUint16(2, little);
    const lo = dv.getUint32(little ? 8 : 12, little);
    const hi = dv.getUint32(little ? 12 : 8, little);
    const size = hi * 2 ** 32 + lo;
    if (flags & ~1) {
      // (the bytes after it are left to the driver, which counts them unused in bulk)
      rd.src.unused(at, 16, `no section header at ${hex(at)} (id ${id}, flags ${hex(flags)}): the rest is not read`);
      break;
    }
    rd.src.use(16);
    seen.set(at, id);
    const end = at + 16 + size;
    const win = new Rd(new WindowSrc(rd.src, end), little);
    const name = OPT_NAME[id] ?? `id ${id}`;
    const what = `section ${name} at ${hex(at)}`;

    if (id === OPT.BUFFER) {
      // read now when its CPU table and the metadata are known, else held until they are
      const buf = opts.buffers.find((x) => x.offset === at && !x.latency);
      if (buf && metaReady()) yield* fly(win, buf, flags, end);
      else {
        const h: Held = { at, flags, dataAt: rd.pos, pieces: [] };
        if (!(yield* win.pieces(size, (p) => h.pieces.push(p.slice())))) {
          const got = h.pieces.reduce((n, p) => n + p.length, 0);
          rd.src.unused(h.dataAt, got, `${what}: cut short, not read`);
          rd.truncated(what);
          break;
        }
        held.push(h);
      }
    } else if (id === OPT.BUFFER_TEXT) {
      yield* win.skipUnused(size, `${what}: latency trace text, not read`);
    } else if (id === OPT.STRINGS || id === OPT.BTF_FILE || id === OPT.MODULES_FILE) {
      yield* win.skipUsed(size); // section names, BTF, /proc/modules: known, not needed
    } else if (id === OPT.DONE || (id >= OPT.HEADER_INFO && id <= OPT.CMDLINES)) {
      if (id === OPT.DONE && at !== expect) {
        const why =
          expect === 0
            ? 'after the chain ended'
            : at < expect
              ? `before the chain's next one at ${hex(expect)}`
              : `past the chain's next one at ${hex(expect)}`;
        yield* win.skipUnused(size, `options ${what}: not in the options chain (${why}), not read`);
      } else {
        let content: Rd | null = win;
        let mem: MemSrc | null = null;
        if (flags & 1) {
          if (!codec) {
            yield* win.skipUnused(size, `${what}: compressed with \`${cname}\`, no codec for it`);
            content = null;
          } else {
            const cap = (u: number) => (u > MAX_SECTION_BLOCK ? `its uncompressed size ${u} is beyond ${MAX_SECTION_BLOCK} bytes` : null);
            const block = yield* readBlock(win, codec, size, what, cap);
            if (block) {
              mem = new MemSrc([block.data], 0, null, what);
              mem.ctxDiag = (o, m) => ctx.diagnostics.atOffset(block.at, `${m} (byte ${o} of ${what}, uncompressed)`);
              content = new Rd(mem, little);
            } else content = null;
          }
        }
        if (content) {
          if (id === OPT.DONE) {
            const next = yield* options(content, opts, at);
            if (next !== null) {
              if (next !== 0 && next <= at) {
                rd.diag(at, `options ${what}: its next options offset ${hex(next)} goes back (a loop in the chain): not followed`);
                expect = 0;
              } else expect = next;
            } else expect = 0;
            yield* release(false);
          } else if (id === OPT.HEADER_INFO) yield* headerInfo(content, b.longSize, meta);
          else if (id === OPT.FTRACE_EVENTS) yield* ftraceFormats(content, meta);
          else if (id === OPT.EVENT_FORMATS) yield* eventFormats(content, meta);
          else if (id === OPT.KALLSYMS) yield* kallsyms(content, ctx, meta);
          else if (id === OPT.PRINTK) yield* printkFormats(content, meta);
          else if (id === OPT.CMDLINES) yield* cmdlines(content, meta);
          done.add(at);
          if (id !== OPT.DONE) yield* release(false);
          if (mem && mem.pos < mem.pieces[0].length) mem.unused(mem.pos, mem.pieces[0].length - mem.pos, `${what}: bytes after its content`);
        }
      }
    } else {
      // (the offset goes with the diagnostic, not in its text, so many of them group as one)
      const why = `section id ${id}: not a section id trace-cmd defines, skipped`;
      if (size === 0) rd.diag(at, why);
      else yield* win.skipUnused(size, why);
    }
    if (rd.pos < end) {
      const left = end - rd.pos;
      if (!(yield* rd.skipUnused(left, `${what}: ${left} bytes after its content`))) {
        rd.truncated(what);
        break;
      }
    }
  }

  yield* release(true);
  for (const h of held) {
    const n = h.pieces.reduce((k, p) => k + p.length, 0);
    rd.src.unused(h.dataAt, n, `BUFFER section at ${hex(h.at)}: no BUFFER option gives its CPUs, not read`);
  }
  if (expect !== 0 && !seen.has(expect)) rd.diag(rd.pos, `the options section at ${hex(expect)} (from the chain) is not in the file`);
  for (const p of opts.pointers) {
    if (seen.get(p.offset) !== p.id) rd.diag(p.offset, `option ${OPT_NAME[p.id]} points at ${hex(p.offset)}, where no such section starts`);
  }
  for (const buf of opts.buffers)
    if (seen.get(buf.offset) !== (buf.latency ? OPT.BUFFER_TEXT : OPT.BUFFER))
      rd.diag(buf.offset, `BUFFER option points at ${hex(buf.offset)}, where no such section starts`);
  res.cpus = opts.cpuCount ?? (res.perCpu.length || null);
  res.clock = opts.clock ?? opts.buffers.find((x) => x.name === '')?.clock ?? null;
  if (opts.buffers.filter((x) => !x.latency).length > 1)
    ctx.diagnostics.forFile(`trace.dat with ${opts.buffers.length} instance buffers: their events are read together`);
}

/** One options section: options up to DONE; its next offset, null when it has no DONE. */
function* options(r: Rd, opts: DatOptions, secAt: number): Pull<number | null> {
  for (;;) {
    const at = r.pos;
    const id = yield* r.u16();
    const size = id === null ? null : yield* r.u32();
    if (id === null || size === null) {
      r.diag(at, `options section at ${hex(secAt)} ends without DONE`);
      return null;
    }
    const data = yield* optionBytes(r, id, size);
    if (!data) return (void r.truncated(`option ${OPT_NAME[id] ?? id}`), null);
    const next = applyOption(id, data, r.little, true, opts, (m) => r.diag(at, m));
    if (id === OPT.DONE) return next ?? null;
  }
}
