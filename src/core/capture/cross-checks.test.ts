import { describe, expect, it } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';
import { writeStackMapBin, writeStackMapStat, writeStackMapText } from '../formats/stack-map-write.ts';
import { LARGEST_TABLE } from './cross-checks.ts';

// Issue 34, 17: what one file contradicts in another was not said. The expected counts are
// worked out here from the lines written (a plain map of name and address), not by the checks.

/** Symbols `f0..f(n-1)` 0x40 apart from 0xffffffff81000000, as kallsyms lines. */
const syms = (n: number, rename: Map<number, string> = new Map(), move: Map<number, number> = new Map()) =>
  Array.from({ length: n }, (_, i) => `${(0xffffffff81000000n + BigInt(move.get(i) ?? i * 0x40)).toString(16)} T ${rename.get(i) ?? 'f' + i}`).join('\n') +
  '\n';

/** The second method: addresses both name with different names, and names (once in each) at different addresses, by a reading of the lines. */
function disagreements(a: string, b: string): { addrs: number; names: number } {
  const read = (t: string) =>
    t
      .trim()
      .split('\n')
      .map((l) => /^([0-9a-f]+) \w (\S+)$/.exec(l)!)
      .map((m) => [m[1], m[2]] as const);
  const A = read(a);
  const B = read(b);
  const byAddrA = new Map(A);
  const byNameA = new Map(A.map(([x, y]) => [y, x]));
  return {
    addrs: B.filter(([x, y]) => byAddrA.has(x) && byAddrA.get(x) !== y).length,
    names: B.filter(([x, y]) => byNameA.has(y) && byNameA.get(y) !== x).length,
  };
}

describe('two symbol files that disagree', () => {
  const a = syms(2000);
  // in the second: 3 addresses named otherwise, 2 names moved to addresses of their own (past the last symbol)
  const b = syms(
    2000,
    new Map([
      [10, 'g10'],
      [500, 'g500'],
      [1999, 'g1999'],
    ]),
    new Map([
      [7, 2000 * 0x40 + 8],
      [8, 2000 * 0x40 + 16],
    ]),
  );
  const want = disagreements(a, b);

  for (const chunk of [0, 1, 61]) {
    it(`are said on the file not used, counted, with the first of each (chunks of ${chunk || 'all'}, renamed \`unknown\`)`, () => {
      expect(want).toEqual({ addrs: 3, names: 2 });
      const cap = ingestFiles(
        [
          ['kallsyms', a],
          ['unknown', b],
        ],
        chunk,
      );
      expect(cap.files.map((f) => f.kind)).toEqual(['kallsyms', 'kallsyms']);
      const msgs = cap.diagnostics.map((d) => `${d.file}: ${d.message}`);
      expect(msgs).toEqual([
        `unknown: disagrees with kallsyms (the symbol file used): ${want.addrs} address(es) named otherwise, first 0x${/^([0-9a-f]+) T g10$/m.exec(b)![1]} is \`g10\` here, \`f10\` in kallsyms; kallsyms's names are used`,
        `unknown: disagrees with kallsyms (the symbol file used): ${want.names} name(s) at other addresses, first \`f7\` at 0x${/^([0-9a-f]+) T f7$/m.exec(b)![1]} here, 0x${/^([0-9a-f]+) T f7$/m.exec(a)![1]} in kallsyms (another boot, or KASLR?); kallsyms's addresses are used`,
      ]);
    });
  }

  it('the same file twice, or aliases and repeated static names: nothing said', () => {
    const aliases = a + 'ffffffff81000040 T alias_of_f1\nffffffff81000080 t f0\n';
    expect(
      ingestFiles([
        ['kallsyms', a],
        ['unknown', aliases],
      ]).diagnostics,
    ).toEqual([]);
    expect(
      ingestFiles([
        ['kallsyms', a],
        ['unknown', a],
      ]).diagnostics,
    ).toEqual([]);
  });

  it('a 200,000-symbol pair costs one diagnostic per reason (counted by objects, not time)', () => {
    const n = 200_000;
    const big = syms(n);
    const moved = new Map(Array.from({ length: 50_000 }, (_, k) => [k * 4, n * 0x40 + k * 8] as [number, number]));
    const cap = ingestFiles([
      ['kallsyms', big],
      ['unknown', syms(n, new Map(), moved)],
    ]);
    expect(cap.diagnostics).toHaveLength(1);
    expect(cap.diagnostics[0].message).toMatch(/^disagrees with kallsyms \(the symbol file used\): 50000 name\(s\) at other addresses/);
  });
});

