/**
 * A trace-cmd `trace.dat` version 7 WRITER, for tests, laid out as trace-cmd 3.x writes it: the
 * header with the compression name and version and the first options offset, the metadata
 * sections (compressed when asked), an options section (CPU count, clock, the section
 * pointers), the BUFFER section (page-aligned CPU data; compressed: per CPU a count of chunks of
 * at most 10 pages), an options section with the BUFFER option (so the table comes after the
 * data, as trace-cmd has it; `bufferOptionFirst` puts it in the first one instead), and the
 * strings section. Compression: `zlib` (fflate), `zstd` as valid zstd frames of raw blocks (no
 * zstd encoder is at hand; any zstd decoder reads them), or `none`.
 */
import { zlibSync } from 'fflate';
import { cmdlinesText, cpuPages, eventSystemsOf, ftraceFormatTexts, HEADER_EVENT, headerPageText, Out, printkText, type DatWriteOptions } from './write.ts';

export interface DatV7Options extends DatWriteOptions {
  compression: 'none' | 'zlib' | 'zstd';
  /** the BUFFER option in the first options section, before the data */
  bufferOptionFirst?: boolean;
  /** more options for the first options section: [id, data] (OFFSET, TSC2NSEC, ...) */
  extraOptions?: [number, Uint8Array][];
  /** the metadata sections (headers, formats, kallsyms, printk, cmdlines) after the data */
  metadataLast?: boolean;
  /** replaces a CPU's data as written (its chunk count and chunks when compressed), for hostile files */
  cpuData?: (cpu: number, written: Uint8Array) => Uint8Array;
}

const enc = new TextEncoder();
const PAGES_IN_CHUNK = 10;

/** A zstd frame of raw blocks holding `data` (content size declared, single segment). */
export function zstdRawFrame(data: Uint8Array): Uint8Array {
  const out: number[] = [0x28, 0xb5, 0x2f, 0xfd, 0xa0];
  const n = data.length;
  out.push(n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255);
  const MAX = 1 << 17;
  let o = 0;
  do {
    const k = Math.min(MAX, n - o);
    const last = o + k >= n ? 1 : 0;
    const h = last | (k << 3);
    out.push(h & 255, (h >>> 8) & 255, (h >>> 16) & 255);
    for (let i = 0; i < k; i++) out.push(data[o + i]);
    o += k;
  } while (o < n);
  return new Uint8Array(out);
}

function compress(kind: DatV7Options['compression'], data: Uint8Array): Uint8Array {
  return kind === 'zlib' ? zlibSync(data) : zstdRawFrame(data);
}

/** Bytes written by `fill` into a fresh Out of the file's byte order. */
function bytesOf(little: boolean, fill: (w: Out) => void): Uint8Array {
  const w = new Out(little);
  fill(w);
  return w.concat();
}

