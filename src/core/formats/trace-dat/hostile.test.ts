import { describe, expect, it } from 'vitest';
import { DecompressBudget, type DecompressLimits } from '../decompress-budget.ts';
import { DiagnosticLog } from '../diagnostics.ts';
import { createTraceDatParser } from './trace-dat.ts';
import { collector, readDat, zstdBombDat } from '../../testing/trace-dat.ts';
import type { DatWriteOptions } from './write.ts';
import { writeTraceDatV7, type DatV7Options } from './write-v7.ts';

// Damaged version 7 files, each made from a good one by patching bytes found with the plain
// section walk below (not the reader's): every one is a diagnostic with an offset and a reason,
// the read ends, and every byte is counted used or unused.

const events: DatWriteOptions['events'] = Array.from({ length: 120 }, (_, i) => ({
  kind: 'sample' as const,
  cpu: i % 2,
  ts: 1000 + i * 977,
  pid: 7,
  value: i,
  label: 'x' + i,
}));

function file(little: boolean, compression: DatV7Options['compression']): Uint8Array {
  return writeTraceDatV7({ littleEndian: little, longSize: 8, cpus: 2, comms: [[7, 'seven']], kallsyms: 'ffffffff81000000 T _stext\n', events, compression });
}

interface Sec {
  at: number;
  id: number;
  flags: number;
  size: number;
}

/** The sections of a version 7 file, walked by their headers. */
function sections(b: Uint8Array, little: boolean): { sections: Sec[]; firstOptionsAt: number } {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let o = 18;
  while (b[o] !== 0) o++;
  o++;
  while (b[o] !== 0) o++;
  o++;
  const firstOptionsAt = Number(v.getBigUint64(o, little));
  o += 8;
  const out: Sec[] = [];
  while (o + 16 <= b.length) {
    const s = { at: o, id: v.getUint16(o, little), flags: v.getUint16(o + 2, little), size: Number(v.getBigUint64(o + 8, little)) };
    out.push(s);
    o += 16 + s.size;
  }
  return { sections: out, firstOptionsAt };
}

function check(bytes: Uint8Array, want: RegExp): string[] {
  const { r, log } = readDat(bytes, 7);
  expect(r.total).toBe(bytes.length);
  expect(r.used + r.unused).toBe(bytes.length);
  const msgs = log.list().map((d) => `${d.where ?? ''} ${d.message}`);
  expect(msgs).toContainEqual(expect.stringMatching(want));
  return msgs;
}

