import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync, crc32 as zlibCrc32, gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { packTar } from 'modern-tar';
import { describe, expect, it } from 'vitest';
import { DecompressBudget } from '../formats/decompress-budget.ts';
import { crc32 } from '../base/crc32.ts';
import { loadFiles, type NamedBlob } from '../capture/load.ts';
import { summarize } from '../capture/summary.ts';
import { unpack } from './unpack.ts';

// Damaged and hostile gzip and zip files (issue 18): each is a diagnostic that names the reason
// and the offset, what comes before (and, where the container allows, after) still loads, and
// decompression stays inside the budget. Zips come from fflate's writer and from python3's
// zipfile (a second writer: data descriptors, bzip2); CRCs expected from node:zlib's crc32.

const SAMPLES = join(import.meta.dirname, '../../../public/samples');
const stat = new Uint8Array(readFileSync(join(SAMPLES, 'stack_map_stat')));
const kallsyms = new Uint8Array(readFileSync(join(SAMPLES, 'kallsyms')));
const trace = new Uint8Array(readFileSync(join(SAMPLES, 'trace')));
const blob = (name: string, bytes: Uint8Array): NamedBlob => ({ name, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) });
const load = async (files: NamedBlob[], limits = {}) => summarize(await loadFiles(files, { decompressLimits: limits }));
const messages = (s: { diagnostics: { file: string; where: string; message: string }[] }) => s.diagnostics.map((d) => `${d.file} | ${d.where} | ${d.message}`);
const u16at = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset).setUint16(at, v, true);

type PySpec = { entries: [string, Uint8Array][]; stream?: boolean; method?: 'deflated' | 'stored' | 'bzip2' };

/** Zips written by python3's zipfile, in one run; `stream`: to a pipe (no seeking: sizes in data descriptors after each entry). */
function pyZips(specs: PySpec[]): Uint8Array[] {
  const script = `
import sys, zipfile, json, base64, io
class Pipe(io.RawIOBase):
    def __init__(self): self.parts = []
    def writable(self): return True
    def write(self, b): self.parts.append(bytes(b)); return len(b)
outs = []
for spec in json.loads(sys.stdin.read()):
    method = {'deflated': zipfile.ZIP_DEFLATED, 'stored': zipfile.ZIP_STORED, 'bzip2': zipfile.ZIP_BZIP2}[spec['method']]
    out = Pipe() if spec['stream'] else io.BytesIO()
    with zipfile.ZipFile(out, 'w', compression=method) as z:
        for name, data in spec['entries']:
            with z.open(name, 'w') as f: f.write(base64.b64decode(data))
    outs.append(base64.b64encode(b''.join(out.parts) if spec['stream'] else out.getvalue()).decode())
print(json.dumps(outs))
`;
  const input = specs.map((o) => ({
    method: o.method ?? 'deflated',
    stream: o.stream ?? false,
    entries: o.entries.map(([n, d]) => [n, Buffer.from(d).toString('base64')]),
  }));
  const out = JSON.parse(execFileSync('python3', ['-c', script], { input: JSON.stringify(input), maxBuffer: 1 << 28, encoding: 'utf8' })) as string[];
  return out.map((b) => new Uint8Array(Buffer.from(b, 'base64')));
}

const part = trace.subarray(0, trace.lastIndexOf(10, 100_000) + 1);
const [PY_BZIP2, PY_STREAMED, PY_STREAMED_SMALL] = pyZips([
  { entries: [['kallsyms', kallsyms]], method: 'bzip2' },
  {
    entries: [
      ['stack_map_stat', stat],
      ['kallsyms', kallsyms],
      ['trace', part],
    ],
    stream: true,
  },
  {
    entries: [
      ['stack_map_stat', stat],
      ['kallsyms', kallsyms],
    ],
    stream: true,
  },
]);

