// The stack map's own record in a trace.dat: `stack_id` entries (v7: a 4-byte id, v8: a u64
// cookie gen << 32 | slot) written by the writers, read back at every chunk size, joined to the
// event before them on their CPU and resolved against dumps as the text reader's
// `<stack_id N [gen G]>` lines are. The expected values are made here from the input by plain
// code (what was written, CPU by CPU), and the text form of the same records through the text
// reader; `trace-cmd report`'s reading of these files: src/cli/simulate-trace-dat.test.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { summarize } from '../../capture/summary.ts';
import { RecordKind } from '../../capture/trace-columns-data.ts';
import { CHUNK_SIZES } from '../../testing/formats.ts';
import { ingestFiles } from '../../testing/test-helpers.ts';
import { readDat } from '../../testing/trace-dat.ts';
import { readEveryWay, readers } from '../../testing/reader-kit.ts';
import { writeStackMapBin } from '../stack-map-write.ts';
import { writeTraceText, type TraceTextItem } from '../trace-text-write.ts';
import { stackIdFormatText, writeTraceDat, type DatWriteEvent, type DatWriteOptions } from './write.ts';
import { writeTraceDatV7, type DatV7Options } from './write-v7.ts';

type Abi = 'v7' | 'v8';
type Variant = { version: 6 | 7; compression: DatV7Options['compression'] };

const write = (o: DatWriteOptions, v: Variant) => (v.version === 6 ? writeTraceDat(o) : writeTraceDatV7({ ...o, compression: v.compression }));

const caseArb = fc
  .record({
    abi: fc.constantFrom<Abi>('v7', 'v8'),
    littleEndian: fc.boolean(),
    longSize: fc.constantFrom(4 as const, 8 as const),
    cpus: fc.integer({ min: 1, max: 3 }),
    pageSize: fc.constantFrom(256, 4096),
    version: fc.constantFrom(6 as const, 7 as const),
    compression: fc.constantFrom('none' as const, 'zlib' as const, 'zstd' as const),
  })
  .chain((h) => {
    const cpu = fc.integer({ min: 0, max: h.cpus - 1 });
    const ts = fc.integer({ min: 0, max: 2 ** 36 });
    const u32 = fc.nat({ max: 0xffffffff });
    const sample = fc.record({
      kind: fc.constant('sample' as const),
      cpu,
      ts,
      pid: fc.constantFrom(0, 7, 42),
      value: fc.integer(),
      label: fc.stringMatching(/^[a-z]{0,8}$/),
    });
    const id = fc.record({
      kind: fc.constant('stack_id' as const),
      cpu,
      ts,
      pid: fc.constantFrom(7, 42),
      slot: u32,
      generation: h.abi === 'v8' ? u32 : fc.constant(null),
    });
    const ip = h.longSize === 8 ? fc.bigInt({ min: 1n, max: 2n ** 64n - 2n }) : fc.bigInt({ min: 1n, max: 2n ** 32n - 2n });
    const stack = fc.record({ kind: fc.constant('stack' as const), cpu, ts, pid: fc.constantFrom(7, 42), ips: fc.array(ip, { minLength: 1, maxLength: 6 }) });
    return fc.record({ h: fc.constant(h), events: fc.array(fc.oneof(sample, id, id, stack), { maxLength: 50 }) });
  })
  .map(({ h, events }) => ({
    o: {
      littleEndian: h.littleEndian,
      longSize: h.longSize,
      cpus: h.cpus,
      pageSize: h.pageSize,
      comms: [
        [7, 'seven'],
        [42, 'answer'],
      ],
      stackIdAbi: h.abi,
      events,
    } as DatWriteOptions,
    v: { version: h.version, compression: h.compression } as Variant,
  }));

/** What the reader should send, from the input: CPU by CPU, each by time (the writer's page order). */
function expected(o: DatWriteOptions): string[] {
  const out: string[] = [];
  for (let cpu = 0; cpu < o.cpus; cpu++) {
    for (const e of o.events.filter((x) => x.cpu === cpu).sort((a, b) => a.ts - b.ts)) {
      const head = `${cpu} ${e.ts / 1e9} ${e.pid}`;
      if (e.kind === 'sample') out.push(`e ${head} sample value=${e.value} label=${e.label}`);
      else if (e.kind === 'stack_id') out.push(`c ${head} ${e.slot} ${e.generation}`);
      else if (e.kind === 'stack') out.push(`s ${head} ${e.ips.map((ip) => '0x' + ip.toString(16)).join(',')}`);
    }
  }
  return out;
}

