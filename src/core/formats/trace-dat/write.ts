/**
 * A trace-cmd `trace.dat` WRITER, for tests and `cli simulate --format trace-dat`: version 6
 * here, version 7 in write-v7.ts. Either byte order, 4- or 8-byte longs, events of a test format
 * (or of formats the caller gives, `raw` records), `kernel_stack` records, the stack map's
 * `stack_id` entries (v7 ids, v8 cookies) and `bprint` (trace_printk) events with their printk
 * formats, in per-CPU ring buffer pages, with time extends for long gaps, discarded-event
 * padding, end-of-page padding and lost-event pages.
 */

export interface DatSample {
  kind: 'sample';
  cpu: number;
  /** nanoseconds */
  ts: number;
  pid: number;
  value: number;
  /** at most 15 ASCII characters */
  label: string;
  /** start a new page that says this many events were lost before it (0: lost, count unknown) */
  lostBefore?: number;
}

export interface DatStack {
  kind: 'stack';
  cpu: number;
  ts: number;
  pid: number;
  /** leaf first; more than 12 (8-byte longs) makes a length-prefixed (type_len 0) event */
  ips: bigint[];
  /** common_flags and common_preempt_count: its event's (default 0x01 irqs off, 1) */
  flags?: number;
  preempt?: number;
  lostBefore?: number;
}

/** One argument of a bprint event, packed as the kernel's vbin_printf packs it. */
export type DatPrintArg = { size: 1 | 2 | 4 | 8; value: bigint } | { str: string };

export interface DatPrint {
  kind: 'print';
  cpu: number;
  ts: number;
  pid: number;
  ip: bigint;
  /** the address of its format in `printk` */
  fmt: bigint;
  args: DatPrintArg[];
  lostBefore?: number;
}

/**
 * The stack map's record (`options/stackmap`), written after an event instead of its stack:
 * v8 `struct stack_id_entry { struct trace_entry ent; u64 stack_cookie; }` (gen << 32 | id),
 * v7 the same with `int stack_id` (the file's `stackIdAbi` decides which).
 */
export interface DatStackId {
  kind: 'stack_id';
  cpu: number;
  ts: number;
  pid: number;
  /** the slot (v7: the whole id) */
  slot: number;
  /** v8: the cookie's high half; null for a v7 id */
  generation: number | null;
  /** common_flags and common_preempt_count: its event's (default 0x01 irqs off, 1) */
  flags?: number;
  preempt?: number;
  lostBefore?: number;
}

/** An event of a caller's format (`eventSystems`): its bytes after the 8 common ones. */
export interface DatRaw {
  kind: 'raw';
  cpu: number;
  ts: number;
  pid: number;
  /** the format's ID */
  id: number;
  data: Uint8Array;
  /** common_flags and common_preempt_count (default 0, 0) */
  flags?: number;
  preempt?: number;
  lostBefore?: number;
}

/** A trace_marker write (the ftrace `print` event): `ip` (tracing_mark_write's address) and the text written. */
export interface DatMarker {
  kind: 'marker';
  cpu: number;
  ts: number;
  pid: number;
  ip: bigint;
  text: string;
  lostBefore?: number;
}

export type DatWriteEvent = DatSample | DatStack | DatPrint | DatStackId | DatRaw | DatMarker;

export interface DatWriteOptions {
  littleEndian: boolean;
  longSize: 4 | 8;
  pageSize?: number;
  cpus: number;
  comms: [number, string][];
  /** /proc/kallsyms text */
  kallsyms?: string;
  /** put a discarded-event padding before every event whose delta allows it */
  padding?: boolean;
  /** the saved printk formats: address -> format */
  printk?: [bigint, string][];
  /**
   * the stack map's ABI, for the `stack_id` format file and its records: 'v7' a 4-byte
   * `int stack_id`, 'v8' a `u64 stack_cookie`; default: v8 when a stack_id event has a
   * generation, v7 when one has none, no format without stack_id events
   */
  stackIdAbi?: 'v7' | 'v8';
  /** the stack_id format file as written instead of stackIdFormatText's (hostile tests) */
  stackIdFormat?: string;
  /** the event systems and their format files (default: `test` with SAMPLE_FORMAT) */
  eventSystems?: [string, string[]][];
  events: DatWriteEvent[];
}

