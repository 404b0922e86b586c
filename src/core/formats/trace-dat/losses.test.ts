import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasTraceCmd, readDat, reportLines, type Got } from '../../testing/trace-dat.ts';
import { inOrder, readEveryWay, readers } from '../../testing/reader-kit.ts';
import { ingestFiles } from '../../testing/test-helpers.ts';
import type { TraceDatResult } from './types.ts';
import { SAMPLE_FORMAT, writeTraceDat, type DatWriteOptions } from './write.ts';
import { writeTraceDatV7 } from './write-v7.ts';

// Issue 34, 17: what a damaged trace.dat lost without a word. Each file is one the project's
// writer wrote, patched at offsets found here by plain walks of the layout (not the reader's);
// trace-cmd report reads it too where it accepts it, and the counts are compared with its own.

const PAGE = 4096;
const events: DatWriteOptions['events'] = [];
for (let i = 0; i < 400; i++) {
  const cpu = i % 4 < 2 ? 0 : 1;
  const ts = 1000 + i * 1000;
  events.push(
    i % 2 ? { kind: 'sample', cpu, ts, pid: 7, value: i, label: 'x' + i } : { kind: 'stack', cpu, ts, pid: 7, ips: [0xffffffff81000010n, 0xffffffff81000020n] },
  );
}
const base: DatWriteOptions = { littleEndian: true, longSize: 8, cpus: 2, comms: [[7, 'seven']], kallsyms: 'ffffffff81000000 T _stext\n', events };

