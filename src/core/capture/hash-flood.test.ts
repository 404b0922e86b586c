import { describe, expect, it } from 'vitest';
import { FrameTable } from './frame-table.ts';
import { hashRange, StringTable } from '../base/string-table.ts';
import { StackTable } from './stack-table.ts';
import { ingestFiles } from '../testing/test-helpers.ts';

// Hash flooding (issue 18): names chosen to collide in the string table's hash as it was (FNV-1a
// from a fixed start, then murmur's finalizer: unkeyed) against random names of the same length.
// The colliding names are made here, by Joux's multicollision: 15 pairs of 5-character blocks,
// each pair found by a birthday search (~80,000 pseudo-random blocks) to leave FNV-1a in one state
// from the state before it, so all 2^15 ways of picking one block of each pair end in one state
// and hash alike. The hash below is the old one, written out again (not the table's code).
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.';
const fmix = (h: number) => {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
};
const fnvStep = (h: number, s: string) => {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
};
const oldHash = (s: string) => fmix(fnvStep(0x811c9dc5, s)) | 0;
/** the block of 5 characters that 30 bits spell */
const blockOf = (r: number) => Array.from({ length: 5 }, (_, k) => ALPHABET[(r >>> (6 * k)) & 63]).join('');
/** 2^stages distinct names of 5 * stages characters with one old hash */
function floodNames(stages: number): string[] {
  const pairs: [string, string][] = [];
  let state = 0x811c9dc5;
  const SLOTS = 1 << 19;
  const seenState = new Int32Array(SLOTS);
  const seenBlock = new Int32Array(SLOTS);
  for (let st = 0; st < stages; st++) {
    seenBlock.fill(0);
    let pair: [string, string] | null = null;
    // blocks in a scrambled order: FNV-1a is nearly injective over blocks in counting order
    for (let i = 1; i < 1 << 22 && !pair; i++) {
      const r = fmix(i + st * 0x1000000) & 0x3fffffff || 1;
      const h = fnvStep(state, blockOf(r));
      for (let k = Math.imul(h, 0x9e3779b1) >>> 13; ; k = (k + 1) & (SLOTS - 1)) {
        if (seenBlock[k] === 0) {
          seenState[k] = h;
          seenBlock[k] = r;
          break;
        }
        if (seenState[k] === h) {
          if (seenBlock[k] !== r) pair = [blockOf(seenBlock[k]), blockOf(r)];
          break;
        }
      }
    }
    if (!pair) throw new Error(`no collision at stage ${st}`);
    pairs.push(pair);
    state = fnvStep(state, pair[0]);
  }
  return Array.from({ length: 2 ** stages }, (_, i) => pairs.map((p, b) => p[(i >> b) & 1]).join(''));
}
/** `n` random names of `len` characters from the same alphabet (mulberry32, seeded) */
function randomNames(n: number, len: number, seed: number): string[] {
  let s = seed >>> 0;
  const next = () => {
    let t = (s = (s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: n }, () => Array.from({ length: len }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join(''));
}
/** The probes of interning `names` and finding each again (checked once at the end: every index right). */
const probesOf = (names: readonly string[], table: StringTable) => {
  const ids = names.map((s) => table.intern(s));
  let wrong = 0;
  names.forEach((s, i) => (wrong += +(table.intern(s) !== ids[i] || table.strings[ids[i]] !== s || ids[i] !== i)));
  expect(wrong).toBe(0);
  return table.probes;
};

const flood = floodNames(15);
const random = randomNames(flood.length, flood[0].length, 18);

describe('StringTable under a hash flood', () => {
  it('the flood names are distinct and all share one hash as the table hashed before', () => {
    expect(new Set(flood).size).toBe(32768);
    expect(new Set(flood.map(oldHash)).size).toBe(1);
    expect(new Set(random).size).toBe(32768);
    // the table's hash with the key [0, 0] is that old hash (the same bits the flood was made for)
    for (const s of [...flood.slice(0, 50), ...random.slice(0, 50), '', 'é\u2028']) expect(hashRange(s, 0, s.length, 0, 0)).toBe(oldHash(s));
  });

  it('the old hash (key [0, 0], no guard) costs the flood >> 2x the probes of random names: the bound below can fail', () => {
    // 2,048 of them: the whole 32,768 would walk ~5e8 slots
    const few = flood.slice(0, 2048);
    const old = () => new StringTable(0xffffffff, { keyForTests: [0, 0], guardForTests: false });
    const floodProbes = probesOf(few, old());
    const randomProbes = probesOf(random.slice(0, 2048), old());
    expect(floodProbes).toBeGreaterThan(100 * randomProbes);
  });

  it('keyed: the flood costs at most 2x the probes of random names', () => {
    const floodProbes = probesOf(flood, new StringTable());
    const randomProbes = probesOf(random, new StringTable());
    expect(floodProbes).toBeLessThanOrEqual(2 * randomProbes);
  });

  it('with the old hash kept (the key known to whoever made the flood), the guard re-keys and the flood still costs at most 2x', () => {
    const t = new StringTable(0xffffffff, { keyForTests: [0, 0] });
    const floodProbes = probesOf(flood, t);
    expect(t.rekeys).toBe(1);
    const r = new StringTable(0xffffffff, { keyForTests: [0, 0] });
    const randomProbes = probesOf(random, r);
    expect(r.rekeys).toBe(0);
    expect(floodProbes).toBeLessThanOrEqual(2 * randomProbes);
  });

  it('the guard stands down after a few re-keys when every hash is forced equal (hashMaskForTests 0), and the indices stay right', () => {
    const t = new StringTable(0);
    const names = random.slice(0, 400);
    names.forEach((s, i) => expect(t.intern(s)).toBe(i));
    expect(t.rekeys).toBe(3);
    names.forEach((s, i) => expect(t.lookup(s)).toBe(i));
    const snap = t.snapshot();
    names.forEach((s, i) => expect(snap.lookup(s)).toBe(i));
    expect(snap.lookup('not there')).toBeUndefined();
  });
});

/** A trace (ftrace text) with one event per name, the name as its COMM, each with its own pid. */
const traceOf = (names: readonly string[]) =>
  '# tracer: nop\n#\n' +
  names.map((c, i) => `  ${c}-${i + 1}     [000] ...1.  ${(100 + i / 1e5).toFixed(6)}: kmem_cache_alloc: call_site=f+0x1 bytes_req=64\n`).join('');

describe('a hash-flood trace against a random-names trace of the same size, through ingest', () => {
  it('the flood takes at most 2x the probes of the task table, and loads every name', () => {
    const ft = traceOf(flood);
    const rt = traceOf(random);
    expect(ft.length).toBe(rt.length);
    const load = (text: string) => {
      const c = ingestFiles([['trace', text]]);
      expect(c.diagnostics).toEqual([]);
      expect(c.trace.eventCount).toBe(32768);
      return c.trace.tasks;
    };
    const f = load(ft);
    expect(f.strings).toEqual(flood);
    const r = load(rt);
    expect(r.strings).toEqual(random);
    expect(f.probes).toBeLessThanOrEqual(2 * r.probes);
  }, 30_000);
});

// The stack table's child table, keyed by (parent, frame): frame ids are dense, but a file picks
// them (frames are numbered in the order it first names them), so it can give one node children
// whose frames crowd into a few slots under the old fixed function (Fibonacci hashing, unkeyed;
// written out again here). Under it, the root's child (0, f) has its home slot in the top bits
// of f * 0x85ebca6b: the 4,096 frames of 131,072 whose top 5 bits are 0 share the first 1/32 of
// the table at every size, one cluster. The random set: as many frames drawn from the same ids.
const oldSlot = (parent: number, frame: number, shift: number) => Math.imul(Math.imul(parent, 0x9e3779b1) ^ frame, 0x85ebca6b) >>> shift;
const FRAMES = 131072;
const crowded = Array.from({ length: FRAMES }, (_, f) => f).filter((f) => oldSlot(0, f, 27) === 0);
const spread = (() => {
  const pool = Array.from({ length: FRAMES }, (_, f) => f);
  let s = 7;
  for (let i = pool.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, crowded.length);
})();

/** The probes of a linear-probing table with `slot`, at most half full from 1,024 slots on, as the child table grows: counted here. */
function probesUnder(slot: (p: number, f: number, shift: number) => number, frames: readonly number[]): number {
  let bits = 10;
  let table = new Int32Array(1 << bits).fill(-1);
  let probes = 0;
  const put = (t: Int32Array, f: number, shift: number) => {
    for (let h = slot(0, f, shift); ; h = (h + 1) & (t.length - 1)) {
      probes++;
      if (t[h] < 0) return void (t[h] = f);
    }
  };
  frames.forEach((f, n) => {
    put(table, f, 32 - bits);
    if (2 * (n + 1) > table.length) {
      const old = table;
      table = new Int32Array(1 << ++bits).fill(-1);
      for (const g of old) if (g >= 0) put(table, g, 32 - bits);
    }
  });
  return probes;
}

describe('StackTable children chosen to crowd the child table', () => {
  const withFrames = (options?: ConstructorParameters<typeof StackTable>[0]) => {
    const t = new StackTable(options);
    for (let f = 0; f < FRAMES; f++) t.frames.intern(`f${f}`);
    return t;
  };
  /** the root's children: one stack [f] a frame, the first made as the root's first child, the others in the child table */
  const load = (t: StackTable, frames: readonly number[]) => {
    const nodes = frames.map((f) => t.internFrameIds(Int32Array.of(f)));
    expect(nodes.map((n) => t.frame(n))).toEqual(frames);
    expect(frames.map((f) => t.internFrameIds(Int32Array.of(f)))).toEqual(nodes);
    return t;
  };

  it('the crowded frames flood the old function (>> 2x the probes of random frames, counted by a table of its own here)', () => {
    expect(crowded.length).toBeGreaterThan(4000);
    expect(probesUnder(oldSlot, crowded)).toBeGreaterThan(50 * probesUnder(oldSlot, spread));
  });

  it('keyed, the crowded frames cost at most 2x the probes of random ones', () => {
    const a = load(withFrames(), crowded);
    const b = load(withFrames(), spread);
    expect(a.probes).toBeLessThanOrEqual(2 * b.probes);
  });

  it('with the old function (test support), the table floods without its guard and re-keys with it: then at most 2x, and a rollback still holds', () => {
    const bare = load(withFrames({ fixedHashForTests: true, guardForTests: false }), crowded);
    const baseline = load(withFrames({ fixedHashForTests: true, guardForTests: false }), spread);
    expect(bare.probes).toBeGreaterThan(50 * baseline.probes);
    const guarded = withFrames({ fixedHashForTests: true });
    const m = guarded.mark();
    load(guarded, crowded);
    expect(guarded.rekeys).toBe(1);
    expect(guarded.probes).toBeLessThanOrEqual(2 * baseline.probes);
    // the children made after the re-key are unlinked under the new key
    guarded.rollback(m);
    expect(guarded.nodeCount).toBe(1);
    load(guarded, spread);
    expect(guarded.nodeCount).toBe(spread.length + 1);
  });
});

// The frame table's integer frames (frame-table.ts), raw addresses here: a dump gives ips as they
// like. Under the old fixed slot (Fibonacci hashing of the two halves, written out again here)
// the ips 0:k * 0x9e3779b1^-1 land in slot k >>> shift, slot 0 for the first 2^16 of them at
// every size the table has for 32,768 ips: one chain. The random set: 32,768 random ips.
const oldIpSlot = (hi: number, lo: number, shift: number) => Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> shift;
/** the inverse of an odd number mod 2^32 (Newton's iteration: each step doubles the bits that are right) */
const inverse = (a: number) => {
  let x = a;
  for (let i = 0; i < 5; i++) x = Math.imul(x, 2 - Math.imul(a, x));
  return x >>> 0;
};
const IPS = 32768;
const floodIps = Array.from({ length: IPS }, (_, k) => [0, Math.imul(k + 1, inverse(0x9e3779b1)) >>> 0] as const);
const randomIps = (() => {
  let s = 99;
  const next = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) ^ (s >>> 16);
  return Array.from({ length: IPS }, () => [0xffffffff - (next() & 0xffff), next() >>> 0] as const);
})();

/** Probes of a table as the old per-ip cache kept it (from 2^11 slots, at most 3/4 full) under `slot`: counted here. */
function ipProbesUnder(slot: typeof oldIpSlot, ips: readonly (readonly [number, number])[]): number {
  let bits = 11;
  let t: (readonly [number, number] | null)[] = new Array(1 << bits).fill(null);
  let probes = 0;
  const put = (ip: readonly [number, number]) => {
    for (let h = slot(ip[0], ip[1], 32 - bits); ; h = (h + 1) & (t.length - 1)) {
      probes++;
      if (t[h] === null) return void (t[h] = ip);
    }
  };
  ips.forEach((ip, n) => {
    put(ip);
    if (4 * (n + 1) > 3 * t.length) {
      const old = t;
      t = new Array(1 << ++bits).fill(null);
      for (const e of old) if (e) put(e);
    }
  });
  return probes;
}

describe("the frame table's integer frames under addresses chosen to share a slot", () => {
  const load = (ips: readonly (readonly [number, number])[]) => {
    const f = new FrameTable();
    const out = ips.map(([hi, lo]) => f.address(hi, lo));
    expect(f.size).toBe(ips.length);
    // each ip once, in order: its frame is its index; and found again
    let wrong = 0;
    out.forEach((id, i) => (wrong += +(id !== i || f.address(ips[i][0], ips[i][1]) !== i)));
    expect(wrong).toBe(0);
    return f.probes;
  };

  it('the old slot is flooded (>> 2x the probes of random ips, 4,096 of each, counted by a table of its own here)', () => {
    expect(new Set(floodIps.map((ip) => ip[1])).size).toBe(IPS);
    expect(ipProbesUnder(oldIpSlot, floodIps.slice(0, 4096))).toBeGreaterThan(50 * ipProbesUnder(oldIpSlot, randomIps.slice(0, 4096)));
  });

  it('keyed, the flood costs at most 2x the probes of random ips', () => {
    expect(load(floodIps)).toBeLessThanOrEqual(2 * load(randomIps));
  });
});
