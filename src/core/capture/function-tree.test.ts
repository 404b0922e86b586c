import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { frameFunction } from '../formats/frames.ts';
import { functionPath, functionTree } from './function-tree.ts';
import { StackTable } from './stack-table.ts';

// The function tree held to a plain construction: each stack's frames read as functions, the
// distinct function paths (every prefix of every stack) counted in a Set of joined strings.
const frame = fc.tuple(fc.constantFrom('f', 'g', 'h', 'k'), fc.integer({ min: 0, max: 3 }), fc.boolean()).map(([f, o, bare]) => (bare ? f : `${f}+0x${o}`));

describe('functionTree against function paths counted as strings (property)', () => {
  it('has one node per distinct function path, and each table node maps to its own path', () => {
    fc.assert(
      fc.property(fc.array(fc.array(frame, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 40 }), (stacks) => {
        const t = new StackTable();
        const leaves = stacks.map((s) => t.intern(s));
        const ft = functionTree(t);
        const paths = new Set<string>(['']);
        for (const s of stacks) {
          const fns = [...s].reverse().map(frameFunction);
          for (let i = 1; i <= fns.length; i++) paths.add(fns.slice(0, i).join(';'));
        }
        expect(ft.parent.length).toBe(paths.size);
        stacks.forEach((s, i) => expect(functionPath(ft, ft.ofNode[leaves[i]])).toEqual(s.map(frameFunction)));
        // every node's path is distinct, and its depth is the path's length
        const seen = new Set<string>();
        for (let n = 1; n < ft.parent.length; n++) {
          const p = functionPath(ft, n);
          expect(ft.depth[n]).toBe(p.length);
          seen.add(p.join(';'));
        }
        expect(seen.size).toBe(paths.size - 1);
      }),
      { numRuns: 300 },
    );
  });
});
