import { closeSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeStackMapBin, writeStackMapStat, writeStackMapText, type BinRecordInput, type TextRecordInput } from '../core/formats/stack-map-write.ts';
import { writeTraceText, type TraceTextHeader, type TraceTextItem } from '../core/formats/trace-text-write.ts';
import { TASKS } from '../core/sim/kernel-symbols.ts';
import { Rng, Zipf } from '../core/sim/random.ts';
import { Alphabet, buildKernel, buildPopulation, type StackOptions } from './generate-stacks.ts';

/**
 * The synthetic capture `generate` writes (DESIGN 5.3), of any size up to ~1 GB. The stack
 * population (generate-stacks.ts) lives in typed arrays (frame indices into a small alphabet of
 * return addresses); the trace is written to disk chunk by chunk through the project's trace writer, so it is never held
 * whole; the dumps are written in chunks too. The command (arguments, usage, report) is
 * generate.ts; nothing here imports it.
 */

export const MAX_STACKS = 262_144;

export interface GenerateOptions extends StackOptions {
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