/** Writes a version 7 trace.dat of `o.events`. */
export function writeTraceDatV7(o: DatV7Options): Uint8Array {
  const pageSize = o.pageSize ?? 4096;
  const L = o.longSize;
  const little = o.littleEndian;
  const packed = o.compression !== 'none';
  const out = new Out(little);
  // the metadata sections, written here or (metadataLast) apart and appended after the data
  const metaOut = o.metadataLast ? new Out(little) : out;
  const strings = new Map<string, number>();
  let stringsLen = 0;
  const str = (s: string) => {
    let id = strings.get(s);
    if (id === undefined) {
      strings.set(s, (id = stringsLen));
      stringsLen += enc.encode(s).length + 1;
    }
    return id;
  };
  const u64at = (at: number, v: number) => {
    const all = w.concat();
    new DataView(all.buffer).setBigUint64(at, BigInt(v), little);
    w.parts = [all];
  };
  /** a section; `raw`: its body as is even when flagged compressed (the BUFFER section's chunks) */
  const section = (id: number, flags: number, desc: string, body: Uint8Array, raw = false, w = out) => {
    const at = w.length;
    w.u16(id);
    w.u16(flags);
    w.u32(str(desc));
    if (flags & 1 && !raw) {
      const z = compress(o.compression, body);
      w.u64(8 + z.length);
      w.u32(z.length);
      w.u32(body.length);
      w.bytes(z);
    } else {
      w.u64(body.length);
      w.bytes(body);
    }
    return at;
  };
  const w = out;

  w.bytes(new Uint8Array([0x17, 0x08, 0x44, ...enc.encode('tracing')]));
  w.str0('7');
  w.u8(little ? 0 : 1);
  w.u8(L);
  w.u32(pageSize);
  w.str0(o.compression);
  w.str0(o.compression === 'none' ? '' : o.compression === 'zlib' ? '1.2.13' : '1.5.0');
  const firstOptsAt = w.length;
  w.u64(0); // patched below
  const flag = packed ? 1 : 0;
  const header = section(
    16,
    flag,
    'headers',
    bytesOf(little, (b) => {
      b.str0('header_page');
      b.sized64(headerPageText(L, pageSize));
      b.str0('header_event');
      b.sized64(HEADER_EVENT);
    }),
    false,
    metaOut,
  );
  const ftrace = section(
    17,
    flag,
    'ftrace events',
    bytesOf(little, (b) => {
      const f = ftraceFormatTexts(L, o);
      b.u32(f.length);
      for (const t of f) b.sized64(t);
    }),
    false,
    metaOut,
  );
  const events = section(
    18,
    flag,
    'events format',
    bytesOf(little, (b) => {
      const systems = eventSystemsOf(o);
      b.u32(systems.length);
      for (const [system, formats] of systems) {
        b.str0(system);
        b.u32(formats.length);
        for (const f of formats) b.sized64(f);
      }
    }),
    false,
    metaOut,
  );
  const kallsyms = section(
    19,
    flag,
    'kallsyms',
    bytesOf(little, (b) => b.sized32(o.kallsyms ?? '')),
    false,
    metaOut,
  );
  const printk = section(
    20,
    flag,
    'printk',
    bytesOf(little, (b) => b.sized32(printkText(o))),
    false,
    metaOut,
  );
  const cmdlines = section(
    21,
    flag,
    'command lines',
    bytesOf(little, (b) => b.sized64(cmdlinesText(o))),
    false,
    metaOut,
  );
  /** a metadata section's file offset (apart: after options 2, known once the data is laid out) */
  let metaBase = 0;
  const abs = (rel: number) => metaBase + rel;

  // the CPU data, laid out first so its offsets are known for the BUFFER option
  const perCpu: Uint8Array[] = [];
  for (let c = 0; c < o.cpus; c++) {
    const pages = cpuPages(
      o.events.filter((e) => e.cpu === c).sort((a, b) => a.ts - b.ts),
      o,
      pageSize,
    );
    if (!packed) {
      perCpu.push(bytesOf(little, (b) => pages.forEach((p) => b.bytes(p))));
      continue;
    }
    perCpu.push(
      pages.length === 0
        ? new Uint8Array(0)
        : bytesOf(little, (b) => {
            const chunks = Math.ceil(pages.length / PAGES_IN_CHUNK);
            b.u32(chunks);
            for (let i = 0; i < chunks; i++) {
              const raw = bytesOf(little, (r) => pages.slice(i * PAGES_IN_CHUNK, (i + 1) * PAGES_IN_CHUNK).forEach((p) => r.bytes(p)));
              const z = compress(o.compression, raw);
              b.u32(z.length);
              b.u32(raw.length);
              b.bytes(z);
            }
          }),
    );
  }
  if (o.cpuData) for (let c = 0; c < o.cpus; c++) perCpu[c] = o.cpuData(c, perCpu[c]);
  const bufferOption = (bufferAt: number, offsets: number[]) =>
    bytesOf(little, (b) => {
      b.u64(bufferAt);
      b.str0('');
      b.str0('local');
      b.u32(pageSize);
      b.u32(o.cpus);
      for (let c = 0; c < o.cpus; c++) {
        b.u32(c);
        b.u64(offsets[c]);
        b.u64(perCpu[c].length);
      }
    });
  const option = (b: Out, id: number, data: Uint8Array) => {
    b.u16(id);
    b.u32(data.length);
    b.bytes(data);
  };
  const u64bytes = (v: number) => bytesOf(little, (b) => b.u64(v));
  const u32bytes = (v: number) => bytesOf(little, (b) => b.u32(v));
  const firstOptions = (next: number, buffer: Uint8Array | null) =>
    bytesOf(little, (b) => {
      option(b, 8, u32bytes(o.cpus));
      option(b, 4, enc.encode('[local] global counter\0'));
      for (const [id, at] of [
        [16, header],
        [17, ftrace],
        [18, events],
        [19, kallsyms],
        [20, printk],
        [21, cmdlines],
      ])
        option(b, id, u64bytes(abs(at)));
      for (const [id, data] of o.extraOptions ?? []) option(b, id, data);
      if (buffer) option(b, 3, buffer);
      option(b, 0, u64bytes(next));
    });

  // where everything goes: options 1, BUFFER section (header, padding, page-aligned CPU data), options 2
  const opts1At = w.length;
  const bufferOptLen = bufferOption(
    0,
    perCpu.map(() => 0),
  ).length;
  const opts1Len = 16 + firstOptions(0, o.bufferOptionFirst ? new Uint8Array(bufferOptLen) : null).length;
  const bufferAt = opts1At + opts1Len;
  const offsets: number[] = [];
  let at = bufferAt + 16;
  let last = at;
  for (let c = 0; c < o.cpus; c++) {
    at = Math.ceil(at / pageSize) * pageSize;
    offsets.push(at);
    at += perCpu[c].length;
    if (perCpu[c].length > 0) last = at;
  }
  at = last;
  const bufferEnd = at;
  const opts2At = bufferEnd;
  const buffer = bufferOption(bufferAt, offsets);
  if (o.metadataLast) metaBase = opts2At + (o.bufferOptionFirst ? 0 : 16 + 6 + buffer.length + 6 + 8);
  section(0, 0, 'options', firstOptions(o.bufferOptionFirst ? 0 : opts2At, o.bufferOptionFirst ? buffer : null));
  section(
    3,
    flag,
    'buffer flyrecord ',
    bytesOf(little, (b) => {
      let pos = bufferAt + 16;
      for (let c = 0; c < o.cpus; c++) {
        if (perCpu[c].length === 0) continue; // nothing written: no padding for it either
        b.bytes(new Uint8Array(offsets[c] - pos));
        b.bytes(perCpu[c]);
        pos = offsets[c] + perCpu[c].length;
      }
    }),
    true,
  );
  if (!o.bufferOptionFirst)
    section(
      0,
      0,
      'options',
      bytesOf(little, (b) => {
        option(b, 3, buffer);
        option(b, 0, u64bytes(0));
      }),
    );
  if (o.metadataLast) w.bytes(metaOut.concat());
  str('strings');
  const names = bytesOf(little, (b) => [...strings.keys()].forEach((s) => b.str0(s)));
  section(15, flag, 'strings', names);
  u64at(firstOptsAt, opts1At);
  return w.concat();
}
