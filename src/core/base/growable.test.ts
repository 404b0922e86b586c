import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Growable, SmallInts } from './growable.ts';
import { StringTable } from './string-table.ts';

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

// The hashed string table against a Map<string, number> (the plain way): the same index for
// every string, found inside a longer text without slicing, with collisions forced by keeping
// only a few bits of the hash; truncates and snapshots as a list would give.
describe('StringTable interning by hash, against a Map', () => {
  const text = fc.string({ unit: fc.constantFrom('a', 'b', 'é', ' ', '\u2028', 'x'), maxLength: 40 });
  const ops = fc.array(
    fc.oneof(
      fc.record({ op: fc.constant('intern' as const), text, from: fc.nat(40), len: fc.nat(12) }),
      fc.record({ op: fc.constant('truncate' as const), keep: fc.nat(20) }),
      fc.record({ op: fc.constant('snapshot' as const) }),
    ),
    { maxLength: 80 },
  );
  for (const mask of [0xffffffff, 3, 0]) {
    it(`hash mask ${mask.toString(16)}: same indices as a Map, snapshots frozen`, () => {
      fc.assert(
        fc.property(ops, (list) => {
          const t = new StringTable(mask);
          let ref: string[] = [];
          const snaps: { table: StringTable; strings: string[] }[] = [];
          for (const o of list) {
            if (o.op === 'intern') {
              const from = Math.min(o.from, o.text.length);
              const to = Math.min(o.text.length, from + o.len);
              const s = o.text.slice(from, to);
              let want = ref.indexOf(s);
              if (want < 0) want = ref.push(s) - 1;
              expect(t.internRange(o.text, from, to)).toBe(want);
              expect(t.intern(s)).toBe(want);
            } else if (o.op === 'truncate') {
              const n = Math.min(o.keep, ref.length);
              t.truncate(n);
              ref = ref.slice(0, n);
            } else snaps.push({ table: t.snapshot(), strings: ref.slice() });
            expect(t.strings).toEqual(ref);
          }
          const map = new Map(ref.map((s, i) => [s, i]));
          for (const s of ref) expect(t.lookup(s)).toBe(map.get(s));
          for (const { table, strings } of snaps) {
            expect(table.strings).toEqual(strings);
            for (const [i, s] of strings.entries()) expect(table.lookup(s)).toBe(i);
            for (const s of ref) if (!strings.includes(s)) expect(table.lookup(s)).toBeUndefined();
          }
        }),
        { numRuns: 300 },
      );
    });
  }
});