for (const little of [true, false]) {
  describe(`hostile version 7 files (${little ? 'little' : 'big'} endian)`, () => {
    const zstd = file(little, 'zstd');
    const { sections: secs } = sections(zstd, little);
    const put32 = (b: Uint8Array, at: number, x: number) => new DataView(b.buffer, b.byteOffset).setUint32(at, x, little);
    const put64 = (b: Uint8Array, at: number, x: number) => new DataView(b.buffer, b.byteOffset).setBigUint64(at, BigInt(x), little);

    it('the good file reads whole (the patches below start from it)', () => {
      const { r, log } = readDat(zstd, 0);
      expect(log.list()).toEqual([]);
      expect(r).toMatchObject({ events: 120, used: zstd.length });
    });

    it('cut inside each section: a diagnostic that it ends there', () => {
      for (const s of secs) {
        const cut = zstd.slice(0, s.at + 16 + Math.floor(s.size / 2));
        check(cut, /ends inside|cut short/);
      }
    });

    it('a compressed size beyond its section and the file', () => {
      const kall = secs.find((s) => s.id === 19)!;
      const b = zstd.slice();
      put32(b, kall.at + 16, 0x7ffffff0);
      check(b, /compressed size 2147483632 goes beyond the \d+ bytes left of the section/);
    });

    it('a huge declared uncompressed size: a section block, and a flyrecord chunk', () => {
      const kall = secs.find((s) => s.id === 19)!;
      const b = zstd.slice();
      put32(b, kall.at + 20, 0xffffffff);
      check(b, /uncompressed size 4294967295 is beyond 268435456 bytes/);
      const buf = secs.find((s) => s.id === 3)!;
      const c = zstd.slice();
      // the first CPU's data starts at the first page boundary after the section header: count, csize, usize
      const first = Math.ceil((buf.at + 16) / 4096) * 4096;
      put32(c, first + 8, 0xffffffff);
      const msgs = check(c, /CPU 0 chunk 0 .*uncompressed size 4294967295 is not a whole number|CPU 0 chunk 0 .*beyond 256 pages/);
      expect(msgs.join('\n')).toMatch(/0x[0-9a-f]+/);
    });

    it('a zstd frame declaring a huge window allocates nothing for it: it decodes into the declared size, and says it is short', () => {
      const kall = secs.find((s) => s.id === 19)!;
      const b = zstd.slice();
      // a frame of its own: magic, FHD 0 (windowed, no content size), window descriptor 0xf8 (2^41
      // bytes), one empty last raw block; the block's compressed size says 9, the rest of the section is left over
      put32(b, kall.at + 16, 9);
      b.set([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 0x01, 0x00, 0x00], kall.at + 24);
      check(b, /KALLSYMS.*decompresses to 0 bytes, not the \d+ it declares/);
    });

    it('a loop in the options chain ends (pointing back to the first options section, and to itself)', () => {
      const opts = secs.filter((s) => s.id === 0);
      expect(opts.length).toBe(2);
      for (const target of [opts[0].at, opts[1].at]) {
        const b = zstd.slice();
        // DONE is the last option of the second options section: its 8 bytes end the section
        put64(b, opts[1].at + 16 + opts[1].size - 8, target);
        check(b, /goes back \(a loop in the chain\): not followed/);
      }
    });

    it('an unknown section id is skipped by its size, the rest still read', () => {
      const strings = secs.find((s) => s.id === 15)!;
      const b = zstd.slice();
      new DataView(b.buffer).setUint16(strings.at, 99, little);
      const msgs = check(b, /^offset 0x[0-9a-f]+ section id 99: not a section id trace-cmd defines, skipped/);
      expect(msgs.length).toBe(1);
      expect(readDat(b, 0).r.events).toBe(120);
    });

    it('20000 sections of an unknown id, one after another: read to the end, each counted', () => {
      const head = zstd.subarray(0, secs[0].at);
      const n = 20000;
      const b = new Uint8Array(head.length + n * 16);
      b.set(head);
      for (let i = 0; i < n; i++) new DataView(b.buffer).setUint16(head.length + i * 16, 77, little);
      const { r, log } = readDat(b, 64);
      expect(r).toMatchObject({ total: b.length, used: b.length });
      expect(log.list().reduce((k, d) => k + ((d as { count?: number }).count ?? 1), 0)).toBeGreaterThanOrEqual(n);
    });

    it('a section header with unknown flags: the rest is reported, not guessed at', () => {
      const b = zstd.slice();
      new DataView(b.buffer).setUint16(secs[2].at + 2, 0x8001, little);
      check(b, /no section header at 0x[0-9a-f]+ \(id 18, flags 0x8001\)/);
    });

    it('an unknown codec is named; what is not compressed (the options) still loads', () => {
      const b = zstd.slice();
      const at = 10 + 2 + 6; // after the magic, "7\0" and the 6 header bytes: the name `zstd`
      expect(new TextDecoder().decode(b.subarray(at, at + 4))).toBe('zstd');
      b.set(new TextEncoder().encode('lz4x'), at);
      const msgs = check(b, /compression `lz4x` 1\.5\.0: no codec for it here/);
      expect(msgs.some((m) => /compressed with `lz4x`, no codec for it/.test(m))).toBe(true);
      expect(readDat(b, 0).r.cpus).toBe(2); // from the CPUCOUNT option
    });

    it('a BUFFER option whose CPU count does not fit its bytes, and no option for the data', () => {
      const opts = secs.filter((s) => s.id === 0);
      const b = zstd.slice();
      // the second options section holds BUFFER first: id, size, offset(8), "" , "local\0", page size, cpus
      const cpusAt = opts[1].at + 16 + 6 + 8 + 1 + 6 + 4;
      put32(b, cpusAt, 1_000_000_000);
      const msgs = check(b, /option BUFFER \(\d+ bytes\): 1000000000 CPUs do not fit/);
      expect(msgs).toContainEqual(expect.stringMatching(/BUFFER section at 0x[0-9a-f]+: no BUFFER option gives its CPUs, not read/));
    });
  });
}

