import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeStackMapBin } from '../formats/stack-map-write.ts';
import { bannerText, groupDigits, sessionBanners } from './banners.ts';
import { line } from '../testing/explorer-fixtures.ts';
import { summarize } from './summary.ts';
import { realIt, realTracePath } from '../testing/real-traces.ts';
import { ingestFiles } from '../testing/test-helpers.ts';

const trace = (payloads: string[]) => '# tracer: nop\n' + payloads.map((p, i) => line('bash-1234', 1, (100 + i * 0.001).toFixed(6), p)).join('\n') + '\n';
const ids = (bs: { id: string }[]) => bs.map((b) => b.id);

const SAMPLE = 'public/samples/';
const read = (path: string) => new Uint8Array(readFileSync(path));
const sampleNames = (JSON.parse(readFileSync(SAMPLE + 'index.json', 'utf8')) as { files: string[] }).files;
const summaryOf = (paths: string[]) => summarize(ingestFiles(paths.map((p) => [basename(p), read(p)])));
const bannersOf = (paths: string[]) => sessionBanners(summaryOf(paths));
const sample = (keep: (name: string) => boolean) => sampleNames.filter(keep).map((n) => SAMPLE + n);
/** lines of a text file that contain `s`: a count by other code than the readers */
const linesWith = (path: string, s: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.includes(s)).length;

describe('banners', () => {
  it('the whole sample: nothing is missing', () => {
    expect(bannersOf(sample(() => true))).toEqual([]);
  });

  realIt('a trace with no stack records says to set options/stacktrace and options/stackmap', () => {
    const path = realTracePath('catapult-atrace_data.txt');
    const b = bannersOf([path]);
    expect(ids(b)).toEqual(['no-stacks']);
    expect(b[0].files).toEqual(['catapult-atrace_data.txt']);
    const text = bannerText(b[0].body);
    // the header says 116/116 entries; every line that is not a comment is an event
    const events = readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#')).length;
    expect(events).toBe(116);
    expect(text).toContain(`catapult-atrace_data.txt has ${events} events but no kernel stack records`);
    expect(text).toContain('`echo 1 > /sys/kernel/tracing/options/stacktrace`');
    expect(text).toContain('`echo 1 > /sys/kernel/tracing/options/stackmap`');
  });

  it('cookies and no dump: which files to copy, before each reset', () => {
    const b = bannersOf([SAMPLE + 'trace']);
    expect(ids(b)).toEqual(['no-dump']);
    expect(b[0]).toMatchObject({ level: 'error', files: ['trace'], rejected: false });
    const cookies = linesWith(SAMPLE + 'trace', '<stack_id ');
    const text = bannerText(b[0].body);
    expect(text).toContain(`trace holds ${groupDigits(cookies)} stack ids`);
    expect(text).toContain('generations 1, 2 and 3');
    // the v8 cover letter: "the binary export, its parser and the capacity boot parameter will
    // follow as a separate series", so v8 as posted is read through its text stack_map
    expect(text).toContain('Copy `/sys/kernel/tracing/stack_map` before each reset');
    expect(text).toContain('`stack_map_bin` is the proposed follow-up series');
  });

  it('a v7 trace and no dump: copy stack_map before any reset', () => {
    const c = ingestFiles([['trace', trace(['<stack_id 1>', '<stack_id 2>'])]]);
    const b = sessionBanners(summarize(c));
    expect(ids(b)).toEqual(['no-dump']);
    expect(bannerText(b[0].body)).toContain('right after stopping the trace and before any reset');
  });

  it('binary dumps without kallsyms: hex frames, fallbacks that no longer merge, copy /proc/kallsyms as root', () => {
    const bins = sampleNames.filter((n) => n.startsWith('stack_map_bin'));
    const fallbacks = linesWith(SAMPLE + 'trace', '<stack trace>');
    expect(fallbacks).toBeGreaterThan(0);
    // without the text dump too: every generation's stacks are raw addresses
    const noText = bannersOf(sample((n) => n !== 'kallsyms' && !n.startsWith('stack_map.')));
    expect(ids(noText)).toEqual(['no-kallsyms']);
    expect(noText[0].files).toEqual(bins);
    const text = bannerText(noText[0].body);
    expect(text).toContain(`${bins.join(', ').replace(/, (?=[^,]*$)/, ' and ')} hold raw kernel addresses and no kallsyms is loaded`);
    expect(text).toContain('the stacks of generations 1, 2 and 3 show as hex addresses');
    expect(text).toContain(`the trace’s ${fallbacks} full stacks (fallbacks)`);
    expect(text).toContain('`sudo cat /proc/kallsyms > kallsyms`');
    // the text dump of generation 3 names its stacks: only 1 and 2 stay hex
    const withText = bannersOf(sample((n) => n !== 'kallsyms'));
    expect(ids(withText)).toEqual(['no-kallsyms']);
    expect(bannerText(withText[0].body)).toContain('the stacks of generations 1 and 2 show as hex addresses');
    // binary and text of every generation loaded: nothing stays hex (generations 1 and 2 have no dump at all)
    expect(ids(bannersOf(sample((n) => n !== 'kallsyms' && (n === 'trace' || n.endsWith('gen3')))))).toEqual(['generation-without-dump']);
  });

  it('a kallsyms read without root counts as none, and is named', () => {
    const zero = '0000000000000000 T _stext\n0000000000000000 T foo\n';
    const bin = writeStackMapBin({
      version: 2,
      generation: 1,
      littleEndian: true,
      records: [{ slot: 1, refCount: 1, ips: new BigUint64Array([0xffffffff81000100n]) }],
    });
    const b = sessionBanners(
      summarize(
        ingestFiles([
          ['trace', trace(['<stack_id 1 gen 1>'])],
          ['stack_map_bin', bin],
          ['kallsyms', zero],
        ]),
      ),
    );
    expect(ids(b)).toEqual(['no-kallsyms']);
    expect(b[0].files).toEqual(['stack_map_bin', 'kallsyms']);
    expect(bannerText(b[0].body)).toContain('(kallsyms holds only zero addresses: read without root)');
  });

  it('a generation whose dump is missing', () => {
    const b = bannersOf(sample((n) => n !== 'stack_map_bin.gen2'));
    expect(ids(b)).toEqual(['generation-without-dump']);
    const gen2 = linesWith(SAMPLE + 'trace', ' gen 2>');
    expect(bannerText(b[0].body)).toMatch(
      new RegExp(`^trace has ids of generation 2 \\(${groupDigits(gen2)} ids\\) with no dump of that generation among stack_map_bin.gen1, `),
    );
  });

  it('dumps and no trace', () => {
    const b = bannersOf(sample((n) => n !== 'trace'));
    expect(ids(b)).toEqual(['no-trace']);
    expect(b[0].files).toEqual(sampleNames.filter((n) => n.startsWith('stack_map_bin') || n.startsWith('stack_map.')));
  });

  realIt('trace.dat and perf script are read', () => {
    // a trace.dat is read (issue 12.2): a trace with events and no kernel stacks
    const dat = bannersOf([realTracePath('trappy-trace.dat')]);
    expect(ids(dat)).toEqual(['no-stacks']);
    expect(dat[0].files).toEqual(['trappy-trace.dat']);
    // perf script samples carry full stacks: nothing is missing
    expect(bannersOf([realTracePath('flamegraph-perf-dd-stacks-01.txt')])).toEqual([]);
  });

  it('unknown bytes are said to be no known format', () => {
    const noise = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256);
    const u = sessionBanners(summarize(ingestFiles([['noise.bin', noise]])));
    expect(ids(u)).toEqual(['unrecognized']);
    expect(u[0].files).toEqual(['noise.bin']);
    expect(u[0].level).toBe('error');
  });

  it('an unknown file beside a capture that loaded is a note, and the sample folder’s index.json says what it is', () => {
    // the whole of public/samples/, as a folder drop gives it: its index.json among the capture's files
    const names = [...sampleNames, 'index.json'];
    const b = bannersOf(names.map((n) => SAMPLE + n));
    const u = b.filter((x) => x.id === 'unrecognized');
    expect(u).toHaveLength(1);
    expect(u[0]).toMatchObject({ level: 'note', files: ['index.json'], title: 'Not read' });
    expect(bannerText(u[0].body)).toContain('`index.json` is how the sample folder lists its files');
    // no other banner is about it, and nothing in the load is an error
    expect(b.filter((x) => x.level === 'error')).toEqual([]);
  });

  it('a load that understood nothing: the rejected files first, said to have left the capture as it was', () => {
    const before = summaryOf(sample(() => true));
    const noise = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256);
    const rejected = summarize(ingestFiles([['noise.bin', noise]])).files;
    const b = sessionBanners(before, rejected);
    expect(ids(b)).toEqual(['unrecognized']);
    for (const x of b) {
      expect(x).toMatchObject({ rejected: true, level: 'error' });
      expect(x.title).toMatch(/^Not loaded: /);
      expect(bannerText(x.body)).toContain('the capture shown is still the one opened before');
    }
    // with no capture before it, the rejected files alone
    expect(ids(sessionBanners(null, rejected))).toEqual(['unrecognized']);
  });

  it('numbers are grouped as the page prints them', () => {
    const en = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
    for (const n of [0, 7, 999, 1000, 16384, 1234567, -98765, 4294967295]) expect(groupDigits(n)).toBe(en.format(n));
    expect(bannerText(['a ', { num: 16384 }, ' ', { code: 'x' }, ' ', { file: 'f' }])).toBe('a 16,384 `x` f');
  });
});

