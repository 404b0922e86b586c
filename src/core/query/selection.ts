import { RecordKind, RecordStatus } from '../capture/trace-columns-data.ts';
import { NO_STACK_RECORD, type Selection } from './api.ts';

/** local copies: an imported binding can cost a getter call per access under module transforms (tsx, vitest) */
const { CookieV7: COOKIE_V7, CookieV8: COOKIE_V8 } = RecordKind;
const { Full: FULL, Resolved: RESOLVED, Unverified: UNVERIFIED } = RecordStatus;

/**
 * Generations are kept in Float64 columns: a generation number (a u32, up to 2^32 - 1), or NO_GEN for 'none'
 * (v4..v7 ids, and records/events before any v8 cookie in a trace without one).
 */
export const NO_GEN = -1;

export const genKey = (g: number | 'none'): number => (g === 'none' ? NO_GEN : g);
export const genValue = (k: number): number | 'none' => (k === NO_GEN ? 'none' : k);

/** A record that stands for a kernel stack we know: a resolved or unverified cookie, or a full stack. */
export function isOccurrence(status: number): boolean {
  return status === RESOLVED || status === UNVERIFIED || status === FULL;
}

/**
 * Whether every v8 cookie's generation (a u32 the capture stores as an int32) is below 2^31, so
 * the effective generations fit an Int32Array with NO_GEN: half a Float64Array's memory.
 */
export function generationsFitInt32(kind: Uint8Array, gen: ArrayLike<number>): boolean {
  for (let i = 0; i < kind.length; i++) if (kind[i] === COOKIE_V8 && gen[i] < 0) return false;
  return true;
}

/**
 * Per record, its effective generation (Selection's rule): a v8 cookie's own; a v7 id has
 * none (NO_GEN); a full or user stack takes the generation in force, i.e. the last v8
 * cookie's before it in file (record) order, or, before the first v8 cookie, the first one's
 * (the best guess: no reset is known to lie between). Traces without v8 cookies: all NO_GEN.
 * `gen` is read at v8 cookies only, as a u32 (the capture's column stores it as an int32).
 */
export function recordGenerations<T extends Float64Array | Int32Array = Float64Array>(
  rec: { kind: Uint8Array; gen: ArrayLike<number> },
  fileStarts: readonly number[] = [],
  make: new (n: number) => T = Float64Array as unknown as new (n: number) => T,
): T {
  // Float64: a generation is a u32 (2^32 - 1 held exactly) and NO_GEN stays apart from every one;
  // Int32 where the caller knows every generation is below 2^31 (generationsFitInt32)
  const out = new make(rec.kind.length);
  // each trace file is its own: a generation in force does not carry over into an unrelated file
  for (const [from, to] of ranges(fileStarts, rec.kind.length)) {
    let first = NO_GEN;
    for (let i = from; i < to; i++) {
      if (rec.kind[i] === COOKIE_V8) {
        first = rec.gen[i] >>> 0;
        break;
      }
    }
    let current = first;
    for (let i = from; i < to; i++) {
      const kind = rec.kind[i];
      if (kind === COOKIE_V8) out[i] = current = rec.gen[i] >>> 0;
      else if (kind === COOKIE_V7) out[i] = NO_GEN;
      else out[i] = current;
    }
  }
  return out;
}

/** [from, to) of each file, given where each starts (sorted; the first may be absent). */
function ranges(starts: readonly number[], n: number): [number, number][] {
  const cuts = [0, ...starts.filter((s) => s > 0 && s < n), n];
  const out: [number, number][] = [];
  for (let k = 0; k + 1 < cuts.length; k++) if (cuts[k + 1] > cuts[k]) out.push([cuts[k], cuts[k + 1]]);
  return out;
}

/**
 * Per event: the status of its stack record (NO_STACK_RECORD without one) and its effective
 * generation: its record's, or for an event without a record the generation of the last
 * event with a v8-generation record before it in file order (the first such one's before any).
 */
export function eventColumns<T extends Float64Array | Int32Array = Float64Array>(
  evRecord: Int32Array,
  recStatus: Uint8Array,
  recGen: ArrayLike<number>,
  fileStarts: readonly number[] = [],
  make: new (n: number) => T = Float64Array as unknown as new (n: number) => T,
): { status: Uint8Array; gen: T } {
  const n = evRecord.length;
  const status = new Uint8Array(n);
  const gen = new make(n);
  const none = NO_STACK_RECORD;
  for (const [from, to] of ranges(fileStarts, n)) {
    let first = NO_GEN;
    for (let i = from; i < to; i++) {
      const r = evRecord[i];
      if (r >= 0 && recGen[r] !== NO_GEN) {
        first = recGen[r];
        break;
      }
    }
    let current = first;
    for (let i = from; i < to; i++) {
      const r = evRecord[i];
      if (r < 0) {
        status[i] = none;
        gen[i] = current;
        continue;
      }
      status[i] = recStatus[r];
      const g = recGen[r];
      gen[i] = g;
      if (g !== NO_GEN) current = g;
    }
  }
  return { status, gen };
}