export const SAMPLE_ID = 100;
export const STACK_ID = 4;
export const BPRINT_ID = 6;
/** ftrace's print event (TRACE_PRINT), what a trace_marker write records */
export const PRINT_ID = 5;
/**
 * The `stack_id` entry's ID (the kernel's TRACE_STACK_ID is a trace_type enum value that
 * depends on the kernel's other entries; the reader goes by the format, never by the ID).
 */
export const STACK_ID_ENTRY_ID = 20;

const enc = new TextEncoder();

export class Out {
  parts: Uint8Array[] = [];
  length = 0;
  constructor(readonly little: boolean) {}
  bytes(b: Uint8Array): void {
    this.parts.push(b);
    this.length += b.length;
  }
  str0(s: string): void {
    this.bytes(enc.encode(s + '\0'));
  }
  u8(v: number): void {
    this.bytes(new Uint8Array([v]));
  }
  u16(v: number): void {
    const b = new Uint8Array(2);
    new DataView(b.buffer).setUint16(0, v, this.little);
    this.bytes(b);
  }
  u32(v: number): void {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, v >>> 0, this.little);
    this.bytes(b);
  }
  u64(v: number): void {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(v), this.little);
    this.bytes(b);
  }
  sized64(text: string): void {
    const b = enc.encode(text);
    this.u64(b.length);
    this.bytes(b);
  }
  sized32(text: string): void {
    const b = enc.encode(text);
    this.u32(b.length);
    this.bytes(b);
  }
  concat(): Uint8Array {
    const all = new Uint8Array(this.length);
    let o = 0;
    for (const p of this.parts) {
      all.set(p, o);
      o += p.length;
    }
    return all;
  }
}

const COMMON = `\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
`;

export const callerOffset = (longSize: number) => (longSize === 8 ? 16 : 12);

function stackFormat(longSize: number): string {
  return `name: kernel_stack\nID: ${STACK_ID}\nformat:\n${COMMON}\n\tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:unsigned long caller[8];\toffset:${callerOffset(longSize)};\tsize:${8 * longSize};\tsigned:0;\n\nprint fmt: "\\t=> %ps\\n"\n`;
}

/** ftrace's print entry as the kernel's format file has it: the caller's ip, then the text to its NUL. */
function printFormat(longSize: number): string {
  return `name: print\nID: ${PRINT_ID}\nformat:\n${COMMON}\n\tfield:unsigned long ip;\toffset:8;\tsize:${longSize};\tsigned:0;\n\tfield:char buf[];\toffset:${8 + longSize};\tsize:0;\tsigned:1;\n\nprint fmt: "%ps: %s", (void *)REC->ip, REC->buf\n`;
}

function bprintFormat(longSize: number): string {
  return `name: bprint\nID: ${BPRINT_ID}\nformat:\n${COMMON}\n\tfield:unsigned long ip;\toffset:8;\tsize:${longSize};\tsigned:0;\n\tfield:const char * fmt;\toffset:${8 + longSize};\tsize:${longSize};\tsigned:0;\n\tfield:u32 buf;\toffset:${8 + 2 * longSize};\tsize:0;\tsigned:0;\n\nprint fmt: "%ps: %s", (void *)REC->ip, REC->fmt\n`;
}

/**
 * The stack map's format file, as FTRACE_ENTRY(stack_id, stack_id_entry, ...) would make it: the
 * event is named `stack_id` after its struct, as trace_entries.h names the others
 * (stack_entry -> kernel_stack, bprint_entry -> bprint, func_repeats_entry -> func_repeats), and
 * the `print fmt` is the kernel's text output, `<stack_id N>` (v7) or `<stack_id N gen G>` (v8,
 * the cookie split as the cookie proposal prints it), which `trace-cmd report` evaluates.
 */
export function stackIdFormatText(abi: 'v7' | 'v8'): string {
  const field = abi === 'v8' ? '\tfield:u64 stack_cookie;\toffset:8;\tsize:8;\tsigned:0;\n' : '\tfield:int stack_id;\toffset:8;\tsize:4;\tsigned:1;\n';
  const print =
    abi === 'v8'
      ? 'print fmt: "<stack_id %u gen %u>", (unsigned int)(REC->stack_cookie & 0xffffffff), (unsigned int)(REC->stack_cookie >> 32)\n'
      : 'print fmt: "<stack_id %u>", (unsigned int)REC->stack_id\n';
  return `name: stack_id\nID: ${STACK_ID_ENTRY_ID}\nformat:\n${COMMON}\n${field}\n${print}`;
}