describe('stack_id entries written by the writers (v6 and v7 files, v7 ids and v8 cookies)', () => {
  it('are read back as cookie records, in order with the events, any chunking, every byte used', () => {
    fc.assert(
      fc.property(caseArb, fc.constantFrom(...CHUNK_SIZES, 3), ({ o, v }, size) => {
        const bytes = write(o, v);
        const { r, got, log } = readDat(bytes, size);
        expect(log.list()).toEqual([]);
        expect(got.order).toEqual(expected(o));
        for (const s of got.stacks.filter((x) => x.kind === 'cookie')) {
          expect(s.frames).toBeNull();
          expect(s.comm).toBe(s.pid === 7 ? 'seven' : 'answer');
        }
        expect(r).toMatchObject({ total: bytes.length, used: bytes.length, unused: 0, events: o.events.length });
      }),
      { numRuns: 60 },
    );
  }, 60_000);

  it('a truncated or damaged file of them: diagnostics, never a throw, every byte counted', () => {
    fc.assert(
      fc.property(
        caseArb,
        fc.nat(),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        ({ o, v }, cut, flips, cuts) => {
          const whole = write(o, v);
          const bytes = whole.slice(0, cut % (whole.length + 1));
          for (const [at, b] of flips) if (bytes.length) bytes[at % bytes.length] = b;
          const { r, got } = readDat(bytes, cuts);
          expect(r.used + r.unused).toBe(bytes.length);
          for (const c of got.stacks)
            if (c.kind === 'cookie')
              expect(c.slot >= 0 && c.slot <= 0xffffffff && (c.generation === null || (c.generation >= 0 && c.generation <= 0xffffffff))).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);

  it('either field name is read by its size: `u64 stack_id` as a cookie, `int stack_cookie` as an id', () => {
    const events: DatWriteEvent[] = [
      { kind: 'sample', cpu: 0, ts: 100, pid: 7, value: 1, label: 'a' },
      { kind: 'stack_id', cpu: 0, ts: 100, pid: 7, slot: 42, generation: 3 },
    ];
    const v8AsId = stackIdFormatText('v8').replace('u64 stack_cookie', 'u64 stack_id').replaceAll('REC->stack_cookie', 'REC->stack_id');
    const a = readDat(writeTraceDat({ littleEndian: false, longSize: 8, cpus: 1, comms: [[7, 'seven']], stackIdAbi: 'v8', stackIdFormat: v8AsId, events }), 1);
    expect(a.log.list()).toEqual([]);
    expect(a.got.stacks.map((s) => [s.kind, s.slot, s.generation])).toEqual([['cookie', 42, 3]]);
    const v7AsCookie = stackIdFormatText('v7').replace('int stack_id', 'int stack_cookie').replace('REC->stack_id', 'REC->stack_cookie');
    const b = readDat(
      writeTraceDat({
        littleEndian: true,
        longSize: 4,
        cpus: 1,
        comms: [[7, 'seven']],
        stackIdAbi: 'v7',
        stackIdFormat: v7AsCookie,
        events: [events[0], { kind: 'stack_id', cpu: 0, ts: 100, pid: 7, slot: 42, generation: null }],
      }),
      1,
    );
    expect(b.log.list()).toEqual([]);
    expect(b.got.stacks.map((s) => [s.kind, s.slot, s.generation])).toEqual([['cookie', 42, null]]);
  });

  it("a field of another size, or one the record does not reach: a diagnostic at the record's offset, the bytes still counted", () => {
    const events: DatWriteEvent[] = [
      { kind: 'sample', cpu: 0, ts: 100, pid: 7, value: 1, label: 'a' },
      { kind: 'stack_id', cpu: 0, ts: 200, pid: 7, slot: 9, generation: null },
      { kind: 'stack_id', cpu: 0, ts: 300, pid: 7, slot: 10, generation: null },
    ];
    /** the file offsets of the stack_id records' event headers, found here by a plain byte search */
    const headersOf = (bytes: Uint8Array): number[] => {
      const out: number[] = [];
      // a record: u16 type 20 (little-endian), flags 0x01, preempt 1, pid 7; its 4-byte header before it
      for (let i = 4; i + 8 <= bytes.length; i++)
        if (bytes[i] === 20 && bytes[i + 1] === 0 && bytes[i + 2] === 1 && bytes[i + 3] === 1 && bytes[i + 4] === 7 && bytes[i + 5] === 0) out.push(i - 4);
      return out;
    };
    const cases: [string, string][] = [
      ['a 2-byte field', stackIdFormatText('v7').replace('stack_id;\toffset:8;\tsize:4;', 'stack_id;\toffset:8;\tsize:2;')],
      ['a v8 format over 12-byte records', stackIdFormatText('v8')],
    ];
    for (const [what, fmt] of cases) {
      const bytes = writeTraceDat({ littleEndian: true, longSize: 8, cpus: 1, comms: [[7, 'seven']], stackIdAbi: 'v7', stackIdFormat: fmt, events });
      const at = headersOf(bytes);
      expect(at).toHaveLength(2);
      // every way: reader-kit.ts at chunks of 0, 1 and 7 bytes, renamed `unknown`, every byte counted
      const { result: r, got, diagnostics: d } = readEveryWay('t.dat', bytes, { ...readers.traceDat, sizes: [0, 1, 7] });
      expect(got.stacks).toEqual([]);
      expect(got.events).toHaveLength(1);
      expect(d).toHaveLength(1);
      expect(d[0].where).toBe(`offsets ${at.map((x) => '0x' + x.toString(16)).join(', ')}`);
      expect(d[0].message).toMatch(
        what === 'a 2-byte field' ? /stack_id of 2 bytes, not 4 .* or 8/ : /record of 12 bytes, its stack_cookie \(offset 8, 8 bytes\) beyond it/,
      );
      expect(r).toMatchObject({ total: bytes.length, used: bytes.length, unused: 0 });
    }
  });
});

// ---------------------------------------------------------------- the same capture as text

const KALLSYMS = 'ffffffff81000000 T _stext\nffffffff81000100 t do_work\nffffffff81000200 T schedule\nffffffff81000300 T vfs_read\nffffffff81000400 T _etext\n';
const SYMS: [bigint, string][] = KALLSYMS.trim()
  .split('\n')
  .map((l) => [BigInt('0x' + l.split(' ')[0]), l.split(' ')[2]]);
/** `sym+0xoff/0xsize` as the kernel prints a frame, by a plain lookup in KALLSYMS */
const printed = (ip: bigint) => {
  let i = 0;
  while (i + 1 < SYMS.length && SYMS[i + 1][0] <= ip) i++;
  return `${SYMS[i][1]}+0x${(ip - SYMS[i][0]).toString(16)}/0x${(SYMS[i + 1][0] - SYMS[i][0]).toString(16)}`;
};

/** A small capture with a reset: v8 cookies of generations 1 and 2 (or v7 ids), full stacks, events on two CPUs. */
function capture(abi: Abi) {
  const ip = (n: number) => 0xffffffff81000000n + BigInt(n);
  const stacks = [[ip(0x104), ip(0x210)], [ip(0x220), ip(0x308), ip(0x10)], [ip(0x130)]];
  const events: DatWriteEvent[] = [];
  const ids: { cpu: number; ts: number; slot: number; generation: number | null }[] = [];
  let ts = 1_000_000;
  for (let i = 0; i < 40; i++) {
    const cpu = i % 2;
    ts += 1000 * (1 + (i % 3));
    events.push({ kind: 'sample', cpu, ts, pid: 7, value: i, label: 'x' });
    if (i % 7 === 6) events.push({ kind: 'stack', cpu, ts, pid: 7, ips: stacks[i % 3] });
    else if (i % 5 !== 4) {
      const id = { cpu, ts, slot: i % 4, generation: abi === 'v8' ? (i < 20 ? 1 : 2) : null };
      ids.push(id);
      events.push({ kind: 'stack_id', pid: 7, ...id });
    }
  }
  // a cookie before any event on CPU 2: an orphan in both forms
  events.push({ kind: 'stack_id', cpu: 2, ts: 500, pid: 7, slot: 1, generation: abi === 'v8' ? 1 : null });
  ids.push({ cpu: 2, ts: 500, slot: 1, generation: abi === 'v8' ? 1 : null });
  const o: DatWriteOptions = { littleEndian: true, longSize: 8, cpus: 3, comms: [[7, 'seven']], kallsyms: KALLSYMS, stackIdAbi: abi, events };
  const items: TraceTextItem[] = [...events]
    .sort((a, b) => a.ts - b.ts)
    .map((e): TraceTextItem => {
      const base = { comm: 'seven', pid: e.pid, cpu: e.cpu, ts: e.ts / 1e9 };
      if (e.kind === 'sample') return { type: 'event', ...base, tgid: null, flags: 'd..1', name: 'sample', payload: `value=${e.value} label=${e.label}` };
      if (e.kind === 'stack') return { type: 'stack', kind: 'full', ...base, slot: -1, generation: null, frames: e.ips.map(printed) };
      if (e.kind === 'stack_id') return { type: 'stack', kind: 'cookie', ...base, slot: e.slot, generation: e.generation, frames: null };
      throw new Error('not written here');
    });
  // dumps: slots 0..2 of each generation (slot 3 missing), generation 2's slots hold other stacks
  const dumpOf = (gen: number | null) =>
    writeStackMapBin({
      version: abi === 'v8' ? 2 : 1,
      generation: gen,
      littleEndian: true,
      records: [0, 1, 2].map((s) => ({ slot: s, refCount: 1, ips: stacks[(s + (gen ?? 1)) % 3] })),
    });
  const dumps: [string, Uint8Array][] =
    abi === 'v8'
      ? [
          ['stack_map_bin.1.gen1', dumpOf(1)],
          ['stack_map_bin.2.gen2', dumpOf(2)],
        ]
      : [['stack_map_bin.1', dumpOf(null)]];
  return {
    o,
    text: writeTraceText(items, { cpus: 3 }),
    dumps,
    ids,
    fullStacks: events.filter((e) => e.kind === 'stack').length,
    samples: events.filter((e) => e.kind === 'sample').length,
  };
}

describe('a trace.dat capture with dumps resolves like its text form', () => {
  for (const abi of ['v7', 'v8'] as const) {
    for (const chunk of [0, 1, 7]) {
      it(`${abi}: the same summary, renamed \`unknown\`, chunks of ${chunk || 'all'}`, () => {
        const c = capture(abi);
        const dat = writeTraceDatV7({ ...c.o, compression: 'zstd' });
        const side: [string, Uint8Array | string][] = [...c.dumps, ['kallsyms', KALLSYMS]];
        const fromDat = ingestFiles([['unknown', dat], ...side], chunk);
        const fromText = ingestFiles([['trace', c.text], ...side], chunk);
        expect(fromDat.files[0]).toMatchObject({ kind: 'trace_cmd_dat', bytes: { total: dat.length, used: dat.length, unused: 0 } });
        expect(fromDat.diagnostics).toEqual([]);
        const a = summarize(fromDat);
        const b = summarize(fromText);
        const keys = ['events', 'cookies', 'fullStacks', 'resolved', 'unresolved', 'generations', 'uniqueStacks', 'top'] as const;
        // (stacks of the same count in any order: the text is read in time order, the trace.dat CPU by CPU)
        const ties = (top: typeof a.top) => [...top].sort((x, y) => y.count - x.count || (x.frames.join(';') < y.frames.join(';') ? -1 : 1));
        for (const k of keys) expect([k, k === 'top' ? ties(a.top) : a[k]]).toEqual([k, k === 'top' ? ties(b.top) : b[k]]);
        // and by a plain count of what was written: a cookie resolves when its slot is in its generation's dump
        const resolvable = c.ids.filter((x) => x.slot <= 2).length;
        expect([a.events, a.cookies, a.fullStacks, a.resolved, a.unresolved]).toEqual([
          c.samples,
          c.ids.length,
          c.fullStacks,
          resolvable,
          c.ids.length - resolvable,
        ]);
        expect(a.generations).toEqual(abi === 'v8' ? [1, 2] : []);
        // each cookie joined to the event before it on its CPU (the orphan on CPU 2 to none), found here in the input
        const want = c.ids.map((x) => {
          const before = c.o.events.filter((e) => e.kind === 'sample' && e.cpu === x.cpu && e.ts <= x.ts).at(-1);
          return `${x.cpu} ${x.ts} ${x.slot} -> ${before ? before.ts : 'none'}`;
        });
        const t = fromDat.trace;
        const joined: string[] = [];
        for (let i = 0; i < t.recordCount; i++) {
          const kind = t.recKind.get(i);
          if (kind !== RecordKind.CookieV7 && kind !== RecordKind.CookieV8) continue;
          expect(kind).toBe(abi === 'v8' ? RecordKind.CookieV8 : RecordKind.CookieV7);
          const e = t.recEvent.get(i);
          joined.push(`${t.recCpu.get(i)} ${Math.round(t.recTs.get(i) * 1e9)} ${t.recSlot.get(i)} -> ${e < 0 ? 'none' : Math.round(t.evTs.get(e) * 1e9)}`);
        }
        expect(joined.sort()).toEqual(want.sort());
        expect(want.filter((w) => w.endsWith('none'))).toHaveLength(1);
      });
    }
  }
});
