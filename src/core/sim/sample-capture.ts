import { stackHash } from './jhash.ts';
import { makeStack, SyntheticKernel, TASKS } from './kernel-symbols.ts';
import { Rng, Zipf } from './random.ts';

/**
 * Generates the embedded sample: a v8 capture of an allocation-and-wakeup workload on several
 * CPUs across generations, recorded through a sequential model of the v8 map (jhash2 keys,
 * linear probing, a claim that other CPUs can see unpublished until the claiming CPU's next
 * step, one copy per generation, fallback to a full stack), with a binary dump taken before each
 * reset and at the end, a text dump of the last generation, kallsyms and stack_map_stat.
 */

export interface SampleOptions {
  seed: number;
  cpus: number;
  events: number;
  /** resets, evenly spaced; generations = resets + 1 */
  resets: number;
  bits: number;
  /** events after the final dump (their new stacks resolve as no-slot) */
  tail: number;
  /** `CPU:N [LOST M EVENTS]` markers spread over the trace (deterministic; they draw no random numbers) */
  lostMarkers?: number;
}

export const DEFAULT_SAMPLE: SampleOptions = { seed: 20261130, cpus: 4, events: 4000, resets: 2, bits: 14, tail: 40, lostMarkers: 2 };

export type SampleLine =
  | { type: 'event'; comm: string; pid: number; cpu: number; ts: number; flags: string; name: string; payload: string }
  | { type: 'cookie'; comm: string; pid: number; cpu: number; ts: number; flags: string; slot: number; generation: number }
  | { type: 'stack'; comm: string; pid: number; cpu: number; ts: number; flags: string; frames: string[] }
  | { type: 'lost'; cpu: number; count: number };

export interface SampleDump {
  generation: number;
  /** ascending slot order, as the kernel exports */
  records: { slot: number; refCount: number; ips: BigUint64Array }[];
}

export interface SampleCapture {
  options: SampleOptions;
  kernel: SyntheticKernel;
  lines: SampleLine[];
  dumps: SampleDump[];
  stat: { generation: number; entries: number; capacity: number; successes: number; fallbacks: number };
  /** the truth, for tests: the stack (ips) each cookie and full stack stood for, in line order */
  truth: { generation: number; ips: BigUint64Array }[];
}

interface Element {
  ips: BigUint64Array;
  refCount: number;
  /** the CPU still filling it, -1 once published */
  pendingCpu: number;
}

class SequentialV8Map {
  readonly slots: number;
  keys: Uint32Array;
  vals: (Element | null)[];
  nextElt = 0;
  generation = 1;
  successes = 0;
  fallbacks = 0;
  /** the element each CPU is still filling */
  private pending: (Element | null)[] = [];
  constructor(
    readonly bits: number,
    readonly seed: number,
  ) {
    this.slots = 1 << (bits + 1);
    this.keys = new Uint32Array(this.slots);
    this.vals = new Array(this.slots).fill(null);
  }
  get capacity(): number {
    return 1 << this.bits;
  }
  /** Returns the slot, or -1 for a fallback (the stack is written in full). */
  insert(ips: BigUint64Array, cpu: number): number {
    const hash = stackHash(ips, this.seed);
    const mask = this.slots - 1;
    let idx = hash >>> (32 - (this.bits + 1));
    for (let probe = 0; probe < 64; probe++, idx = (idx + 1) & mask) {
      const key = this.keys[idx];
      if (key === hash) {
        const e = this.vals[idx];
        if (e && e.pendingCpu >= 0 && e.pendingCpu !== cpu && sameStack(e.ips, ips)) break; // v8: in flight elsewhere
        if (e && e.pendingCpu < 0 && sameStack(e.ips, ips)) {
          e.refCount++;
          this.successes++;
          return idx;
        }
        continue;
      }
      if (key !== 0) continue;
      this.keys[idx] = hash;
      if (this.nextElt >= this.capacity) break; // claimed but empty: a gravestone
      this.nextElt++;
      const e: Element = { ips, refCount: 1, pendingCpu: cpu };
      this.vals[idx] = e;
      this.pending[cpu] = e;
      this.successes++;
      return idx;
    }
    this.fallbacks++;
    return -1;
  }
  publish(cpu: number): void {
    const e = this.pending[cpu];
    if (e) e.pendingCpu = -1;
    this.pending[cpu] = null;
  }
  dump(): SampleDump {
    const records: SampleDump['records'] = [];
    for (let i = 0; i < this.slots; i++) {
      const e = this.vals[i];
      if (e && e.pendingCpu < 0) records.push({ slot: i, refCount: e.refCount, ips: e.ips });
    }
    return { generation: this.generation, records };
  }
  reset(): void {
    this.pending = [];
    this.keys.fill(0);
    this.vals.fill(null);
    this.nextElt = 0;
    this.generation++;
  }
}