/**
 * Indices sorted by timestamp (stable: ties keep file order; NaN last), or null when the
 * column is already sorted (the common case for one `trace` file), so callers index directly.
 * A natural merge sort over typed arrays: input that is a few sorted runs (several trace files,
 * per-CPU buffers) costs O(n log runs), anything else O(n log n), with no comparator calls.
 */
export function sortedOrder(ts: Float64Array): Int32Array | null {
  const n = ts.length;
  let sorted = true;
  for (let i = 1; i < n; i++) {
    if (!(ts[i - 1] <= ts[i])) {
      sorted = false;
      break;
    }
  }
  if (sorted) return null;
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = ts[i];
    keys[i] = v === v ? v : Infinity;
  }
  // runs of non-decreasing keys
  const bounds: number[] = [0];
  for (let i = 1; i < n; i++) if (keys[i] < keys[i - 1]) bounds.push(i);
  bounds.push(n);
  let src = new Int32Array(n);
  for (let i = 0; i < n; i++) src[i] = i;
  let dst = new Int32Array(n);
  let runs = bounds;
  while (runs.length > 2) {
    const next: number[] = [0];
    for (let r = 0; r + 1 < runs.length; r += 2) {
      const lo = runs[r];
      const mid = runs[r + 1];
      const hi = r + 2 < runs.length ? runs[r + 2] : mid;
      let i = lo;
      let j = mid;
      let k = lo;
      // stable: on equal keys the left run (earlier in file order) goes first
      while (i < mid && j < hi) dst[k++] = keys[src[j]] < keys[src[i]] ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
      next.push(hi);
    }
    runs = next;
    const tmp = src;
    src = dst;
    dst = tmp;
  }
  return src;
}

/** A Selection compiled for per-row tests in tight loops. */
export class SelectionFilter {
  readonly all: boolean;
  readonly lo: number;
  readonly hi: number;
  readonly hasRange: boolean;
  readonly gen: number | null;
  private readonly cpuMask: Uint8Array | null;
  private readonly cpuSet: Set<number> | null;

  constructor(sel: Selection) {
    this.hasRange = sel.range !== null;
    this.lo = sel.range ? Math.min(sel.range[0], sel.range[1]) : -Infinity;
    this.hi = sel.range ? Math.max(sel.range[0], sel.range[1]) : Infinity;
    this.gen = sel.generation === null ? null : genKey(sel.generation);
    if (sel.cpus) {
      const max = sel.cpus.reduce((m, c) => Math.max(m, c), -1);
      if (max < 1 << 16 && sel.cpus.every((c) => c >= 0 && Number.isInteger(c))) {
        this.cpuMask = new Uint8Array(max + 1);
        for (const c of sel.cpus) this.cpuMask[c] = 1;
        this.cpuSet = null;
      } else {
        this.cpuMask = null;
        this.cpuSet = new Set(sel.cpus);
      }
    } else {
      this.cpuMask = null;
      this.cpuSet = null;
    }
    this.all = !this.hasRange && this.gen === null && !sel.cpus;
    this.cpus = sel.cpus ? sel.cpus.slice() : null;
  }
  private readonly cpus: readonly number[] | null;
  private keyText: string | null = null;

  /** what this filter lets through, as text: two filters with the same key pass the same rows (made when first asked: only a kept answer needs it) */
  get key(): string {
    if (this.keyText === null) {
      const cpus = this.cpus ? [...new Set(this.cpus)].sort((a, b) => a - b).join(',') : '*';
      this.keyText = `${this.lo} ${this.hi} ${this.gen ?? '*'} ${cpus}`;
    }
    return this.keyText;
  }

  cpu(c: number): boolean {
    if (this.cpuMask) return c >= 0 && c < this.cpuMask.length && this.cpuMask[c] === 1;
    if (this.cpuSet) return this.cpuSet.has(c);
    return true;
  }

  /** ts, cpu, generation key of a row */
  test(ts: number, cpu: number, gen: number): boolean {
    if (this.all) return true;
    if (this.hasRange && !(ts >= this.lo && ts <= this.hi)) return false;
    if (this.gen !== null && gen !== this.gen) return false;
    return this.cpu(cpu);
  }
}

export function isAll(sel: Selection): boolean {
  return sel.range === null && sel.generation === null && sel.cpus === null;
}

/** First position p in [0, n) with key(p) >= x (n when none). */
export function lowerBound(n: number, key: (p: number) => number, x: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(mid) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First position p in [0, n) with key(p) > x (n when none). */
export function upperBound(n: number, key: (p: number) => number, x: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(mid) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
