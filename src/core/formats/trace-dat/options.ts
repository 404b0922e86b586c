/**
 * trace.dat options (`u16 id, u32 size, data`), as trace-cmd's trace-input.c reads them: what
 * this reader uses (CPUCOUNT, TRACECLOCK, UNAME, VERSION, OFFSET and TSC2NSEC for the
 * timestamps, BUFFER and BUFFER_TEXT for where each CPU's data is, the version 7 section
 * pointers, DONE with the next options section) and what it checks and keeps (HOOK, TIME_SHIFT,
 * GUEST, TRACEID, DATE, CPUSTAT, PROCMAPS). Each decode reads only inside the option's bytes.
 */

import type { Pull, Rd } from './read.ts';

/** Largest part of an option that is looked at: past it, its bytes are reported, not read. */
export const MAX_OPTION = 1 << 20;

/**
 * An option's bytes after its id and size: all of them, or past MAX_OPTION its first MAX_OPTION
 * (what trace-cmd uses of a text option is at its start) and the rest reported as not read; null
 * when the file ends inside it.
 */
export function* optionBytes(rd: Rd, id: number, size: number): Pull<Uint8Array | null> {
  if (size <= MAX_OPTION) return yield* rd.blob(size);
  const data = yield* rd.blob(MAX_OPTION);
  if (!data) return null;
  const name = OPT_NAME[id] ?? `option ${id}`;
  if (
    !(yield* rd.skipUnused(size - MAX_OPTION, `option ${name} of ${size} bytes: only its first ${MAX_OPTION} bytes read, the other ${size - MAX_OPTION} not`))
  )
    return null;
  return data;
}

export const OPT = {
  DONE: 0,
  DATE: 1,
  CPUSTAT: 2,
  BUFFER: 3,
  TRACECLOCK: 4,
  UNAME: 5,
  HOOK: 6,
  OFFSET: 7,
  CPUCOUNT: 8,
  VERSION: 9,
  PROCMAPS: 10,
  TRACEID: 11,
  TIME_SHIFT: 12,
  GUEST: 13,
  TSC2NSEC: 14,
  STRINGS: 15,
  HEADER_INFO: 16,
  FTRACE_EVENTS: 17,
  EVENT_FORMATS: 18,
  KALLSYMS: 19,
  PRINTK: 20,
  CMDLINES: 21,
  BUFFER_TEXT: 22,
  BTF_FILE: 23,
  LAST_BOOT_INFO: 24,
  MODULES_FILE: 25,
} as const;

/** Section and option names by id, for diagnostics. */
export const OPT_NAME: Record<number, string> = Object.fromEntries(Object.entries(OPT).map(([k, v]) => [v, k]));

export interface DatCpuData {
  cpu: number;
  offset: number;
  size: number;
}

export interface DatBuffer {
  /** file offset of its BUFFER (or BUFFER_TEXT) section */
  offset: number;
  /** instance name, '' for the top one */
  name: string;
  clock: string;
  pageSize: number;
  cpus: DatCpuData[];
  latency: boolean;
}

export interface DatOptions {
  cpuCount: number | null;
  clock: string | null;
  uname: string | null;
  version: string | null;
  /** nanoseconds added to every timestamp (OFFSET) */
  tsOffset: number;
  /** TSC2NSEC: ns = (ts * mult) >> shift */
  tsc: { mult: number; shift: number } | null;
  buffers: DatBuffer[];
  /** version 7: section id -> the offset an option says it is at */
  pointers: { id: number; offset: number; at: number }[];
  /** option ids seen that are kept but not applied (TIME_SHIFT, GUEST, HOOK...) */
  kept: Set<string>;
}

export function emptyOptions(): DatOptions {
  return { cpuCount: null, clock: null, uname: null, version: null, tsOffset: 0, tsc: null, buffers: [], pointers: [], kept: new Set() };
}

const latin1 = new TextDecoder('latin1');

