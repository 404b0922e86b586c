import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { StringTable } from '../base/string-table.ts';
import { StackTable, type StackTableMark } from './stack-table.ts';

describe('StackTable', () => {
  it('stores each distinct stack once and shares callers as a prefix tree', () => {
    const t = new StackTable();
    const a = t.intern(['leaf1', 'mid', 'root']);
    const b = t.intern(['leaf2', 'mid', 'root']);
    expect(t.intern(['leaf1', 'mid', 'root'])).toBe(a);
    expect(a).not.toBe(b);
    expect(t.parent(a)).toBe(t.parent(b));
    expect(t.size).toBe(2);
    expect(t.nodeCount).toBe(5); // empty root + root + mid + two leaves
    expect(t.framesOf(b)).toEqual(['leaf2', 'mid', 'root']);
    expect(t.depth(a)).toBe(3);
  });

  it('gives each node its depth whether asked a few times (walked up) or many (the column filled), before and after more stacks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 12 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 60 }),
        fc.array(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 12 }), { maxLength: 10 }),
        (stacks, asks, later) => {
          const t = new StackTable();
          // the depth by a second method: its frames counted (framesOf walks the parents)
          const check = (k: number) => expect(t.depth(k), `node ${k}`).toBe(t.framesOf(k).length);
          for (const st of stacks) t.intern(st.map((f) => `f${f}`));
          // in the order asked: the first few walk, past a quarter of the nodes the column is filled
          for (const a of asks) check(a % t.nodeCount);
          for (const st of later) t.intern(st.map((f) => `f${f}`));
          for (const a of asks) check(a % t.nodeCount);
          for (let k = t.nodeCount - 1; k >= 0; k--) check(k);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('gives every node of stacks below and past 127 frames its depth (its byte, or walked, or the column), live, rolled back and in a snapshot', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(), len: fc.integer({ min: 0, max: 300 }), frame: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        (branches, asks) => {
          const t = new StackTable();
          // stacks grown off the ones before (a branch at a random depth of an earlier stack), some past DEEP
          const made: string[][] = [[]];
          const add = (table: StackTable, b: { at: number; len: number; frame: number }, k: number) => {
            const base = made[b.at % made.length];
            const root = base.slice(base.length - Math.min(base.length, b.at % 301));
            const st = [...Array.from({ length: b.len }, (_, i) => `g${k}_${i % (b.frame + 1)}_${i}`), ...root];
            made.push(st);
            // both ways in: frame keys, and frame ids (internFrameIds, a dump's)
            if (k % 2 === 0) table.intern(st);
            else table.internFrameIds(Int32Array.from(st, (f) => table.frames.intern(f)));
          };
          branches.forEach((b, k) => add(t, b, k));
          const check = (table: StackTable) => {
            for (const a of asks) expect(table.depth(a % table.nodeCount)).toBe(table.framesOf(a % table.nodeCount).length);
            for (let k = table.nodeCount - 1; k >= 0; k--) expect(table.depth(k), `node ${k}`).toBe(table.framesOf(k).length);
          };
          const snap = t.snapshot(t.size);
          const m = t.mark();
          branches.forEach((b, k) => add(t, { ...b, frame: b.frame + 1 }, k + 100));
          // nodes made before the mark become stacks after it (a stack's caller): the rollback unmarks them
          for (const st of made.slice(0, branches.length + 1)) if (st.length > 1) t.intern(st.slice(1));
          check(t);
          t.rollback(m);
          check(t);
          check(snap);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('reads a depth below 127 from its node: many asks of a large table walk nothing and fill no column', () => {
    const t = new StackTable();
    for (let i = 0; i < 200; i++) t.intern(Array.from({ length: 120 }, (_, k) => `f${i}_${k}`));
    const fill = vi.spyOn(StackTable.prototype as unknown as { depthsUpTo(n: number): void }, 'depthsUpTo');
    try {
      for (const table of [t, t.snapshot(t.size)]) {
        table.expectDepths(1e6);
        for (let k = 0; k < t.nodeCount; k++) expect(table.depth(k)).toBe(table.framesOf(k).length);
      }
      expect(fill).not.toHaveBeenCalled();
    } finally {
      fill.mockRestore();
    }
  });

  it('a few asks of a large table of stacks past 127 frames, live or a snapshot, fill no depth column (they walk)', () => {
    const t = new StackTable();
    for (let i = 0; i < 200; i++) t.intern(Array.from({ length: 150 }, (_, k) => `f${i}_${k}`));
    const snap = t.snapshot(t.size);
    // depthsUpTo is the fill: one pass over every node not known yet
    const fill = vi.spyOn(StackTable.prototype as unknown as { depthsUpTo(n: number): void }, 'depthsUpTo');
    try {
      for (const table of [t, snap]) {
        for (const k of [t.nodeCount - 1, 20, 2000, 149]) expect(table.depth(k)).toBe(table.framesOf(k).length);
      }
      expect(fill).not.toHaveBeenCalled();
      // many asks: the column is filled once, then read
      for (let k = 0; k < t.nodeCount; k++) snap.depth(k);
      expect(fill).toHaveBeenCalledTimes(1);
    } finally {
      fill.mockRestore();
    }
  });

  it('told of many asks to come, fills the depth column before any walk; told of a few, walks (stacks past 127 frames)', () => {
    const t = new StackTable();
    // 200 stacks of 150 frames, no frame shared: 30,000 nodes, 150 a stack (as a dump's: frame ids)
    for (let i = 0; i < 200; i++) t.internFrameIds(Int32Array.from({ length: 150 }, (_, k) => t.frames.intern(`f${i}_${k}`)));
    const fill = vi.spyOn(StackTable.prototype as unknown as { depthsUpTo(n: number): void }, 'depthsUpTo');
    try {
      for (const table of [t, t.snapshot(t.size)]) {
        fill.mockClear();
        // 40 asks of ~150 steps each: 6,000, under a quarter of the 30,000 nodes
        table.expectDepths(40);
        expect(fill).not.toHaveBeenCalled();
        // 60 asks: 9,000 steps, past it: the fill now, once
        table.expectDepths(60);
        expect(fill).toHaveBeenCalledTimes(1);
        for (let k = 0; k < t.nodeCount; k += 7) expect(table.depth(k)).toBe(table.framesOf(k).length);
        table.expectDepths(1000);
        expect(fill).toHaveBeenCalledTimes(1);
      }
    } finally {
      fill.mockRestore();
    }
  });

  it('keeps the depths it filled through the growth of its columns (stacks past 127 frames)', () => {
    const t = new StackTable();
    const deep = (i: number) => Array.from({ length: 150 }, (_, k) => `f${i}_${k}`);
    for (let i = 0; i < 20; i++) t.intern(deep(i));
    // the fill, then enough new nodes to grow the columns more than once
    t.expectDepths(1e6);
    const known = t.nodeCount;
    for (let i = 20; i < 400; i++) t.intern(deep(i));
    for (let k = 0; k < known; k++) expect(t.depth(k), `node ${k}`).toBe(t.framesOf(k).length);
    for (let k = known; k < t.nodeCount; k += 37) expect(t.depth(k), `node ${k}`).toBe(t.framesOf(k).length);
  });

  it('counts a stack that is a prefix of another as its own stack', () => {
    const t = new StackTable();
    t.intern(['leaf', 'mid', 'root']);
    const p = t.intern(['mid', 'root']);
    expect(t.size).toBe(2);
    expect(t.framesOf(p)).toEqual(['mid', 'root']);
    expect(t.intern([])).toBe(0);
    expect(t.size).toBe(3);
  });
});

describe('StackTable rollback and snapshot', () => {
  it('a rollback forgets nodes, frames and stacks added since the mark; interning again gives the same nodes', () => {
    const t = new StackTable();
    const a = t.intern(['leaf', 'mid', 'root']);
    const m = t.mark();
    const p = t.intern(['mid', 'root']); // an old node becomes a stack
    const b = t.intern(['other', 'new-root']);
    expect(t.size).toBe(3);
    t.rollback(m);
    expect(t.size).toBe(1);
    expect(t.nodeCount).toBe(4);
    expect(t.frames.strings).toEqual(['root', 'mid', 'leaf']);
    expect(t.frames.lookup('new-root')).toBeUndefined();
    expect(t.intern(['mid', 'root'])).toBe(p);
    expect(t.intern(['other', 'new-root'])).toBe(b);
    expect(t.intern(['leaf', 'mid', 'root'])).toBe(a);
    expect(t.size).toBe(3);
  });

  it('a snapshot keeps what it saw through later interns and rollbacks', () => {
    const t = new StackTable();
    const a = t.intern(['leaf', 'root']);
    const m = t.mark();
    const s = t.snapshot(7);
    for (let i = 0; i < 3000; i++) t.intern([`f${i}`, 'root']); // grows every array past its first buffer
    t.rollback(m);
    t.intern(['zzz']);
    expect(s.size).toBe(7);
    expect(s.nodeCount).toBe(3);
    expect(s.framesOf(a)).toEqual(['leaf', 'root']);
    expect(s.frames.strings).toEqual(['root', 'leaf']);
    expect(s.frames.lookup('zzz')).toBeUndefined();
    expect(() => s.intern(['leaf', 'root'])).toThrow(/read-only/);
  });
});

/** The stack table as it was: children in a Map keyed by node * 2^22 + frame. The reference for the open-addressing one. */
class MapStackTable {
  readonly frames = new StringTable();
  private frame: number[] = [-1];
  private parent: number[] = [-1];
  private stacks: number[] = [];
  private isStack = new Set<number>();
  private children = new Map<number, number>();
  intern(leafFirst: readonly string[]): number {
    const ids = new Int32Array(leafFirst.length);
    for (let i = leafFirst.length - 1; i >= 0; i--) ids[i] = this.frames.intern(leafFirst[i]);
    return this.internFrameIds(ids);
  }
  internFrameIds(ids: Int32Array): number {
    let node = 0;
    for (let i = ids.length - 1; i >= 0; i--) {
      const key = node * 2 ** 22 + ids[i];
      let c = this.children.get(key);
      if (c === undefined) {
        c = this.frame.length;
        this.frame.push(ids[i]);
        this.parent.push(node);
        this.children.set(key, c);
      }
      node = c;
    }
    if (!this.isStack.has(node)) {
      this.isStack.add(node);
      this.stacks.push(node);
    }
    return node;
  }
  get size() {
    return this.stacks.length;
  }
  get nodeCount() {
    return this.frame.length;
  }
  mark() {
    return { nodes: this.frame.length, frames: this.frames.size, stacks: this.stacks.length };
  }
  rollback(m: { nodes: number; frames: number; stacks: number }) {
    for (const s of this.stacks.splice(m.stacks)) this.isStack.delete(s);
    for (let n = m.nodes; n < this.frame.length; n++) this.children.delete(this.parent[n] * 2 ** 22 + this.frame[n]);
    this.frame.length = m.nodes;
    this.parent.length = m.nodes;
    this.frames.truncate(m.frames);
  }
}

describe('StackTable snapshot across a rollback below it', () => {
  it('a node the snapshot saw, rolled back and made again with another frame, keeps its old frame in the snapshot', () => {
    const t = new StackTable();
    t.intern(['a', 'root']);
    const m = t.mark();
    const b = t.intern(['b2', 'b1', 'other-root']);
    const s = t.snapshot(2);
    t.rollback(m);
    const c = t.intern(['c3', 'c2', 'c1', 'a', 'root']); // the same node numbers, other parents
    expect(t.framesOf(c)).toEqual(['c3', 'c2', 'c1', 'a', 'root']);
    expect(t.parent(b - 2)).toBe(2);
    expect(s.framesOf(b)).toEqual(['b2', 'b1', 'other-root']);
    expect(s.nodeCount).toBe(6);
  });
});

describe('StackTable child lookup (open addressing) against a Map', () => {
  type Op =
    | { kind: 'strings'; stack: string[] }
    | { kind: 'ids'; stack: string[] }
    | { kind: 'mark' }
    | { kind: 'rollback' }
    | { kind: 'snapshot' }
    | { kind: 'reserve'; n: number };
  // small alphabets so stacks share prefixes and siblings; long runs so the sibling table doubles
  const frame = fc.oneof(
    fc.integer({ min: 0, max: 6 }).map((i) => `f${i}`),
    fc.integer({ min: 0, max: 400 }).map((i) => `g${i}`),
  );
  const stack = fc.array(frame, { maxLength: 24 });
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 10, arbitrary: stack.map((s) => ({ kind: 'strings' as const, stack: s })) },
    { weight: 10, arbitrary: stack.map((s) => ({ kind: 'ids' as const, stack: s })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'mark' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'rollback' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'snapshot' as const }) },
    { weight: 1, arbitrary: fc.nat({ max: 3000 }).map((n) => ({ kind: 'reserve' as const, n })) },
  );

  it('gives the same node for every stack, and the same sizes, through marks and rollbacks', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 600 }), (ops) => {
        const t = new StackTable();
        const ref = new MapStackTable();
        const marks: [StackTableMark, ReturnType<MapStackTable['mark']>][] = [];
        const seen: [number, string[]][] = [];
        const snaps: { s: StackTable; nodes: number; seen: [number, string[]][] }[] = [];
        for (const o of ops) {
          if (o.kind === 'snapshot') snaps.push({ s: t.snapshot(ref.size), nodes: ref.nodeCount, seen: seen.slice() });
          else if (o.kind === 'reserve') t.reserve(o.n);
          else if (o.kind === 'mark') marks.push([t.mark(), ref.mark()]);
          else if (o.kind === 'rollback') {
            const m = marks.pop();
            if (!m) continue;
            t.rollback(m[0]);
            ref.rollback(m[1]);
            seen.length = 0;
          } else if (o.kind === 'strings') {
            const n = t.intern(o.stack);
            expect(n).toBe(ref.intern(o.stack));
            seen.push([n, o.stack]);
          } else {
            // the caller interns the frame strings (both tables in the same order), then the ids
            const ids = Int32Array.from(o.stack, (f) => t.frames.intern(f));
            expect(Array.from(o.stack, (f) => ref.frames.intern(f))).toEqual(Array.from(ids));
            // a range of a larger array, as the dump index passes its pool
            const padded = new Int32Array(ids.length + 2);
            padded.set(ids, 1);
            const n = t.internFrameIds(padded, 1, 1 + ids.length);
            expect(n).toBe(ref.internFrameIds(ids));
            seen.push([n, o.stack]);
          }
          expect(t.size).toBe(ref.size);
          expect(t.nodeCount).toBe(ref.nodeCount);
        }
        for (const [n, s] of seen) expect(t.framesOf(n)).toEqual(s);
        expect(t.frames.strings).toEqual(ref.frames.strings);
        // every snapshot still shows what it saw, through the interns, reserves and rollbacks after it
        for (const snap of snaps) {
          expect(snap.s.nodeCount).toBe(snap.nodes);
          for (const [n, s] of snap.seen) {
            expect(snap.s.framesOf(n)).toEqual(s);
            expect(snap.s.depth(n)).toBe(s.length);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('holds a wide tree (20,000 leaves under 97 callers) through a rollback of half', () => {
    const t = new StackTable();
    const ref = new MapStackTable();
    const stacks: string[][] = [];
    for (let i = 0; i < 20_000; i++) stacks.push([`leaf${i % 5000}`, `mid${i % 97}`, 'root']);
    const both = (ss: string[][]) => [ss.map((s) => t.intern(s)), ss.map((s) => ref.intern(s))];
    const [a1, b1] = both(stacks.slice(0, 10_000));
    expect(a1).toEqual(b1);
    const m = [t.mark(), ref.mark()] as const;
    const [a2, b2] = both(stacks.slice(10_000));
    expect(a2).toEqual(b2);
    t.rollback(m[0]);
    ref.rollback(m[1]);
    expect([t.size, t.nodeCount]).toEqual([ref.size, ref.nodeCount]);
    const [a3, b3] = both(stacks.reverse());
    expect(a3).toEqual(b3);
    expect([t.size, t.nodeCount]).toEqual([ref.size, ref.nodeCount]);
  });

  it("takes the node made after a node as its child only where that node's parent is it", () => {
    // [f1, f2] makes nodes 1, 2; [f3, f4] makes 3 (a child of the root), 4; [f1, f2, f3] walks
    // to node 2, whose next node 3 has frame f3 but is the root's child: a new node, not 3
    for (const path of ['strings', 'ids'] as const) {
      const t = new StackTable();
      const intern = (rootFirst: string[]) => {
        const leafFirst = rootFirst.slice().reverse();
        return path === 'strings' ? t.intern(leafFirst) : t.internFrameIds(Int32Array.from(leafFirst, (f) => t.frames.intern(f)));
      };
      intern(['f1', 'f2']);
      const b = intern(['f3', 'f4']);
      const c = intern(['f1', 'f2', 'f3']);
      expect(t.framesOf(c)).toEqual(['f3', 'f2', 'f1']);
      expect(t.parent(c)).toBe(2);
      expect(t.parent(t.parent(b))).toBe(0);
      expect(t.nodeCount).toBe(6);
    }
  });

  it('gives each stack of three frames its own node, stacks made in any order (every leaf extended, every next node a stranger)', () => {
    // a three-frame alphabet and short stacks: a walk often reaches a leaf whose next node holds
    // the frame it looks for under another parent
    const tiny = fc.array(fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 80 });
    fc.assert(
      fc.property(tiny, fc.boolean(), (stacks, byIds) => {
        const t = new StackTable();
        const ref = new MapStackTable();
        for (const st of stacks) {
          const n = byIds ? t.internFrameIds(Int32Array.from(st, (f) => t.frames.intern(f))) : t.intern(st);
          expect(n).toBe(byIds ? ref.internFrameIds(Int32Array.from(st, (f) => ref.frames.intern(f))) : ref.intern(st));
          expect(t.framesOf(n)).toEqual(st);
        }
        expect([t.size, t.nodeCount]).toEqual([ref.size, ref.nodeCount]);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a frame id that is not in the frame table', () => {
    const t = new StackTable();
    t.frames.intern('a');
    expect(t.internFrameIds(Int32Array.of(0, 0))).toBeGreaterThan(0);
    expect(() => t.internFrameIds(Int32Array.of(1))).toThrow(/frame id 1/);
    expect(() => t.internFrameIds(Int32Array.of(-1))).toThrow(RangeError);
  });
});
