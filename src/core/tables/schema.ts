/**
 * The capture as tables (issue 13): what `cli export --parquet` writes, what `cli sql` and the
 * page's SQL pane query. Defined once here, names, types and prose; build.ts fills them
 * from an Explorer's columns (one pass per column, typed arrays, no object per event).
 *
 * Every table starts with `capture_id` (id.ts), so the tables of many captures can sit in
 * one folder and be queried together. A stack's `stack_hash` (stack-hash.ts: FNV-1a 64 over its
 * frame keys, leaf first) is the same in every capture, so fleets join on it.
 */

export type ColumnType = 'int32' | 'int64' | 'float64' | 'utf8' | 'bool';
export interface ColumnSpec {
  name: string;
  type: ColumnType;
  doc: string;
  nullable: boolean;
  /** text whose values are mostly distinct (a payload): written PLAIN, without min/max statistics, where a dictionary and bounds would cost time and save nothing */
  distinct?: true;
}
export interface TableSpec {
  name: TableName;
  doc: string;
  columns: ColumnSpec[];
}

/**
 * `records` (one row per stack record) was added after the first seven, `captures` after it:
 * extend only by adding. `captures` stays last: export writes it last, as the mark that a
 * capture's tables are all in place (sql refuses a capture without its row).
 */
export const TABLE_NAMES = ['events', 'stacks', 'frames', 'dumps', 'stat', 'files', 'diagnostics', 'records', 'args', 'captures'] as const;
export type TableName = (typeof TABLE_NAMES)[number];

/**
 * One column's values, read-only (they may share the explorer's own arrays). Nulls: `valid` is
 * null when the column has none, else one byte per row, 0 for null (the value there is
 * meaningless). Integers: `int32` as Int32Array; `int64` as a Float64Array of safe integers
 * (bytes, slots, references: far below 2^53) or, where values pass 2^53 (`ts_ns`: nanoseconds
 * past 2^53 once an uptime passes 104 days), a BigInt64Array; `float64` as
 * Float64Array; `bool` as Uint8Array (0 or 1); `utf8` always as a dictionary: row i is
 * `dict[codes[i]]` (a null row's code is -1). The dictionaries are the capture's own string
 * tables (tasks, event names, frame keys, functions), so a 10M-event table makes no string.
 */
/**
 * A utf8 column's strings by code: an array, or names made when asked (a frame table's keys:
 * millions of frames are never all strings at once, so an export holds one row group's).
 */
export interface Dict {
  readonly length: number;
  /** the string of `code` in [0, length) */
  at(code: number): string | undefined;
}

/** The string of `code`, undefined outside [0, dict.length) (Array's `at` would count a negative from the end). */
export const dictAt = (dict: Dict, code: number): string | undefined => (code >= 0 && code < dict.length ? dict.at(code) : undefined);

/** Every string of a dictionary, as an array (what an Arrow dictionary vector is built from). */
export const dictArray = (dict: Dict): readonly string[] =>
  Array.isArray(dict) ? (dict as readonly string[]) : Array.from({ length: dict.length }, (_, i) => dict.at(i)!);

export type ColumnValues =
  | { type: 'int32'; values: Int32Array; valid: Uint8Array | null }
  | { type: 'int64'; values: Float64Array | BigInt64Array; valid: Uint8Array | null }
  | { type: 'float64'; values: Float64Array; valid: Uint8Array | null }
  | { type: 'utf8'; codes: Int32Array; dict: Dict; valid: Uint8Array | null }
  | { type: 'bool'; values: Uint8Array; valid: Uint8Array | null };

/** A table's rows: `columns[k]` holds `spec.columns[k]`, each of length `rows`. */
export interface TableData {
  spec: TableSpec;
  rows: number;
  columns: ColumnValues[];
  /** rows [from, to) alone, as `columns` would hold them (to - from values each): a writer's row group, made when asked */
  rowsIn?: (from: number, to: number) => ColumnValues[];
}

const col = (name: string, type: ColumnType, nullable: boolean, doc: string): ColumnSpec => ({ name, type, doc, nullable });
const CAPTURE = col('capture_id', 'utf8', false, 'the capture: FNV-1a 64 of its files (names, sizes, first 4 KiB, a digest of every byte), 16 hex digits');
const HASH = (doc: string) => col('stack_hash', 'utf8', true, doc);
const KIND = col(
  'kind',
  'utf8',
  true,
  'the stack record: cookie-v7 (<stack_id N>), cookie-v8 (<stack_id N gen G>), full (<stack trace>), user (<user stack trace>)',
);
const STATUS = col(
  'status',
  'utf8',
  true,
  "how the record resolved: resolved, no-dump, no-slot, unverified (a v7 id: its slot may have been reused), ambiguous, full, user, contradicted (a v7 id whose event's own fields, call_site= ip= or FUNC <-PARENT, name a call site or function its resolved stack lacks: the slot held another stack)",
);
const TS_NS = col(
  'ts_ns',
  'int64',
  true,
  "timestamp in integer nanoseconds: exact for a trace printed in microseconds (the kernel's default) below 136 years of uptime; for trace.dat and nanosecond text exact below 48 days, past that within a few nanoseconds (the readers hold times as double seconds); null past 2^63 - 1 ns (292 years), which the diagnostics name",
);
const SLOT = col('slot', 'int64', true, "the cookie's stack_id (the map slot); null for a full or user stack");

