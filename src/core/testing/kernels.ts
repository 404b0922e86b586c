// A kernel's symbols and dumps of its stacks in the two shapes the generators make (`cli generate
// --frames callgraph|random`, bench/dump-ingest.ts): walks down a call graph (few distinct return
// addresses, shared callers) and random frames (any function, any offset: millions of distinct
// addresses at scale). With the plain reference every fast path of symbolization is held to: a
// BigInt binary search over the sorted code symbols, one string per ip.
import { Rng } from '../sim/random.ts';
import fc from 'fast-check';
import { TRAMPOLINE } from '../formats/frames.ts';

export type Shape = 'callgraph' | 'random';

/** One kallsyms line. */
export interface KernelSymbol {
  addr: bigint;
  type: string;
  name: string;
  module: string | null;
}

export interface Kernel {
  /** every line, in file order (the modules' mixed in, as a kallsyms file is not sorted) */
  lines: KernelSymbol[];
  /** the code symbols (t, T, w, W) with their sizes (to the next line's address) and 1-3 call sites each */
  functions: { addr: bigint; name: string; size: number; sites: number[] }[];
  /** the kallsyms text */
  text: string;
}

/** Knobs of a kernel and its stacks, as fast-check draws them (the bulk comes from a seeded generator). */
export interface KernelSpec {
  seed: number;
  /** code symbols */
  functions: number;
  /** the last this many of them in modules, a gigabyte above the kernel's text */
  modules: number;
  /** one name in this many repeats (a static function's name), 0: none */
  repeatEvery: number;
  /** one symbol in this many has an alias at its address, 0: none */
  aliasEvery: number;
  /** the modules under another high half than the text (from 0xffffff7fc0000000, as an arm64 kernel's may be) */
  modulesApart?: boolean;
}

export const kernelSpec = (maxFunctions = 400): fc.Arbitrary<KernelSpec> =>
  fc.record({
    seed: fc.integer(),
    functions: fc.integer({ min: 1, max: maxFunctions }),
    modules: fc.integer({ min: 0, max: 40 }),
    repeatEvery: fc.constantFrom(0, 3, 17),
    aliasEvery: fc.constantFrom(0, 5, 29),
    modulesApart: fc.boolean(),
  });

/** uniform in [0, 1), seeded (the simulator's mulberry32, core/sim/random.ts) */
export function rng(seed: number): () => number {
  const r = new Rng(seed);
  return () => r.next();
}

/**
 * A kernel as bench/dump-ingest.ts lays one out: functions 64-2,000 bytes long from
 * 0xffffffff81000000 (a few up to 200 KiB, longer than an index page), data symbols after some,
 * the last `modules` in `[mod_N]` from 0xffffffffc0000000 (or 0xffffff7fc0000000: `modulesApart`);
 * static names repeated, aliases.
 */
export function kernel(spec: KernelSpec): Kernel {
  const r = rng(spec.seed);
  const int = (n: number) => Math.floor(r() * n);
  const lines: KernelSymbol[] = [];
  const functions: Kernel['functions'] = [];
  let core = 0xffffffff81000000n;
  let mod = spec.modulesApart ? 0xffffff7fc0000000n : 0xffffffffc0000000n;
  const inMod = (i: number) => i >= spec.functions - Math.min(spec.modules, spec.functions);
  for (let i = 0; i < spec.functions; i++) {
    const size = int(50) === 0 ? 0x10000 + int(0x30000) : (4 + int(120)) * 16;
    const m = inMod(i);
    const addr = m ? mod : core;
    const name = spec.repeatEvery > 0 && i % spec.repeatEvery === 0 ? `cleanup_${i % 3}` : `fn_${i.toString(36)}`;
    const module = m ? `mod_${i % 4}` : null;
    lines.push({ addr, type: m ? 't' : i % 3 ? 'T' : 't', name, module });
    if (spec.aliasEvery > 0 && i % spec.aliasEvery === 0) lines.push({ addr, type: 'T', name: `alias_${i}`, module });
    let next = addr + BigInt(size);
    if (i % 10 === 0) {
      lines.push({ addr: next, type: 'd', name: `data_${i}`, module });
      next += 64n;
    }
    functions.push({ addr, name, size, sites: Array.from({ length: 1 + int(3) }, () => 1 + int(size - 1)) });
    next += BigInt(16 * int(4));
    if (m) mod = next;
    else core = next;
  }
  // the file lists them out of order, as /proc/kallsyms lists modules apart
  const shuffled = lines.slice();
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  const text = shuffled.map((l) => `${l.addr.toString(16)} ${l.type} ${l.name}${l.module ? `\t[${l.module}]` : ''}\n`).join('');
  return { lines: shuffled, functions, text };
}

