/**
 * The synthetic kernel and its stacks for `generate` (generate-capture.ts writes them): the kernel's
 * functions with the added synthetic ones, the return addresses stacks are made of (`Alphabet`),
 * and the population of distinct stacks with their slots in the map, all in typed arrays.
 */
import { stackHash } from '../core/sim/jhash.ts';
import { SyntheticKernel, type KernelSymbol } from '../core/sim/kernel-symbols.ts';
import type { Rng } from '../core/sim/random.ts';
import { UsageError } from './usage.ts';

/** the deepest stack `generate` makes (the kernel's bound on a stack in the map) */
export const MAX_DEPTH = 64;

/** What the population is drawn with (GenerateOptions' fields of it). */
export interface StackOptions {
  stacks: number;
  depthMin: number;
  depthMax: number;
  frames: 'callgraph' | 'random';
}

/**
 * Return addresses the stacks are made of: one per (function, call site), and with random frames
 * one more per frame drawn. Each is a function and an offset; its text is made when written.
 */
export class Alphabet {
  ips: BigUint64Array;
  private sym: Uint32Array;
  private off: Uint32Array;
  size = 0;
  readonly byName = new Map<string, number[]>();
  /** indices of the added (synthetic) functions' call sites */
  readonly filler: Uint32Array;

  constructor(
    readonly symbols: readonly KernelSymbol[],
    realCount: number,
  ) {
    this.ips = new BigUint64Array(1024);
    this.sym = new Uint32Array(1024);
    this.off = new Uint32Array(1024);
    const filler: number[] = [];
    symbols.forEach((s, si) => {
      const idx: number[] = [];
      for (const off of s.callSites) {
        if (si >= realCount) filler.push(this.size);
        idx.push(this.add(si, off));
      }
      this.byName.set(s.name, idx);
    });
    this.filler = Uint32Array.from(filler);
  }

  /** A return address `off` bytes into symbol `si`; its index. */
  add(si: number, off: number): number {
    if (this.size === this.ips.length) {
      const grow = <T extends BigUint64Array | Uint32Array>(a: T, make: new (n: number) => T): T => {
        const b = new make(2 * a.length);
        b.set(a as never);
        return b;
      };
      this.ips = grow(this.ips, BigUint64Array);
      this.sym = grow(this.sym, Uint32Array);
      this.off = grow(this.off, Uint32Array);
    }
    const i = this.size++;
    this.sym[i] = si;
    this.off[i] = off;
    this.ips[i] = this.symbols[si].addr + BigInt(off);
    return i;
  }

  /** as the trace prints the frame: `sym+0xoff/0xsize [module]` */
  printed(i: number): string {
    const s = this.symbols[this.sym[i]];
    return `${s.name}+0x${this.off[i].toString(16)}/0x${s.size.toString(16)}${s.module ? ` [${s.module}]` : ''}`;
  }

  /** `sym+0xoff`, for event payloads */
  short(i: number): string {
    return `${this.symbols[this.sym[i]].name}+0x${this.off[i].toString(16)}`;
  }
}

export function buildKernel(rng: Rng, extra: number): { symbols: KernelSymbol[]; kernel: SyntheticKernel } {
  const kernel = new SyntheticKernel(rng);
  const symbols = [...kernel.symbols];
  // the added functions follow the core text, as more of vmlinux would
  let addr = 0xffffffff81000000n;
  for (const s of symbols) if (!s.module && s.addr + BigInt(s.size) > addr) addr = s.addr + BigInt(s.size);
  addr = (addr + 0xfffn) & ~0xfffn;
  for (let k = 0; k < extra; k++) {
    const size = rng.range(4, 64) * 16;
    const sites = [...new Set(Array.from({ length: rng.range(1, 3) }, () => rng.range(2, size / 4 - 1) * 4))];
    symbols.push({ name: `smx_fn_${k.toString(16).padStart(5, '0')}`, addr, size, module: null, callSites: sites });
    addr += BigInt(size + rng.range(0, 8) * 16);
  }
  return { symbols, kernel };
}

export interface Population {
  /** frames of stack k (alphabet indices, leaf first): frames[start[k] .. start[k+1]) */
  start: Uint32Array;
  frames: Uint32Array;
  /** 1: a wakeup stack (sched_wakeup), 0: an allocation (kmem_cache_alloc) */
  wakeup: Uint8Array;
  slot: Uint32Array;
  bits: number;
}