function sameStack(a: BigUint64Array, b: BigUint64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function population(kernel: SyntheticKernel, chains: readonly string[][], n: number, rng: Rng): BigUint64Array[] {
  const seen = new Set<string>();
  const out: BigUint64Array[] = [];
  for (let tries = 0; out.length < n && tries < n * 20; tries++) {
    const ips = makeStack(kernel, rng.pick(chains), rng);
    const key = ips.join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(ips);
  }
  return out;
}

export function generateSample(opts: SampleOptions = DEFAULT_SAMPLE): SampleCapture {
  const rng = new Rng(opts.seed);
  const kernel = new SyntheticKernel(rng);
  const allocs = population(kernel, kernel.allocChains, 400, rng);
  const wakeups = population(kernel, kernel.wakeupChains, 60, rng);
  const allocZipf = new Zipf(allocs.length, 1.1);
  const wakeZipf = new Zipf(wakeups.length, 1.2);
  const map = new SequentialV8Map(opts.bits, rng.u32());
  const lines: SampleLine[] = [];
  const truth: SampleCapture['truth'] = [];
  const dumps: SampleDump[] = [];
  const perGen = Math.floor((opts.events - opts.tail) / (opts.resets + 1));
  const cpuTask = Array.from({ length: opts.cpus }, (_, c) => TASKS[c % TASKS.length]);
  let ts = 5123.000101;
  for (let i = 0; i < opts.events; i++) {
    if (i > 0 && i % perGen === 0 && map.generation <= opts.resets) {
      // the kernel waits for in-flight inserts before it clears the map
      for (let c = 0; c < opts.cpus; c++) map.publish(c);
      dumps.push(map.dump());
      map.reset();
    }
    if (i === opts.events - opts.tail) {
      for (let c = 0; c < opts.cpus; c++) map.publish(c);
      dumps.push(map.dump());
    }
    ts += rng.exp(0.00025) + 0.000001;
    const cpu = rng.int(opts.cpus);
    map.publish(cpu); // this CPU's previous insert has completed
    if (rng.next() < 0.15) cpuTask[cpu] = rng.pick(TASKS);
    const task = cpuTask[cpu];
    const wake = rng.next() < 0.3;
    const ips = wake ? wakeups[wakeZipf.sample(rng)] : allocs[allocZipf.sample(rng)];
    const flags = wake ? 'd..3.' : '...1.';
    const base = { comm: task.comm, pid: task.pid, cpu, ts, flags };
    let wakee = TASKS[0];
    const caller = kernel.printFrame(ips[1]).replace(/\/0x[0-9a-f]+.*$/, '');
    const payload = wake
      ? `comm=${(wakee = rng.pick(TASKS)).comm} pid=${wakee.pid} prio=120 target_cpu=${String(rng.int(opts.cpus)).padStart(3, '0')}`
      : `call_site=${caller} ptr=0xffff8880${rng.u32().toString(16).padStart(8, '0')} bytes_req=${rng.pick([32, 64, 192, 256, 512, 4096])} ` +
        `bytes_alloc=${rng.pick([64, 256, 512, 4096])} gfp_flags=${rng.pick(['GFP_KERNEL', 'GFP_KERNEL|__GFP_ZERO', 'GFP_ATOMIC'])}`;
    const lost = opts.lostMarkers ?? 0;
    for (let k = 0; k < lost; k++) {
      // the ring buffer of this CPU overflowed just before this event
      if (i === Math.floor((opts.events * (k + 1)) / (lost + 1)) + 7) lines.push({ type: 'lost', cpu, count: 50 + 37 * k });
    }
    lines.push({ type: 'event', ...base, name: wake ? 'sched_wakeup' : 'kmem_cache_alloc', payload });
    const slot = map.insert(ips, cpu);
    truth.push({ generation: map.generation, ips });
    if (slot >= 0) lines.push({ type: 'cookie', ...base, slot, generation: map.generation });
    else lines.push({ type: 'stack', ...base, frames: Array.from(ips, (ip) => kernel.printFrame(ip)) });
  }
  return {
    options: opts,
    kernel,
    lines,
    dumps,
    stat: { generation: map.generation, entries: map.nextElt, capacity: map.capacity, successes: map.successes, fallbacks: map.fallbacks },
    truth,
  };
}
