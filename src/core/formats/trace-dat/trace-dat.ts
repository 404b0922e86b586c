/**
 * A streaming reader of trace-cmd's binary `trace.dat`, versions 6 and 7, either byte order:
 * the initial header here, then the body of its version (v6.ts: one part after
 * another; v7.ts: sections, maybe zlib- or zstd-compressed, options at the end).
 * The metadata parts (sections.ts) are the same in both; the flyrecord per-CPU ring
 * buffer pages (fly.ts, pages.ts) send their events to the same TraceSink as
 * trace text; `kernel_stack` records become full stack records symbolized through the file's own
 * kallsyms; `bprint` events read as the kernel prints them, through the saved printk formats.
 *
 * The reader is a generator that asks for a number of bytes at a time (never more than
 * MAX_PIECE, so no allocation follows an untrusted count); the driver hands it exactly those
 * bytes as chunks arrive. Every byte is counted as used or named in a diagnostic.
 */
import { createPageReader } from './pages.ts';
import { FileSrc, Rd, type Pull } from './read.ts';
import type { DatMeta } from './sections.ts';
import { readV6 } from './v6.ts';
import { readV7 } from './v7.ts';
import type { DatBody, TraceDatResult } from './types.ts';
import { TRACE_DAT_MAGIC } from '../sniff.ts';
import type { ChunkParser, ParseContext, TraceSink } from '../types.ts';

export function createTraceDatParser(ctx: ParseContext, sink: TraceSink): ChunkParser<TraceDatResult> {
  const res: TraceDatResult = {
    total: 0,
    used: 0,
    unused: 0,
    version: null,
    littleEndian: null,
    cpus: null,
    events: 0,
    perCpu: [],
    lostMarkers: 0,
    compression: null,
    clock: null,
  };
  const src = new FileSrc(res, ctx);
  const unused = (at: number, n: number, why: string) => src.unused(at, n, why);

  // ------------------------------------------------------------ the reader
  function* read(): Pull<void> {
    const rd0 = new Rd(src, true);
    const magic = yield* rd0.bytes(10);
    if (!magic || TRACE_DAT_MAGIC.some((c, i) => magic[i] !== c)) return void rd0.truncated('the magic');
    const ver = yield* rd0.cstr(16);
    if (ver === null || !/^\d+$/.test(ver)) return void rd0.diag(src.pos, 'trace.dat version is not a number');
    res.version = +ver;
    if (res.version !== 6 && res.version !== 7) return void ctx.diagnostics.forFile(`trace-cmd trace.dat version ${ver}: only versions 6 and 7 are read`);
    const h = yield* rd0.bytes(6);
    if (!h) return void rd0.truncated('the header');
    const little = h[0] === 0;
    res.littleEndian = little;
    const longSize = h[1];
    const pageSize = new DataView(h.buffer, h.byteOffset + 2, 4).getUint32(0, little);
    if (h[0] > 1) return void rd0.diag(src.pos - 6, `endian byte ${h[0]}: not 0 (little) or 1 (big)`);
    if (longSize !== 4 && longSize !== 8) return void rd0.diag(src.pos - 5, `long size ${longSize}: not 4 or 8`);
    if (pageSize < 64 || pageSize > 1 << 20 || pageSize % 4 !== 0) return void rd0.diag(src.pos - 4, `page size ${pageSize}: not read`);
    const rd = new Rd(src, little);
    const body: DatBody = {
      res,
      ctx,
      longSize,
      pageSize,
      pages: (meta: DatMeta, tsOf) => {
        const page = meta.page ?? { commitOffset: 8, commitSize: longSize, dataOffset: 8 + longSize };
        const base = {
          sink,
          little,
          longSize,
          page,
          formats: meta.formats,
          comms: meta.comms,
          symbolizer: meta.symbolizer,
          printk: meta.printk,
          tsOf,
          diag: (at: number, m: string) => src.diag(at, m),
        };
        const file = createPageReader({ ...base, res, unused });
        // a decompressed page: its file bytes were counted with its chunk, so only the events count
        const scratch = { used: 0 };
        const inner = createPageReader({
          ...base,
          res: {
            get used() {
              return scratch.used;
            },
            set used(n: number) {
              scratch.used = n;
            },
            get events() {
              return res.events;
            },
            set events(n: number) {
              res.events = n;
            },
            perCpu: res.perCpu,
            get lostMarkers() {
              return res.lostMarkers;
            },
            set lostMarkers(n: number) {
              res.lostMarkers = n;
            },
          },
          unused: (at: number, _n: number, why: string) => src.diag(at, `${why} (in a decompressed chunk)`),
        });
        return { file, inner };
      },
    };
    if (res.version === 6) yield* readV6(rd, body);
    else yield* readV7(rd, body);
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
          unused(src.pos, chunk.length - i, 'bytes after what the reader could read');
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
        if (left > 0) unused(src.pos, left, 'trace.dat cut short: the last bytes do not make a whole piece');
      }
      res.unused = res.total - res.used;
      return res;
    },
  };
}