const zstdBomb = (little: boolean, chunks: number) => zstdBombDat(little, chunks, events);

function readBudgeted(bytes: Uint8Array, limits: Partial<DecompressLimits>) {
  const log = new DiagnosticLog('bomb.dat');
  const { sink, got } = collector();
  let pushed = 0;
  const inflate = new DecompressBudget(limits).forFile('bomb.dat', () => pushed);
  const p = createTraceDatParser({ file: 'bomb.dat', diagnostics: log, inflate }, sink);
  for (let i = 0; i < bytes.length; i += 4096) {
    const c = bytes.subarray(i, i + 4096);
    pushed += c.length;
    p.push(c);
  }
  return { r: p.end(), got, log, inflate };
}

describe('decompression bombs in a version 7 file', () => {
  it('zstd chunks of 256 zero pages in 41 bytes each (25,000:1): cut at the budget with one diagnostic, the bytes all counted', () => {
    const chunks = 40;
    const bytes = zstdBomb(true, chunks);
    expect(bytes.length).toBeLessThan(16384);
    const floor = 8 << 20;
    const { r, log, inflate } = readBudgeted(bytes, { ratioFloor: floor });
    expect(r.used + r.unused).toBe(bytes.length);
    const cut = log
      .list()
      .filter((d) =>
        /compressed block not decompressed: it would pass 200 times the compressed bytes of the file read \(past the first 8,388,608 bytes; a decompression bomb\?\)/.test(
          d.message,
        ),
      );
    expect(cut).toHaveLength(1);
    // 8 MiB: the metadata sections, then 7 whole chunks of 1 MiB; the other 2 x 40 - 7 chunks are reported, not decompressed
    const meta = inflate.produced - 7 * (1 << 20);
    expect(meta).toBeGreaterThan(0);
    expect(meta).toBeLessThan(1 << 20);
    expect(cut[0].count).toBe(2 * chunks - 7);
    expect(cut[0].where).toMatch(/^offsets 0x[0-9a-f]+/);
  });

  it('with the default budget: a 20 KB file declaring 160 MB stops at the 64 MiB floor', () => {
    const bytes = zstdBomb(false, 80);
    const { r, log, inflate } = readBudgeted(bytes, {});
    expect(r.used + r.unused).toBe(bytes.length);
    expect(inflate.produced).toBeLessThanOrEqual(64 << 20);
    expect(inflate.produced).toBeGreaterThan(63 << 20);
    const cut = log.list().find((d) => /compressed block not decompressed: it would pass 200 times/.test(d.message));
    expect(cut?.count).toBe(160 - 63);
  });

  it('a metadata section declaring 200 MB is refused before anything is allocated, the rest still read', () => {
    const b = file(true, 'zstd');
    const kall = sections(b, true).sections.find((s) => s.id === 19)!;
    new DataView(b.buffer).setUint32(kall.at + 20, 200 << 20, true);
    const { r, log } = readBudgeted(b, {});
    expect(r.events).toBe(120);
    expect(log.list().map((d) => d.message)).toContainEqual(
      expect.stringMatching(/compressed block not decompressed: it would pass 200 times the compressed bytes of the file read/),
    );
  });

  it('a zlib section that inflates past what it declares is stopped there', () => {
    const kallsyms = 'ffffffff81000000 T _stext\n'.repeat(200_000); // 5.2 MB, a few KB as zlib
    const b = writeTraceDatV7({ littleEndian: true, longSize: 8, cpus: 2, comms: [[7, 'seven']], kallsyms, events, compression: 'zlib' });
    const kall = sections(b, true).sections.find((s) => s.id === 19)!;
    new DataView(b.buffer).setUint32(kall.at + 20, 1000, true);
    const { r, log } = readBudgeted(b, {});
    expect(r.events).toBe(120);
    expect(log.list().map((d) => d.message)).toContainEqual(expect.stringMatching(/KALLSYMS.*decompresses to more than the 1000 bytes it declares/));
  });
});