/** A zip of deflated entries by hand (node:zlib's deflate and CRC): local headers, central directory, end record. */
function handZip(entries: [string, Uint8Array][]): Uint8Array {
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let at = 0;
  for (const [name, data] of entries) {
    const n = new TextEncoder().encode(name);
    const z = new Uint8Array(deflateRawSync(data, { level: 1 }));
    const head = new Uint8Array(30 + n.length);
    const v = new DataView(head.buffer);
    v.setUint32(0, 0x04034b50, true);
    v.setUint16(4, 20, true);
    v.setUint16(8, 8, true);
    v.setUint32(14, zlibCrc32(data) >>> 0, true);
    v.setUint32(18, z.length, true);
    v.setUint32(22, data.length, true);
    v.setUint16(26, n.length, true);
    head.set(n, 30);
    const c = new Uint8Array(46 + n.length);
    const w = new DataView(c.buffer);
    w.setUint32(0, 0x02014b50, true);
    c.set(head.subarray(4, 30), 6);
    w.setUint32(42, at, true);
    c.set(n, 46);
    central.push(c);
    parts.push(head, z);
    at += head.length + z.length;
  }
  const cdLen = central.reduce((k, c) => k + c.length, 0);
  const end = new Uint8Array(22);
  const e = new DataView(end.buffer);
  e.setUint32(0, 0x06054b50, true);
  e.setUint16(8, entries.length, true);
  e.setUint16(10, entries.length, true);
  e.setUint32(12, cdLen, true);
  e.setUint32(16, at, true);
  return new Uint8Array(Buffer.concat([...parts, ...central, end]));
}

