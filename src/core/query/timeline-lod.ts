/**
 * Level-of-detail counts for the timeline: counters over a sequence of positions (the events in
 * timestamp order), so the events of any run of positions are counted from a few precomputed
 * blocks instead of one by one.
 *
 * Each position p has a code: the counter it adds to (lane * statuses + status for the timeline),
 * or -1 when it counts nowhere (outside the selection's generation or CPUs). Level 0 holds, for
 * each block of 2^shift consecutive positions, the count of every code; level k holds blocks of
 * 2^(shift+k) positions, each the sum of two blocks of level k-1 (a mipmap by powers of two). Only
 * whole blocks are summarised: the positions past the last whole block of level 0 are counted by
 * a scan, like the ragged ends of a run.
 *
 * A run [p0, p1) is then counted exactly: its ragged ends (fewer than 2^shift positions each) one
 * by one, its middle from at most two blocks per level. The timeline asks one run per pixel
 * column, so a frame reads a few blocks per column at any zoom, and the answer equals the plain
 * count position by position (timeline-lod.test.ts checks every level and random runs).
 *
 * Memory: 2 * blocks * cells counters of 4 bytes; lodShift() picks blocks of at least 4 * cells
 * positions, so the summary holds at most 2 bytes per position whatever the number of lanes.
 */

/** the counter a position adds to, or -1 */
export type CodeAt = (p: number) => number;

export interface Lod {
  /** positions summarised (blocks cover the first floor(n / 2^shift) * 2^shift of them) */
  readonly n: number;
  /** counters per block */
  readonly cells: number;
  /** level 0 blocks hold 2^shift positions */
  readonly shift: number;
  /** levels[k][block * cells + code]: positions of that block (2^(shift + k) long) with that code */
  readonly levels: Uint32Array[];
}

/** the least block: fewer positions per block make a frame read more blocks than it saves events */
export const MIN_SHIFT = 8;

/** Block size for `cells` counters: at least 2^MIN_SHIFT positions and 4 per counter (<= 2 bytes per position held). */
export function lodShift(cells: number): number {
  let s = MIN_SHIFT;
  while (1 << s < 4 * cells && s < 30) s++;
  return s;
}

/** One pass over the positions for level 0, then each level from the one below. */
export function buildLod(n: number, cells: number, codeAt: CodeAt, shift = lodShift(cells)): Lod {
  if (!(Number.isInteger(n) && n >= 0)) throw new RangeError(`buildLod: ${n} positions`);
  if (!(Number.isInteger(cells) && cells > 0)) throw new RangeError(`buildLod: ${cells} counters`);
  if (!(Number.isInteger(shift) && shift >= 0 && shift <= 30)) throw new RangeError(`buildLod: block shift ${shift}`);
  const blocks = Math.floor(n / 2 ** shift);
  const level0 = new Uint32Array(blocks * cells);
  const size = 1 << shift;
  for (let b = 0, p = 0; b < blocks; b++) {
    const base = b * cells;
    for (const end = p + size; p < end; p++) {
      const c = codeAt(p);
      if (c >= 0) level0[base + c]++;
    }
  }
  const levels = [level0];
  for (let below = level0, count = blocks; count >= 2;) {
    const up = count >> 1;
    const level = new Uint32Array(up * cells);
    for (let b = 0; b < up; b++) {
      const o = b * cells;
      const l = 2 * b * cells;
      const r = l + cells;
      for (let c = 0; c < cells; c++) level[o + c] = below[l + c] + below[r + c];
    }
    levels.push(level);
    below = level;
    count = up;
  }
  return { n, cells, shift, levels };
}

/**
 * Adds the counts of positions [p0, p1) to `acc` (one counter per code): the ragged ends scanned
 * through `codeAt` (the same function the summary was built from), the whole blocks between them
 * read from the largest aligned blocks of the mipmap.
 */
export function countRange(lod: Lod, p0: number, p1: number, codeAt: CodeAt, acc: Uint32Array): void {
  const lo = Math.max(0, p0);
  const hi = Math.min(lod.n, p1);
  if (!(lo < hi)) return;
  const { shift, cells, levels } = lod;
  const size = 1 << shift;
  const blocks = levels[0].length / cells;
  // whole level-0 blocks inside [lo, hi)
  const b0 = Math.ceil(lo / size);
  const b1 = Math.min(Math.floor(hi / size), blocks);
  if (b0 >= b1) {
    scan(lo, hi, codeAt, acc);
    return;
  }
  scan(lo, b0 * size, codeAt, acc);
  const top = levels.length - 1;
  for (let b = b0; b < b1;) {
    // the largest block starting at b (aligned) that ends by b1
    let k = 0;
    while (k < top && (b & ((2 << k) - 1)) === 0 && b + (2 << k) <= b1) k++;
    const level = levels[k];
    const o = (b >> k) * cells;
    for (let c = 0; c < cells; c++) acc[c] += level[o + c];
    b += 1 << k;
  }
  scan(b1 * size, hi, codeAt, acc);
}

function scan(p0: number, p1: number, codeAt: CodeAt, acc: Uint32Array) {
  for (let p = p0; p < p1; p++) {
    const c = codeAt(p);
    if (c >= 0) acc[c]++;
  }
}

/** counters held by a summary, for memory accounting */
export const lodBytes = (lod: Lod) => lod.levels.reduce((n, l) => n + l.byteLength, 0);