describe('banners of a trace of many generations (issue 34, 15)', () => {
  const manyGens = (n: number) => trace(Array.from({ length: 2 * n }, (_, i) => (i % 2 ? `<stack_id 1 gen ${(i + 1) / 2}>` : 'kmem_cache_alloc: call_site=x')));

  it('no dump: the first generations named, the rest counted, those the list left out included', () => {
    const text = manyGens(1_500);
    const gens = new Set([...text.matchAll(/gen (\d+)>/g)].map((m) => m[1]));
    const [b] = sessionBanners(summarize(ingestFiles([['trace', text]])));
    expect(b.id).toBe('no-dump');
    const words = bannerText(b.body);
    expect(words).toContain('generations 1, 2, 3, ');
    const named = /generations ([\d, ]+) and ([\d,]+) more\)/.exec(words)!;
    const listed = named[1].split(', ').length;
    expect(listed + Number(named[2].replace(/,/g, ''))).toBe(gens.size);
  });

  it('a dump of one generation: the generations without one named up to a bound, the rest counted', () => {
    const text = manyGens(1_500);
    const dump = 'stack_id 1 gen 1 [ref 1, depth 1]\n => a+0x1/0x2\n\n';
    const b = sessionBanners(
      summarize(
        ingestFiles([
          ['trace', text],
          ['stack_map', dump],
        ]),
      ),
    ).find((x) => x.id === 'generation-without-dump')!;
    const words = bannerText(b.body);
    // the parts of the body: at most 20 generations by name, then a count of the listed rest and of those the list left out
    expect((words.match(/\(1 id\)/g) ?? []).length).toBe(20);
    expect(words).toMatch(/ and [\d,]+ more \(and perhaps some of the [\d,]+ generations the list leaves out\)/);
  });
});
