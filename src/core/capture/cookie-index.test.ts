import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { writeStackMapBin, writeStackMapText } from '../formats/stack-map-write.ts';
import type { Capture } from './ingest.ts';
import { summarize } from './summary.ts';
import { loadFiles } from './load.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { Explorer } from '../query/explorer.ts';
import { buildTables } from '../tables/build.ts';
import { cellAt } from '../tables/schema.ts';
import { Ingest } from './ingest.ts';
import { RecordStatus } from './trace-columns-data.ts';

// resolveCookies reads each generation's slots through an array (when the slot numbers are
// dense enough) instead of the dump's map: against a plain resolution written here from the
// dumps' own records, on random v8 dumps (dense or sparse slots, some generations without a
// dump) and cookies (slots held or not, up to 5M). (A u32 slot beyond 2^31 wraps negative in the
// Int32 column, as it did before, so it is left out.)
describe('resolveCookies against a plain lookup', () => {
  // dense slots (read through the array) or some far apart (through the map)
  const dump = fc
    .record({
      generation: fc.integer({ min: 0, max: 5 }),
      small: fc.uniqueArray(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 10 }),
      far: fc.uniqueArray(fc.integer({ min: 13, max: 5_000_000 }), { maxLength: 4 }),
      dense: fc.boolean(),
    })
    .map((d) => ({ generation: d.generation, slots: d.dense ? d.small : [...d.small, ...d.far] }));
  const cookie = fc.record({
    slot: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 5_000_000 })),
    generation: fc.integer({ min: 0, max: 6 }),
  });
  it('every cookie gets the status and stack the dump of its generation gives', () => {
    fc.assert(
      fc.property(fc.uniqueArray(dump, { selector: (d) => d.generation, maxLength: 4 }), fc.array(cookie, { maxLength: 40 }), (dumps, cookies) => {
        const ingest = new Ingest();
        const frames = (g: number, slot: number) => [`f${g}_${slot}+0x1`, 'root+0x2'];
        const byGen = new Map<number, Set<number>>();
        for (const [k, d] of dumps.entries()) {
          byGen.set(d.generation, new Set(d.slots));
          const text = writeStackMapText(
            d.slots.map((slot) => ({ slot, refCount: 1, frames: frames(d.generation, slot) })),
            { version: 'v8', generation: d.generation },
          );
          const p = ingest.open(`stack_map.${k}`);
          p.push(new TextEncoder().encode(text));
          p.end();
        }
        const lines = cookies.map((c, i) => `            bash-1    [000] .....   ${(1 + i / 1e6).toFixed(6)}: <stack_id ${c.slot} gen ${c.generation}>`);
        const p = ingest.open('trace');
        p.push(new TextEncoder().encode('# tracer: nop\n' + lines.join('\n') + '\n'));
        p.end();
        const cap = ingest.finish();
        const t = cap.trace;
        expect(t.recordCount).toBe(cookies.length);
        for (const [i, c] of cookies.entries()) {
          const held = byGen.get(c.generation);
          const want = !held ? RecordStatus.NoDump : held.has(c.slot) ? RecordStatus.Resolved : RecordStatus.NoSlot;
          expect(t.recStatus.get(i)).toBe(want);
          if (want === RecordStatus.Resolved) expect(cap.stacks.framesOf(t.recStack.get(i))).toEqual(frames(c.generation, c.slot));
          else expect(t.recStack.get(i)).toBe(-1);
        }
      }),
      { numRuns: 150 },
    );
  });
});

// ---------------------------------------------------------------- numbers at their widest (issue 34, 13)

