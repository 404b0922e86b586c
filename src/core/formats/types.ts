import type { DiagnosticLog } from './diagnostics.ts';
import type { FileBudget } from './decompress-budget.ts';

/** What a sniffer decided a file is. */
export type FileKind =
  | 'trace_text'
  | 'stack_map_text'
  | 'stack_map_bin'
  | 'stack_map_stat'
  | 'kallsyms'
  /** `stackmap_dump.py --json`: a generation-less dump */
  | 'dump_json'
  /** systrace / atrace HTML: ftrace text inside `<script class="trace-data">` */
  | 'systrace_html'
  /** trace-cmd binary `trace.dat`: versions 6 and 7, read by trace-dat.ts */
  | 'trace_cmd_dat'
  /** `perf script` output: samples with callchains, read by perf-script.ts into the trace columns */
  | 'perf_script'
  /** scripts/capture.sh's `capture.txt`: the kernel release, buffer size, options set (capture-info.ts) */
  | 'capture_txt'
  /** the simulator's `ledger.json`: each stack record's truth (sim-ledger.ts) */
  | 'sim_ledger'
  | 'unknown';

/** A push parser over byte chunks; `end` returns what it read. */
export interface ChunkParser<R> {
  push(chunk: Uint8Array): void;
  end(): R;
  /**
   * A reader that looks at every byte anyway (a browser's line scan) spares nul-gate.ts its own
   * pass: asked before a push, whether it will (nul-gate.ts then searches only what it says it did
   * not look at, after the push, where it searched first otherwise).
   */
  scansEveryByte?(): boolean;
  /**
   * After `push(c)`: where the bytes the reader looked at one by one and found no 0 byte in begin
   * (c[k, c.length) holds none); c.length or more when it vouches for nothing.
   */
  nulFreeFrom?(): number;
}

/** Lines of a text file: total = used + unused; every unused line has a diagnostic. */
export interface LineCount {
  total: number;
  used: number;
  unused: number;
}

/** Bytes of a binary file: total = used + unused. */
export interface ByteCount {
  total: number;
  used: number;
  unused: number;
}

// ---------------------------------------------------------------- trace text

export interface TraceEvent {
  lineNo: number;
  comm: string;
  pid: number;
  /** null when the TGID column is absent or `(-------)` */
  tgid: number | null;
  cpu: number;
  /** seconds */
  ts: number;
  flags: string;
  /** event name (`kmem_cache_alloc`, `sched_switch`, `function` for `func <-parent`) */
  name: string;
  payload: string;
  /** what the event weighs besides counting once: perf's sample period, where perf printed one */
  weight?: number;
  /** trace.dat: the event's system (`kmem`, `sched`, `ftrace`) */
  system?: string;
  /** trace.dat: the record's fields as its format names them, read only during the `event` call (an event filter's) */
  raw?: RawFields;
}

/**
 * A trace.dat record's fields as libtraceevent's filter sees them, valid while its event is given.
 * `int`: the field as an unsigned 64-bit integer (a signed one sign-extended), undefined when the
 * event has no such integer field. `text`: the field for a string compare: a string field's text;
 * a numeric one's function name when it is a long or a pointer with a symbol, else `0x%llx` for
 * `==`/`!=` and '' for a regular expression (`regex`), as trace-cmd compares them.
 */
export interface RawFields {
  int(name: string): bigint | undefined;
  text(name: string, regex: boolean): string | undefined;
}

export type StackRecordKind = 'cookie' | 'full' | 'user';

export interface TraceStackRecord {
  lineNo: number;
  kind: StackRecordKind;
  comm: string;
  pid: number;
  cpu: number;
  ts: number;
  /** cookie: the slot (v7 id or v8 slot) */
  slot: number;
  /** cookie: v8 generation, null for a v4..v7 id */
  generation: number | null;
  /** full and user stacks: frame keys, leaf first */
  frames: string[] | null;
  /** the context the record was written in (contextOf its latency flags); -1 or absent: not said */
  ctx?: number;
}

/**
 * The execution context a line's latency flags name, as one number: the hardirq/softirq/NMI
 * column (`.` none, `s` softirq, `h` hardirq, `H` hardirq in softirq, `z` NMI, `Z` NMI in
 * hardirq) times 16, plus the preempt depth (a hex digit, `.` for 0). An event and the stack
 * record the kernel writes after it share them (the same trace_ctx), so under nested contexts a
 * stack record belongs to the last event of its own context on its CPU. -1: no flags, or flags
 * of another shape.
 */
