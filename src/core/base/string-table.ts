import { fmix32, halfSipHash, PROCESS_KEY, randomWords } from './keyed-hash.ts';

/**
 * FNV-1a over the UTF-16 code units of `s[from, to)`, then murmur3's finalizer (as an int32): FNV-1a alone
 * spreads its low bits (the table's slot) poorly over strings that differ in a few characters. Keyed
 * (keyed-hash.ts): `k0` is FNV's start, `k1` enters before the finalizer; (0, 0) is the fixed hash
 * this table had before, which names can be chosen to flood.
 */
export function hashRange(s: string, from: number, to: number, k0 = PROCESS_KEY[0], k1 = PROCESS_KEY[1]): number {
  let h = 0x811c9dc5 ^ k0;
  for (let i = from; i < to; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return fmix32(h ^ k1) | 0;
}

/**
 * The guard against probe chains that grow long: a table re-keys (a fresh random key, and
 * HalfSipHash from then on) once its probes since it was last built pass this many per lookup,
 * plus GUARD_SLACK. Random keys cost 1-3 probes a lookup at most half full (about 5 an insert,
 * counting the growth rehashes), so only keys that collide on purpose (or by a weakness of the
 * fast hash) reach it; their cost stays within this bound, amortized.
 */
export const GUARD_PROBES_PER_LOOKUP = 16;
export const GUARD_SLACK = 4096;
/** Re-keys at most this often; then the guard stands down (only a forced collision, `hashMaskForTests`, gets there). */
const MAX_REKEYS = 3;

export interface StringTableOptions {
  /** the fast hash's key; [0, 0] is the fixed hash of old (tests: what a flood costs without the key) */
  keyForTests?: readonly [number, number];
  /** false: never re-key, however long the chains (tests: the guard's bound can fail) */
  guardForTests?: boolean;
}

/**
 * Interns strings to dense indices. Looked up by an integer hash of the characters and a compare
 * with the one string of that hash (an open-addressing table of indices), so `internRange` finds
 * a string inside a longer text without slicing it: a string is made only on first sight.
 *
 * The hash is keyed (PROCESS_KEY), and a table whose lookups walk long chains anyway re-keys
 * (GUARD_PROBES_PER_LOOKUP): names chosen to collide cost what random ones cost.
 */
export class StringTable {
  readonly strings: string[] = [];
  private hashes: number[] = [];
  /** slot -> index + 1 (0: empty); its length is a power of two, at most half full */
  private table = new Int32Array(64);
  private readOnly = false;
  /** slots visited so far, by lookups, inserts and rebuilds (test support: what a flood costs, counted) */
  probes = 0;
  /** times the table took a new key */
  rekeys = 0;
  /** probes and lookups since the table was last built with a new key */
  private spent = 0;
  private lookups = 0;
  private k0: number;
  private k1: number;
  /** HalfSipHash (after a re-key) instead of the fast hash */
  private strong = false;
  private guard: boolean;
  /** `hashMaskForTests`: keep only these bits of each hash, to force collisions (tests: the guard's bound) */
  constructor(
    private readonly hashMaskForTests = 0xffffffff,
    options: StringTableOptions = {},
  ) {
    [this.k0, this.k1] = options.keyForTests ?? PROCESS_KEY;
    this.guard = options.guardForTests ?? true;
  }
  intern(s: string): number {
    return this.internRange(s, 0, s.length);
  }
  /** The index of `text[from, to)`, interned on first sight. */
  internRange(text: string, from: number, to: number): number {
    let h = this.hash(text, from, to);
    const found = this.find(text, from, to, h);
    if (this.overBudget()) {
      this.rekey();
      h = this.hash(text, from, to);
    }
    if (found >= 0) return found;
    if (this.readOnly) throw new Error('a snapshot of a string table is read-only');
    const i = this.strings.length;
    this.strings.push(from === 0 && to === text.length ? text : text.slice(from, to));
    this.hashes.push(h);
    if ((i + 1) * 2 > this.table.length) this.rehash(this.table.length * 2);
    this.place(h, i);
    return i;
  }
  lookup(s: string): number | undefined {
    const i = this.find(s, 0, s.length, this.hash(s, 0, s.length));
    if (this.overBudget()) this.rekey();
    return i >= 0 ? i : undefined;
  }
  get size(): number {
    return this.strings.length;
  }
  /** Forgets the strings from index `n` on (a rollback). */
  truncate(n: number): void {
    if (this.readOnly) throw new Error('a snapshot of a string table is read-only');
    this.strings.length = n;
    this.hashes.length = n;
    // a new table: a snapshot may still probe the old one
    this.rehash(this.table.length);
  }
  /**
   * The strings so far, as a table that no longer grows: its own copy of the list (pointers
   * only), sharing the hash table, whose entries past that list's length it skips. (The live
   * table only adds entries to a shared hash table; a truncate, growth or re-key gives it a new one.)
   */
  snapshot(): StringTable {
    const s = Object.create(StringTable.prototype) as StringTable;
    Object.assign(s, {
      strings: this.strings.slice(),
      hashes: this.hashes.slice(),
      table: this.table,
      readOnly: true,
      hashMaskForTests: this.hashMaskForTests,
      probes: this.probes,
      rekeys: this.rekeys,
      spent: 0,
      lookups: 0,
      k0: this.k0,
      k1: this.k1,
      strong: this.strong,
      guard: false,
    });
    return s;
  }
  /** The chains walked since the last re-key cost more than random keys could (a live table with its guard up). */
  private overBudget(): boolean {
    return this.guard && this.spent > GUARD_PROBES_PER_LOOKUP * this.lookups + GUARD_SLACK && !this.readOnly;
  }
  private hash(text: string, from: number, to: number): number {
    return (this.strong ? halfSipHash(this.k0, this.k1, text, from, to) : hashRange(text, from, to, this.k0, this.k1)) & this.hashMaskForTests;
  }
  private find(text: string, from: number, to: number, h: number): number {
    const t = this.table;
    const mask = t.length - 1;
    const len = to - from;
    const strings = this.strings;
    const n = strings.length;
    let found = -1;
    let probes = 0;
    for (let k = h & mask; probes <= mask; k = (k + 1) & mask) {
      probes++;
      const e = t[k];
      if (e === 0) break;
      const i = e - 1;
      if (i < n && this.hashes[i] === h) {
        const s = strings[i];
        if (s.length === len && text.startsWith(s, from)) {
          found = i;
          break;
        }
      }
    }
    this.probes += probes;
    this.spent += probes;
    this.lookups++;
    return found;
  }
  private place(h: number, i: number): void {
    const t = this.table;
    const mask = t.length - 1;
    let k = h & mask;
    let probes = 1;
    while (t[k] !== 0) {
      k = (k + 1) & mask;
      probes++;
    }
    t[k] = i + 1;
    this.probes += probes;
    this.spent += probes;
  }
  private rehash(slots: number): void {
    while (this.strings.length * 2 > slots) slots *= 2;
    this.table = new Int32Array(slots);
    for (let i = 0; i < this.strings.length; i++) this.place(this.hashes[i], i);
  }
  /** A fresh random key and HalfSipHash: every string hashed again, into a new table (a snapshot keeps the old). */
  private rekey(): void {
    const w = randomWords(2);
    this.k0 = w[0] | 0;
    this.k1 = w[1] | 0;
    this.strong = true;
    this.hashes = this.strings.map((s) => this.hash(s, 0, s.length));
    this.rehash(this.table.length);
    this.spent = 0;
    this.lookups = 0;
    if (++this.rekeys >= MAX_REKEYS) this.guard = false;
  }
}
