import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { frameFunction } from '../formats/frames.ts';
import type { ExplorerData } from './explorer-data.ts';
import { capture, dumpsArb, FNS, recArb, recordsArb, stackArb, treeLines } from '../testing/flame-captures.ts';
import { flame, setFlameStrategyForTests, stackWeights } from './flame.ts';
import { ALL, type FlameMode, type FlameWeight, type Selection } from './api.ts';

/** The plain reference: a recursive tree of Maps, one path per stack, merged by function name. */
interface Ref {
  value: number;
  self: number;
  frames: Map<string, number>;
  kids: Map<string, Ref>;
}
const node = (): Ref => ({ value: 0, self: 0, frames: new Map(), kids: new Map() });

/** frames (sym+0xoff) of each stack, root first, and the path each mode takes through them */
function refPath(rootFirst: string[], mode: FlameMode | 'callers', focus: string): string[] | null {
  const fns = rootFirst.map(frameFunction);
  if (mode === 'top-down') return rootFirst;
  if (mode === 'bottom-up') return [...rootFirst].reverse();
  if (mode === 'sandwich') {
    // callees of the outermost call: from just below it down to the leaf
    const k = fns.indexOf(focus);
    return k < 0 ? null : rootFirst.slice(k + 1);
  }
  // callers of the innermost call: from just above it up to the outermost caller
  const k = fns.lastIndexOf(focus);
  return k < 0 ? null : rootFirst.slice(0, k).reverse();
}

function reference(d: ExplorerData, sel: Selection, weight: FlameWeight, mode: FlameMode | 'callers', focus: string): Ref {
  const root = node();
  const w = stackWeights(d, sel, weight);
  for (let i = 0; i < w.stacks.length; i++) {
    if (w.weights[i] === 0) continue;
    const path = refPath([...d.stacks.framesOf(w.stacks[i])].reverse(), mode, focus);
    if (!path) continue;
    const add = (n: Ref, k: number): void => {
      n.value += w.weights[i];
      if (k === path.length) {
        n.self += w.weights[i];
        return;
      }
      const fn = frameFunction(path[k]);
      let c = n.kids.get(fn);
      if (!c) n.kids.set(fn, (c = node()));
      c.frames.set(path[k], (c.frames.get(path[k]) ?? 0) + w.weights[i]);
      add(c, k + 1);
    };
    add(root, 0);
  }
  return root;
}

/** pre-order lines "depth name value/self [frame:weight ...]", children by value then name, frames by weight then table order */
function refLines(d: ExplorerData, r: Ref, rootName: string): string[] {
  const order = (f: string) => d.stacks.frames.strings.indexOf(f);
  const out: string[] = [];
  const walk = (n: Ref, name: string, depth: number) => {
    const frames = [...n.frames].sort((a, b) => b[1] - a[1] || order(a[0]) - order(b[0]));
    out.push(`${depth} ${name} ${n.value}/${n.self} [${frames.map(([f, v]) => `${f}:${v}`).join(' ')}]`);
    const kids = [...n.kids].sort((a, b) => b[1].value - a[1].value || (a[0] < b[0] ? -1 : 1));
    for (const [k, c] of kids) walk(c, k, depth + 1);
  };
  walk(r, rootName, 0);
  return out;
}

describe('flame aggregation (typed arrays) against a plain Map tree', () => {
  afterEach(() => setFlameStrategyForTests('auto'));

  it('property: every mode, weight, selection and aggregation strategy builds the reference tree', () => {
    fc.assert(
      fc.property(
        recordsArb,
        dumpsArb,
        fc.constantFrom<FlameWeight>('occurrences', 'refcount'),
        fc.constantFrom<Selection>(ALL, { ...ALL, cpus: [0, 2] }),
        fc.constantFrom(...FNS),
        (recs, dumps, weight, selection, focus) => {
          const d = capture(recs, dumps);
          for (const strategy of ['paths', 'prefix', 'auto'] as const) {
            setFlameStrategyForTests(strategy);
            for (const mode of ['top-down', 'bottom-up', 'sandwich'] as const) {
              const a = flame(d, { selection, mode, weight, focus: mode === 'sandwich' ? focus : null, highlightStack: null, granularity: 'function' });
              const rootName = mode === 'sandwich' ? focus : 'all';
              expect(treeLines(a.tree)).toEqual(refLines(d, reference(d, selection, weight, mode, focus), rootName));
              if (mode === 'sandwich') expect(treeLines(a.callers!)).toEqual(refLines(d, reference(d, selection, weight, 'callers', focus), rootName));
            }
          }
        },
      ),
      { numRuns: 80 },
    );
  });

  it('property: the highlighted stack marks its path in either strategy', () => {
    fc.assert(
      fc.property(fc.array(recArb, { minLength: 1, maxLength: 20 }), fc.array(stackArb, { minLength: 2, maxLength: 2 }), fc.nat(), (recs, dumps, pick) => {
        const d = capture(recs, dumps);
        const w = stackWeights(d, ALL, 'occurrences');
        if (!w.stacks.length) return;
        const stack = w.stacks[pick % w.stacks.length];
        const names = ['all', ...[...d.stacks.framesOf(stack)].reverse().map(frameFunction)];
        for (const strategy of ['paths', 'prefix'] as const) {
          setFlameStrategyForTests(strategy);
          const t = flame(d, { selection: ALL, mode: 'top-down', weight: 'occurrences', focus: null, highlightStack: stack, granularity: 'function' }).tree;
          expect(Array.from(t.highlight, (n) => t.names[t.name[n]])).toEqual(names);
          // a path: each node the parent of the next
          for (let k = 1; k < t.highlight.length; k++) expect(t.parent[t.highlight[k]]).toBe(t.highlight[k - 1]);
        }
      }),
      { numRuns: 60 },
    );
  });
});