describe('zip: damaged headers are named with their offset', () => {
  const two = zipSync({ stack_map_stat: stat, kallsyms }, { level: 0 });
  // the first entry's data ends at 30 + its name + its size (stored): where the second header is
  const second = 30 + 'stack_map_stat'.length + stat.length;

  it('cut at every byte of the first local header and its name: a diagnostic with the offset, never a throw', async () => {
    // (1 to 3 bytes are no zip: `PK` alone is not sniffed as one)
    for (let cut = 4; cut < 30 + 14; cut++) {
      const s = await load([blob('c.zip', two.subarray(0, cut))]);
      const m = messages(s).join('\n');
      expect(m, `cut at ${cut}`).toMatch(
        cut < 30
          ? new RegExp(`c\\.zip \\| offset 0x0 \\| zip archive cut short inside the local file header at offset 0 \\(${cut} of its 30 bytes\\)`)
          : /cut short inside the name of the entry at offset 0 \(a name length of 14, \d+ bytes there\)/,
      );
    }
  });

  it('cut inside the second header: the first entry is whole, the cut named at its offset', async () => {
    const s = await load([blob('c.zip', two.subarray(0, second + 12))]);
    expect(s.files.map((f) => [f.file, f.size])).toEqual([['c.zip/stack_map_stat', stat.length]]);
    expect(messages(s)).toContainEqual(
      `c.zip | offset 0x${second.toString(16)} | zip archive cut short inside the local file header at offset ${second} (12 of its 30 bytes)`,
    );
  });

  it('garbage where the second header should be: named with its bytes and offset, the first entry kept', async () => {
    const b = two.slice();
    b.set([0x47, 0x41, 0x52, 0x42], second);
    const s = await load([blob('g.zip', b)]);
    expect(s.files.map((f) => f.file)).toEqual(['g.zip/stack_map_stat']);
    expect(messages(s)).toContainEqual(
      `g.zip | offset 0x${second.toString(16)} | zip archive is corrupt at offset ${second}: no local file header there (bytes 47 41 52 42); the 1 entries before are kept`,
    );
  });

  it('garbage after the first signature: a diagnostic at offset 0, never a throw or a silent nothing', async () => {
    let x = 5;
    for (let k = 0; k < 40; k++) {
      const b = new Uint8Array(300);
      b.set([0x50, 0x4b, 3, 4]);
      for (let i = 4; i < b.length; i++) b[i] = (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24;
      const s = await load([blob('j.zip', b)]);
      expect(s.diagnostics.length, `case ${k}`).toBeGreaterThan(0);
      expect(
        s.diagnostics.some((d) => d.file.startsWith('j.zip') && d.where.startsWith('offset 0x')),
        messages(s).join('\n'),
      ).toBe(true);
    }
  });

  it('an absurd name length and an absurd extra field length: cut short, with the length given', async () => {
    const b = two.slice();
    u16at(b, 26, 0xffff);
    expect(messages(await load([blob('n.zip', b)]))).toContainEqual(
      expect.stringMatching(
        /^n\.zip \| offset 0x1e \| zip archive cut short inside the name of the entry at offset 0 \(a name length of 65535, \d+ bytes there\)/,
      ),
    );
    const c = two.slice();
    u16at(c, 28, 0xffff);
    expect(messages(await load([blob('e.zip', c)]))).toContainEqual(
      expect.stringMatching(
        /^e\.zip \| offset 0x2c \| zip archive cut short inside the extra field of the entry at offset 0 \(an extra field length of 65535, \d+ bytes there\)/,
      ),
    );
  });

  it('a 4-byte zip, an empty zip, an empty file', async () => {
    expect(messages(await load([blob('4.zip', new Uint8Array([0x50, 0x4b, 3, 4]))]))).toEqual([
      '4.zip | offset 0x0 | zip archive cut short inside the local file header at offset 0 (4 of its 30 bytes)',
    ]);
    const empty = zipSync({});
    expect(empty.length).toBe(22);
    expect(messages(await load([blob('e.zip', empty)]))).toEqual(['e.zip | offset 0x0 | zip archive with no files (an empty archive)']);
    expect(messages(await load([blob('z.zip', new Uint8Array(0))]))).toEqual(['z.zip | file | empty file']);
  });

  it('a method this reader lacks (bzip2, from python) is named, and the next entry still reads', async () => {
    const bz = PY_BZIP2;
    const stored = zipSync({ stack_map_stat: stat }, { level: 0 });
    // the stored zip's local entry after the bzip2 one (both central directories dropped: the reader stops at the first)
    const cd = bz.length - 22 - 46 - 'kallsyms'.length;
    const both = new Uint8Array([...bz.subarray(0, cd), ...stored]);
    const s = await load([blob('m.zip', both)]);
    expect(messages(s)).toContainEqual('m.zip/kallsyms | offset 0x0 | zip entry compressed with method 12 (bzip2), which this reader lacks: not read');
    expect(s.files.map((f) => [f.file, f.size])).toEqual([['m.zip/stack_map_stat', stat.length]]);
  });
});

describe('zip: entries python writes to a pipe (sizes after the data) and CRCs', () => {
  it('data descriptors: every entry read whole, no diagnostic', async () => {
    const z = PY_STREAMED;
    expect(z[6] & 8).toBe(8); // the first entry has its sizes after the data
    const s = await load([blob('p.zip', z)]);
    expect(messages(s)).toEqual([]);
    expect(s.files.map((f) => [f.file, f.size])).toEqual([
      ['p.zip/stack_map_stat', stat.length],
      ['p.zip/kallsyms', kallsyms.length],
      ['p.zip/trace', part.length],
    ]);
  });

  it('a damaged byte in a stored entry: the CRC mismatch named, with node:zlib`s CRC of the original, the data kept', async () => {
    const z = zipSync({ kallsyms, stack_map_stat: stat }, { level: 0 });
    const at = 30 + 'kallsyms'.length + 100;
    const bad = kallsyms.slice();
    bad[100] ^= 0x20;
    z[at] ^= 0x20;
    const want = zlibCrc32(kallsyms) >>> 0;
    const got = zlibCrc32(bad) >>> 0;
    expect(crc32(bad)).toBe(got);
    const h = (n: number) => '0x' + n.toString(16).padStart(8, '0');
    const s = await load([blob('k.zip', z)]);
    expect(messages(s)).toContainEqual(
      expect.stringMatching(
        new RegExp(`^k\\.zip/kallsyms \\| offset 0x[0-9a-f]+ \\| zip entry's CRC-32 is ${h(got)}, its header says ${h(want)} \\(the data is damaged\\)`),
      ),
    );
    expect(s.files.map((f) => [f.file, f.size])).toEqual([
      ['k.zip/kallsyms', kallsyms.length],
      ['k.zip/stack_map_stat', stat.length],
    ]);
  });

  it('a deflate entry cut by a wrong compressed size: named, the next entry still read', async () => {
    const z = zipSync({ kallsyms, stack_map_stat: stat }, { level: 6 });
    const csize = new DataView(z.buffer).getUint32(18, true);
    new DataView(z.buffer).setUint32(18, csize + 7, true);
    const s = await load([blob('w.zip', z)]);
    expect(messages(s)).toEqual([
      expect.stringMatching(
        /^w\.zip\/kallsyms \| offset 0x[0-9a-f]+ \| zip entry's deflate data ends 7 bytes before its compressed size of \d+, where the next header is: read on from there/,
      ),
    ]);
    expect(s.files.map((f) => [f.file, f.size])).toEqual([
      ['w.zip/kallsyms', kallsyms.length],
      ['w.zip/stack_map_stat', stat.length],
    ]);
    // and 7 bytes of junk after the deflate data instead: skipped, named, the next header then found
    const j = zipSync({ kallsyms, stack_map_stat: stat }, { level: 6 });
    const cs = new DataView(j.buffer).getUint32(18, true);
    const dataEnd = 30 + 'kallsyms'.length + cs;
    const junk = new Uint8Array([...j.subarray(0, dataEnd), 1, 2, 3, 4, 5, 6, 7, ...j.subarray(dataEnd)]);
    new DataView(junk.buffer).setUint32(18, cs + 7, true);
    const t = await load([blob('j.zip', junk)]);
    expect(messages(t)).toContainEqual(
      `j.zip/kallsyms | offset 0x${dataEnd.toString(16)} | zip entry's deflate data ends 7 bytes before its compressed size of ${cs + 7} (corrupt?): those bytes are skipped`,
    );
    expect(t.files.map((f) => f.file)).toEqual(['j.zip/kallsyms', 'j.zip/stack_map_stat']);
  });
});

describe('gzip: trailers checked, headers bounded', () => {
  const h = (n: number) => '0x' + n.toString(16).padStart(8, '0');

  it('a CRC-32 and an ISIZE that disagree with the data: each named at its offset, the data kept whole', async () => {
    const g = new Uint8Array(gzipSync(stat));
    const want = zlibCrc32(stat) >>> 0;
    const v = new DataView(g.buffer);
    expect(v.getUint32(g.length - 8, true)).toBe(want);
    const flipped = (want ^ 1) >>> 0;
    v.setUint32(g.length - 8, flipped, true);
    v.setUint32(g.length - 4, stat.length + 5, true);
    const s = await load([blob('s.gz', g)]);
    expect(messages(s)).toEqual([
      `s.gz | offset 0x${(g.length - 8).toString(16)} | gzip member at offset 0: its data's CRC-32 is ${h(want)}, its trailer says ${h(flipped)} (the data is damaged): what was read is kept`,
      `s.gz | offset 0x${(g.length - 4).toString(16)} | gzip member at offset 0: ${stat.length} bytes decompressed, its trailer says ${stat.length + 5} (mod 2^32; damaged or cut?): what was read is kept`,
    ]);
    expect(s.stat?.entries).toBeGreaterThan(0);
  });

  it('a flipped byte in stored deflate data: found by the CRC (node:zlib level 0 stores)', async () => {
    const g = new Uint8Array(gzipSync(kallsyms, { level: 0 }));
    g[10 + 5 + 200] ^= 4; // past the gzip header and the stored block's 5-byte header
    const bad = kallsyms.slice();
    bad[200] ^= 4;
    const s = await load([blob('k.gz', g)]);
    expect(messages(s)).toContainEqual(
      expect.stringContaining(`its data's CRC-32 is ${h(zlibCrc32(bad) >>> 0)}, its trailer says ${h(zlibCrc32(kallsyms) >>> 0)}`),
    );
    expect(s.files[0].size).toBe(kallsyms.length);
  });

  it('cut inside the header and inside the trailer', async () => {
    const g = new Uint8Array(gzipSync(stat));
    for (let cut = 2; cut < 10; cut++) {
      expect(messages(await load([blob('c.gz', g.subarray(0, cut))]))).toContainEqual(
        `c.gz | offset 0x0 | gzip data is truncated (the stream ends inside a member's header, after ${cut} of its 10 bytes)`,
      );
    }
    const s = await load([blob('t.gz', g.subarray(0, g.length - 3))]);
    expect(messages(s)).toContainEqual(
      `t.gz | offset 0x${(g.length - 8).toString(16)} | gzip data is truncated (the stream ends inside the trailer of the member at offset 0)`,
    );
    expect(s.files[0].size).toBe(stat.length);
  });

  it('a file name that never ends is refused at 64 KiB, not gathered (fflate kept every byte and rescanned it)', async () => {
    const b = new Uint8Array(1 << 20).fill(0x41);
    b.set([0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 3]);
    const budget = new DecompressBudget().forFile('n.gz', () => 0);
    const reports: string[] = [];
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled >= b.length) return c.close();
        c.enqueue(b.subarray(pulled, pulled + 4096));
        pulled += 4096;
      },
    });
    for await (const f of unpack({ name: 'n.gz', stream }, (_f, m) => reports.push(m), budget)) await f.stream.cancel();
    expect(reports).toEqual(['gzip member at offset 0: a file name longer than 65,536 bytes (corrupt?): not read']);
    // read up to the limit and a piece past it, not to the end
    expect(pulled).toBeLessThan(80 * 1024);
  });
});