/**
 * `n` distinct stacks: each is one of the kernel's real call chains, its leaf-side functions
 * first and its entry-side ones last, with synthetic functions between them to reach its depth
 * (shallower than the chain: a third of the depth from each end of it). Distinct by two 32-bit
 * hashes of the ips; a collision of both (or a stack drawn twice) draws again, one frame deeper
 * after 8 misses (depths 1 and 2 hold few distinct stacks). Slots as the kernel's map
 * gives them: jhash2 start index in a table of 2^(bits+1), linear probing.
 */
export function buildPopulation(rng: Rng, alpha: Alphabet, kernel: SyntheticKernel, o: StackOptions): Population {
  const n = o.stacks;
  const chains = [...kernel.allocChains.map((c) => ({ c, w: 0 })), ...kernel.wakeupChains.map((c) => ({ c, w: 1 }))];
  const start = new Uint32Array(n + 1);
  const wakeup = new Uint8Array(n);
  const all = new Uint32Array(n * o.depthMax);
  let total = 0;
  const seen = new Set<number>();
  const ips = new BigUint64Array(MAX_DEPTH);
  const pickSite = (name: string) => {
    const s = alpha.byName.get(name)!;
    return s[rng.int(s.length)];
  };
  const hasFiller = alpha.filler.length > 0;
  const limit = n * 50 + 1000;
  let tries = 0;
  for (let k = 0; k < n; k++) {
    let d = rng.range(o.depthMin, o.depthMax);
    start[k] = total;
    for (let failed = 0; ; failed++) {
      if (++tries > limit)
        throw new UsageError(`cannot make ${n} distinct stacks of depth ${o.depthMin}-${o.depthMax} from this kernel: raise --depth or --symbols`);
      // few stacks exist this shallow (depth 1: one per leaf return address): go one deeper
      if (failed >= 8 && d < o.depthMax) (d++, (failed = 0));
      const f = all.subarray(total, total + d);
      const { c, w } = chains[rng.int(chains.length)];
      const L = c.length;
      if (o.frames === 'random') {
        // any function, anywhere inside it
        for (let i = 0; i < d; i++) {
          const si = rng.int(alpha.symbols.length);
          f[i] = alpha.add(si, rng.range(1, Math.max(1, alpha.symbols[si].size - 1)));
        }
      } else if (!hasFiller) {
        // leaf first: the chain read from its leaf, cut at the depth (repeated when it is too short)
        for (let i = 0; i < d; i++) f[i] = pickSite(c[L - 1 - (i % L)]);
      } else {
        // the chain's leaf side, synthetic functions, the chain's entry side
        const leafPart = d <= L ? Math.max(1, Math.floor(d / 3)) : Math.ceil(L / 2);
        const rootPart = d <= L ? (d >= 2 ? Math.max(1, Math.floor(d / 3)) : 0) : L - leafPart;
        for (let i = 0; i < leafPart; i++) f[i] = pickSite(c[L - 1 - i]);
        for (let i = leafPart; i < d - rootPart; i++) f[i] = alpha.filler[rng.int(alpha.filler.length)];
        for (let i = 0; i < rootPart; i++) f[d - rootPart + i] = pickSite(c[rootPart - 1 - i]);
      }
      for (let i = 0; i < d; i++) ips[i] = alpha.ips[f[i]];
      const view = ips.subarray(0, d);
      const key = stackHash(view, 0x9e3779b9) * 2 ** 21 + (stackHash(view, 0x85ebca6b) & 0x1fffff);
      if (seen.has(key)) continue;
      seen.add(key);
      wakeup[k] = w;
      total += d;
      break;
    }
  }
  start[n] = total;
  const frames = all.slice(0, total);
  const depthOf = (k: number) => start[k + 1] - start[k];
  // the map: the fewest bits (10..18) whose pool holds every stack
  let bits = 10;
  while (bits < 18 && 2 ** bits < n) bits++;
  const tableBits = bits + 1;
  const keys = new Uint32Array(2 ** tableBits);
  const slot = new Uint32Array(n);
  const mapSeed = rng.u32();
  for (let k = 0; k < n; k++) {
    for (let i = 0; i < depthOf(k); i++) ips[i] = alpha.ips[frames[start[k] + i]];
    const h = stackHash(ips.subarray(0, depthOf(k)), mapSeed);
    // the load factor is at most 1/2, so the kernel's probe limit of 64 is in practice never met; not modelled
    let idx = h >>> (32 - tableBits);
    while (keys[idx] !== 0) idx = (idx + 1) & (keys.length - 1);
    keys[idx] = h;
    slot[k] = idx;
  }
  return { start, frames, wakeup, slot, bits };
}
