/**
 * Property tests: every writer's output reads back as what was written, in every format,
 * version and byte order, and cutting the bytes into chunks at arbitrary points gives the same
 * result (and diagnostics) as one chunk.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { createDumpJsonParser } from './dump-json.ts';
import { writeDumpJson } from './dump-json-write.ts';
import { frameKey, TRAMPOLINE } from './frames.ts';
import { createStackMapBinParser } from './stack-map-bin.ts';
import { createStackMapStatParser } from './stack-map-stat.ts';
import { createStackMapTextParser } from './stack-map-text.ts';
import { writeStackMapBin, writeStackMapStat, writeStackMapText } from './stack-map-write.ts';
import { createTraceTextParser } from './trace-text.ts';
import { writeTraceText, type TraceTextItem } from './trace-text-write.ts';
import { feedCuts } from '../testing/formats.ts';
import type { ChunkParser, ParseContext, TraceSink } from './types.ts';

const RUNS = { numRuns: 100 };
const enc = new TextEncoder();

// ---------------------------------------------------------------- helpers

/** Reads `bytes` whole and cut at `cuts`; both results and diagnostics must agree. */
function readBoth<R>(make: (ctx: ParseContext) => ChunkParser<R>, bytes: Uint8Array, cuts: readonly number[]) {
  const logA = new DiagnosticLog('f');
  const whole = feedCuts(make({ file: 'f', diagnostics: logA }), bytes, []);
  const logB = new DiagnosticLog('f');
  const cut = feedCuts(make({ file: 'f', diagnostics: logB }), bytes, cuts);
  expect(cut).toEqual(whole);
  expect(logB.list()).toEqual(logA.list());
  return { result: whole, diagnostics: logA.list() };
}

const cutsArb = fc.array(fc.nat(), { maxLength: 12 });

// ---------------------------------------------------------------- arbitraries

const u32 = fc.nat({ max: 0xffffffff }).map((n) => n >>> 0);
const symName = fc.stringMatching(/^[a-z_][a-z0-9_]{0,12}$/);
const hexOff = fc.nat({ max: 0xfffff }).map((n) => '0x' + n.toString(16));
const kernelAddr = fc.bigInt({ min: 0xffffffff80000000n, max: 0xffffffffffffffffn });

/** A frame as the kernel prints it (every style DESIGN 2.1/2.2 lists for kernel frames). */
const printedFrame: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(symName, hexOff, hexOff).map(([s, o, z]) => `${s}+${o}/${z}`),
  fc.tuple(symName, hexOff, hexOff, symName).map(([s, o, z, m]) => `${s}+${o}/${z} [${m}]`),
  symName,
  kernelAddr.map((a) => '0x' + a.toString(16)),
  fc.constant(TRAMPOLINE),
);

/** Raw ips: kernel addresses, anything 64-bit, and the trampoline marker. */
const ip = fc.oneof(kernelAddr, fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.constant(0x7fffffffn));

/** 0..64 items, mostly few, sometimes the kernel's full depth of 64. */
const depthArray = <T>(a: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: fc.array(a, { maxLength: 64, size: 'small' }), weight: 4 }, { arbitrary: fc.array(a, { minLength: 64, maxLength: 64 }), weight: 1 });

interface MapRecord {
  slot: number;
  refCount: number;
  ips: bigint[];
  frames: string[];
}

/** A map: distinct slots, ascending (as the kernel dumps them), 0..64 ips and frames each. */
const mapArb: fc.Arbitrary<MapRecord[]> = fc
  .uniqueArray(
    fc.record({
      slot: u32,
      refCount: u32,
      ips: depthArray(ip),
      frames: depthArray(printedFrame),
    }),
    { selector: (r) => r.slot, maxLength: 10 },
  )
  .map((rs) => [...rs].sort((a, b) => a.slot - b.slot));

// ---------------------------------------------------------------- stack_map text

