import { deflateRawSync, gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { DecompressBudget } from '../formats/decompress-budget.ts';
import { inflateWorkForTests, RawInflate } from './inflate.ts';
import { unpack } from './unpack.ts';

// inflate.ts and the gzip/zip readers over it (issue 18): work counted, not timed; the end of a
// deflate stream found through fflate 0.8.3's private state; a failed read named as such.

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) (out.set(p, o), (o += p.length));
  return out;
};
const repeat = (b: Uint8Array, n: number) => concat(Array.from({ length: n }, () => b));
/** `b` in reads of `n` bytes; `fail`: the read after `failAt` bytes rejects with it. */
function chunked(b: Uint8Array, n: number, failAt = Infinity, fail = new Error('disk gone')): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (i >= failAt) return c.error(fail);
      if (i >= b.length) return c.close();
      c.enqueue(b.subarray(i, Math.min(i + n, failAt)));
      i += n;
    },
  });
}
async function readAll(name: string, stream: ReadableStream<Uint8Array>, budget?: ReturnType<DecompressBudget['forFile']>) {
  const reports: string[] = [];
  const files: [string, number][] = [];
  for await (const f of unpack({ name, stream }, (file, m) => reports.push(`${file}: ${m}`), budget)) {
    let n = 0;
    for await (const c of f.stream) n += c.length;
    files.push([f.name, n]);
  }
  return { reports, files };
}
/** bytes copied + pieces pushed while reading `bytes` as `name` in reads of `chunk` bytes */
async function work(name: string, bytes: Uint8Array, chunk: number) {
  inflateWorkForTests.copied = 0;
  inflateWorkForTests.pushes = 0;
  const r = await readAll(name, chunked(bytes, chunk));
  return { ...r, work: inflateWorkForTests.copied + inflateWorkForTests.pushes };
}

describe('work per gzip member and zip entry is constant (counted)', () => {
  // node:zlib's gzip of nothing: 20 bytes, a member that produces no output, so no budget trips
  const empty = new Uint8Array(gzipSync(new Uint8Array(0)));

  it('4x the empty gzip members cost at most 4.5x the work, read in 64 KiB and in 1 MiB pieces (the old code: 5.5x and 12.8x)', async () => {
    expect(empty.length).toBe(20);
    for (const chunk of [1 << 16, 1 << 20]) {
      const small = await work('m.gz', repeat(empty, 2000), chunk);
      const big = await work('m.gz', repeat(empty, 8000), chunk);
      expect(small.reports.concat(big.reports)).toEqual([]);
      expect(big.files).toEqual([['m.gz', 0]]);
      // one piece pushed per member (the count comes from the file's layout: 20 bytes each, 2 of deflate data)
      expect(big.work / small.work, `chunk ${chunk}: ${small.work} -> ${big.work}`).toBeLessThanOrEqual(4.5);
      expect(big.work).toBeGreaterThanOrEqual(8000);
    }
    // work is counted, not timed; the limit only ends a hang (20,000 members take 1-2 s alone, more beside other test files)
  }, 60_000);

  it('4x the tiny deflated zip entries cost at most 4.5x the work (fflate`s writer)', async () => {
    const zip = (n: number) => {
      const files: Record<string, [Uint8Array, { level: 6 }]> = {};
      for (let i = 0; i < n; i++) files[`d/${i}.bin`] = [new Uint8Array([i & 255, 1, 2, 3]), { level: 6 }];
      return zipSync(files);
    };
    const small = await work('e.zip', zip(500), 1 << 20);
    const big = await work('e.zip', zip(2000), 1 << 20);
    expect(big.files.length).toBe(2000);
    expect(big.files.every(([, n]) => n === 4)).toBe(true);
    expect(big.work / small.work, `${small.work} -> ${big.work}`).toBeLessThanOrEqual(4.5);
  }, 60_000);
});