describe('stack_map slots past any table', () => {
  const ips = [0xffffffff81000010n];
  const slots = [0, 5, 40_000, LARGEST_TABLE - 1, LARGEST_TABLE, 4_000_000_000];
  const bin = writeStackMapBin({ version: 1, generation: null, littleEndian: true, records: slots.map((slot) => ({ slot, refCount: 1, ips })) });
  const text = writeStackMapText(
    slots.map((slot) => ({ slot, refCount: 1, frames: ['f+0x0/0x10'] })),
    { version: 'v7' },
  );
  const stat = writeStackMapStat({ version: 'v7', entries: 6, capacity: 16384, tableSize: 32768, successes: 6, drops: 0, successRate: 100 });
  /** record offsets in the bin (16-byte header, 16 + 8 per record) and header lines in the text, found by reading them */
  const binAt = slots.map((_, i) => 16 + i * 24);
  const textLine = text.split('\n').flatMap((l, i) => (l.startsWith('stack_id ') ? [i + 1] : []));

  for (const chunk of [0, 1, 7]) {
    it(`without a stat: past the largest map's 2^19 slots, named at their offsets and lines (chunks of ${chunk || 'all'})`, () => {
      const cap = ingestFiles(
        [
          ['unknown', bin],
          ['stack_map', text],
        ],
        chunk,
      );
      const past = slots
        .map((s, i) => [s, i] as const)
        .filter(([s]) => s >= LARGEST_TABLE)
        .map(([, i]) => i);
      expect(past).toEqual([4, 5]);
      const d = cap.diagnostics.filter((x) => /slot past/.test(x.message));
      expect(d.map((x) => [x.file, x.where, x.count, x.message])).toEqual([
        [
          'unknown',
          `offsets ${past.map((i) => '0x' + binAt[i].toString(16)).join(', ')}`,
          2,
          `slot past the largest map's table (${LARGEST_TABLE} slots, bits 18): no table of that map holds it (kept as read)`,
        ],
        [
          'stack_map',
          `lines ${past.map((i) => textLine[i]).join(', ')}`,
          2,
          `slot past the largest map's table (${LARGEST_TABLE} slots, bits 18): no table of that map holds it (kept as read)`,
        ],
      ]);
    });
  }

  it('with a v7 stat: past its table_size (and a v8 stat: past twice its capacity)', () => {
    const cap = ingestFiles([
      ['stack_map_stat', stat],
      ['unknown', bin],
    ]);
    const d = cap.diagnostics.filter((x) => /slot past/.test(x.message));
    expect(d.map((x) => [x.count, x.message])).toEqual([
      [slots.filter((s) => s >= 32768).length, "slot past stack_map_stat's table_size 32768: no table of that map holds it (kept as read)"],
    ]);
    const v8 = writeStackMapStat({ version: 'v8', generation: 1, entries: 2, capacity: 16384, successes: 2, fallbacks: 0 });
    const d8 = ingestFiles([
      ['stack_map_stat', v8],
      ['unknown', bin],
    ]).diagnostics.filter((x) => /slot past/.test(x.message));
    expect(d8.map((x) => x.count)).toEqual([slots.filter((s) => s >= 32768).length]);
    expect(d8[0].message).toMatch(/the 32768-slot table of stack_map_stat's capacity 16384/);
  });

  it('a record reserved word that is not 0: named at each record, the records still read', () => {
    const b = writeStackMapBin({
      version: 1,
      generation: null,
      littleEndian: false,
      records: [0, 1, 2, 3].map((slot) => ({ slot, refCount: 1, ips, reserved: slot % 2 ? 0xdead : 0 })),
    });
    for (const chunk of [0, 1, 5]) {
      const cap = ingestFiles([['unknown', b]], chunk);
      expect(cap.diagnostics.map((x) => [x.where, x.count, x.message])).toEqual([
        ['offsets 0x28, 0x58', 2, 'record reserved word is not 0 (the kernel writes 0): the record is read as if it were'],
      ]);
      expect(cap.files[0]).toMatchObject({ kind: 'stack_map_bin', bytes: { used: b.length, unused: 0 } });
    }
  });
});
