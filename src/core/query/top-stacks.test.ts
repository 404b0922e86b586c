import { describe, expect, it } from 'vitest';
import { ExplorerData } from './explorer-data.ts';
import { HAND_DUMP_GEN1, HAND_DUMP_GEN2, HAND_TRACE, handCapture, sampleCapture, handStacks } from '../testing/explorer-fixtures.ts';
import { ALL } from './api.ts';
import { summarize } from '../capture/summary.ts';
import { frameMatchMask, stackOccurrences, topStacks, type TopStacksSortKey } from './top-stacks.ts';
import { existsSync, readFileSync } from 'node:fs';
import { REPO_ROOT } from '../testing/real-traces-dir.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { RecordStatus } from '../capture/trace-columns-data.ts';
import { genValue } from './selection.ts';

describe('top stacks', () => {
  const c = handCapture();
  const d = new ExplorerData(c);
  const { S1, S2, S3 } = handStacks(c);

  it('ranks by occurrences, ties by first occurrence, with share, refCount, generations, bytes saved', () => {
    const r = topStacks(d, { selection: ALL, filter: '', limit: 10 });
    expect([r.total, r.matching]).toEqual([7, 3]);
    expect(r.rows).toEqual([
      // two v8 cookies (2 x (28 - 16)) and a full stack (saves nothing); hashes from Python's integers, slots from the fixture's dumps
      {
        stack: S1,
        stackHash: 'e5e29399c829f289',
        slots: [{ generation: 1, slot: 1 }],
        count: 3,
        share: 3 / 7,
        refCount: 2,
        generations: [1],
        leaf: 'a+0x1',
        depth: 2,
        variants: 1,
        weight: 3,
        bytesSaved: 24,
      },
      {
        stack: S2,
        stackHash: '159f8313055c2d45',
        slots: [
          { generation: 1, slot: 2 },
          { generation: 2, slot: 1 },
        ],
        count: 3,
        share: 3 / 7,
        refCount: 6,
        generations: [1, 2],
        leaf: 'c+0x3',
        depth: 2,
        variants: 1,
        weight: 3,
        bytesSaved: 36,
      },
      {
        stack: S3,
        stackHash: '9dc3bdb379e56521',
        slots: [{ generation: 1, slot: 3 }],
        count: 1,
        share: 1 / 7,
        refCount: 1,
        generations: [1],
        leaf: 'a+0x1',
        depth: 4,
        variants: 1,
        weight: 1,
        bytesSaved: 12 + 32 - 16,
      },
    ]);
  });

  it('filters by the frame as shown or its function (substring or /regex/), limits, and restricts refCount to the generation', () => {
    expect(topStacks(d, { selection: ALL, filter: 'D', limit: 10 }).rows.map((x) => x.stack)).toEqual([S3]);
    const re = topStacks(d, { selection: ALL, filter: '/^[ac]$/', limit: 1 });
    expect([re.matching, re.matchingOccurrences, re.rows.map((x) => x.stack)]).toEqual([3, 7, [S1]]);
    // the text as shown: `a+0x9` is a frame of S3 only, `+0x` is in every frame
    const shown = topStacks(d, { selection: ALL, filter: 'a+0x9', limit: 10 });
    expect([shown.matching, shown.matchingOccurrences, shown.rows.map((x) => x.stack)]).toEqual([1, 1, [S3]]);
    expect(topStacks(d, { selection: ALL, filter: '/^c\\+0x3$/', limit: 10 }).rows.map((x) => x.stack)).toEqual([S2]);
    expect(topStacks(d, { selection: ALL, filter: '+0x', limit: 10 }).matching).toBe(3);
    expect(topStacks(d, { selection: ALL, filter: '0x7', limit: 10 }).matchingOccurrences).toBe(0);
    const g2 = topStacks(d, { selection: { range: null, generation: 2, cpus: null }, filter: '', limit: 10 });
    expect(g2.rows.map((x) => [x.stack, x.count, x.refCount, x.generations])).toEqual([[S2, 2, 5, [2]]]);
  });

  it('`stack:<stack_hash>` keeps that one stack', () => {
    const r = topStacks(d, { selection: ALL, filter: 'stack:9dc3bdb379e56521', limit: 10 });
    expect([r.matching, r.matchingOccurrences, r.rows.map((x) => x.stack)]).toEqual([1, 1, [S3]]);
    expect(topStacks(d, { selection: ALL, filter: 'stack:0000000000000000', limit: 10 }).matching).toBe(0);
    // not a hash: searched as text (no frame has it)
    expect(topStacks(d, { selection: ALL, filter: 'stack:9dc3', limit: 10 }).matching).toBe(0);
  });

  it('an invalid regex, or one RE2 cannot run, is an error, not an empty table', () => {
    const bad = topStacks(d, { selection: ALL, filter: '/(/', limit: 10 });
    expect([bad.rows, bad.matching, bad.total]).toEqual([[], 0, 7]);
    expect(bad.error).toMatch(/Invalid regular expression/);
    expect(topStacks(d, { selection: ALL, filter: '(', limit: 10 }).error).toBeNull();
    const backref = topStacks(d, { selection: ALL, filter: '/(a)\\1/', limit: 10 });
    expect([backref.rows, backref.matching, backref.total]).toEqual([[], 0, 7]);
    expect(backref.error).toBe('search pattern /(a)\\1/: \\1 is a backreference, which RE2 cannot run in linear time');
    expect(topStacks(d, { selection: ALL, filter: '/(?=a)/', limit: 10 }).error).toMatch(
      /^search pattern \/\(\?=a\)\/: RE2 cannot run it: invalid or unsupported Perl syntax/,
    );
  });

  it('a pattern that backtracks natively (nested repeats) is answered, frame by frame as JavaScript answers its linear twin', () => {
    const s = new ExplorerData(sampleCapture());
    // ^(\w+)*_alloc$ and ^\w*_alloc$ are the same language; only the second is safe on a backtracking engine
    const twin = /^\w*_alloc$/;
    const want = Uint8Array.from(s.stacks.frames.strings, (f, i) => (twin.test(f) || twin.test(s.fnNames[s.fnOfFrame[i]]) ? 1 : 0));
    expect(want.some((x) => x === 1)).toBe(true);
    expect(frameMatchMask(s, '/^(\\w+)*_alloc$/')).toEqual(want);
    const r = topStacks(s, { selection: ALL, filter: '/^(\\w+)*_alloc$/', limit: 10 });
    expect(r.error).toBeNull();
    expect(r.matching).toBeGreaterThan(0);
    // no frame ends in '!': the pattern that used to run out of its time budget matches nothing
    const none = topStacks(s, { selection: ALL, filter: '/^(\\w+)*!$/', limit: 10 });
    expect([none.error, none.matching, s.stacks.frames.strings.some((f) => /^\w*!$/.test(f))]).toEqual([null, 0, false]);
  });

  it('sorts every matching stack by a column before the limit', () => {
    const by = (key: TopStacksSortKey, dir: 'asc' | 'desc', limit = 10) =>
      topStacks(d, { selection: ALL, filter: '', limit, sort: { key, dir } }).rows.map((x) => x.stack);
    expect(by('depth', 'desc')).toEqual([S3, S1, S2]);
    expect(by('depth', 'asc', 1)).toEqual([S1]);
    expect(by('refCount', 'desc')).toEqual([S2, S1, S3]);
    expect(by('leaf', 'desc')).toEqual([S2, S1, S3]);
    expect(by('bytesSaved', 'asc')).toEqual([S1, S3, S2]);
    expect(by('generations', 'desc')).toEqual([S2, S1, S3]);
    expect(by('count', 'asc')).toEqual([S3, S1, S2]);
  });

  it('sample: the busiest leaf frame (`__kmalloc+0x…`) matches the stacks that show it, as counted over their frames', () => {
    const s = sampleCapture();
    const x = new ExplorerData(s);
    const cliTop = summarize(s).top;
    const frame = cliTop[0].frames[0];
    expect(frame).toMatch(/^__kmalloc\+0x[0-9a-f]+$/);
    const all = topStacks(x, { selection: ALL, filter: '', limit: 1e9 }).rows;
    const want = all.filter((r) => s.stacks.framesOf(r.stack).some((f) => f.toLowerCase().includes(frame)));
    const got = topStacks(x, { selection: ALL, filter: frame, limit: 1e9 });
    expect(want.length).toBeGreaterThan(1);
    expect(got.rows.map((r) => r.stack)).toEqual(want.map((r) => r.stack));
    expect(got.matchingOccurrences).toBe(want.reduce((n, r) => n + r.count, 0));
    // the command line's top stacks that hold the frame are among them, with their counts
    const cli = cliTop.filter((t) => t.frames.includes(frame));
    for (const t of cli) expect(got.rows.some((r) => r.count === t.count && s.stacks.framesOf(r.stack).join() === t.frames.join())).toBe(true);
  });

  it('a brushed range filters the stacks', () => {
    const r = topStacks(d, { selection: { range: [100.000003, 100.000005], generation: null, cpus: null }, filter: '', limit: 10 });
    expect(r.rows.map((x) => [x.stack, x.count])).toEqual([
      [S1, 2],
      [S3, 1],
    ]);
    expect(r.total).toBe(3);
  });

  it('occurrences of one stack, as timestamps', () => {
    expect(Array.from(stackOccurrences(d, S1, ALL))).toEqual([100.000001, 100.000003, 100.000004]);
    expect(Array.from(stackOccurrences(d, S2, { range: null, generation: 2, cpus: [1] }))).toEqual([101.000003]);
  });

  it('sample: agrees with summarize().top', () => {
    const s = sampleCapture();
    const top = topStacks(new ExplorerData(s), { selection: ALL, filter: '', limit: 10 });
    const sum = summarize(s);
    expect(top.rows.map((r) => [r.count, s.stacks.framesOf(r.stack)])).toEqual(sum.top.map((t) => [t.count, t.frames]));
    expect(top.total).toBe(sum.resolved + sum.fullStacks);
  });
});

