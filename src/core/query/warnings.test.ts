import { describe, expect, it } from 'vitest';
import { writeStackMapBin } from '../formats/stack-map-write.ts';
import { ExplorerData } from './explorer-data.ts';
import { handCapture, line, sampleCapture } from '../testing/explorer-fixtures.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { warnings } from './warnings.ts';

const trace = (payloads: string[]) => '# tracer: nop\n' + payloads.map((p, i) => line('bash-1234', 1, (100 + i * 0.001).toFixed(6), p)).join('\n') + '\n';
const ids = (ws: { id: string }[]) => ws.map((w) => w.id);

describe('warnings', () => {
  it('hand capture: a generation with cookies but no dump, and many unresolved cookies', () => {
    const w = warnings(new ExplorerData(handCapture()));
    expect(ids(w)).toEqual(['generation-without-dump', 'unresolved']);
    expect(w[0].message).toContain('generation 3 (1 cookie)');
    expect(w[1]).toMatchObject({ level: 'warn' });
    expect(w[1].message).toMatch(/^2 of 8 cookies \(25%\) have no stack: 1 has no dump .*; 1 names a slot the dump lacks/);
  });

  it('v7: nearly full map, drops with gravestones, unverified and ambiguous ids', () => {
    const dumpA = 'stack_id 1 [ref 3, depth 2]\n  [0] a+0x1/0x10\n  [1] b+0x2/0x20\n\n';
    const dumpB = 'stack_id 1 [ref 3, depth 2]\n  [0] c+0x1/0x10\n  [1] b+0x2/0x20\n\nstack_id 2 [ref 1, depth 1]\n  [0] d+0x4/0x8\n\n';
    const stat = 'entries:      15000 / 16384\ntable_size:   32768\nsuccesses:    148923\ndrops:        12\nsuccess_rate: 99%\n';
    const c = ingestFiles([
      ['trace', trace(['<stack_id 1>', '<stack_id 2>'])],
      ['mapA', dumpA],
      ['mapB', dumpB],
      ['stack_map_stat', stat],
    ]);
    const w = warnings(new ExplorerData(c));
    expect(ids(w)).toEqual(['map-nearly-full', 'drops', 'v7-reset-risk', 'ambiguous-ids', 'unresolved']);
    expect(w[0].message).toContain('92% full (15,000 of 16,384 entries)');
    // not full yet: long probes, with what gravestones will add once the pool runs out
    expect(w[1].message).toContain('12 stacks were dropped');
    expect(w[1].message).toContain('not full (15,000 of 16,384 elements in use)');
    expect(w[1].message).toContain('gravestone');
    expect(w[2].message).toMatch(/^1 v7 stack id was matched against a dump without a generation/);
    expect(w[3].message).toMatch(/^1 v7 stack id is ambiguous: the 2 dumps/);
    expect(w[4].level).toBe('error');
  });

  it('drops of a full map, v7 and v8, and v8 fallbacks of a map that is not full', () => {
    const v7full = 'entries:      16384 / 16384\ntable_size:   32768\nsuccesses:    9000\ndrops:        40\n';
    const v8full = 'generation: 2\nentries: 16384\ncapacity: 16384\nsuccesses: 9000\nfallbacks: 40\n';
    const v8some = 'generation: 2\nentries: 300\ncapacity: 16384\nsuccesses: 9000\nfallbacks: 4\n';
    const drops = (stat: string) => warnings(new ExplorerData(ingestFiles([['stack_map_stat', stat]]))).find((x) => x.id === 'drops')!;
    expect(drops(v7full).message).toMatch(/^40 stacks did not fit in the map .* the map is full \(16,384 of 16,384 elements in use\)/);
    expect(drops(v7full).message).toContain('gravestone');
    expect(drops(v8full)).toMatchObject({ level: 'warn' });
    expect(drops(v8full).message).toContain('every new stack is written in full');
    expect(drops(v8some)).toMatchObject({ level: 'info' });
    expect(drops(v8some).message).toContain('another CPU');
  });

  it('a v8 text dump read across a reset', () => {
    const dump = 'stack_id 1 gen 3 [ref 1, depth 1]\n => a+0x1/0x2\n\nstack_id 2 gen 4 [ref 1, depth 1]\n => b+0x1/0x2\n\n';
    const c = ingestFiles([
      ['trace', trace(['<stack_id 1 gen 3>', '<stack_id 2 gen 4>'])],
      ['stack_map', dump],
    ]);
    const w = warnings(new ExplorerData(c));
    expect(ids(w)).toEqual(['text-dump-across-reset']);
    expect(w[0].message).toMatch(/^stack_map \(stack_map text\) holds records of generations 3, 4/);
  });

  it('symbols that do not match the dump, and a kallsyms read without privilege', () => {
    const kallsyms = 'ffffffff81000000 T _stext\nffffffff81000100 T foo\nffffffff81000200 T bar\n';
    const bin = writeStackMapBin({
      version: 2,
      generation: 1,
      littleEndian: true,
      records: [{ slot: 1, refCount: 1, ips: new BigUint64Array([0xffffffffa0001234n, 0xffffffffa0005678n]) }],
    });
    const c = ingestFiles([
      ['trace', trace(['<stack_id 1 gen 1>'])],
      ['stack_map_bin', bin],
      ['kallsyms', kallsyms],
    ]);
    const w = warnings(new ExplorerData(c));
    expect(ids(w)).toEqual(['symbols-mismatch']);
    expect(w[0].message).toContain('2 of 2 dump addresses fall outside every symbol');
    const zero = ingestFiles([['kallsyms', '0000000000000000 T _stext\n0000000000000000 T foo\n']]);
    expect(ids(warnings(new ExplorerData(zero)))).toEqual(['symbols-mismatch']);
  });

  it('the sample: fallbacks are information, nothing else', () => {
    const c = sampleCapture();
    const w = warnings(new ExplorerData(c));
    const fallbacks = c.stats[0].drops ?? 0;
    expect(ids(w)).toEqual(fallbacks > 0 ? ['drops'] : []);
    if (fallbacks > 0) expect(w[0]).toMatchObject({ level: 'info' });
  });
});

describe('warnings of a trace of many generations (issue 34, 15)', () => {
  it('generations without a dump: 20 named, the rest counted, with those the list left out', () => {
    const n = 1_500;
    const text = trace(Array.from({ length: 2 * n }, (_, i) => (i % 2 ? `<stack_id 1 gen ${(i + 1) / 2}>` : 'kmem_cache_alloc: call_site=x')));
    const dump = 'stack_id 1 gen 1 [ref 1, depth 1]\n => a+0x1/0x2\n\n';
    const gens = new Set([...text.matchAll(/gen (\d+)>/g)].map((m) => m[1]));
    const w = warnings(
      new ExplorerData(
        ingestFiles([
          ['trace', text],
          ['stack_map', dump],
        ]),
      ),
    ).find((x) => x.id === 'generation-without-dump')!;
    expect((w.message.match(/\(1 cookie\)/g) ?? []).length).toBe(20);
    const more = /, ([\d,]+) more generations, and perhaps some of the ([\d,]+) generations the generation list leaves out/.exec(w.message)!;
    // 20 named + the listed rest + gen 1 (has its dump) + those cut = every generation
    expect(20 + Number(more[1].replace(/,/g, '')) + 1 + Number(more[2].replace(/,/g, ''))).toBe(gens.size);
  });
});
