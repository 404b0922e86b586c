import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { frameFunction } from '../formats/frames.ts';
import { ExplorerData } from './explorer-data.ts';
import { line } from '../testing/explorer-fixtures.ts';
import { flame, setFlameStrategy, stackWeights, type FlameTreeFrames } from './flame.ts';
import { ALL, type FlameMode, type FlameWeight, type Selection } from './api.ts';
import { ingestFiles } from '../testing/test-helpers.ts';

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

function treeLines(t: FlameTreeFrames): string[] {
  return Array.from(t.value, (v, i) => {
    const frames: string[] = [];
    for (let j = t.frameStart[i]; j < t.frameStart[i + 1]; j++) frames.push(`${t.frameNames[t.frameOf[j]]}:${t.frameValue[j]}`);
    return `${t.depth[i]} ${t.names[t.name[i]]} ${v}/${t.self[i]} [${frames.join(' ')}]`;
  });
}

const FNS = ['f', 'g', 'h', 'k', 'm'];
/** a stack, leaf first: functions with one of three offsets, so nodes merge several frames */
const stackArb = fc.array(fc.tuple(fc.constantFrom(...FNS), fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 7 });

function capture(recs: { cpu: number; stack: [string, number][] }[], dumps: [string, number][][]): ExplorerData {
  const lines = ['# tracer: nop'];
  recs.forEach((r, i) => {
    const ts = (10 + i * 0.001).toFixed(6);
    lines.push(line('p-1', r.cpu, ts, 'ev: x'));
    if (r.stack.length) lines.push(line('p-1', r.cpu, ts, '<stack trace>'), ...r.stack.map(([f, o]) => ` => ${f}+0x${o}/0x40`));
    else lines.push(line('p-1', r.cpu, ts, `<stack_id ${i % dumps.length} gen 1>`));
  });
  const dump = dumps
    .map((st, slot) => `stack_id ${slot} gen 1 [ref ${slot + 2}, depth ${st.length}]\n` + st.map(([f, o]) => ` => ${f}+0x${o}/0x40\n`).join('') + '\n')
    .join('');
  return new ExplorerData(ingestFiles([['trace', lines.join('\n') + '\n'], ['map', dump]]));
}

const recArb = fc.record({ cpu: fc.integer({ min: 0, max: 2 }), stack: fc.oneof(stackArb, fc.constant([] as [string, number][])) });

describe('flame aggregation (typed arrays) against a plain Map tree', () => {
  afterEach(() => setFlameStrategy('auto'));

  it('property: every mode, weight, selection and aggregation strategy builds the reference tree', () => {
    fc.assert(
      fc.property(
        fc.array(recArb, { minLength: 1, maxLength: 30 }),
        fc.array(stackArb, { minLength: 3, maxLength: 3 }),
        fc.constantFrom<FlameWeight>('occurrences', 'refcount'),
        fc.constantFrom<Selection>(ALL, { ...ALL, cpus: [0, 2] }),
        fc.constantFrom(...FNS),
        (recs, dumps, weight, selection, focus) => {
          const d = capture(recs, dumps);
          for (const strategy of ['paths', 'prefix', 'auto'] as const) {
            setFlameStrategy(strategy);
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
          setFlameStrategy(strategy);
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