// The v7 document's own example (../shared/seeds/, where the checkout has it): its trace line and
// its stack_map entry, taken from the seed as written. The row's slot, ref_count and frames are
// the seed's numbers and lines, read here by splitting the text, not by the project's readers.
const V7_DOC = `${REPO_ROOT}../shared/seeds/ftrace-stackmap-v7-doc.readable.txt`;
describe("the v7 document's example", () => {
  it.skipIf(!existsSync(V7_DOC))("is one row: the dump's slot and ref_count, the listed frames, one occurrence", () => {
    const lines = readFileSync(V7_DOC, 'utf8')
      .split('\n')
      .map((l) => l.replace(/^\+/, ''));
    const event = lines.find((l) => l.includes(': <stack_id '))!.trim();
    const head = lines.findIndex((l) => /^ stack_id \d+ \[ref \d+, depth \d+\]$/.test(l));
    const frames: string[] = [];
    for (let i = head + 1; lines[i].trim().startsWith('['); i++) frames.push(lines[i].trim());
    // `stack_id 42 [ref 1337, depth 8]`: the slot, then the ref_count
    const [slot, ref] = (lines[head].match(/\d+/g) ?? []).map(Number);
    const c = ingestFiles([
      ['trace', `            ${event}\n`],
      ['stack_map', `${lines[head].trim()}\n${frames.map((f) => `  ${f}`).join('\n')}\n\n`],
    ]);
    const r = topStacks(new ExplorerData(c), { selection: ALL, filter: '', limit: 200 });
    expect(r.rows).toHaveLength(1);
    const row = r.rows[0];
    expect(row.slots).toEqual([{ generation: 'none', slot }]);
    expect(row.refCount).toBe(ref);
    expect(row.count).toBe(1);
    expect(row.depth).toBe(frames.length);
    expect(c.stacks.framesOf(row.stack)).toEqual(frames.map((f) => f.replace(/^\[\d+\] /, '').replace(/\/0x[0-9a-f]+$/, '')));
  });
});

