import { describe, expect, it } from 'vitest';
import { Growable, StringTable } from './growable.ts';

const filled = (n: number) => {
  const g = new Growable(Int32Array, 4);
  for (let i = 0; i < n; i++) g.push(i * 10);
  return g;
};

describe('Growable frozen views', () => {
  it('a frozen view does not see later pushes, sets or a truncate and refill', () => {
    const g = filled(3);
    const f = g.frozen();
    g.set(1, -1); // copy on write: the view keeps 10
    g.push(30); // fills the shared buffer's spare capacity, beyond the view
    g.push(40); // doubles
    expect(Array.from(f.raw())).toEqual([0, 10, 20]);
    expect(Array.from(g.raw())).toEqual([0, -1, 20, 30, 40]);
    const h = filled(3);
    const hf = h.frozen();
    h.truncate(1);
    h.push(99); // would overwrite what the view shows: copied first
    expect(Array.from(hf.raw())).toEqual([0, 10, 20]);
    expect(Array.from(h.raw())).toEqual([0, 99]);
  });

  it('a frozen view is read-only, and truncate checks its bound', () => {
    const f = filled(2).frozen();
    expect(() => f.push(1)).toThrow(/read-only/);
    expect(() => f.set(0, 1)).toThrow(/read-only/);
    expect(() => filled(2).truncate(3)).toThrow(RangeError);
  });
});

describe('StringTable truncate and snapshot', () => {
  it('truncate forgets strings; a snapshot keeps its own list and only finds its own strings', () => {
    const t = new StringTable();
    t.intern('a');
    t.intern('b');
    const s = t.snapshot();
    t.truncate(1);
    expect(t.lookup('b')).toBeUndefined();
    expect(t.intern('c')).toBe(1);
    expect(s.strings).toEqual(['a', 'b']);
    expect(s.lookup('a')).toBe(0);
    expect(s.lookup('c')).toBeUndefined(); // 'c' took index 1 in the live table; the snapshot's 1 is 'b'
    expect(s.intern('a')).toBe(0);
    expect(() => s.intern('new')).toThrow(/read-only/);
  });
});