/** A reader over one option's bytes: every read checks it stays inside. */
class OptBytes {
  o = 0;
  private readonly v: DataView;
  constructor(
    readonly b: Uint8Array,
    readonly little: boolean,
  ) {
    this.v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  u32(): number | null {
    if (this.o + 4 > this.b.length) return null;
    const x = this.v.getUint32(this.o, this.little);
    this.o += 4;
    return x;
  }
  u64(): number | null {
    if (this.o + 8 > this.b.length) return null;
    const lo = this.v.getUint32(this.o + (this.little ? 0 : 4), this.little);
    const hi = this.v.getUint32(this.o + (this.little ? 4 : 0), this.little);
    this.o += 8;
    return hi * 2 ** 32 + lo;
  }
  str(): string | null {
    const e = this.b.indexOf(0, this.o);
    if (e < 0) return null;
    const s = latin1.decode(this.b.subarray(this.o, e));
    this.o = e + 1;
    return s;
  }
}

/** The text of a string option (NUL-terminated, maybe not). */
const text = (b: Uint8Array) => {
  const e = b.indexOf(0);
  return latin1.decode(e < 0 ? b : b.subarray(0, e)).trim();
};

/**
 * Applies one option. `v7`: the file has sections (BUFFER holds the CPU table). Returns the
 * next options offset for DONE (version 7), undefined otherwise; a problem goes to `diag`.
 */
export function applyOption(id: number, data: Uint8Array, little: boolean, v7: boolean, opts: DatOptions, diag: (msg: string) => void): number | undefined {
  const r = new OptBytes(data, little);
  const name = OPT_NAME[id] ?? `option ${id}`;
  const bad = (why: string) => diag(`option ${name} (${data.length} bytes): ${why}`);
  switch (id) {
    case OPT.DONE: {
      const next = r.u64();
      if (next === null) return void bad('no next-options offset');
      return next;
    }
    case OPT.CPUCOUNT: {
      const n = r.u32();
      if (n === null) return void bad('shorter than 4 bytes');
      opts.cpuCount = n;
      return;
    }
    case OPT.TRACECLOCK: {
      // the trace_clock file: `[local] global counter`, the selected one in brackets
      const t = text(data);
      opts.clock = /\[([^\]]+)\]/.exec(t)?.[1] ?? (t || opts.clock);
      return;
    }
    case OPT.UNAME:
      opts.uname = text(data);
      return;
    case OPT.VERSION:
      opts.version = text(data);
      return;
    case OPT.OFFSET: {
      const t = text(data);
      const n = /^[-+]?(?:0x[0-9a-f]+|\d+)$/i.test(t) ? Number(t) : NaN;
      if (!Number.isFinite(n)) return void bad(`\`${t.slice(0, 40)}\` is not a number`);
      opts.tsOffset += n;
      return;
    }
    case OPT.TSC2NSEC: {
      const mult = r.u32();
      const shift = r.u32();
      if (mult === null || shift === null || r.u64() === null) return void bad('shorter than 16 bytes');
      if (shift > 32) return void bad(`shift ${shift} beyond 32`);
      if (mult > 0) opts.tsc = { mult, shift };
      return;
    }
    case OPT.BUFFER:
    case OPT.BUFFER_TEXT: {
      const offset = r.u64();
      const bname = r.str();
      if (offset === null || bname === null) return void bad('cut before its offset and name');
      if (!v7) {
        // version 6: an instance's flyrecord at that offset (not read: the top buffer is)
        opts.kept.add(`instance ${bname || '(top)'}`);
        return;
      }
      const clock = r.str();
      if (clock === null) return void bad('cut before its clock');
      const buf: DatBuffer = { offset, name: bname, clock, pageSize: 0, cpus: [], latency: id === OPT.BUFFER_TEXT };
      if (id === OPT.BUFFER) {
        const pageSize = r.u32();
        const cpus = r.u32();
        if (pageSize === null || cpus === null) return void bad('cut before its page size and CPU count');
        // each CPU takes 20 bytes: the count cannot claim more than the option holds
        if (cpus * 20 > data.length - r.o) return void bad(`${cpus} CPUs do not fit in its ${data.length - r.o} bytes left`);
        buf.pageSize = pageSize;
        const firstAt = new Map<number, number>();
        for (let i = 0; i < cpus; i++) {
          const cpu = r.u32()!;
          buf.cpus.push({ cpu, offset: r.u64()!, size: r.u64()! });
          const was = firstAt.get(cpu);
          // (trace-cmd 3.1 reads no event of such a buffer; both spans are read here, their events under the one id)
          if (was !== undefined) bad(`CPU id ${cpu} given twice (entries ${was} and ${i}): both read, their events all counted as CPU ${cpu}'s`);
          else firstAt.set(cpu, i);
        }
      }
      opts.buffers.push(buf);
      return;
    }
    case OPT.HEADER_INFO:
    case OPT.FTRACE_EVENTS:
    case OPT.EVENT_FORMATS:
    case OPT.KALLSYMS:
    case OPT.PRINTK:
    case OPT.CMDLINES:
    case OPT.BTF_FILE:
    case OPT.MODULES_FILE: {
      const offset = r.u64();
      if (offset === null) return void bad('shorter than its 8-byte section offset');
      opts.pointers.push({ id, offset, at: -1 });
      return;
    }
    case OPT.TIME_SHIFT:
      if (data.length < 16) return void bad('shorter than 16 bytes');
      opts.kept.add('TIME_SHIFT (host-guest time sync, not applied)');
      return;
    case OPT.GUEST:
      if (r.str() === null || r.u64() === null || r.u32() === null) return void bad('cut before its CPU count');
      opts.kept.add('GUEST');
      return;
    case OPT.DATE:
    case OPT.CPUSTAT:
    case OPT.HOOK:
    case OPT.PROCMAPS:
    case OPT.TRACEID:
    case OPT.STRINGS:
    case OPT.LAST_BOOT_INFO:
      opts.kept.add(name);
      return;
    default:
      diag(`option ${id} (${data.length} bytes): not an option trace-cmd defines, skipped`);
  }
}

/** The timestamp function the options ask for (ns in, ns out), null when none. */
export function tsMap(opts: DatOptions): ((ns: number) => number) | null {
  const { tsc, tsOffset } = opts;
  if (!tsc && tsOffset === 0) return null;
  if (!tsc) return (ns) => ns + tsOffset;
  const mult = BigInt(tsc.mult);
  const shift = BigInt(tsc.shift);
  return (ns) => Number((BigInt(Math.round(ns)) * mult) >> shift) + tsOffset;
}
