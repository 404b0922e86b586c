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