export const TABLES: readonly TableSpec[] = [
  {
    name: 'events',
    doc: 'One row per trace event, in file order (files in load order). An event with several stack records is described by its first one (in ftrace the kernel stack comes before the user stack), the one the page colours it by; `records` has every record.',
    columns: [
      CAPTURE,
      col('event_id', 'int32', false, "the event's index in the capture, from 0 (records.event_id points here)"),
      col('ts', 'float64', false, 'timestamp in seconds, as printed'),
      TS_NS,
      col('cpu', 'int32', false, 'CPU number'),
      col('pid', 'int32', false, 'pid of the task (the thread id)'),
      col(
        'tgid',
        'int32',
        true,
        "thread group id (the process), where the trace prints it (`(  1234)` after the task with options/record-tgid); null where it does not, and in the page's tables, which keep no per-event text",
      ),
      col('task', 'utf8', false, "the task's comm as printed"),
      col('event', 'utf8', false, 'event name (kmem_cache_alloc, sched_switch, ...)'),
      { ...KIND, doc: KIND.doc + '; null for an event without a stack record' },
      { ...STATUS, doc: STATUS.doc + '; null for an event without a stack record' },
      HASH('the stack the event stands for (resolved or unverified cookie, or full stack); null when unresolved or without a stack record'),
      col(
        'generation',
        'int64',
        true,
        "the v8 generation in force (a u32, up to 4294967295): its record's, else the last v8 cookie's before it in its file (the page's generation filter); null for none (v7 and older)",
      ),
      SLOT,
      {
        ...col(
          'payload',
          'utf8',
          true,
          "the event's text after its name, as printed (`call_site=... bytes_alloc=64 ...`; a print event's whole message): the command line's export keeps it, the page's tables hold null (it keeps no per-event text)",
        ),
        distinct: true,
      },
    ],
  },
  {
    name: 'records',
    doc: 'One row per stack record of the trace (cookies, full stacks, user stacks), in file order: what `summary` counts (cookies, resolved, unresolved, fullStacks, status, top).',
    columns: [
      CAPTURE,
      col('event_id', 'int32', true, 'the event that triggered it (events.event_id); null for an orphan (no event before it on its CPU)'),
      col('ts', 'float64', false, 'timestamp in seconds'),
      TS_NS,
      col('cpu', 'int32', false, 'CPU number'),
      col('pid', 'int32', false, 'pid of the task'),
      col('task', 'utf8', false, "the task's comm"),
      { ...KIND, nullable: false },
      { ...STATUS, nullable: false },
      HASH('the stack it stands for (resolved, unverified or full); null otherwise'),
      col('generation', 'int64', true, "a v8 cookie's generation (a u32); for a full or user stack the one in force; null for none"),
      SLOT,
    ],
  },
  {
    name: 'stacks',
    doc: "One row per distinct kernel stack some source holds (a full stack in the trace, a dump slot): as many as summary's uniqueStacks.",
    columns: [
      CAPTURE,
      HASH('FNV-1a 64 over the UTF-8 frame keys, leaf first, joined by \\n: the same stack has the same hash in every capture'),
      col('depth', 'int32', false, 'number of frames'),
      col(
        'leaf',
        'utf8',
        true,
        'function of the leaf frame (sym of sym+0xoff); null for a stack of no frames (depth 0: a dump record or full stack that lists none)',
      ),
      col('leaf_frame', 'utf8', true, 'frame key of the leaf (sym+0xoff, 0x... for an address without symbol); null for a stack of no frames'),
    ],
  },
  {
    name: 'frames',
    doc: 'Every frame of every row of `stacks`: depth rows per stack.',
    columns: [
      CAPTURE,
      { ...HASH('the stack (stacks.stack_hash)'), nullable: false },
      col('depth', 'int32', false, 'position in the stack, 0 = leaf'),
      col('frame', 'utf8', false, 'frame key: sym+0xoff, sym, 0x... (an address without symbol) or a [marker]'),
      col('symbol', 'utf8', false, 'the function: sym of sym+0xoff (the key itself when it has no offset)'),
      col('offset', 'int64', true, 'the offset into the function (0xoff); null when the key has none'),
      col(
        'module',
        'utf8',
        true,
        "the kernel module of the frame's function, as a kallsyms line (`ADDR t NAME [ext4]`) or a printed frame (`sym+0x9/0x10 [ext4]`) of the capture names it (frame keys drop it, DESIGN 2.2); null for a function no file names a module for (the kernel image itself)",
      ),
    ],
  },
  {
    name: 'dumps',
    doc: 'The stack map dumps, one row per slot: per v8 generation its slots merged over every dump of it (text and binary), then each generation-less dump (v7 text, bin v1, dump JSON) on its own.',
    columns: [
      CAPTURE,
      col('generation', 'int64', true, 'the generation of the map dumped (a u32); null for a generation-less dump'),
      col('slot', 'int64', false, 'the slot (stack_id)'),
      { ...HASH('the stack in the slot'), nullable: false },
      col('ref_count', 'int64', false, "the slot's reference count as dumped"),
      col('file', 'utf8', false, 'the dump the slot came from (the first read, when several hold it)'),
      col('format', 'utf8', false, "that dump's format"),
    ],
  },
  {
    name: 'stat',
    doc: 'Every key of every stack_map_stat file, as read (unknown keys kept).',
    columns: [
      CAPTURE,
      col('file', 'utf8', false, 'the stat file'),
      col('version', 'utf8', false, 'v7 or v8 (from its keys)'),
      col('key', 'utf8', false, 'the key'),
      col('value', 'utf8', false, 'the value as printed'),
    ],
  },
  {
    name: 'files',
    doc: 'Every file given, with what was used of it: every line or byte is either used or reported in `diagnostics`.',
    columns: [
      CAPTURE,
      col('file', 'utf8', false, 'the file name (inside an archive: archive/path)'),
      col('kind', 'utf8', false, 'what it was read as (trace_text, stack_map_bin, kallsyms, unknown, ...)'),
      col('size', 'int64', false, 'bytes'),
      col('lines_used', 'int64', true, 'lines read (text files); null for a binary file'),
      col('lines_unused', 'int64', true, 'lines reported as not understood'),
      col('bytes_used', 'int64', true, 'bytes read (binary files); null for a text file'),
      col('bytes_unused', 'int64', true, 'bytes reported as not understood'),
    ],
  },
  {
    name: 'diagnostics',
    doc: 'What a reader did not understand, or a check found: grouped by reason per file.',
    columns: [
      CAPTURE,
      col('file', 'utf8', false, 'the file'),
      col('where', 'utf8', false, '"line 12", "lines 12, 40 (+7 more)", "offset 0x40" or "file"'),
      col('message', 'utf8', false, 'the reason'),
      col('count', 'int64', false, 'occurrences it stands for'),
    ],
  },
  {
    name: 'args',
    doc: "The `key=value` fields of each event's payload, one row per field in payload order (kmem_cache_alloc's bytes_req and bytes_alloc, sched_switch's prev_pid and next_comm, ...); a word without `=` goes on the value before it. As `payload`: rows only where the export kept payloads.",
    columns: [
      CAPTURE,
      col('event_id', 'int32', false, 'the event (events.event_id)'),
      col('key', 'utf8', false, "the field's name"),
      col('value', 'utf8', false, 'its value as printed'),
      col(
        'int_value',
        'int64',
        true,
        'the value as an integer where it is one exactly (decimal up to 15 digits, 0x hex up to 13); null otherwise (addresses, hashed pointers, flags, names)',
      ),
    ],
  },
  {
    name: 'captures',
    doc: 'One row per capture: where it came from (the files given, their sizes and digests, a label) and what capture.sh recorded of the machine. export writes it last: a capture is complete in a folder once its row is there, and sql refuses one without it.',
    columns: [
      CAPTURE,
      col('label', 'utf8', true, 'what `export --label` named the capture; null when none was given'),
      col(
        'sources',
        'utf8',
        false,
        'the files given, as a JSON array of {path, size, digest}: the path as given (the page: the file name), its bytes, FNV-1a 64 of every byte (16 hex digits)',
      ),
      col('source_count', 'int64', false, 'how many files were given'),
      col('source_bytes', 'int64', false, 'their bytes in all'),
      col('host', 'utf8', true, "capture.txt: the machine's node name (uname -n); null without a capture.txt that records it"),
      col('machine', 'utf8', true, 'capture.txt: its hardware name (uname -m)'),
      col('kernel_release', 'utf8', true, 'capture.txt: the kernel release (uname -r)'),
      col('captured_at', 'utf8', true, 'capture.txt: when capture.sh wrote the capture (ISO 8601, UTC)'),
      col('buffer_kb', 'int64', true, 'capture.txt: the per-CPU ring buffer in force, KB'),
      col('cpus', 'int32', true, 'capture.txt: CPUs with a ring buffer'),
      col('stack_map', 'utf8', true, 'capture.txt: yes (options/stackmap on) or none (full stacks)'),
      col('interrupted', 'bool', true, 'capture.txt: the capture was stopped by a signal'),
      col('events', 'int64', false, 'rows of `events` for this capture'),
      col('records', 'int64', false, 'rows of `records` for this capture'),
      col('exported_by', 'utf8', false, 'what wrote the tables: stackmap-explorer and its version, or the page'),
    ],
  },
];

export const tableSpec = (name: TableName): TableSpec => TABLES.find((t) => t.name === name)!;

/** Row i of a column as a plain value (null for a null): for printing and tests, not for bulk work. */
export function cellAt(c: ColumnValues, i: number): number | bigint | string | boolean | null {
  if (c.valid && c.valid[i] === 0) return null;
  switch (c.type) {
    case 'utf8':
      return dictAt(c.dict, c.codes[i])!;
    case 'bool':
      return c.values[i] !== 0;
    default:
      return c.values[i];
  }
}
