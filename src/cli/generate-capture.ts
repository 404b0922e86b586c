import { closeSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeStackMapBin, writeStackMapStat, writeStackMapText, type BinRecordInput, type TextRecordInput } from '../core/formats/stack-map-write.ts';
import { writeTraceText, type TraceTextHeader, type TraceTextItem } from '../core/formats/trace-text-write.ts';
import { stackHash } from '../core/sim/jhash.ts';
import { SyntheticKernel, TASKS, type KernelSymbol } from '../core/sim/kernel-symbols.ts';
import { Rng, Zipf } from '../core/sim/random.ts';

/**
 * The synthetic capture `generate` writes (DESIGN 5.3), of any size up to ~1 GB. The stack
 * population lives in typed arrays (frame indices into a small alphabet of return addresses); the
 * trace is written to disk chunk by chunk through the project's trace writer, so it is never held
 * whole; the dumps are written in chunks too. The command (arguments, usage, report) is
 * generate.ts; nothing here imports it.
 */

export const MAX_STACKS = 262_144;
export const MAX_DEPTH = 64;

export interface GenerateOptions {
  out: string;
  /** event lines (not counting stack records); exclusive with mb */
  events: number | null;
  /** stop once the trace has this many MiB (2^20 bytes); the last chunk may overshoot by < 1 MiB */
  mb: number | null;
  mode: 'v7' | 'v8';
  stacks: number;
  depthMin: number;
  depthMax: number;
  /** every record a full `<stack trace>`, as the kernel writes with options/stackmap off */
  fullStacks: boolean;
  seed: number;
  cpus: number;
  /** extra functions in the synthetic kernel (its kallsyms), beside the real-named ones */
  symbols: number;
  zipf: number;
  /**
   * how frames are drawn: 'callgraph', real call chains through the functions' 1-3 call sites
   * (tens of thousands of distinct return addresses); 'random', every frame a random function at a
   * random offset inside it (millions, as a kernel with many distinct return addresses or another
   * generator gives)
   */
  frames: 'callgraph' | 'random';
  /** the trace's first records name every stack once (in a random order), so a flame graph of the trace holds them all */
  everyStack: boolean;
  /** also write the `stack_map` text dump (large: ~40 bytes per frame) */
  textDump: boolean;
  json: boolean;
}

/** v8's generation in the generated capture (one generation, no reset) */
const GENERATION = 1;

/** a usage error: the options ask for what cannot be made (exit status 2) */
import { UsageError } from './usage.ts';

export { UsageError };

// ---------------------------------------------------------------- the synthetic kernel and its stacks

/**
 * Return addresses the stacks are made of: one per (function, call site), and with random frames
 * one more per frame drawn. Each is a function and an offset; its text is made when written.
 */