// SmallInts (1, 2 or 4 bytes a value) against a plain array, and a trimmed Growable against an
// untrimmed one fed the same operations.
describe('SmallInts and trim, against plain arrays', () => {
  const value = fc.oneof(fc.integer({ min: -128, max: 127 }), fc.integer({ min: -32768, max: 32767 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }));
  const ops = fc.array(
    fc.oneof(
      fc.record({ op: fc.constant('push' as const), v: value }),
      fc.record({ op: fc.constant('set' as const), at: fc.nat(200), v: value }),
      fc.record({ op: fc.constant('truncate' as const), keep: fc.nat(200) }),
      fc.record({ op: fc.constant('freeze' as const) }),
      fc.record({ op: fc.constant('trim' as const) }),
      fc.record({ op: fc.constant('append' as const), vs: fc.array(value, { maxLength: 40 }), cut: fc.nat(40) }),
    ),
    { maxLength: 120 },
  );
  it('every value read back as pushed, appended or set; frozen views unchanged by what follows', () => {
    fc.assert(
      fc.property(ops, (list) => {
        const small = new SmallInts(2);
        const trimmed = new Growable(Int32Array, 2);
        const plain = new Growable(Int32Array, 2);
        let ref: number[] = [];
        /** bytes a value needs, over every value stored (a column never narrows again) */
        let need = 1;
        const needs = (v: number) => (need = Math.max(need, (v << 16) >> 16 !== v ? 4 : (v << 24) >> 24 !== v ? 2 : 1));
        const views: { small: SmallInts; trimmed: Growable<Int32Array>; values: number[] }[] = [];
        for (const o of list) {
          if (o.op === 'push') {
            needs(o.v);
            small.push(o.v);
            trimmed.push(o.v);
            plain.push(o.v);
            ref.push(o.v);
          } else if (o.op === 'set' && ref.length > 0) {
            const at = o.at % ref.length;
            needs(o.v);
            small.set(at, o.v);
            trimmed.set(at, o.v);
            plain.set(at, o.v);
            ref[at] = o.v;
          } else if (o.op === 'truncate') {
            const n = Math.min(o.keep, ref.length);
            small.truncate(n);
            trimmed.truncate(n);
            plain.truncate(n);
            ref = ref.slice(0, n);
          } else if (o.op === 'append') {
            // a range of the array from `cut` on: what pushing each of its values gives (the array
            // as narrow as its values allow, so one narrower than the column is taken unlooked-at)
            const fits = (bits: number) => o.vs.every((v) => (v << (32 - bits)) >> (32 - bits) === v);
            const src = fits(8) ? Int8Array.from(o.vs) : fits(16) ? Int16Array.from(o.vs) : Int32Array.from(o.vs);
            const from = Math.min(o.cut, src.length);
            for (const v of o.vs.slice(from)) {
              needs(v);
              plain.push(v);
              ref.push(v);
            }
            small.append(src, from, src.length);
            trimmed.append(src, from, src.length);
          } else if (o.op === 'freeze') views.push({ small: small.frozen(), trimmed: trimmed.frozen(), values: ref.slice() });
          else if (o.op === 'trim') {
            small.trim();
            trimmed.trim();
            expect(trimmed.byteLength).toBe(Math.max(ref.length, 1) * 4);
          }
          expect(small.length).toBe(ref.length);
          expect(Array.from(small.raw())).toEqual(ref);
          expect(Array.from(small.view())).toEqual(ref);
          expect(Array.from(trimmed.raw())).toEqual(Array.from(plain.raw()));
        }
        for (let i = 0; i < ref.length; i++) expect(small.get(i)).toBe(ref[i]);
        expect(small.raw().BYTES_PER_ELEMENT).toBe(need);
        for (const v of views) {
          expect(Array.from(v.small.raw())).toEqual(v.values);
          expect(Array.from(v.trimmed.raw())).toEqual(v.values);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('append exact (a join: no slack for the trim to copy)', () => {
  it('grows to just the new length, keeps every value, and doubles again on the next push', () => {
    const g = new Growable(Float64Array, 4);
    for (let i = 0; i < 3; i++) g.push(i);
    g.append(new Float64Array([10, 11, 12, 13, 14]), 1, 5, true);
    expect(Array.from(g.raw())).toEqual([0, 1, 2, 11, 12, 13, 14]);
    expect(g.byteLength).toBe(7 * 8);
    g.push(15);
    expect(g.byteLength).toBe(16 * 8);
    const s = new SmallInts(4);
    s.push(1);
    s.append(new Int32Array([300, 2, 70000]), 0, 3, true);
    expect([s.length, s.byteLength]).toEqual([4, 4 * 4]);
    expect(Array.from({ length: 4 }, (_, i) => s.get(i))).toEqual([1, 300, 2, 70000]);
  });
});

describe('reserve, and a trim that keeps a small slack', () => {
  it('reserve makes room once, keeps every value and what a frozen view saw; trim(keep) copies only past the share', () => {
    for (const make of [() => new Growable(Int32Array, 4), () => new SmallInts(4)]) {
      const g = make();
      for (let i = 0; i < 5; i++) g.push(i * 100);
      const seen = g.frozen();
      g.reserve(100);
      expect(g.byteLength / (g.raw().BYTES_PER_ELEMENT as number)).toBe(100);
      const buffer = g.raw().buffer;
      for (let i = 5; i < 100; i++) g.push(i * 100);
      // no growth up to the room reserved
      expect(g.raw().buffer).toBe(buffer);
      expect(Array.from({ length: 100 }, (_, i) => g.get(i))).toEqual(Array.from({ length: 100 }, (_, i) => i * 100));
      expect(Array.from({ length: seen.length }, (_, i) => seen.get(i))).toEqual([0, 100, 200, 300, 400]);
      // less than now: nothing
      g.reserve(10);
      expect(g.raw().buffer).toBe(buffer);
      g.truncate(95);
      // 5 of 95 is under 1/16: kept as is; over 1/32: trimmed to the length
      g.trim(1 / 16);
      expect(g.raw().buffer).toBe(buffer);
      g.trim(1 / 32);
      expect(g.byteLength / (g.raw().BYTES_PER_ELEMENT as number)).toBe(95);
      expect(g.get(94)).toBe(9400);
    }
  });
});