/**
 * `count` stacks of `shape`, leaf first, depth 1-`maxDepth`: walks down a call graph (each frame
 * one of its function's call sites, 8 callees a function, from 4 entry points) or random frames;
 * one frame in 40 the trampoline's marker, one in 60 an address outside every symbol.
 */
export function stacks(k: Kernel, shape: Shape, count: number, seed: number, maxDepth = 40): bigint[][] {
  const r = rng(seed ^ 0x5bd1e995);
  const int = (n: number) => Math.floor(r() * n);
  const F = k.functions;
  const callees = F.map(() => Array.from({ length: 8 }, () => int(F.length)));
  const roots = Array.from({ length: 4 }, () => int(F.length));
  const out: bigint[][] = [];
  for (let s = 0; s < count; s++) {
    const depth = 1 + int(maxDepth);
    const ips: bigint[] = new Array(depth);
    let f = roots[int(roots.length)];
    for (let d = depth - 1; d >= 0; d--) {
      const x = r();
      if (x < 1 / 40) ips[d] = 0x7fffffffn;
      else if (x < 1 / 40 + 1 / 60) ips[d] = int(2) ? 0xffffffff80000000n + BigInt(int(0x1000)) : 0xffffffffc8000000n + BigInt(int(0x1000));
      else if (shape === 'random') {
        const g = F[int(F.length)];
        ips[d] = g.addr + BigInt(int(g.size));
      } else {
        ips[d] = F[f].addr + BigInt(F[f].sites[int(F[f].sites.length)]);
        f = callees[f][int(8)];
      }
    }
    out.push(ips);
  }
  return out;
}

/**
 * The plain symbolizer: a BigInt binary search over the code symbols sorted by address (equal
 * addresses in file order, the later one named), `name+0xoff` inside one (its end the next
 * one's start, the last's 0x10000 on), the address outside, the trampoline's marker named;
 * counting hits and misses as the Symbolizer does.
 */
export function plainSymbolizer(lines: readonly Omit<KernelSymbol, 'module'>[]): { key: (ip: bigint) => string; counts: { hits: number; misses: number } } {
  const code = lines.filter((l) => 'tTwW'.includes(l.type));
  const order = code.map((_, i) => i).sort((a, b) => (code[a].addr < code[b].addr ? -1 : code[a].addr > code[b].addr ? 1 : a - b));
  const addrs = order.map((i) => code[i].addr);
  const names = order.map((i) => code[i].name);
  // kallsyms read without privilege: every address 0, nothing symbolized
  const allZero = lines.length > 0 && lines.every((l) => l.addr === 0n);
  const counts = { hits: 0, misses: 0 };
  const key = (ip: bigint): string => {
    if (ip === 0x7fffffffn) return TRAMPOLINE;
    const raw = '0x' + ip.toString(16);
    if (allZero || addrs.length === 0) return raw;
    if (ip < addrs[0]) return (counts.misses++, raw);
    let lo = 0;
    let hi = addrs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (addrs[mid] <= ip) lo = mid;
      else hi = mid - 1;
    }
    const end = lo + 1 < addrs.length ? addrs[lo + 1] : addrs[lo] + 0x10000n;
    if (ip >= end) return (counts.misses++, raw);
    counts.hits++;
    return `${names[lo]}+0x${(ip - addrs[lo]).toString(16)}`;
  };
  return { key, counts };
}