class Alphabet {
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

function buildKernel(rng: Rng, extra: number): { symbols: KernelSymbol[]; kernel: SyntheticKernel } {
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

interface Population {
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
function buildPopulation(rng: Rng, alpha: Alphabet, kernel: SyntheticKernel, o: GenerateOptions): Population {
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

// ---------------------------------------------------------------- writing

const CHUNK_ITEMS = 4096;
const GFP = ['GFP_KERNEL', 'GFP_KERNEL|__GFP_ZERO', 'GFP_ATOMIC'];

export interface GenerateReport {
  out: string;
  mode: 'v7' | 'v8';
  seed: number;
  cpus: number;
  bits: number;
  capacity: number;
  /** event lines in the trace (each followed by one stack record) */
  events: number;
  cookies: number;
  fullStacks: number;
  /** distinct stacks in the dumps */
  stacks: number;
  /** distinct stacks the trace's records name */
  stacksInTrace: number;
  generation: number | null;
  symbols: number;
  files: { name: string; bytes: number }[];
}

/** Writes the capture to `o.out` (which must exist). */
export function writeCapture(o: GenerateOptions): GenerateReport {
  const rng = new Rng(o.seed);
  const { symbols, kernel } = buildKernel(rng, o.symbols);
  const alpha = new Alphabet(symbols, kernel.symbols.length);
  const pop = buildPopulation(rng, alpha, kernel, o);
  const zipf = new Zipf(o.stacks, o.zipf);
  // --every-stack: the first records name every stack once, in a random order (Fisher-Yates)
  const cover = o.everyStack ? Uint32Array.from({ length: o.stacks }, (_, k) => k) : new Uint32Array(0);
  for (let i = cover.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = cover[i];
    cover[i] = cover[j];
    cover[j] = t;
  }
  const occurrences = new Uint32Array(o.stacks);
  const files: GenerateReport['files'] = [];
  const dir = o.out;
  // each file under a hidden temporary name, renamed once all are written: a run killed part way
  // (Ctrl-C) leaves no trace whose dumps say entries 0/0 to be read as a capture
  const written: string[] = [];
  const part = (name: string) => {
    written.push(name);
    return join(dir, `.${name}.tmp-${process.pid}`);
  };
  const v8 = o.mode === 'v8';

  // ---- trace: a header whose entry count is patched at the end, then chunks through writeTraceText
  const header: TraceTextHeader = { tracer: 'nop', cpus: o.cpus };
  const headLines = writeTraceText([], header).split('\n').length - 1;
  const ENTRIES_WIDTH = 64;
  const entriesLine = (n: number) => {
    const s = `# entries-in-buffer/entries-written: ${n}/${n}`;
    return s + ' '.repeat(Math.max(3, ENTRIES_WIDTH - s.length)) + `#P:${o.cpus}`;
  };
  const head = writeTraceText([], header)
    .split('\n')
    .map((l) => (l.includes('entries-in-buffer') ? entriesLine(0) : l))
    .join('\n');
  const entriesOffset = Buffer.byteLength(head.slice(0, head.indexOf('# entries-in-buffer')));
  const tracePath = part('trace');
  const fd = openSync(tracePath, 'w');
  let bytes = 0;
  const put = (s: string) => {
    const b = Buffer.from(s, 'utf8');
    writeSync(fd, b);
    bytes += b.length;
  };
  let events = 0;
  try {
    put(head);
    const target = o.events ?? Infinity;
    const maxBytes = o.mb === null ? Infinity : o.mb * 2 ** 20;
    const cpuTask = Array.from({ length: o.cpus }, (_, c) => TASKS[c % TASKS.length]);
    let ts = 5123.000101;
    let items: TraceTextItem[] = [];
    const flush = () => {
      if (items.length === 0) return;
      const text = writeTraceText(items, header);
      let at = 0;
      for (let i = 0; i < headLines; i++) at = text.indexOf('\n', at) + 1;
      put(text.slice(at));
      items = [];
    };
    while (events < target && bytes < maxBytes) {
      ts += rng.exp(0.00002) + 0.000001;
      const cpu = rng.int(o.cpus);
      if (rng.next() < 0.15) cpuTask[cpu] = rng.pick(TASKS);
      const task = cpuTask[cpu];
      const k = events < cover.length ? cover[events] : zipf.sample(rng);
      occurrences[k]++;
      const wake = pop.wakeup[k] === 1;
      const flags = wake ? 'd..3.' : '...1.';
      const s0 = pop.start[k];
      const d = pop.start[k + 1] - s0;
      let payload: string;
      if (wake) {
        const wakee = rng.pick(TASKS);
        payload = `comm=${wakee.comm} pid=${wakee.pid} prio=120 target_cpu=${String(rng.int(o.cpus)).padStart(3, '0')}`;
      } else {
        const caller = alpha.short(pop.frames[s0 + (d > 1 ? 1 : 0)]);
        payload =
          `call_site=${caller} ptr=0xffff8880${rng.u32().toString(16).padStart(8, '0')} bytes_req=${rng.pick([32, 64, 192, 256, 512, 4096])} ` +
          `bytes_alloc=${rng.pick([64, 256, 512, 4096])} gfp_flags=${rng.pick(GFP)}`;
      }
      const base = { comm: task.comm, pid: task.pid, cpu, ts, flags };
      items.push({ type: 'event', ...base, tgid: null, name: wake ? 'sched_wakeup' : 'kmem_cache_alloc', payload });
      if (o.fullStacks) {
        const fr: string[] = new Array(d);
        for (let i = 0; i < d; i++) fr[i] = alpha.printed(pop.frames[s0 + i]);
        items.push({ type: 'stack', kind: 'full', ...base, slot: 0, generation: null, frames: fr });
      } else {
        items.push({ type: 'stack', kind: 'cookie', ...base, slot: pop.slot[k], generation: v8 ? GENERATION : null, frames: null });
      }
      events++;
      if (items.length >= CHUNK_ITEMS) flush();
    }
    flush();
    writeSync(fd, Buffer.from(entriesLine(2 * events)), 0, undefined, entriesOffset);
  } finally {
    closeSync(fd);
  }
  files.push({ name: 'trace', bytes });

  // ---- dumps, ascending slot order; ref_count: the stack's records in the trace, at least 1
  // (a stack whose events the ring buffer has since overwritten)
  const order = Uint32Array.from({ length: o.stacks }, (_, k) => k).sort((a, b) => pop.slot[a] - pop.slot[b]);
  const ref = (k: number) => Math.max(1, occurrences[k]);
  const ipsOf = (k: number) => {
    const s0 = pop.start[k];
    const d = pop.start[k + 1] - s0;
    const ips = new BigUint64Array(d);
    for (let i = 0; i < d; i++) ips[i] = alpha.ips[pop.frames[s0 + i]];
    return ips;
  };
  const binFd = openSync(part('stack_map_bin'), 'w');
  let binBytes = 0;
  try {
    for (let c = 0; c < o.stacks; c += CHUNK_ITEMS) {
      const records: BinRecordInput[] = [];
      for (let j = c; j < Math.min(o.stacks, c + CHUNK_ITEMS); j++) records.push({ slot: pop.slot[order[j]], refCount: ref(order[j]), ips: ipsOf(order[j]) });
      const b = writeStackMapBin({ version: v8 ? 2 : 1, generation: v8 ? GENERATION : null, littleEndian: true, records, nrStacks: o.stacks });
      const part = c === 0 ? b : b.subarray(16); // one header, for the whole dump
      writeSync(binFd, part);
      binBytes += part.length;
    }
  } finally {
    closeSync(binFd);
  }
  files.push({ name: 'stack_map_bin', bytes: binBytes });

  if (o.textDump) {
    const tfd = openSync(part('stack_map'), 'w');
    let tBytes = 0;
    try {
      for (let c = 0; c < o.stacks; c += CHUNK_ITEMS) {
        const records: TextRecordInput[] = [];
        for (let j = c; j < Math.min(o.stacks, c + CHUNK_ITEMS); j++) {
          const k = order[j];
          const fr: string[] = [];
          for (let i = pop.start[k]; i < pop.start[k + 1]; i++) fr.push(alpha.printed(pop.frames[i]));
          records.push({ slot: pop.slot[k], refCount: ref(k), frames: fr });
        }
        const b = Buffer.from(writeStackMapText(records, { version: o.mode, generation: v8 ? GENERATION : null }));
        writeSync(tfd, b);
        tBytes += b.length;
      }
    } finally {
      closeSync(tfd);
    }
    files.push({ name: 'stack_map', bytes: tBytes });
  }

  let successes = 0;
  let inTrace = 0;
  for (let k = 0; k < o.stacks; k++) {
    successes += ref(k);
    if (occurrences[k] > 0) inTrace++;
  }
  const capacity = 2 ** pop.bits;
  const stat = writeStackMapStat(
    v8
      ? { version: 'v8', generation: GENERATION, entries: o.stacks, capacity, successes, fallbacks: 0 }
      : { version: 'v7', entries: o.stacks, capacity, tableSize: 2 * capacity, successes, drops: 0, successRate: 100 },
  );
  writeFileSync(part('stack_map_stat'), stat);
  files.push({ name: 'stack_map_stat', bytes: Buffer.byteLength(stat) });

  const kallsyms = [...symbols]
    .sort((a, b) => (a.addr < b.addr ? -1 : a.addr > b.addr ? 1 : 0))
    .map((s) => `${s.addr.toString(16)} ${s.module ? 't' : 'T'} ${s.name}${s.module ? `\t[${s.module}]` : ''}\n`)
    .join('');
  writeFileSync(part('kallsyms'), kallsyms);
  files.push({ name: 'kallsyms', bytes: Buffer.byteLength(kallsyms) });
  for (const name of written) renameSync(join(dir, `.${name}.tmp-${process.pid}`), join(dir, name));

  return {
    out: dir,
    mode: o.mode,
    seed: o.seed,
    cpus: o.cpus,
    bits: pop.bits,
    capacity,
    events,
    cookies: o.fullStacks ? 0 : events,
    fullStacks: o.fullStacks ? events : 0,
    stacks: o.stacks,
    stacksInTrace: inTrace,
    generation: v8 ? GENERATION : null,
    symbols: symbols.length,
    files,
  };
}
