import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExplorerData } from './explorer-data.ts';
import { handCapture, line, sampleCapture, stackOf } from '../testing/explorer-fixtures.ts';
import { flame, ROOT_NAME } from './flame.ts';
import { ALL, type FlameTree, type Selection } from './api.ts';
import { selectionSummary } from './selection-summary.ts';
import { ingestFiles } from '../testing/test-helpers.ts';

/** a tree as nested text lines: "  name value/self", children indented, in array (pre-)order */
function show(t: FlameTree): string[] {
  return Array.from(t.value, (v, i) => '  '.repeat(t.depth[i]) + `${t.names[t.name[i]]} ${v}/${t.self[i]}`);
}

/** the tree's invariants: pre-order, parents before children, sorted children, value = self + children */
function checkTree(t: FlameTree): void {
  const n = t.value.length;
  const childSum = new Float64Array(n);
  for (let i = 1; i < n; i++) {
    const p = t.parent[i];
    expect(p).toBeLessThan(i);
    expect(t.depth[i]).toBe(t.depth[p] + 1);
    childSum[p] += t.value[i];
  }
  for (let i = 0; i < n; i++) expect(t.value[i]).toBeCloseTo(t.self[i] + childSum[i], 6);
  // siblings by descending value
  const last = new Map<number, number>();
  for (let i = 1; i < n; i++) {
    const prev = last.get(t.parent[i]);
    if (prev !== undefined) expect(t.value[prev]).toBeGreaterThanOrEqual(t.value[i]);
    last.set(t.parent[i], i);
  }
  expect(t.total).toBe(n ? t.value[0] : 0);
}

