import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { sniffKind } from './sniff.ts';
import { createStackMapStatParser } from './stack-map-stat.ts';
import { writeStackMapStat, type StatV7Input, type StatV8Input } from './stack-map-write.ts';
import { CHUNK_SIZES, feedChunks, fixture } from '../testing/formats.ts';
import { readEveryWay, readers, type ReaderSpec } from '../testing/reader-kit.ts';
import type { ParsedStat } from './types.ts';

const enc = new TextEncoder();

function parse(bytes: Uint8Array, chunk = 0) {
  const diagnostics = new DiagnosticLog('f');
  const stat = feedChunks(createStackMapStatParser({ file: 'f', diagnostics }), bytes, chunk);
  expect(stat.lines.used + stat.lines.unused).toBe(stat.lines.total);
  return { stat, diags: diagnostics.list() };
}

/** Parses every way (reader-kit.ts: chunk sizes, renamed `unknown`, lines, written back), returns the one-chunk result. */
function parseAll(bytes: Uint8Array, spec: ReaderSpec<ParsedStat> = readers.stackMapStat) {
  const { result: stat, diagnostics: diags } = readEveryWay('f', bytes, spec);
  return { stat, diags };
}

/** `stackmap not initialized` alone: the sniffer gives it to the stack_map reader (both files say it), so it is read as named only */
const NOT_INIT = { ...readers.stackMapStat, sniffed: false };

describe('stack_map_stat fixtures', () => {
  it('v7/basic.txt', () => {
    const bytes = fixture('stack_map_stat/v7/basic.txt');
    expect(sniffKind(bytes)).toBe('stack_map_stat');
    const { stat, diags } = parseAll(bytes);
    expect(diags).toEqual([]);
    expect(stat).toEqual({
      file: 'f',
      version: 'v7',
      uninitialized: false,
      values: [
        ['entries', '2500 / 16384'],
        ['table_size', '32768'],
        ['successes', '148923'],
        ['drops', '0'],
        ['success_rate', '100%'],
      ],
      entries: 2500,
      capacity: 16384,
      tableSize: 32768,
      successes: 148923,
      drops: 0,
      generation: null,
      successRate: 100,
      lines: { total: 5, used: 5, unused: 0 },
    });
  });

  it('v8/basic.txt: fallbacks are drops, unknown keys kept', () => {
    const bytes = fixture('stack_map_stat/v8/basic.txt');
    expect(sniffKind(bytes)).toBe('stack_map_stat');
    const { stat, diags } = parseAll(bytes);
    expect(diags).toEqual([]);
    expect(stat).toEqual({
      file: 'f',
      version: 'v8',
      uninitialized: false,
      values: [
        ['generation', '3'],
        ['entries', '2500'],
        ['capacity', '16384'],
        ['successes', '148923'],
        ['fallbacks', '17'],
        ['probe_max', '9'],
      ],
      entries: 2500,
      capacity: 16384,
      tableSize: null,
      successes: 148923,
      drops: 17,
      generation: 3,
      successRate: null,
      lines: { total: 6, used: 6, unused: 0 },
    });
  });
});

describe('stack_map_stat variants and damage', () => {
  it('a value past 2^53 is said and kept as text, not rounded; 2^32 - 1 is exact (issue 34, 13)', () => {
    const { stat, diags } = parseAll(
      enc.encode('generation: 4294967295\nentries: 3\ncapacity: 4\nsuccesses: 18446744073709551615\nfallbacks: 9007199254740993\n'),
    );
    expect([stat.generation, stat.successes, stat.drops]).toEqual([4294967295, null, null]);
    expect(stat.values).toContainEqual(['successes', '18446744073709551615']);
    expect(diags.map((d) => [d.where, d.message])).toEqual([
      ['line 4', 'value of "successes" beyond 2^53 (not exact as a number): kept as text only'],
      ['line 5', 'value of "fallbacks" beyond 2^53 (not exact as a number): kept as text only'],
    ]);
  });

  it('v7 without success_rate', () => {
    const { stat, diags } = parseAll(enc.encode('entries:      0 / 1024\ntable_size:   2048\nsuccesses:    0\ndrops:        0\n'));
    expect(diags).toEqual([]);
    expect(stat.version).toBe('v7');
    expect(stat.successRate).toBe(null);
    expect(stat.capacity).toBe(1024);
  });

  it('stackmap not initialized', () => {
    const { stat, diags } = parseAll(enc.encode('stackmap not initialized\n'), NOT_INIT);
    expect(diags).toEqual([]);
    expect(stat.uninitialized).toBe(true);
    expect(stat.values).toEqual([]);
    expect(stat.lines).toEqual({ total: 1, used: 1, unused: 0 });
  });

  it('garbage lines are unused and diagnosed; bad values diagnosed; parsing goes on', () => {
    const { stat, diags } = parseAll(enc.encode('generation: 2\n??? what\nsuccesses: lots\nfallbacks: 4\n\nsuccess_rate: high\nfallbacks: 5\n'));
    expect(stat.version).toBe('v8');
    expect(stat.generation).toBe(2);
    expect(stat.successes).toBe(null);
    expect(stat.drops).toBe(5);
    expect(stat.lines).toEqual({ total: 7, used: 6, unused: 1 });
    expect(diags.map((d) => [d.where, d.message])).toEqual([
      ['line 2', 'unrecognized line (not "key: value")'],
      ['line 3', 'value of "successes" is not a number'],
      ['line 6', 'value of "success_rate" is not a percentage'],
      ['line 7', 'key "fallbacks" appears twice: the last value is used'],
    ]);
  });

  it('random bytes never throw and always balance', () => {
    let seed = 3;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    for (let n = 0; n < 20; n++) {
      const bytes = new Uint8Array(200).map(() => rnd());
      for (const size of CHUNK_SIZES) expect(() => parse(bytes, size)).not.toThrow();
    }
  });
});