describe('stack_map text round trip', () => {
  it.each(['v7', 'v8'] as const)('%s', (version) => {
    fc.assert(
      fc.property(mapArb, u32, cutsArb, (map, generation, cuts) => {
        const text = writeStackMapText(map, { version, generation });
        const { result, diagnostics } = readBoth(createStackMapTextParser, enc.encode(text), cuts);
        expect(diagnostics).toEqual([]);
        const gen = version === 'v8' ? generation : null;
        expect(result.records.map(({ slot, generation: g, refCount, frames, ips }) => ({ slot, g, refCount, frames, ips }))).toEqual(
          map.map((r) => ({ slot: r.slot, g: gen, refCount: r.refCount, frames: r.frames.map(frameKey), ips: null })),
        );
        if (map.length > 0) {
          expect(result.version).toBe(version);
          expect(result.generation).toBe(gen);
        }
        expect(result.lines!.unused).toBe(0);
        expect(result.lines!.used).toBe(result.lines!.total);
      }),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------- stack_map_bin

describe('stack_map_bin round trip', () => {
  const cases = [1, 2].flatMap((version) => [true, false].map((le) => [version, le] as const));
  it.each(cases)('version %i, little-endian %s', (version, littleEndian) => {
    fc.assert(
      fc.property(mapArb, u32, cutsArb, (map, g, cuts) => {
        const generation = version === 1 ? null : g;
        const bytes = writeStackMapBin({ version, generation, littleEndian, records: map });
        const { result, diagnostics } = readBoth(createStackMapBinParser, bytes, cuts);
        expect(diagnostics).toEqual([]);
        expect(result).toMatchObject({ format: 'stack_map_bin', version: String(version), generation, littleEndian });
        expect(result.bytes).toEqual({ total: bytes.length, used: bytes.length, unused: 0 });
        expect(result.records.map(({ slot, generation: rg, refCount, frames, ips }) => ({ slot, rg, refCount, frames, ips }))).toEqual(
          map.map((r) => ({ slot: r.slot, rg: generation, refCount: r.refCount, frames: null, ips: BigUint64Array.from(r.ips) })),
        );
      }),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------- dump JSON

describe('stackmap_dump.py --json round trip', () => {
  it.each([false, true])('wrapped as {"stacks": [...]}: %s', (wrap) => {
    const withSymbols = mapArb.chain((map) =>
      fc.tuple(
        fc.constant(map),
        fc.array(fc.boolean(), { minLength: map.length, maxLength: map.length }),
        fc.array(fc.array(printedFrame, { minLength: 64, maxLength: 64 }), { minLength: map.length, maxLength: map.length }),
      ),
    );
    fc.assert(
      fc.property(withSymbols, fc.constantFrom(0, 2), cutsArb, ([map, hasSymbols, symbolPool], indent, cuts) => {
        const input = map.map((r, i) => ({ ...r, symbols: hasSymbols[i] ? symbolPool[i].slice(0, r.ips.length) : null }));
        const text = writeDumpJson(input, { wrap, indent });
        const { result, diagnostics } = readBoth(createDumpJsonParser, enc.encode(text), cuts);
        expect(diagnostics).toEqual([]);
        expect(result).toMatchObject({ format: 'dump_json', version: 'json', generation: null });
        expect(result.lines!.unused).toBe(0);
        expect(result.records.map(({ slot, generation, refCount, frames, ips }) => ({ slot, generation, refCount, frames, ips }))).toEqual(
          input.map((r) => ({
            slot: r.slot,
            generation: null,
            refCount: r.refCount,
            frames: r.symbols ? r.symbols.map(frameKey) : null,
            ips: BigUint64Array.from(r.ips),
          })),
        );
      }),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------- stack_map_stat

describe('stack_map_stat round trip', () => {
  const n = fc.nat();
  it('v7', () => {
    fc.assert(
      fc.property(
        fc.record({ entries: n, capacity: n, tableSize: n, successes: n, drops: n, successRate: fc.option(fc.integer({ min: 0, max: 100 })) }),
        cutsArb,
        (s, cuts) => {
          const text = writeStackMapStat({ version: 'v7', ...s });
          const { result, diagnostics } = readBoth(createStackMapStatParser, enc.encode(text), cuts);
          expect(diagnostics).toEqual([]);
          expect(result).toMatchObject({ version: 'v7', uninitialized: false, ...s, generation: null });
          expect(result.lines).toEqual({ total: s.successRate === null ? 4 : 5, used: s.successRate === null ? 4 : 5, unused: 0 });
        },
      ),
      RUNS,
    );
  });

  it('v8, unknown keys kept', () => {
    const known = new Set(['generation', 'entries', 'capacity', 'successes', 'fallbacks', 'drops', 'table_size', 'success_rate']);
    const extra = fc.uniqueArray(
      fc.tuple(
        fc.stringMatching(/^[A-Za-z_][\w.-]{0,15}$/).filter((k) => !known.has(k)),
        fc.stringMatching(/^([!-~]([ -~]{0,20}[!-~])?)?$/),
      ),
      { selector: ([k]) => k, maxLength: 5 },
    );
    fc.assert(
      fc.property(fc.record({ generation: n, entries: n, capacity: n, successes: n, fallbacks: n }), extra, cutsArb, (s, ex, cuts) => {
        const text = writeStackMapStat({ version: 'v8', ...s, extra: ex });
        const { result, diagnostics } = readBoth(createStackMapStatParser, enc.encode(text), cuts);
        expect(diagnostics).toEqual([]);
        expect(result).toMatchObject({
          version: 'v8',
          generation: s.generation,
          entries: s.entries,
          capacity: s.capacity,
          successes: s.successes,
          drops: s.fallbacks,
        });
        expect(result.values).toEqual([
          ['generation', String(s.generation)],
          ['entries', String(s.entries)],
          ['capacity', String(s.capacity)],
          ['successes', String(s.successes)],
          ['fallbacks', String(s.fallbacks)],
          ...ex,
        ]);
      }),
      RUNS,
    );
  });

  it.each(['v7', 'v8'] as const)('%s uninitialized', (version) => {
    const { result } = readBoth(createStackMapStatParser, enc.encode(writeStackMapStat({ version, uninitialized: true })), [3]);
    expect(result).toMatchObject({ uninitialized: true, values: [], lines: { total: 1, used: 1, unused: 0 } });
  });
});

// ---------------------------------------------------------------- trace text

const comm = fc.oneof(fc.stringMatching(/^[A-Za-z0-9_.:/][A-Za-z0-9_.:/-]{0,14}$/), fc.constant('<...>'), fc.constant('<idle>'));
const ts = fc.nat({ max: 2_000_000_000 }).chain((s) => fc.nat({ max: 999_999 }).map((us) => (s * 1e6 + us) / 1e6));
const ctxFields = { comm, pid: fc.nat({ max: 4_194_304 }), cpu: fc.nat({ max: 255 }), ts };
const flags = fc.oneof(fc.constant(''), fc.stringMatching(/^[.dDnNhHsbzX0-9]{4,5}$/));
const eventName = fc.stringMatching(/^[a-z_][a-z0-9_]{0,20}$/).filter((n) => n !== 'kernel_stack' && n !== 'user_stack' && n !== 'function');
const payload = fc.stringMatching(/^([!-~]([ -~]{0,40}[!-~])?)?$/);
const userFrame = fc.bigInt({ min: 0n, max: 0x7fffffffffffn }).map((a) => '<' + a.toString(16).padStart(16, '0') + '>');

const item: fc.Arbitrary<TraceTextItem> = fc.oneof(
  fc.record({ type: fc.constant('event' as const), ...ctxFields, tgid: fc.option(fc.nat({ max: 9_999_999 })), flags, name: eventName, payload }),
  fc
    .record({ type: fc.constant('event' as const), ...ctxFields, tgid: fc.option(fc.nat({ max: 99999 })), flags, a: symName, b: symName })
    .map(({ a, b, ...r }) => ({ ...r, name: 'function', payload: `${a} <-${b}` })),
  // v7 id and v8 cookie
  fc.record({
    type: fc.constant('stack' as const),
    kind: fc.constant('cookie' as const),
    ...ctxFields,
    slot: u32,
    generation: fc.option(u32),
    frames: fc.constant(null),
  }),
  fc.record({
    type: fc.constant('stack' as const),
    kind: fc.constant('full' as const),
    ...ctxFields,
    slot: fc.constant(-1),
    generation: fc.constant(null),
    frames: depthArray(printedFrame),
  }),
  fc.record({
    type: fc.constant('stack' as const),
    kind: fc.constant('user' as const),
    ...ctxFields,
    slot: fc.constant(-1),
    generation: fc.constant(null),
    frames: fc.array(userFrame, { maxLength: 8 }),
  }),
  fc.record({ type: fc.constant('lost' as const), cpu: fc.nat({ max: 255 }), count: fc.option(fc.nat()) }),
);

/** What the parser should give back for an item. */
function expected(it: TraceTextItem): unknown {
  if (it.type === 'lost') return { type: 'lost', cpu: it.cpu, count: it.count };
  if (it.type === 'event') {
    const { type, comm, pid, tgid, cpu, ts, flags, name, payload } = it;
    return { type, comm, pid, tgid, cpu, ts, flags, name, payload };
  }
  const { comm, pid, cpu, ts, kind, slot, generation } = it;
  const frames = kind === 'cookie' ? null : kind === 'user' ? it.frames!.map((f) => '0x' + f.slice(1, -1).replace(/^0+(?=.)/, '')) : it.frames!.map(frameKey);
  return { type: 'stack', comm, pid, cpu, ts, kind, slot, generation, frames };
}

describe('trace text round trip', () => {
  it('events, v7 ids, v8 cookies, full and user stacks, lost markers', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 30 }), cutsArb, (items, cuts) => {
        const text = writeTraceText(items);
        let got: unknown[] = [];
        const make = (ctx: ParseContext) => {
          got = [];
          const sink: TraceSink = {
            event: ({ lineNo: _l, ...e }) => got.push({ type: 'event', ...e }),
            stackRecord: ({ lineNo: _l, ctx: _c, ...r }) => got.push({ type: 'stack', ...r }),
            lost: ({ lineNo: _l, ...l }) => got.push({ type: 'lost', ...l }),
          };
          return createTraceTextParser(ctx, sink);
        };
        const { result, diagnostics } = readBoth(make, enc.encode(text), cuts);
        expect(diagnostics).toEqual([]);
        expect(got).toEqual(items.map(expected));
        expect(result.tracer).toBe('nop');
        expect(result.cpus).toBe(Math.max(-1, ...items.map((i) => i.cpu)) + 1);
        expect(result.lines.unused).toBe(0);
        expect(result.lines.used).toBe(result.lines.total);
      }),
      RUNS,
    );
  });
});
