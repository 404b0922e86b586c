import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { frameFunction } from '../formats/frames.ts';
import { FrameKind, FrameTable } from './frame-table.ts';

// The reference: every frame its string, deduplicated by a Map (what the stack table did before
// frames were integers). Strings are drawn to sit on every edge of the integer forms.
const hex = fc.bigInt({ min: 0n, max: (1n << 40n) - 1n }).map((x) => x.toString(16));
const name = fc.constantFrom('vfs_read', 'do_sys_open', 'f', 'a+0x1', 'sym.cold', '__x64_sys_read');
const key = fc.oneof(
  // sites: the integer form, and near misses (leading zeros, upper case, no digits, 9+ digits)
  fc.tuple(name, hex).map(([n, h]) => `${n}+0x${h}`),
  fc.tuple(name, hex).map(([n, h]) => `${n}+0x0${h}`),
  fc.tuple(name, hex).map(([n, h]) => `${n}+0x${h.toUpperCase()}`),
  name.map((n) => `${n}+0x`),
  name,
  // addresses: the key form, and near misses
  hex.map((h) => `0x${h}`),
  hex.map((h) => `0x0${h}`),
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((x) => `0x${x.toString(16)}`),
  fc.constantFrom('0x', '0x7fffffff', '[FTRACE TRAMPOLINE]', '0xffffffffffffffff0', '+0x10', 'x+0x10/0x20'),
);

/** The frames of `frames` as a reference Map assigns them: each new string the next id. */
function reference(keys: readonly string[]): { ids: number[]; names: string[] } {
  const ids: number[] = [];
  const names: string[] = [];
  const m = new Map<string, number>();
  for (const k of keys) {
    let id = m.get(k);
    if (id === undefined) m.set(k, (id = names.push(k) - 1));
    ids.push(id);
  }
  return { ids, names };
}

describe('FrameTable against frames as strings (property)', () => {
  it('gives each string the id, name and function a string table would, whatever form it takes', () => {
    fc.assert(
      fc.property(fc.array(key, { maxLength: 200 }), (keys) => {
        const want = reference(keys);
        const t = new FrameTable();
        expect(keys.map((k) => t.intern(k))).toEqual(want.ids);
        expect(Array.from({ length: t.size }, (_, i) => t.name(i))).toEqual(want.names);
        expect(t.strings).toEqual(want.names);
        for (const k of keys) expect(t.lookup(k)).toBe(want.ids[keys.indexOf(k)]);
        expect(t.lookup('never seen+0x1')).toBeUndefined();
        const fns = t.functionIds();
        expect(Array.from(fns, (f) => t.functionName(f))).toEqual(want.names.map(frameFunction));
      }),
      { numRuns: 300 },
    );
  });

  it('makes a site or an address read from integers the same frame as its string', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: 5 }), fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff }), fc.boolean(), fc.boolean()), { maxLength: 100 }),
        (ops) => {
          const names = ['vfs_read', 'do_sys_open', 'f', 'a+0x1', 'x', 'y'];
          const t = new FrameTable();
          const fnIds = names.map((n) => t.functions.intern(n));
          const keys: string[] = [];
          const ids: number[] = [];
          for (const [n, a, b, site, asText] of ops) {
            const k = site ? `${names[n]}+0x${b.toString(16)}` : '0x' + (BigInt(a) * 2n ** 32n + BigInt(b)).toString(16);
            keys.push(k);
            if (asText) ids.push(t.intern(k));
            else ids.push(site ? t.site(fnIds[n], b) : t.address(a, b));
          }
          const want = reference(keys);
          expect(ids).toEqual(want.ids);
          expect(Array.from({ length: t.size }, (_, i) => t.name(i))).toEqual(want.names);
          for (let i = 0; i < t.size; i++) expect(t.kindOf(i)).not.toBe(FrameKind.Text);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('finds sites appended without the index after the index grew for others (a bulk load beside lookups)', () => {
    // appendSite's contract: a site not in the table. Functions 0-3 take appended sites (each new
    // offset once), 4-7 looked-up ones, enough of both to grow the index many times; then every
    // site, appended or not, looked up again must be the frame it was, as strings in a Map say.
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat({ max: 7 }), fc.nat({ max: 4000 }), fc.boolean()), { minLength: 2000, maxLength: 3000, size: 'max' }), (ops) => {
        const t = new FrameTable();
        const fns = Array.from({ length: 8 }, (_, i) => t.functions.intern(`f${i}`));
        const keys: string[] = [];
        const ids: number[] = [];
        const appended = new Set<string>();
        for (const [n, off, again] of ops) {
          const k = `f${n}+0x${off.toString(16)}`;
          if (n < 4 && !again) {
            if (appended.has(k)) continue;
            appended.add(k);
            ids.push(t.appendSite(fns[n], off));
          } else if (n < 4) continue;
          else ids.push(t.site(fns[n], off));
          keys.push(k);
        }
        expect(ids).toEqual(reference(keys).ids);
        const size = t.size;
        for (let i = 0; i < keys.length; i++) {
          const n = Number(keys[i].slice(1, keys[i].indexOf('+')));
          expect(t.site(fns[n], parseInt(keys[i].slice(keys[i].indexOf('x') + 1), 16))).toBe(ids[i]);
        }
        expect(t.size).toBe(size);
      }),
      { numRuns: 40, endOnFailure: true },
    );
  });

  it('forgets what came after a mark, and a snapshot keeps what it saw', () => {
    fc.assert(
      fc.property(fc.array(key, { maxLength: 60 }), fc.array(key, { maxLength: 60 }), (before, after) => {
        const t = new FrameTable();
        for (const k of before) t.intern(k);
        const m = t.mark();
        const snap = t.snapshot();
        const seen = reference(before).names;
        for (const k of after) t.intern(k);
        expect(Array.from({ length: snap.size }, (_, i) => snap.name(i))).toEqual(seen);
        for (const k of after) expect(snap.lookup(k)).toBe(seen.includes(k) ? seen.indexOf(k) : undefined);
        t.truncate(m);
        expect(t.strings).toEqual(seen);
        // interned again after the rollback, the later strings get the ids a fresh table would give
        expect([...before, ...after].map((k) => t.intern(k))).toEqual(reference([...before, ...after]).ids);
      }),
      { numRuns: 200 },
    );
  });
});