const dir = mkdtempSync(join(tmpdir(), 'dat-losses-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** trace-cmd report's events by CPU and by name (`kernel_stack` included); `mayBeEmpty`: a file trace-cmd may read no event of. */
function report(b: Uint8Array, mayBeEmpty = false): { perCpu: Record<number, number>; byName: Record<string, number>; total: number } {
  const file = join(dir, `f${n++}.dat`);
  writeFileSync(file, b);
  const perCpu: Record<number, number> = {};
  const byName: Record<string, number> = {};
  const lines = reportLines(file, { mayBeEmpty });
  for (const l of lines) {
    perCpu[l.cpu] = (perCpu[l.cpu] ?? 0) + 1;
    byName[l.name] = (byName[l.name] ?? 0) + 1;
  }
  return { perCpu, byName, total: lines.length };
}

/** Our read every way (reader-kit.ts: chunks of 0, 1, 7 and 4093 bytes, renamed `unknown`, every byte counted), and the ingest's report of it. */
function ours(b: Uint8Array): { r: TraceDatResult; got: Got; msgs: string[] } {
  const k = readEveryWay('t.dat', b, { ...readers.traceDat, sizes: [0, 1, 7, 4093], project: inOrder });
  const cap = ingestFiles([['unknown', b]], 7);
  expect(cap.files[0]).toMatchObject({ kind: 'trace_cmd_dat', bytes: { total: b.length, used: k.result.used, unused: k.result.unused } });
  expect(cap.diagnostics.map((d) => d.message)).toEqual(k.diagnostics.map((d) => d.message));
  return { r: k.result, got: k.got, msgs: k.diagnostics.map((d) => `${d.where} ${d.message}`) };
}

const perCpuOf = (got: Got) => {
  const m: Record<number, number> = {};
  for (const e of [...got.events, ...got.stacks]) m[e.cpu] = (m[e.cpu] ?? 0) + 1;
  return m;
};

/** Version 6: the flyrecord CPU table (offset, size per CPU) after the `flyrecord` tag. */
function flyTable(b: Uint8Array): number {
  const tag = new TextEncoder().encode('flyrecord\0');
  for (let o = 0; o + tag.length <= b.length; o++) if (tag.every((c, k) => b[o + k] === c)) return o + tag.length;
  throw new Error('no flyrecord');
}

/** Version 7: the BUFFER option's CPU entries (cpu u32, offset u64, size u64), by a walk of the sections. */
function bufferEntries(b: Uint8Array): number {
  const v = new DataView(b.buffer, b.byteOffset);
  let o = 18;
  while (b[o] !== 0) o++;
  o++;
  while (b[o] !== 0) o++;
  o += 1 + 8;
  const options: number[] = [];
  while (o + 16 <= b.length) {
    if (v.getUint16(o, true) === 0) options.push(o);
    o += 16 + Number(v.getBigUint64(o + 8, true));
  }
  // the second options section starts with BUFFER: id, size, offset(8), "" , "local\0", page size, cpu count
  const at = options[1] + 16;
  expect(v.getUint16(at, true)).toBe(3);
  return at + 6 + 8 + 1 + 6 + 4 + 4;
}

describe.skipIf(!hasTraceCmd)('trace.dat losses said, and read where trace-cmd reads', () => {
  it('the good files: trace-cmd and the reader agree (the patches below start from them)', () => {
    for (const b of [writeTraceDat(base), writeTraceDatV7({ ...base, compression: 'none' }), writeTraceDatV7({ ...base, compression: 'zstd' })]) {
      const t = report(b);
      const o = ours(b);
      expect(o.msgs).toEqual([]);
      expect(perCpuOf(o.got)).toEqual(t.perCpu);
      expect(t.total).toBe(400);
    }
  });

  it('a CPU span one page short: the page left out is named with its offset, not counted used (trace-cmd does not read it either)', () => {
    const b = writeTraceDat(base);
    const t0 = flyTable(b);
    const v = new DataView(b.buffer);
    const size0 = Number(v.getBigUint64(t0 + 8, true));
    const off1 = Number(v.getBigUint64(t0 + 16, true));
    v.setBigUint64(t0 + 8, BigInt(size0 - PAGE), true);
    const t = report(b);
    const o = ours(b);
    expect(t.total).toBeLessThan(400);
    expect(perCpuOf(o.got)).toEqual(t.perCpu);
    expect(o.r.unused).toBe(PAGE);
    const at = (off1 - PAGE).toString(16);
    expect(o.msgs).toEqual([
      `offset 0x${at} ${PAGE} bytes after CPU 0's data, before CPU 1's are not zero padding (the first non-zero at 0x${at}; data no CPU's size covers): not read, as trace-cmd does not`,
    ]);
  });

  it('a CPU span that ends inside a page: the whole page is read, as trace-cmd reads it, and said', () => {
    for (const cpu of [0, 1]) {
      const b = writeTraceDat(base);
      const t0 = flyTable(b);
      const v = new DataView(b.buffer);
      const size = Number(v.getBigUint64(t0 + 16 * cpu + 8, true));
      const off = Number(v.getBigUint64(t0 + 16 * cpu, true));
      v.setBigUint64(t0 + 16 * cpu + 8, BigInt(size - 100), true);
      const t = report(b);
      const o = ours(b);
      expect(t.total).toBe(400);
      expect(perCpuOf(o.got)).toEqual(t.perCpu);
      expect(o.r).toMatchObject({ events: 400, unused: 0 });
      expect(o.msgs).toEqual([
        `offset 0x${(off + size - PAGE).toString(16)} CPU ${cpu}: its size ${size - 100} ends ${PAGE - 100} bytes into a page: the whole page read, as trace-cmd reads it`,
      ]);
    }
  });

  it('two CPUs with the same id: both read and said (trace-cmd reads none of their events)', () => {
    for (const compression of ['none', 'zstd'] as const) {
      const b = writeTraceDatV7({ ...base, compression });
      const e = bufferEntries(b);
      new DataView(b.buffer).setUint32(e + 20, 0, true);
      const t = report(b, true);
      const o = ours(b);
      expect(t.total).toBe(0);
      expect(o.r.events).toBe(400);
      expect(perCpuOf(o.got)).toEqual({ 0: 400 });
      expect(o.msgs).toEqual([
        expect.stringMatching(
          /^offset 0x[0-9a-f]+ option BUFFER \(63 bytes\): CPU id 0 given twice \(entries 0 and 1\): both read, their events all counted as CPU 0's$/,
        ),
      ]);
    }
  });

  it("a CPU pointing at another's data: that data read once (not lost for both), the skipped data named", () => {
    for (const compression of ['none', 'zstd'] as const) {
      const b = writeTraceDatV7({ ...base, compression });
      const e = bufferEntries(b);
      const v = new DataView(b.buffer);
      const off0 = v.getBigUint64(e + 4, true);
      v.setBigUint64(e + 20 + 4, off0, true);
      v.setBigUint64(e + 20 + 12, v.getBigUint64(e + 12, true), true);
      const t = report(b);
      const o = ours(b);
      // trace-cmd reads CPU 0's data twice (once as CPU 1); read forward it is read once, as CPU 0's
      expect(t.perCpu).toEqual({ 0: 200, 1: 200 });
      expect(perCpuOf(o.got)).toEqual({ 0: t.perCpu[0] });
      expect(o.msgs[0]).toBe(
        `offset 0x${off0.toString(16)} CPU 1 data at 0x${off0.toString(16)} is CPU 0's too (the same offset): read once, its records counted as CPU 0's`,
      );
      expect(o.msgs.join('\n')).not.toMatch(/at most -1 fit/);
      expect(o.msgs[1]).toMatch(/BUFFER section at 0x[0-9a-f]+: bytes after its last CPU data/);
    }
  });

  it('a duplicate event format id: said with both names, read by the later format as trace-cmd does', () => {
    const other = SAMPLE_FORMAT.replace('name: sample', 'name: other').replace('ID: 100', 'ID: 4');
    const b = writeTraceDat({ ...base, eventSystems: [['test', [SAMPLE_FORMAT, other]]] });
    const t = report(b);
    const o = ours(b);
    const names: Record<string, number> = {};
    for (const ev of o.got.events) names[ev.name] = (names[ev.name] ?? 0) + 1;
    expect(names).toEqual(t.byName);
    expect(t.byName).toEqual({ other: 200, sample: 200 });
    // where the format file starts: its u64 size is 8 bytes before its text
    const at = Buffer.from(b).indexOf(other) - 8;
    expect(o.msgs).toEqual([
      `offset 0x${at.toString(16)} event format test/other: ID 4 is also ftrace/kernel_stack's: its records are read as other, the later one (as trace-cmd does), not as kernel_stack`,
    ]);
  });

  it('an option over 1 MiB: its first MiB read (an OFFSET applied as trace-cmd applies it), the rest named', () => {
    const b = writeTraceDat(base);
    // a version 6 OFFSET option of 1 MiB + 4090 bytes after the `options` tag: the data moves by a whole number of pages
    const size = (1 << 20) + PAGE - 6;
    const opt = new Uint8Array(6 + size);
    const ov = new DataView(opt.buffer);
    ov.setUint16(0, 7, true);
    ov.setUint32(2, size, true);
    opt.set(new TextEncoder().encode('1000000000'), 6);
    const tag = Buffer.from(b).indexOf('options  \0') + 10;
    const c = new Uint8Array(b.length + opt.length);
    c.set(b.subarray(0, tag));
    c.set(opt, tag);
    c.set(b.subarray(tag), tag + opt.length);
    const t0 = flyTable(c);
    const v = new DataView(c.buffer);
    for (const cpu of [0, 1]) v.setBigUint64(t0 + 16 * cpu, v.getBigUint64(t0 + 16 * cpu, true) + BigInt(opt.length), true);
    const file = join(dir, 'offset.dat');
    writeFileSync(file, c);
    const times = reportLines(file).map((l) => l.ts);
    const o = ours(c);
    expect(times.length).toBe(400);
    expect(times[0]).toBe('1.000001');
    const mine = [...o.got.events, ...o.got.stacks].map((e) => e.ts.toFixed(6)).sort();
    expect(mine).toEqual([...times].sort());
    expect(o.r.unused).toBe(size - (1 << 20));
    expect(o.msgs).toEqual([
      `offset 0x${(tag + 6 + (1 << 20)).toString(16)} option OFFSET of ${size} bytes: only its first ${1 << 20} bytes read, the other ${size - (1 << 20)} not`,
    ]);
  });
});

// Issue 34, 15: an event format of 20,000 fields cost each record a walk of them all (and a
// payload of them all); the fields past MAX_FIELDS are cut with one diagnostic.
describe('an event format with 20,000 fields', () => {
  const COMMON =
    '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n';
  const wide = `name: wide\nID: 200\nformat:\n${COMMON}\n${Array.from({ length: 20_000 }, (_, k) => `\tfield:unsigned char f${k};\toffset:${8 + (k % 8)};\tsize:1;\tsigned:0;\n`).join('')}\nprint fmt: "f0=%u", REC->f0\n`;
  const n = 1000;
  const evs: DatWriteOptions['events'] = Array.from({ length: n }, (_, i) => ({
    kind: 'raw' as const,
    cpu: i % 2,
    ts: 1000 + i * 100,
    pid: 7,
    id: 200,
    data: new Uint8Array([i & 255, 1, 2, 3, 4, 5, 6, 7]),
  }));
  const b = writeTraceDat({ ...base, events: evs, eventSystems: [['test', [SAMPLE_FORMAT, wide]]] });

  it('keeps the first MAX_FIELDS with one diagnostic; what each record costs is bounded by them (counted by payload bytes)', async () => {
    const { MAX_FIELDS } = await import('./format.ts');
    const declared = (wide.match(/^\tfield:/gm) ?? []).length - 4;
    expect(declared).toBe(20_000);
    for (const size of [0, 7]) {
      const { r, got, log } = readDat(b, size);
      expect(r.events).toBe(n);
      expect(r.used).toBe(b.length);
      expect(log.list().map((d) => d.message)).toEqual([
        `event format test/wide: ${declared + 4} fields, the first ${MAX_FIELDS} kept: its records show those`,
      ]);
      // every payload names at most the fields kept: `fK=V` of at most 10 bytes and a blank each
      const bytes = got.events.reduce((k, e) => k + e.payload.length, 0);
      expect(bytes).toBeLessThanOrEqual(n * MAX_FIELDS * 11);
      expect(got.events.every((e) => /^f0=\d+ f1=1 f2=2 /.test(e.payload))).toBe(true);
    }
  });

  it.skipIf(!hasTraceCmd)('trace-cmd report reads the same records', () => {
    const t = report(b);
    expect(t.byName).toEqual({ wide: n });
    expect(perCpuOf(readDat(b, 0).got)).toEqual(t.perCpu);
  });
});