describe('flame graphs', () => {
  const c = handCapture();
  const d = new ExplorerData(c);
  const S3 = stackOf(c, ['a+0x1', 'd+0x4', 'a+0x9', 'b+0x2']);
  // merged by function (these fixtures are ftrace stacks, whose default is by call site)
  const req = { selection: ALL, weight: 'occurrences', focus: null, highlightStack: null, granularity: 'function' } as const;

  it('top-down: root = outermost caller, merged by function', () => {
    const { tree, callers } = flame(d, { ...req, mode: 'top-down', highlightStack: S3 });
    expect(callers).toBeNull();
    expect(show(tree)).toEqual(['all 7/0', '  b 7/0', '    a 4/3', '      d 1/0', '        a 1/1', '    c 3/3']);
    expect(Array.from(tree.highlight)).toEqual([0, 1, 2, 3, 4]);
    checkTree(tree);
  });

  it('bottom-up: leaf functions first, then their callers', () => {
    const { tree } = flame(d, { ...req, mode: 'bottom-up' });
    expect(show(tree)).toEqual(['all 7/0', '  a 4/0', '    b 3/3', '    d 1/0', '      a 1/0', '        b 1/1', '  c 3/0', '    b 3/3']);
    checkTree(tree);
  });

  it('sandwich: callees merged from every call of the focus, recursion once; callers bottom-up', () => {
    const a = flame(d, { ...req, mode: 'sandwich', focus: 'a', highlightStack: S3 });
    expect(show(a.tree)).toEqual(['a 4/3', '  d 1/0', '    a 1/1']);
    expect(show(a.callers!)).toEqual(['a 4/0', '  b 3/3', '  d 1/0', '    a 1/0', '      b 1/1']);
    expect(Array.from(a.tree.highlight)).toEqual([0, 1, 2]);
    const b = flame(d, { ...req, mode: 'sandwich', focus: 'b' });
    expect(show(b.tree)).toEqual(['b 7/0', '  a 4/3', '    d 1/0', '      a 1/1', '  c 3/3']);
    expect(show(b.callers!)).toEqual(['b 7/7']);
    const none = flame(d, { ...req, mode: 'sandwich', focus: 'nope' });
    expect(none.tree.total).toBe(0);
  });

  it('each node lists the frames (sym+0xoff) merged into it, heaviest first, summing to its value', () => {
    const { tree } = flame(d, { ...req, mode: 'top-down' });
    const frames = (i: number) =>
      Array.from(
        { length: tree.frameStart[i + 1] - tree.frameStart[i] },
        (_, j) => `${tree.frameNames[tree.frameOf[tree.frameStart[i] + j]]} ${tree.frameValue[tree.frameStart[i] + j]}`,
      );
    // all > b > [a (S1's a+0x1, S3's a+0x9) > d > a (S3's a+0x1)], [c]
    expect([0, 1, 2, 3, 4, 5].map(frames)).toEqual([[], ['b+0x2 7'], ['a+0x1 3', 'a+0x9 1'], ['d+0x4 1'], ['a+0x1 1'], ['c+0x3 3']]);
    for (let i = 1; i < tree.parent.length; i++) {
      let sum = 0;
      for (let j = tree.frameStart[i]; j < tree.frameStart[i + 1]; j++) sum += tree.frameValue[j];
      expect(sum).toBe(tree.value[i]);
    }
  });

  it('search: marks the nodes with a matching frame or function, and counts matching stacks once', () => {
    const at = (q: string, mode: 'top-down' | 'bottom-up' = 'top-down') => flame(d, { ...req, mode, search: q }).search!;
    // a frame as shown: only S3 goes through a+0x9
    const x = at('a+0x9');
    expect([Array.from(x.mask), x.stacks, x.value, x.share, x.error]).toEqual([[0, 0, 1, 0, 0, 0], 1, 1, 1 / 7, null]);
    // a function: both a nodes; S1 and S3 (S3 counted once although it has two)
    const a = at('/^a$/');
    expect([Array.from(a.mask), a.stacks, a.value]).toEqual([[0, 0, 1, 0, 1, 0], 2, 4]);
    expect(at('+0x').share).toBe(1);
    expect(at('b+0x2', 'bottom-up').stacks).toBe(3);
    const bad = at('/(/');
    expect([bad.stacks, Array.from(bad.mask).some(Boolean)]).toEqual([0, false]);
    expect(bad.error).toMatch(/Invalid regular expression/);
    expect(flame(d, { ...req, mode: 'top-down' }).search).toBeNull();
    // sandwich: the focus function itself matches every stack of it
    const sw = flame(d, { ...req, mode: 'sandwich', focus: 'a', search: '/^a$/' }).search!;
    expect([sw.stacks, sw.value, sw.share, sw.mask[0], sw.callerMask![0]]).toEqual([2, 4, 1, 1, 1]);
  });

  it("search `stack:<stack_hash>`: the nodes on that stack's path, and its weight", () => {
    // S3 = b > a > d > a; its stack_hash from Python's integers (top-stacks.test.ts)
    const r = flame(d, { ...req, mode: 'top-down', search: 'stack:9dc3bdb379e56521' }).search!;
    expect([Array.from(r.mask), r.stacks, r.value]).toEqual([[1, 1, 1, 1, 1, 0], 1, 1]);
    const sw = flame(d, { ...req, mode: 'sandwich', focus: 'd', search: 'stack:9dc3bdb379e56521' }).search!;
    expect([Array.from(sw.mask), Array.from(sw.callerMask!), sw.share]).toEqual([[1, 1], [1, 1, 1], 1]);
  });

  it('search: a pattern that backtracks natively (nested repeats) marks what its linear twin marks', () => {
    const s = new ExplorerData(sampleCapture());
    // ^(\w+)*_alloc$ and ^\w*_alloc$ are one language (top-stacks.test.ts checks the frames against JavaScript's RegExp)
    const r = flame(s, { ...req, mode: 'top-down', search: '/^(\\w+)*_alloc$/' }).search!;
    const twin = flame(s, { ...req, mode: 'top-down', search: '/^\\w*_alloc$/' }).search!;
    expect(r.error).toBeNull();
    expect(r.stacks).toBeGreaterThan(0);
    expect([Array.from(r.mask), r.stacks, r.value]).toEqual([Array.from(twin.mask), twin.stacks, twin.value]);
    const none = flame(s, { ...req, mode: 'top-down', search: '/^(\\w+)*!$/' }).search!;
    expect([none.error, none.stacks]).toEqual([null, 0]);
  });

  it('search: a pattern RE2 cannot run is an error naming it, and marks nothing', () => {
    const r = flame(d, { ...req, mode: 'top-down', search: '/(?!a)b/' }).search!;
    expect(r.error).toMatch(/^search pattern \/\(\?!a\)b\/: RE2 cannot run it: invalid or unsupported Perl syntax: `\(\?!`/);
    expect([r.stacks, Array.from(r.mask).every((x) => x === 0)]).toEqual([0, true]);
  });

  it('sandwich without a function (or an unknown one) offers the busiest leaf functions', () => {
    const none = flame(d, { ...req, mode: 'sandwich', focus: null });
    expect(none.tree.total).toBe(0);
    // self: a 3 (S1) + 1 (S3), c 3; total: b 7, a 4, c 3, d 1
    expect(none.suggestions).toEqual([
      { name: 'a', self: 4, total: 4 },
      { name: 'c', self: 3, total: 3 },
      { name: 'b', self: 0, total: 7 },
      { name: 'd', self: 0, total: 1 },
    ]);
    // a name that is not there: those containing the text typed
    expect(flame(d, { ...req, mode: 'sandwich', focus: 'C' }).suggestions).toEqual([{ name: 'c', self: 3, total: 3 }]);
    expect(flame(d, { ...req, mode: 'sandwich', focus: 'a' }).suggestions).toBeNull();
  });

  it("refcount weight: each stack once, by the ref_counts of the selection's generations", () => {
    const { tree } = flame(d, { ...req, mode: 'top-down', weight: 'refcount' });
    // S1: gen 1 ref 2; S2: gen 1 ref 1 + gen 2 ref 5; S3: gen 1 ref 1
    expect(show(tree)).toEqual(['all 9/0', '  b 9/0', '    c 6/6', '    a 3/2', '      d 1/0', '        a 1/1']);
    const g2 = flame(d, { ...req, mode: 'top-down', weight: 'refcount', selection: { range: null, generation: 2, cpus: null } });
    expect(g2.tree.total).toBe(5);
  });

  it('sample: top-down and bottom-up totals equal the occurrences of the selection', () => {
    const s = new ExplorerData(sampleCapture());
    for (const selection of [ALL, { range: null, generation: 3, cpus: [1, 2] }] as Selection[]) {
      const sum = selectionSummary(s, selection);
      const td = flame(s, { ...req, selection, mode: 'top-down' }).tree;
      const bu = flame(s, { ...req, selection, mode: 'bottom-up' }).tree;
      expect(td.total).toBe(sum.resolved + sum.fullStacks);
      expect(bu.total).toBe(td.total);
      checkTree(td);
      checkTree(bu);
      // the sandwich of the hottest root-level function covers all of it
      const top = td.names[td.name[1]];
      const sw = flame(s, { ...req, selection, mode: 'sandwich', focus: top });
      expect(sw.tree.total).toBe(td.value[1]);
      expect(sw.callers!.total).toBe(td.value[1]);
      checkTree(sw.tree);
      checkTree(sw.callers!);
    }
  });

  it('property: flame totals equal occurrence counts for random captures', () => {
    const fns = ['f', 'g', 'h', 'k'];
    const stackArb = fc.array(fc.constantFrom(...fns), { minLength: 1, maxLength: 5 });
    const recordArb = fc.record({
      cpu: fc.integer({ min: 0, max: 2 }),
      kind: fc.constantFrom('cookie', 'full', 'none'),
      slot: fc.integer({ min: 0, max: 5 }),
      gen: fc.integer({ min: 1, max: 2 }),
      full: stackArb,
    });
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 40 }), fc.array(stackArb, { minLength: 6, maxLength: 6 }), (recs, dumpStacks) => {
        const lines = ['# tracer: nop'];
        recs.forEach((r, i) => {
          const ts = (10 + i * 0.001).toFixed(6);
          lines.push(line('p-1', r.cpu, ts, 'ev: x'));
          if (r.kind === 'cookie') lines.push(line('p-1', r.cpu, ts, `<stack_id ${r.slot} gen ${r.gen}>`));
          if (r.kind === 'full') lines.push(line('p-1', r.cpu, ts, '<stack trace>'), ...r.full.map((f, k) => ` => ${f}+0x${k + 1}/0x40`));
        });
        // gen 1 dump holds slots 0..4 (slot 5 stays no-slot), gen 2 has none
        const dump = dumpStacks
          .slice(0, 5)
          .map((st, slot) => `stack_id ${slot} gen 1 [ref ${slot + 1}, depth ${st.length}]\n` + st.map((f) => ` => ${f}+0x1/0x40\n`).join('') + '\n')
          .join('');
        const x = new ExplorerData(
          ingestFiles([
            ['trace', lines.join('\n') + '\n'],
            ['map', dump],
          ]),
        );
        const expected = recs.filter((r) => r.kind === 'full' || (r.kind === 'cookie' && r.gen === 1 && r.slot < 5)).length;
        for (const mode of ['top-down', 'bottom-up'] as const) {
          const t = flame(x, { ...req, mode }).tree;
          expect(t.total).toBe(expected);
          expect(t.names[t.name[0]]).toBe(ROOT_NAME);
          checkTree(t);
        }
        for (const f of fns) {
          const sw = flame(x, { ...req, mode: 'sandwich', focus: f });
          expect(sw.tree.total).toBe(sw.callers!.total);
          expect(sw.tree.total).toBeLessThanOrEqual(expected);
        }
      }),
      { numRuns: 60 },
    );
  });
});
