import { describe, expect, it } from 'vitest';
import { StackTable } from './stack-table.ts';

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
