import { fmix32, randomWords } from './keyed-hash.ts';

/**
 * The position of each of a few distinct integers (a page of stacks) in the list they were given,
 * for a pass over many more (every dump slot) that asks of each whether it is one of them: an
 * open-addressing table of (key, position + 1) pairs at most a quarter full, in one Int32Array.
 * A Map's lookup cost 17-26 ns a slot over 262,144 slots; this is a multiply and a load or two.
 * Keys are int32; the list's duplicates keep their first position. Slots are keyed (a random
 * word per table, as the other tables over what a file decides): which keys crowd together
 * cannot be chosen.
 */
export class IntPositions {
  private readonly table: Int32Array;
  private readonly mask: number;
  private readonly key = randomWords(1)[0] | 0;

  constructor(keys: ArrayLike<number>) {
    let slots = 16;
    while (slots < 4 * keys.length) slots *= 2;
    this.table = new Int32Array(2 * slots);
    this.mask = slots - 1;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] | 0;
      let h = fmix32(k ^ this.key) & this.mask;
      while (this.table[2 * h + 1] !== 0 && this.table[2 * h] !== k) h = (h + 1) & this.mask;
      if (this.table[2 * h + 1] === 0) {
        this.table[2 * h] = k;
        this.table[2 * h + 1] = i + 1;
      }
    }
  }

  /** `key`'s position in the list, or -1. */
  of(key: number): number {
    const t = this.table;
    const mask = this.mask;
    let h = fmix32((key | 0) ^ this.key) & mask;
    for (;;) {
      const p = t[2 * h + 1];
      if (p === 0) return -1;
      if (t[2 * h] === key) return p - 1;
      h = (h + 1) & mask;
    }
  }
}