/** The stack map ABI a file's stack_id records are written in, null without any. */
export function stackIdAbiOf(o: DatWriteOptions): 'v7' | 'v8' | null {
  if (o.stackIdAbi) return o.stackIdAbi;
  let abi: 'v7' | 'v8' | null = null;
  for (const e of o.events) if (e.kind === 'stack_id') abi = e.generation !== null ? 'v8' : (abi ?? 'v7');
  return abi;
}

/** The ftrace format files the writer declares (the stack_id one when `o` has that ABI). */
export function ftraceFormatTexts(longSize: number, o?: DatWriteOptions): string[] {
  const abi = o ? stackIdAbiOf(o) : null;
  const out = [stackFormat(longSize), bprintFormat(longSize)];
  if (o?.events.some((e) => e.kind === 'marker')) out.push(printFormat(longSize));
  if (o?.stackIdFormat !== undefined) out.push(o.stackIdFormat);
  else if (abi) out.push(stackIdFormatText(abi));
  return out;
}

/** The event systems the writer declares. */
export const eventSystemsOf = (o: DatWriteOptions): [string, string[]][] => o.eventSystems ?? [['test', [SAMPLE_FORMAT]]];

/** header_page and header_event as the kernel writes them. */
export function headerPageText(longSize: number, pageSize: number): string {
  return (
    `\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:${longSize};\tsigned:1;\n` +
    `\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:${8 + longSize};\tsize:${pageSize - 8 - longSize};\tsigned:1;\n`
  );
}
export const HEADER_EVENT = '# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n';

/** printk_formats text: the kernel escapes newline, tab and the double quote. */
export function printkText(o: DatWriteOptions): string {
  return (o.printk ?? [])
    .map(([a, f]) => `0x${a.toString(16)} : "${f.replace(/["\n\t]/g, (c) => (c === '\n' ? '\\n' : c === '\t' ? '\\t' : '\\"'))}"\n`)
    .join('');
}

export const cmdlinesText = (o: DatWriteOptions) => o.comms.map(([pid, comm]) => `${pid} ${comm}\n`).join('');

/** The packed arguments of a bprint event (u32 words, as the kernel's bin buffer). */
function packArgs(args: DatPrintArg[], little: boolean): Uint8Array {
  const parts: number[] = [];
  const align = (a: number) => {
    while (parts.length % a) parts.push(0);
  };
  for (const a of args) {
    if ('str' in a) {
      for (const c of enc.encode(a.str)) parts.push(c);
      parts.push(0);
      continue;
    }
    align(a.size === 8 ? 4 : a.size);
    const b = new Uint8Array(a.size);
    const dv = new DataView(b.buffer);
    if (a.size === 1) dv.setUint8(0, Number(BigInt.asUintN(8, a.value)));
    else if (a.size === 2) dv.setUint16(0, Number(BigInt.asUintN(16, a.value)), little);
    else if (a.size === 4) dv.setUint32(0, Number(BigInt.asUintN(32, a.value)), little);
    else dv.setBigUint64(0, BigInt.asUintN(64, a.value), little);
    parts.push(...b);
  }
  align(4);
  return new Uint8Array(parts);
}

export const SAMPLE_FORMAT = `name: sample\nID: ${SAMPLE_ID}\nformat:\n${COMMON}\n\tfield:int value;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:char label[16];\toffset:12;\tsize:16;\tsigned:0;\n\nprint fmt: "value=%d label=%s", REC->value, REC->label\n`;

