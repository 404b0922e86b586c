/** A small seeded PRNG (mulberry32), so generated captures and workloads are reproducible. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** uniform in [0, 1) */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  u32(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }
  /** exponential with the given mean */
  exp(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
}

/** Samples indices 0..n-1 with probabilities proportional to the given weights. */
export class Weighted {
  private cdf: Float64Array;
  constructor(weights: ArrayLike<number>) {
    const n = weights.length;
    this.cdf = new Float64Array(n);
    let sum = 0;
    for (let k = 0; k < n; k++) this.cdf[k] = sum += weights[k];
    for (let k = 0; k < n; k++) this.cdf[k] /= sum;
  }
  sample(rng: Rng): number {
    const u = rng.next();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Samples ranks 0..n-1 with P(k) proportional to 1/(k+1)^s. */
export class Zipf extends Weighted {
  constructor(n: number, s: number) {
    super(Float64Array.from({ length: n }, (_, k) => 1 / Math.pow(k + 1, s)));
  }
}