describe("top stacks: each row's generations", () => {
  // both ways generationsOf finds a record's row: an array over the nodes (the hand capture: few
  // nodes beside its records) and a keyed table of the page's stacks (the sample: 2,000 events,
  // a dump of many more nodes); the second method is a plain loop over the records
  // the hand capture with a dump of 1,000 stacks no record cites (5,000 nodes): the keyed table
  const wide = () => {
    const dump = Array.from(
      { length: 1000 },
      (_, i) => `stack_id ${i + 1} gen 5 [ref 1, depth 5]\n${Array.from({ length: 5 }, (_, k) => ` => w${i}_${k}+0x1/0x10\n`).join('')}\n`,
    ).join('');
    return ingestFiles([
      ['trace', HAND_TRACE],
      ['stack_map.gen1', HAND_DUMP_GEN1],
      ['stack_map.gen2', HAND_DUMP_GEN2],
      ['stack_map.gen5', dump],
    ]);
  };
  it.each([
    ['the hand capture', handCapture],
    ['the sample', sampleCapture],
    ['the hand capture beside a wide dump', wide],
  ])('%s: the generations of each row are those of its resolved, unverified and full records', (_, make) => {
    const d = new ExplorerData(make());
    const rows = topStacks(d, { selection: ALL, filter: '', limit: 60 }).rows;
    expect(rows.length).toBeGreaterThan(2);
    const plain = new Map<number, Set<number>>();
    for (let r = 0; r < d.rec.stack.length; r++) {
      const st = d.rec.status[r];
      if (st !== RecordStatus.Resolved && st !== RecordStatus.Unverified && st !== RecordStatus.Full) continue;
      const s = d.rec.stack[r];
      if (!plain.has(s)) plain.set(s, new Set());
      plain.get(s)!.add(d.recGen[r]);
    }
    for (const row of rows) expect(row.generations, `stack ${row.stack}`).toEqual([...(plain.get(row.stack) ?? [])].sort((a, b) => a - b).map(genValue));
  });
});