describe('slots and generations up to 2^32 - 1, values no column holds said (issue 34, 13)', () => {
  const L = (task: string, cpu: string, ts: string, rest: string) => `${task.padStart(16)} [${cpu}] ...1. ${ts}: ${rest}`;
  const trace = [
    '# tracer: nop',
    '#',
    L('bash-1234', '002', '812.100000', 'kmem_cache_alloc: call_site=x'),
    L('bash-1234', '002', '812.100001', '<stack_id 4294967295 gen 1>'),
    L('bash-1234', '002', '812.100002', 'kmem_cache_alloc: call_site=x'),
    L('bash-1234', '002', '812.100003', '<stack_id 5 gen 2147483648>'),
    L('bash-1234', '002', '812.100004', 'kmem_cache_alloc: call_site=x'),
    L('bash-1234', '002', '812.100005', '<stack_id 4294967295 gen 4294967295>'),
    L('bash-1234', '002', '812.100006', 'kmem_cache_alloc: call_site=x'),
    L('bash-1234', '002', '812.100007', '<stack_id 4294967295>'),
    L('bash-1234', '4294967297', '812.100008', 'kmem_cache_alloc: call_site=x'),
    L('bash-9223372036854775808', '002', '812.100009', 'kmem_cache_alloc: call_site=x'),
    L('bash-1234 (2147483648)', '002', '812.100010', 'kmem_cache_alloc: call_site=x'),
    L('bash-1234', '002', '9223372037.000000', 'kmem_cache_alloc: call_site=x'),
    'CPU:2 [LOST 18446744073709551615 EVENTS]',
    '',
  ].join('\n');
  const text = 'stack_id 4294967295 gen 1 [ref 1, depth 1]\n => a_fn+0x1/0x10\n\nstack_id 5 gen 2147483648 [ref 1, depth 1]\n => b_fn+0x1/0x10\n\n';
  const bin = writeStackMapBin({
    version: 2,
    generation: 4294967295,
    littleEndian: true,
    records: [{ slot: 4294967295, refCount: 1, ips: [0xffffffff81000020n] }],
  });
  const json = '[{"stack_id": 4294967295, "ref_count": 1, "ips": ["0xffffffff81000030"]}]';
  const files: [string, string | Uint8Array][] = [
    ['trace', trace],
    ['stack_map', text],
    ['stack_map_bin', bin],
    ['dump.json', json],
  ];

  // the second method: the files' numbers by regex, as decimal text (BigInt), never through the columns
  const cookies = [...trace.matchAll(/<stack_id (\d+)(?: gen (\d+))?>/g)].map((m) => ({ slot: BigInt(m[1]), gen: m[2] === undefined ? null : BigInt(m[2]) }));
  const dumped = new Set([...text.matchAll(/^stack_id (\d+) gen (\d+) /gm)].map((m) => `${m[2]}:${m[1]}`));
  dumped.add('4294967295:4294967295'); // the bin: its header's generation, its record's slot (written above)
  const generations = [...new Set([...cookies.map((c) => c.gen), ...[...dumped].map((k) => BigInt(k.split(':')[0]))].filter((g) => g !== null))]
    .sort((a, b) => (a! < b! ? -1 : 1))
    .map(Number);

  const check = (c: Capture, traceName = 'trace') => {
    const s = summarize(c);
    expect(s.generations).toEqual(generations);
    expect(generations).toEqual([1, 2147483648, 4294967295]);
    // each v8 cookie's generation:slot is in a dump, the v7 id in the generation-less dump JSON
    expect(cookies.map((k) => (k.gen === null ? 'unverified' : dumped.has(`${k.gen}:${k.slot}`) ? 'resolved' : 'no-slot'))).toEqual([
      'resolved',
      'resolved',
      'resolved',
      'unverified',
    ]);
    expect(s.status).toMatchObject({ resolved: 3, unverified: 1, 'no-slot': 0, 'no-dump': 0 });
    const t = Object.fromEntries(buildTables(new Explorer(c), { captureId: 'x' }).map((x) => [x.spec.name, x]));
    const col = (table: string, name: string) => {
      const tb = t[table];
      const k = tb.spec.columns.findIndex((cc: { name: string }) => cc.name === name);
      return Array.from({ length: tb.rows }, (_, i) => cellAt(tb.columns[k], i));
    };
    expect(col('records', 'slot')).toEqual(cookies.map((k) => Number(k.slot)));
    expect(col('records', 'generation')).toEqual(cookies.map((k) => (k.gen === null ? null : Number(k.gen))));
    expect(col('dumps', 'generation')).toEqual([1, 2147483648, 4294967295, null]);
    // the CPU and the pid no column holds: said, with their lines, and their events kept
    const said = s.diagnostics.filter((d) => d.file === traceName).map((d) => [d.where, d.message.split(' ')[0]]);
    expect(said).toEqual([
      ['line 11', 'CPU'],
      ['line 12', 'pid'],
      ['line 13', 'TGID'],
      ['line 14', 'time'],
      ['line 15', 'lost-events'],
    ]);
    // the TGID past 2^31 - 1 is not kept; the time past 2^63 - 1 ns has no ts_ns, the others theirs
    expect(col('events', 'tgid').filter((v) => v !== null)).toEqual([]);
    const tsNs = col('events', 'ts_ns');
    expect(tsNs.at(-1)).toBeNull();
    expect(tsNs.slice(0, -1).every((v) => v !== null)).toBe(true);
    expect(s.events).toBe(trace.split('\n').filter((l) => /: kmem_cache_alloc:/.test(l)).length);
    expect(col('events', 'cpu').filter((v) => v === 1)).toEqual([]);
    expect(col('events', 'pid').filter((v) => v === 0)).toEqual([]);
    expect(s.lost).toEqual({ markers: 1, events: 0 });
  };

  it('loadFiles: every id resolved, generations 2147483648 and 4294967295 listed, the CPU and pid said', async () => {
    check(await loadFiles(files.map(([name, content]) => ({ name, blob: new Blob([content as BlobPart]) }))));
  });
  it('in chunks of 1 and 5, the files named unknown', () => {
    check(ingestFiles(files, 1));
    check(
      ingestFiles(
        files.map(([n, c]) => [n === 'trace' ? 'unknown' : n, c]),
        5,
      ),
      'unknown',
    );
  });
});