/** The record (from common_type on) of one event. */
function record(e: DatWriteEvent, o: DatWriteOptions, abi: 'v7' | 'v8' | null = stackIdAbiOf(o)): Uint8Array {
  const L = o.longSize;
  if (e.kind === 'stack_id') {
    if (abi === 'v7' && e.generation !== null) throw new Error('a v8 cookie (with a generation) in a file of v7 stack ids');
    if (abi === 'v8' && e.generation === null) throw new Error('a v7 id (no generation) in a file of v8 cookies');
    const rec = new Uint8Array(abi === 'v8' ? 16 : 12);
    const v = new DataView(rec.buffer);
    v.setUint16(0, STACK_ID_ENTRY_ID, o.littleEndian);
    rec[2] = e.flags ?? 0x01;
    rec[3] = e.preempt ?? 1;
    v.setInt32(4, e.pid, o.littleEndian);
    if (abi === 'v8') v.setBigUint64(8, (BigInt(e.generation! >>> 0) << 32n) | BigInt(e.slot >>> 0), o.littleEndian);
    else v.setUint32(8, e.slot >>> 0, o.littleEndian);
    return rec;
  }
  if (e.kind === 'marker') {
    const text = new TextEncoder().encode(e.text);
    const rec = new Uint8Array(8 + L + text.length + 1);
    const v = new DataView(rec.buffer);
    v.setUint16(0, PRINT_ID, o.littleEndian);
    rec[2] = 0x01;
    rec[3] = 1;
    v.setInt32(4, e.pid, o.littleEndian);
    if (L === 8) v.setBigUint64(8, e.ip, o.littleEndian);
    else v.setUint32(8, Number(e.ip & 0xffffffffn), o.littleEndian);
    rec.set(text, 8 + L);
    return rec;
  }
  if (e.kind === 'raw') {
    const rec = new Uint8Array(8 + e.data.length);
    const v = new DataView(rec.buffer);
    v.setUint16(0, e.id, o.littleEndian);
    rec[2] = e.flags ?? 0;
    rec[3] = e.preempt ?? 0;
    v.setInt32(4, e.pid, o.littleEndian);
    rec.set(e.data, 8);
    return rec;
  }
  if (e.kind === 'print') {
    const args = packArgs(e.args, o.littleEndian);
    const rec = new Uint8Array(8 + 2 * L + args.length);
    const v = new DataView(rec.buffer);
    v.setUint16(0, BPRINT_ID, o.littleEndian);
    rec[2] = 0x01;
    rec[3] = 1;
    v.setInt32(4, e.pid, o.littleEndian);
    if (L === 8) {
      v.setBigUint64(8, e.ip, o.littleEndian);
      v.setBigUint64(16, e.fmt, o.littleEndian);
    } else {
      v.setUint32(8, Number(e.ip & 0xffffffffn), o.littleEndian);
      v.setUint32(12, Number(e.fmt & 0xffffffffn), o.littleEndian);
    }
    rec.set(args, 8 + 2 * L);
    return rec;
  }
  const rec = new Uint8Array(e.kind === 'sample' ? 28 : callerOffset(L) + e.ips.length * L);
  const v = new DataView(rec.buffer);
  v.setUint16(0, e.kind === 'sample' ? SAMPLE_ID : STACK_ID, o.littleEndian);
  rec[2] = e.kind === 'stack' ? (e.flags ?? 0x01) : 0x01; // irqs off
  rec[3] = e.kind === 'stack' ? (e.preempt ?? 1) : 1;
  v.setInt32(4, e.pid, o.littleEndian);
  if (e.kind === 'sample') {
    v.setInt32(8, e.value, o.littleEndian);
    rec.set(enc.encode(e.label).subarray(0, 15), 12);
  } else {
    v.setInt32(8, e.ips.length, o.littleEndian);
    e.ips.forEach((ip, i) => {
      const at = callerOffset(L) + i * L;
      if (L === 8) v.setBigUint64(at, ip, o.littleEndian);
      else v.setUint32(at, Number(ip & 0xffffffffn), o.littleEndian);
    });
  }
  return rec;
}

/** The ring buffer pages of one CPU's events (sorted by time). */
export function cpuPages(events: DatWriteEvent[], o: DatWriteOptions, pageSize: number): Uint8Array[] {
  const little = o.littleEndian;
  const L = o.longSize;
  const dataOff = 8 + L;
  const pages: Uint8Array[] = [];
  let page: Uint8Array | null = null;
  let v: DataView | null = null;
  let at = 0;
  let last = 0;
  const abi = stackIdAbiOf(o);
  const head = (typeLen: number, delta: number) => (little ? ((delta << 5) | typeLen) >>> 0 : ((typeLen << 27) | delta) >>> 0);
  const close = () => {
    if (!page || !v) return;
    const commit = at - dataOff;
    if (L === 8) v.setBigUint64(8, BigInt(commit >>> 0), little);
    else v.setUint32(8, commit >>> 0, little);
    pages.push(page);
    page = null;
  };
  const open = (ts: number) => {
    page = new Uint8Array(pageSize);
    v = new DataView(page.buffer);
    v.setBigUint64(0, BigInt(ts), little);
    at = dataOff;
    last = ts;
  };
  for (const e of events) {
    const rec = record(e, o, abi);
    const big = rec.length > 28 * 4;
    const need = (big ? 8 : 4) + ((rec.length + 3) & ~3) + 8 /* extend */ + 12 /* padding */ + L; /* lost count */
    if (e.lostBefore !== undefined || !page || at + need > pageSize) {
      if (page && e.lostBefore === undefined && at + 4 <= pageSize) {
        // end-of-page padding: a null padding event (delta 0) means "the rest of the page"
        v!.setUint32(at, head(29, 0), little);
        at += 4;
      }
      // the lost count goes on the page that follows the loss
      if (page) close();
      open(e.ts);
      if (e.lostBefore !== undefined) pendingLost.set(pages.length, e.lostBefore);
    }
    let delta = e.ts - last;
    if (o.padding && delta >= 1) {
      // a discarded event: padding of 8 more bytes carrying one nanosecond of the delta
      v!.setUint32(at, head(29, 1), little);
      v!.setUint32(at + 4, 8, little);
      at += 12;
      delta -= 1;
    }
    if (delta >= 2 ** 27) {
      v!.setUint32(at, head(30, delta % 2 ** 27), little);
      v!.setUint32(at + 4, Math.floor(delta / 2 ** 27), little);
      at += 8;
      delta = 0;
    }
    if (big) {
      v!.setUint32(at, head(0, delta), little);
      v!.setUint32(at + 4, rec.length + 4, little);
      at += 8;
    } else {
      v!.setUint32(at, head((rec.length + 3) >> 2, delta), little);
      at += 4;
    }
    page!.set(rec, at);
    at += (rec.length + 3) & ~3;
    last = e.ts;
  }
  close();
  // mark the pages that follow a loss
  for (const [i, lost] of pendingLost) markLost(pages[i], lost, o);
  pendingLost.clear();
  return pages;
}