describe('one decompression budget over every layer', () => {
  const line = new TextEncoder().encode('          <idle>-0       [001] d.h.. 123.456789: <stack_id 42 gen 3>\n');
  const repeated = (n: number) => {
    const b = new Uint8Array(line.length * n);
    for (let i = 0; i < n; i++) b.set(line, i * line.length);
    return b;
  };

  it('a zip entry no reader takes is skipped by its size, not inflated (counted: all 32 MiB of zeros inflated before)', async () => {
    const zeros = new Uint8Array(32 << 20);
    const z = handZip([
      ['zeros.bin', zeros],
      ['stack_map_stat', stat],
    ]);
    let read = 0;
    const budget = new DecompressBudget().forFile('z.zip', () => read);
    const seen: [string, number][] = [];
    const reports: string[] = [];
    const stream = new Blob([z as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(c, ctl) {
          read += c.length;
          ctl.enqueue(c);
        },
      }),
    );
    for await (const f of unpack({ name: 'z.zip', stream }, (file, m) => reports.push(`${file}: ${m}`), budget)) {
      let n = 0;
      for await (const c of f.stream) n += c.length;
      seen.push([f.name, n]);
    }
    expect(seen).toEqual([
      ['z.zip/zeros.bin', 16384],
      ['z.zip/stack_map_stat', stat.length],
    ]);
    expect(reports).toEqual(['z.zip/zeros.bin: the decompressed data is not a format this app reads: not decompressed past the first 16,384 bytes']);
    // one piece of deflate input past the sniff window, and the second entry
    expect(budget.produced).toBeLessThan(17 << 20);
    expect(budget.produced).toBeGreaterThanOrEqual(16384 + stat.length);
  });

  it('a tar member no reader takes is cut at the sniff window too', async () => {
    const tar = await packTar([{ header: { name: 'noise', size: 1 << 20, type: 'file' }, body: new Uint8Array(1 << 20).fill(7) }]);
    const s = await load([blob('n.tar', tar)]);
    expect(s.files.map((f) => [f.file, f.size])).toEqual([['n.tar/noise', 16384]]);
    expect(messages(s)).toContainEqual('n.tar/noise | file | the member is not a format this app reads: not read past the first 16,384 bytes');
  });

  it('a gzip bomb inside a zip inside a tar: the layers share one budget, cut with the file named', async () => {
    const inner = new Uint8Array(gzipSync(repeated(200_000), { level: 9 }));
    const zip = zipSync({ 'trace.gz': inner }, { level: 0 });
    const tar = await packTar([{ header: { name: 'in.zip', size: zip.length, type: 'file' }, body: zip }]);
    const s = await load([blob('outer.tar', tar)], { maxRatio: 50, ratioFloor: 1 << 20 });
    const cut = s.diagnostics.find((d) => /decompression stopped after/.test(d.message));
    expect(cut?.file).toBe('outer.tar/in.zip/trace.gz');
    expect(cut?.message).toMatch(/at 50 times the compressed bytes of the file read \([\d,]+ read, past the first 1,048,576 bytes; a decompression bomb\?\)/);
    expect(s.files[0].size).toBeLessThanOrEqual(50 * tar.length);
    // what was decompressed before the cut is read
    expect(s.files[0].kind).toBe('trace_text');
    expect(s.files[0].size).toBeGreaterThan(1 << 20);
  });

  it('two files each under the per-file limit, together over the load`s: the second is cut', async () => {
    const a = new Uint8Array(gzipSync(repeated(30_000)));
    const b = new Uint8Array(gzipSync(repeated(30_000)));
    const each = repeated(30_000).length;
    const s = await load([blob('a.gz', a), blob('b.gz', b)], { captureBytes: Math.floor(each * 1.5), maxRatio: 1e6 });
    expect(s.files.map((f) => f.file)).toEqual(['a.gz', 'b.gz']);
    expect(s.files[0].size).toBe(each);
    expect(s.files[1].size).toBe(Math.floor(each * 1.5) - each);
    expect(messages(s)).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^b\\.gz \\| offset 0x[0-9a-f]+ \\| decompression stopped after ${(Math.floor(each * 1.5) - each).toLocaleString('en-US')} bytes, at the limit of ${Math.floor(each * 1.5).toLocaleString('en-US')} decompressed bytes for one load`,
        ),
      ),
    );
  });
});

describe('the gzip and zip readers at any chunk size, under any name', () => {
  /** Every file `bytes` stands for, fed in chunks of `size` bytes, with the diagnostics. */
  async function unpackAt(name: string, bytes: Uint8Array, size: number) {
    let o = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (o >= bytes.length) return c.close();
        c.enqueue(bytes.slice(o, o + size));
        o += size;
      },
    });
    const reports: string[] = [];
    const files: [string, string][] = [];
    for await (const f of unpack({ name, stream }, (file, m, at) => reports.push(`${file} ${at ?? ''} ${m}`))) {
      const parts: Uint8Array[] = [];
      for await (const c of f.stream) parts.push(c);
      files.push([f.name, Buffer.concat(parts).toString('latin1')]);
    }
    return { files, reports };
  }

  it('a two-member gzip with a bad CRC and a data-descriptor zip read the same in 1, 7 and 4096-byte chunks, named `unknown`', async () => {
    const g = new Uint8Array(Buffer.concat([gzipSync(stat), gzipSync(kallsyms)]));
    const crcAt = gzipSync(stat).length - 8;
    g[crcAt] ^= 1;
    const z = PY_STREAMED_SMALL;
    const whole = [await unpackAt('unknown', g, 1 << 20), await unpackAt('unknown', z, 1 << 20)];
    expect(whole[0].files).toEqual([['unknown', Buffer.concat([stat, kallsyms]).toString('latin1')]]);
    expect(whole[0].reports).toEqual([expect.stringMatching(new RegExp(`^unknown ${crcAt} gzip member at offset 0: its data's CRC-32`))]);
    expect(whole[1].files).toEqual([
      ['unknown/stack_map_stat', Buffer.from(stat).toString('latin1')],
      ['unknown/kallsyms', Buffer.from(kallsyms).toString('latin1')],
    ]);
    expect(whole[1].reports).toEqual([]);
    for (const size of [1, 7, 4096]) {
      expect(await unpackAt('unknown', g, size), `gzip at ${size}`).toEqual(whole[0]);
      expect(await unpackAt('unknown', z, size), `zip at ${size}`).toEqual(whole[1]);
    }
  });
});