describe('stack_map_stat round trip', () => {
  it('v7', () => {
    const input: StatV7Input = { version: 'v7', entries: 2500, capacity: 16384, tableSize: 32768, successes: 148923, drops: 12, successRate: 99 };
    const bytes = enc.encode(writeStackMapStat(input));
    expect(sniffKind(bytes)).toBe('stack_map_stat');
    const { stat, diags } = parseAll(bytes);
    expect(diags).toEqual([]);
    const { version, entries, capacity, tableSize, successes, drops, successRate } = stat;
    expect({ version, entries, capacity, tableSize, successes, drops, successRate }).toEqual(input);
    expect(writeStackMapStat(input)).toBe('entries:      2500 / 16384\ntable_size:   32768\nsuccesses:    148923\ndrops:        12\nsuccess_rate: 99%\n');
  });

  it('v8', () => {
    const input: StatV8Input = { version: 'v8', generation: 4, entries: 10, capacity: 16384, successes: 99, fallbacks: 1, extra: [['probe_max', '3']] };
    const bytes = enc.encode(writeStackMapStat(input));
    expect(sniffKind(bytes)).toBe('stack_map_stat');
    const { stat, diags } = parseAll(bytes);
    expect(diags).toEqual([]);
    expect(stat.version).toBe('v8');
    expect({
      version: stat.version,
      generation: stat.generation,
      entries: stat.entries,
      capacity: stat.capacity,
      successes: stat.successes,
      fallbacks: stat.drops,
      extra: stat.values.slice(5),
    }).toEqual(input);
  });

  it('uninitialized', () => {
    const { stat } = parseAll(enc.encode(writeStackMapStat({ version: 'v8', uninitialized: true })), NOT_INIT);
    expect(stat.uninitialized).toBe(true);
  });
});

// Issue 34, 15: a million unknown keys made a value (and a summary line) each.
describe('50,000 unknown keys', () => {
  it('keeps the known ones and the first MAX_UNKNOWN_KEYS others; the rest are one diagnostic with their count', async () => {
    const { MAX_UNKNOWN_KEYS, createStackMapStatParser } = await import('./stack-map-stat.ts');
    const { DiagnosticLog } = await import('./diagnostics.ts');
    const n = 50_000;
    const text = 'generation: 3\nentries: 10\ncapacity: 16384\n' + Array.from({ length: n }, (_, k) => `junk_${k}: ${k}\n`).join('') + 'fallbacks: 2\n';
    // the second method: the lines of keys no kernel writes, by a regex over the text
    const unknown = (text.match(/^junk_\d+:/gm) ?? []).length;
    for (const chunk of [0, 3, 4096]) {
      const log = new DiagnosticLog('unknown');
      const p = createStackMapStatParser({ file: 'unknown', diagnostics: log });
      const bytes = new TextEncoder().encode(text);
      if (chunk === 0) p.push(bytes);
      else for (let i = 0; i < bytes.length; i += chunk) p.push(bytes.subarray(i, i + chunk));
      const r = p.end();
      expect(r).toMatchObject({ version: 'v8', generation: 3, entries: 10, capacity: 16384, drops: 2 });
      expect(r.values.length).toBe(4 + MAX_UNKNOWN_KEYS);
      expect(r.lines).toEqual({ total: unknown + 4, used: 4 + MAX_UNKNOWN_KEYS, unused: unknown - MAX_UNKNOWN_KEYS });
      const d = log.list();
      expect(d).toHaveLength(1);
      expect(d[0]).toMatchObject({ count: unknown - MAX_UNKNOWN_KEYS, message: `a key no kernel writes, past the first ${MAX_UNKNOWN_KEYS} kept: not kept` });
      expect(d[0].where).toMatch(/^lines 104, 105, 106, 107, 108 \(\+\d+ more\)$/);
    }
  });
});