const pendingLost = new Map<number, number>();

function markLost(page: Uint8Array, lost: number, o: DatWriteOptions): void {
  const v = new DataView(page.buffer);
  const L = o.longSize;
  const little = o.littleEndian;
  const lo = L === 8 ? (little ? 8 : 12) : 8;
  let commit = v.getUint32(lo, little);
  const size = commit & 0x7ffffff;
  commit |= 0x80000000;
  const at = 8 + L + size;
  if (lost > 0 && at + L <= page.length) {
    if (L === 8) v.setBigUint64(at, BigInt(lost), little);
    else v.setUint32(at, lost, little);
    commit |= 0x40000000;
  }
  v.setUint32(lo, commit >>> 0, little);
}

/** Writes a version 6 trace.dat of `o.events`. */
export function writeTraceDat(o: DatWriteOptions): Uint8Array {
  const pageSize = o.pageSize ?? 4096;
  const L = o.longSize;
  const w = new Out(o.littleEndian);
  w.bytes(new Uint8Array([0x17, 0x08, 0x44, ...enc.encode('tracing')]));
  w.str0('6');
  w.u8(o.littleEndian ? 0 : 1);
  w.u8(L);
  w.u32(pageSize);
  w.str0('header_page');
  w.sized64(headerPageText(L, pageSize));
  w.str0('header_event');
  w.sized64(HEADER_EVENT);
  const ftrace = ftraceFormatTexts(L, o);
  w.u32(ftrace.length);
  for (const f of ftrace) w.sized64(f);
  const systems = eventSystemsOf(o);
  w.u32(systems.length);
  for (const [system, formats] of systems) {
    w.str0(system);
    w.u32(formats.length);
    for (const f of formats) w.sized64(f);
  }
  w.sized32(o.kallsyms ?? '');
  w.sized32(printkText(o));
  w.sized64(cmdlinesText(o));
  w.u32(o.cpus);
  w.bytes(enc.encode('options  \0'));
  const clock = enc.encode('[local] global counter\0');
  w.u16(4); // an option: the trace clock (TRACECLOCK)
  w.u32(clock.length);
  w.bytes(clock);
  w.u16(0);
  w.bytes(enc.encode('flyrecord\0'));
  const perCpu: Uint8Array[][] = [];
  for (let c = 0; c < o.cpus; c++)
    perCpu.push(
      cpuPages(
        o.events.filter((e) => e.cpu === c).sort((a, b) => a.ts - b.ts),
        o,
        pageSize,
      ),
    );
  let off = Math.ceil((w.length + 16 * o.cpus) / pageSize) * pageSize;
  for (let c = 0; c < o.cpus; c++) {
    const size = perCpu[c].length * pageSize;
    w.u64(size > 0 ? off : 0);
    w.u64(size);
    off += size;
  }
  if (perCpu.some((p) => p.length > 0)) w.bytes(new Uint8Array(Math.ceil(w.length / pageSize) * pageSize - w.length));
  for (const pages of perCpu) for (const p of pages) w.bytes(p);
  return w.concat();
}