describe('RawInflate finds the end of the deflate data (fflate 0.8.3`s private s.f, s.l, s.p and p)', () => {
  const text = new TextEncoder().encode('stack_id 42 gen 3 comm sshd pid 1234\n'.repeat(300) + 'the end');
  const noise = new Uint8Array(5000).map((_, i) => (i * 7919) % 251);
  const cases: [string, Uint8Array][] = [
    ['fixed/dynamic Huffman', new Uint8Array(deflateRawSync(text))],
    ['stored (level 0)', new Uint8Array(deflateRawSync(noise, { level: 0 }))],
    ['empty', new Uint8Array(deflateRawSync(new Uint8Array(0)))],
  ];
  const trailer = new Uint8Array([0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  for (const [what, deflated] of cases) {
    for (const size of [1, 7, 4096]) {
      it(`${what}, pushed in pieces of ${size}: the tail is exactly the trailer, the output node:zlib's input`, () => {
        const all = concat([deflated, trailer]);
        const out: Uint8Array[] = [];
        const inf = new RawInflate((d) => out.push(d.slice()));
        let tail: Uint8Array | null = null;
        let at = 0;
        for (; at < all.length && !tail; at += size) tail = inf.push(all.subarray(at, at + size));
        expect(tail).not.toBeNull();
        expect(inf.ended).toBe(true);
        // what the last push did not use, then the pieces not pushed
        expect([...concat([tail!, all.subarray(at)])]).toEqual([...trailer]);
        const expected = what === 'empty' ? new Uint8Array(0) : what.startsWith('stored') ? noise : text;
        expect(Buffer.from(concat(out)).equals(Buffer.from(expected))).toBe(true);
      });
    }
  }
});

describe('a read of the file that fails is named, not taken for a cut file', () => {
  const text = new TextEncoder().encode('          <idle>-0       [001] d.h.. 123.456789: <stack_id 42 gen 3>\n'.repeat(2000));
  const gz = new Uint8Array(gzipSync(text));
  const zip = zipSync({ a: text, b: text });
  for (const [name, bytes] of [
    ['f.gz', gz],
    ['f.zip', zip],
  ] as const) {
    // (a zip's read past its central directory is never asked for: it is not failed there)
    for (const failAt of [5, Math.floor(bytes.length / 2), name === 'f.gz' ? bytes.length - 4 : bytes.length - 200]) {
      it(`${name}, the read after ${failAt} bytes failing`, async () => {
        const r = await readAll(name, chunked(bytes, 7, failAt));
        const failed = r.reports.filter((m) => m.includes('reading the file failed') && m.includes('(disk gone)'));
        expect(failed, r.reports.join('\n')).toHaveLength(1);
        expect(r.reports.join('\n')).not.toMatch(/truncated|cut short/);
      });
    }
  }
  it('the same files read whole: no diagnostic (the failures above are the source`s)', async () => {
    expect((await readAll('f.gz', chunked(gz, 7))).reports).toEqual([]);
    expect((await readAll('f.zip', chunked(zip, 7))).reports).toEqual([]);
  });
});

describe('a zip entry stopped by the budget', () => {
  it('is reported once, on the entry, and the archive stops there', async () => {
    const line = new TextEncoder().encode('          <idle>-0       [001] d.h.. 123.456789: <stack_id 42 gen 3>\n');
    const zip = zipSync({ 'big.trace': repeat(line, 60_000), 'after.trace': line }, { level: 9 });
    let read = 0;
    const budget = new DecompressBudget({ maxRatio: 20, ratioFloor: 1 << 16 }).forFile('b.zip', () => read);
    const stream = chunked(zip, 4096).pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ transform: (c, ctl) => ((read += c.length), ctl.enqueue(c)) }));
    const r = await readAll('b.zip', stream, budget);
    const stops = r.reports.filter((m) => m.includes('decompression stopped'));
    expect(stops, r.reports.join('\n')).toHaveLength(1);
    expect(stops[0]).toMatch(/^b\.zip\/big\.trace: /);
    expect(r.files.map(([n]) => n)).toEqual(['b.zip/big.trace']);
  });
});
