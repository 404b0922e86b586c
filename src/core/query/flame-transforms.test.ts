// The flame graph's transforms (flame-transforms.ts) held to a second reading: the sample's top
// stacks as lists of function names (the explorer's own listing of each stack's frames, offsets
// cut by a regex here), rewritten by plain array code written below, then merged by path. The tree
// the transforms build must hold the same weight on every root-to-leaf path.
import { describe, expect, it } from 'vitest';
import { Explorer } from './explorer.ts';
import { handCapture, sampleCapture } from '../testing/explorer-fixtures.ts';
import { flame, ROOT_NAME } from './flame.ts';
import type { FlameMode, FlameTree, Selection } from './api.ts';
import { describeTransform, formatTransforms, functionOfName, parseTransforms, type FlameTransform } from './flame-transforms.ts';

const ALL_SEL: Selection = { range: null, generation: null, cpus: null };
const sample = new Explorer(sampleCapture());
// the hand capture's stack 3 is a, d, a, b leaf first: a recursion of a through d
const hand = new Explorer(handCapture());

/** the selection's stacks, root first, as function names, with their occurrences: the second reading's input */
function stacksRootFirst(ex: Explorer): { fns: string[]; count: number }[] {
  const { rows } = ex.topStacks({ selection: ALL_SEL, filter: '', limit: 1e6, granularity: 'site' });
  return rows.map((r) => ({
    fns: ex
      .stackFrames(r.stack)
      .map((f) => f.replace(/\+0x[0-9a-f]+$/, ''))
      .reverse(),
    count: r.count,
  }));
}

/** the transforms by plain array code, root first */
function rewrite(fns: string[], list: FlameTransform[]): string[] | null {
  let s = fns;
  for (const t of list) {
    if (t.kind === 'merge') s = s.filter((f) => f !== t.fn);
    else if (t.kind === 'drop') {
      const re = new RegExp(t.pattern.slice(1, -1));
      s = s.filter((f) => !re.test(f));
    } else {
      const first = s.indexOf(t.fn);
      const last = s.lastIndexOf(t.fn);
      if (t.kind === 'focus') {
        if (first < 0) return null;
        s = s.slice(first);
      } else if (first >= 0 && first < last) s = [...s.slice(0, first + 1), ...s.slice(last + 1)];
    }
  }
  return s;
}

/** path (root first, names joined by ;) -> weight of the stacks ending there */
function expected(list: FlameTransform[], mode: FlameMode, ex = sample): Map<string, number> {
  const out = new Map<string, number>();
  for (const { fns, count } of stacksRootFirst(ex)) {
    const r = rewrite(fns, list);
    if (!r) continue;
    const key = (mode === 'bottom-up' ? [...r].reverse() : r).join(';');
    out.set(key, (out.get(key) ?? 0) + count);
  }
  return out;
}

/** the tree's nodes with self weight, by their path from the root (the root itself as '') */
function selfByPath(t: FlameTree): Map<string, number> {
  const out = new Map<string, number>();
  const path: string[] = [];
  for (let i = 0; i < t.parent.length; i++) {
    // the root is depth 0 and on no path; a node at depth k is the k-th name
    path.length = Math.max(0, t.depth[i] - 1);
    if (i > 0) path.push(t.names[t.name[i]]);
    if (t.self[i] > 0) out.set(path.join(';'), (out.get(path.join(';')) ?? 0) + t.self[i]);
  }
  return out;
}

const tree = (transforms: FlameTransform[], mode: FlameMode = 'top-down', ex = sample) =>
  flame(ex.data, {
    selection: ALL_SEL,
    mode,
    weight: 'occurrences',
    granularity: 'function',
    focus: null,
    highlightStack: null,
    transforms,
    cull: { minShare: 0, zoom: [] },
  }).tree;

describe('flame graph transforms', () => {
  // functions of the sample: the syscall entry above most stacks, and a leaf function that recurs in none
  const CASES: [string, FlameTransform[]][] = [
    ['focus on a function', [{ kind: 'focus', fn: 'do_syscall_64' }]],
    ['merge a function away', [{ kind: 'merge', fn: 'do_syscall_64' }]],
    ['drop the entry frames', [{ kind: 'drop', pattern: '/^(entry_SYSCALL_64_after_hwframe|do_syscall_64)$/' }]],
    ['collapse recursion', [{ kind: 'rec', fn: 'kmem_cache_alloc' }]],
    [
      'several, in order',
      [
        { kind: 'drop', pattern: '/^entry_/' },
        { kind: 'focus', fn: 'do_syscall_64' },
        { kind: 'merge', fn: 'do_syscall_64' },
      ],
    ],
  ];
  for (const [name, list] of CASES)
    for (const mode of ['top-down', 'bottom-up'] as const)
      it(`${name} (${mode}): every path's weight as the stacks rewritten by other code`, () => {
        const want = expected(list, mode);
        expect(want.size).toBeGreaterThan(5);
        const t = tree(list, mode);
        expect(t.names[t.name[0]]).toBe(ROOT_NAME);
        expect(selfByPath(t)).toEqual(want);
        // nothing gained or lost: the root holds the weight of the stacks that stayed
        expect(t.total).toBe([...want.values()].reduce((a, b) => a + b, 0));
      });

  it('focus on a function no stack holds leaves an empty tree; an empty list is the plain tree', () => {
    expect(tree([{ kind: 'focus', fn: 'no_such_function' }]).total).toBe(0);
    expect(selfByPath(tree([]))).toEqual(expected([], 'top-down'));
  });

  it('collapse recursion on a stack that recurses (a through d): the outermost a keeps the innermost a’s callees', () => {
    const list: FlameTransform[] = [{ kind: 'rec', fn: 'a' }];
    const want = expected(list, 'top-down', hand);
    expect([...want.keys()]).toContain('b;a');
    expect([...want.keys()].some((k) => k.includes('d'))).toBe(false);
    expect(selfByPath(tree(list, 'top-down', hand))).toEqual(want);
    // and focus on d there: only that stack, from d down
    expect(selfByPath(tree([{ kind: 'focus', fn: 'd' }], 'top-down', hand))).toEqual(expected([{ kind: 'focus', fn: 'd' }], 'top-down', hand));
  });

  it('collapse recursion keeps the outermost call and hangs the innermost call’s callees under it', () => {
    // a recursive stack by hand, as the test's rewrite and the transform each see it
    expect(rewrite(['a', 'f', 'b', 'f', 'c', 'f', 'leaf'], [{ kind: 'rec', fn: 'f' }])).toEqual(['a', 'f', 'leaf']);
  });

  it('the URL form round-trips, with ; and \\ inside an argument, and skips what is not a transform', () => {
    const list: FlameTransform[] = [
      { kind: 'focus', fn: 'do_sys_open' },
      { kind: 'drop', pattern: '/^(a;b)\\d$/' },
      { kind: 'rec', fn: 'x' },
      { kind: 'merge', fn: 'y' },
    ];
    expect(parseTransforms(formatTransforms(list))).toEqual(list);
    expect(parseTransforms('focus:;bogus:x;merge;drop:/a/')).toEqual([{ kind: 'drop', pattern: '/a/' }]);
    expect(list.map(describeTransform)).toEqual(['focus: do_sys_open', 'drop: /^(a;b)\\d$/', 'collapse recursion: x', 'merge: y']);
  });

  it('a call site names its function without the offset', () => {
    expect(['kmalloc+0x294', 'kmalloc', 'x+0xzz', '+0x10', 'a+0x'].map(functionOfName)).toEqual(['kmalloc', 'kmalloc', 'x+0xzz', '+0x10', 'a+0x']);
  });
});
