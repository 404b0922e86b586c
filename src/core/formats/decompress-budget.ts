/**
 * One budget for everything a load decompresses (gzip, zip members, archives inside archives,
 * and the zstd and zlib blocks inside a trace.dat), so a small file cannot make the reader
 * produce gigabytes however the layers are stacked.
 *
 * Every decompressor asks its given file's budget before it hands out bytes: `grant(n)` gives
 * back how many of the n it may produce. Output is counted at every layer (a gzip inside a zip
 * counts twice), which only makes nesting cost more. The limits:
 * - absolute: what one given file may decompress to, and what the whole load may;
 * - ratio: what was decompressed against the compressed bytes of the given file read so far
 *   (and, for the load, of all its files), checked once past a floor, so a small file may
 *   still decompress to a few MB whatever its ratio.
 * A stream that reaches a limit spends the file's budget: every later ask gets 0, and `over`
 * says which limit and where it was reached, for the one diagnostic the caller reports. A block
 * whose size is declared before it is taken whole or refused (`take`), without spending it.
 */

export interface DecompressLimits {
  /** bytes all the decompressors of one load may produce together */
  captureBytes: number;
  /** bytes the decompressors inside one given file may produce together */
  fileBytes: number;
  /** produced over compressed bytes read, for a file and for the load */
  maxRatio: number;
  /** produced bytes below which the ratio is not checked */
  ratioFloor: number;
}

/**
 * The defaults. Ratio 200: text traces, kallsyms and dumps gzip or zstd at 5-30:1, the
 * repetitive test traces here at up to ~150:1, while deflate bombs run at 1,000:1 and zstd's at
 * 30,000:1 and more. The 64 MiB floor lets any small file through (a sparse dump of zero slots
 * compresses far better than 200:1) and costs well under a second to inflate. 4 GiB for one
 * file and 8 GiB for a load: four and eight times the 1 GB trace the page is measured with
 * (bench/big-trace-browser.ts), past which the capture's columns would not fit a tab anyway.
 */
export const DEFAULT_DECOMPRESS_LIMITS: DecompressLimits = {
  captureBytes: 8 * 2 ** 30,
  fileBytes: 4 * 2 ** 30,
  maxRatio: 200,
  ratioFloor: 64 * 2 ** 20,
};

const fmt = (n: number) => n.toLocaleString('en-US');

type Limit = 'file' | 'load' | 'ratio' | 'load ratio';

/** The budget of one load: make one per load, and one FileBudget per given file, in order. */
export class DecompressBudget {
  readonly limits: DecompressLimits;
  /** bytes produced by every decompressor of the load */
  produced = 0;
  /** compressed (given) bytes of the files finished so far */
  readBefore = 0;
  constructor(limits: Partial<DecompressLimits> = {}) {
    this.limits = { ...DEFAULT_DECOMPRESS_LIMITS, ...limits };
  }
  /** The budget of the given file `name`; `bytesRead()` says how many of its own bytes were read so far. */
  forFile(name: string, bytesRead: () => number): FileBudget {
    return new FileBudget(this, name, bytesRead);
  }
}

export class FileBudget {
  /** bytes produced inside this file, every layer counted */
  produced = 0;
  /** why the budget is spent, null while it is not */
  over: string | null = null;
  private closed = false;
  constructor(
    readonly load: DecompressBudget,
    readonly name: string,
    private readonly bytesRead: () => number,
  ) {}

  /** How many of `n` more decompressed bytes may be produced: n, or fewer once a limit is reached (then `over` says why and the budget is spent). */
  grant(n: number): number {
    if (this.over !== null || n <= 0) return 0;
    const [room, kind] = this.room();
    const take = Math.min(n, room);
    this.produced += take;
    this.load.produced += take;
    if (take < n) this.over = `decompression stopped after ${fmt(this.produced)} bytes, at ${this.limit(kind, true)}: what was decompressed before is kept`;
    return take;
  }

  /**
   * For a block decompressed whole or not at all (its size declared before it): takes `n` and
   * gives null, or takes nothing and gives the reason, the same words for every block refused
   * for one limit (so they group). A refused block does not spend the budget: a later, smaller
   * block may still fit.
   */
  take(n: number): string | null {
    if (this.over !== null) return `not decompressed: ${this.over}`;
    const [room, kind] = this.room();
    if (n > room) return `not decompressed: it would pass ${this.limit(kind, false)}`;
    this.produced += n;
    this.load.produced += n;
    return null;
  }

  /** The bytes that may still be produced, and the limit that sets it. */
  private room(): [number, Limit] {
    const L = this.load.limits;
    const read = Math.max(this.bytesRead(), 0);
    const caps: [number, Limit][] = [
      [L.fileBytes - this.produced, 'file'],
      [L.captureBytes - this.load.produced, 'load'],
      [Math.max(L.ratioFloor, L.maxRatio * read) - this.produced, 'ratio'],
      [Math.max(L.ratioFloor, L.maxRatio * (this.load.readBefore + read)) - this.load.produced, 'load ratio'],
    ];
    let best = caps[0];
    for (const c of caps) if (c[0] < best[0]) best = c;
    return [Math.max(0, best[0]), best[1]];
  }

  private limit(kind: Limit, counts: boolean): string {
    const L = this.load.limits;
    const read = Math.max(this.bytesRead(), 0);
    const past = `past the first ${fmt(L.ratioFloor)} bytes; a decompression bomb?`;
    switch (kind) {
      case 'file':
        return `the limit of ${fmt(L.fileBytes)} decompressed bytes for one file`;
      case 'load':
        return `the limit of ${fmt(L.captureBytes)} decompressed bytes for one load`;
      case 'ratio':
        return `${fmt(L.maxRatio)} times the compressed bytes of the file read (${counts ? `${fmt(read)} read, ` : ''}${past})`;
      case 'load ratio':
        return `${fmt(L.maxRatio)} times the compressed bytes the load read (${counts ? `${fmt(this.load.readBefore + read)} read, ` : ''}${past})`;
    }
  }

  /** The file is read: its bytes count toward the load's ratio from now on. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.load.readBefore += Math.max(this.bytesRead(), 0);
  }
}

/** A budget of its own for a reader used outside a load (tests, tools): the default limits. */
export function standaloneBudget(name: string, bytesRead: () => number, limits: Partial<DecompressLimits> = {}): FileBudget {
  return new DecompressBudget(limits).forFile(name, bytesRead);
}