export function contextOf(text: string, from: number, to: number): number {
  if (to - from < 4) return -1;
  const irq = '.shHzZ'.indexOf(text[from + 2]);
  if (irq < 0) return -1;
  const d = text.charCodeAt(from + 3);
  const depth = d === 46 ? 0 : d >= 48 && d <= 57 ? d - 48 : d >= 97 && d <= 102 ? d - 87 : -1;
  return depth < 0 ? -1 : irq * 16 + depth;
}

/** contextOf's keys: 6 columns of 16 depths */
export const CONTEXTS = 96;

export interface TraceLost {
  lineNo: number;
  cpu: number;
  /** null for `[LOST EVENTS]` without a count */
  count: number | null;
}

/**
 * Receives what a trace text parser reads, in file order.
 *
 * The parser reuses one event object for every `event` call and one record object for every
 * cookie `stackRecord` call, overwriting them for the next line: a sink reads them during the
 * call and copies (`{ ...e }`) whatever it keeps. Full and user stack records (and their
 * `frames`) and lost markers are fresh objects.
 */
export interface TraceSink {
  event(e: TraceEvent): void;
  stackRecord(r: TraceStackRecord): void;
  lost(l: TraceLost): void;
}

export interface TraceTextResult {
  lines: LineCount;
  /** `# tracer: X` */
  tracer: string | null;
  /** `#P:N` or `cpus=N` */
  cpus: number | null;
  /** the most digits after the point of any event time (6: the kernel's microseconds, 9: nanoseconds; 0 for none or a latency-format trace's microsecond integers) */
  timeDigits?: number;
}

// ---------------------------------------------------------------- stack map dumps

export interface DumpRecord {
  slot: number;
  /** generation this record belongs to (v8 text, bin v2), null when the format has none */
  generation: number | null;
  refCount: number;
  /** frame keys, leaf first (text dumps, or after symbolization) */
  frames: string[] | null;
  /** raw ips, leaf first (binary dumps, dump JSON) */
  ips: BigUint64Array | null;
  /** line number (text) or byte offset (binary) of the record header */
  where: number;
}

export type DumpFormat = 'stack_map_text' | 'stack_map_bin' | 'dump_json';

export interface ParsedDump {
  file: string;
  format: DumpFormat;
  /** 'v7' / 'v8' text, 1 / 2 bin (as read), 'json' */
  version: string;
  /** header generation (bin v2) or the generation of the records (text v8); null without */
  generation: number | null;
  /** bin only */
  littleEndian: boolean | null;
  /** `stackmap not initialized` */
  uninitialized: boolean;
  records: DumpRecord[];
  /**
   * stack_map_bin: the same records as columns (what the model reads; a bin dump's `records`
   * are built from these only when first asked for). Absent for the text formats.
   */
  columns?: DumpColumns;
  lines: LineCount | null;
  bytes: ByteCount | null;
}

/** A binary dump's records as columns, in file order (every record's generation is the dump's). */
export interface DumpColumns {
  count: number;
  slot: Uint32Array;
  refCount: Uint32Array;
  /** byte offset of each record header */
  where: Uint32Array;
  /** record r's ips are [start[r], start[r] + depth[r]) of ipHi[block[r]] / ipLo[block[r]], leaf first */
  block: Uint16Array;
  start: Int32Array;
  depth: Uint8Array;
  /** ips in all records */
  ips: number;
  /** every record's ips one after another, as their high and low 32-bit halves, in blocks (a record never spans two) */
  ipHi: Uint32Array[];
  ipLo: Uint32Array[];
}

// ---------------------------------------------------------------- stack_map_stat

export interface ParsedStat {
  file: string;
  version: 'v7' | 'v8';
  uninitialized: boolean;
  /** every key as read, in order, unknown keys included */
  values: [string, string][];
  entries: number | null;
  capacity: number | null;
  tableSize: number | null;
  successes: number | null;
  /** `drops` (v7) or `fallbacks` (v8) */
  drops: number | null;
  generation: number | null;
  successRate: number | null;
  lines: LineCount;
}

export interface ParseContext {
  file: string;
  diagnostics: DiagnosticLog;
  /** the given file's decompression budget, for a reader that decompresses (trace.dat v7); one of its own when absent */
  inflate?: FileBudget;
  /** where a reader notes the kernel module of each function a frame or symbol line names (`[ext4]`), the first one seen kept (frames.ts noteFrameModule) */
  modules?: Map<string, string>;
}
