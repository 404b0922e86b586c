/**
 * The trace columns' data (trace-columns.ts is the class over it): record statuses and kinds, the
 * column fields themselves (TraceColumnsData), the shape of a piece posted from another thread
 * (TraceColumnsPart, TracePieceState) and the frame limit's stop. What the sink
 * (trace-columns-sink.ts) fills and the join (trace-columns-join.ts) appends to; imports neither.
 */
import { Float64Column, Growable, Int32Column, SmallInts, Uint8Column } from '../base/growable.ts';
import { StringTable } from '../base/string-table.ts';
import type { LineCount } from '../formats/types.ts';
import { EventDetails } from './event-details.ts';
import type { EventFilter } from './event-filter.ts';
import type { StackTable } from './stack-table.ts';

/** What a stack record is and, once the cookie index ran, how it resolved. */
export const RecordStatus = {
  Resolved: 0,
  NoDump: 1,
  NoSlot: 2,
  Unverified: 3,
  Ambiguous: 4,
  /** a full kernel stack written in the trace (a fallback, not a loss) */
  Full: 5,
  /** a user stack (not part of the kernel stack table) */
  User: 6,
  /**
   * a v4/v7 id whose event's own fields (`call_site=`, `ip=`, the function tracer's `FUNC <-PARENT`)
   * name a function the stack it resolves to lacks: the slot held another stack (field-evidence.ts)
   */
  Contradicted: 7,
} as const;

export const STATUS_NAMES = ['resolved', 'no-dump', 'no-slot', 'unverified', 'ambiguous', 'full', 'user', 'contradicted'] as const;
export type StatusName = (typeof STATUS_NAMES)[number];

export const RecordKind = { CookieV7: 0, CookieV8: 1, Full: 2, User: 3 } as const;

/**
 * The columns of a piece of one trace file read by a TraceColumns of its own, over a stack table
 * of its own (split-trace.ts), as plain arrays that can be posted to another thread: each
 * column at its length (small integers as narrow as they are stored), task and event names as
 * strings, stacks as the table's nodes and frame keys. A record's `recEvent` indexes the piece's events; -1 for one whose event is not in the
 * piece (its own values are kept, as for any orphan).
 */
export interface TraceColumnsPart {
  evTs: Float64Array;
  evCpu: Ints;
  evPid: Ints;
  evTask: Ints;
  evName: Ints;
  recEvent: Int32Array;
  recKind: Uint8Array;
  recSlot: Ints;
  recGen: Ints;
  recStack: Int32Array;
  recStatus: Uint8Array;
  ownRec: Int32Array;
  ownTs: Float64Array;
  ownCpu: Int32Array;
  ownPid: Int32Array;
  ownTask: Int32Array;
  weightEv: Int32Array;
  weightVal: Float64Array;
  evidRec: Int32Array;
  /** records linked with no event of their context before them in the piece, and that context: the whole file may have one */
  ctxRec: Int32Array;
  ctxKey: Int32Array;
  evidA: Int32Array;
  evidB: Int32Array;
  evidNames: string[];
  lostCpu: Int32Array;
  lostCount: Float64Array;
  lostTs: Float64Array;
  resetMarks: Int32Array;
  userStacks: string[][];
  tasks: string[];
  names: string[];
  /** the stack table's frame keys by id, and its nodes' frames and parents (node 0 the empty stack) */
  frames: string[];
  nodeFrame: Int32Array;
  nodeParent: Int32Array;
  /** where a reader of the whole file stands at the piece's end, for what comes after it (TracePieceState) */
  state?: TracePieceState;
}

/**
 * What a piece's reader knew at its end that a reader of the whole file carries on past it, and
 * what its records' noted fields leave to the file before it (field-evidence.ts). Int32Arrays,
 * to post.
 */
export interface TracePieceState {
  /** v4/v7 ids and full stacks read when their CPU had no event with noted fields in the piece yet: the file before may give them its own */
  unnoted: Int32Array;
  /** per CPU whose events noted fields: [cpu, its last such event, the names' ids in evidNames (b -1 for none)] */
  pendLast: Int32Array;
  /** per CPU and context with events: [cpu * CONTEXTS + context, its last event] */
  ctxLast: Int32Array;
}

/** A column of small integers as stored (SmallInts: 1, 2 or 4 bytes a value). */
export type Ints = Int8Array | Int16Array | Int32Array;

/**
 * The most distinct frames one trace file may add to the stack table: past it the file's stacks
 * so far are kept and the rest of the file is not (one diagnostic says where it stopped and what
 * it left). A file of 6 million distinct frames threw, and kept nothing (issue 34, 15).
 */
export const FRAME_LIMIT = 1 << 22;

/** Where a trace file's sink stopped keeping records (past its frame limit), and what it left. */
export interface SinkStop {
  /** the line (text) or offset (trace.dat) of the first stack record not kept; null: not known (a piece absorbed) */
  place: number | null;
  events: number;
  records: number;
  lost: number;
}

/** `lines` with the lines from `stop.place` on counted unused: read, but nothing of them kept. */
export function linesAfterStop(lines: LineCount, stop: SinkStop | null): LineCount {
  if (!stop || stop.place === null) return lines;
  const moved = Math.max(0, lines.total - stop.place + 1);
  const used = Math.max(0, lines.used - moved);
  return { total: lines.total, used, unused: lines.total - used };
}

/**
 * The columns' fields (TraceColumns adds what is read from them, marks and snapshots): public so
 * the sink and the join fill them, not to be pushed to from anywhere else.
 */
export class TraceColumnsData {
  readonly tasks = new StringTable();
  readonly names = new StringTable();

  readonly evTs = new Float64Column();
  readonly evCpu = new SmallInts();
  readonly evPid = new SmallInts();
  readonly evTask = new SmallInts();
  readonly evName = new SmallInts();

  readonly recEvent = new Int32Column();
  readonly recKind = new Uint8Column();
  readonly recSlot = new SmallInts();
  /** v8 generation, -1 for none */
  readonly recGen = new SmallInts();
  /** stack node (full stacks now; cookies once resolved), -1 for none */
  readonly recStack = new Int32Column();
  readonly recStatus = new Uint8Column();

  /** records whose time, CPU, pid or task are not their event's (orphans among them), ascending */
  readonly ownRec = new Growable(Int32Array, 16);
  readonly ownTs = new Growable(Float64Array, 16);
  readonly ownCpu = new Growable(Int32Array, 16);
  readonly ownPid = new Growable(Int32Array, 16);
  readonly ownTask = new Growable(Int32Array, 16);

  /** events that carry a weight (perf's sample period), ascending, and the weights */
  readonly weightEv = new Growable(Int32Array, 16);
  readonly weightVal = new Growable(Float64Array, 16);

  /**
   * v4/v7 id records whose event names functions in its own fields (field-evidence.ts), ascending,
   * and the names (ids into `evidNames`; `evidB` -1 for none): the stack must hold one of them
   */
  readonly evidRec = new Growable(Int32Array, 16);
  /**
   * stack records whose flags name a context no event before them in this sink had on their CPU
   * (linked to the CPU's last event), and that context: a piece's absorb links them again where the
   * file before the piece had an event of that context, as one reader of the whole file would
   */
  readonly ctxRec = new Growable(Int32Array, 16);
  readonly ctxKey = new Growable(Int32Array, 16);
  readonly evidA = new Growable(Int32Array, 16);
  readonly evidB = new Growable(Int32Array, 16);
  readonly evidNames = new StringTable();

  readonly lostCpu = new Growable(Int32Array, 16);
  /** -1: unknown count */
  readonly lostCount = new Growable(Float64Array, 16);
  /** time of the last event before the marker on any CPU (NaN if none) */
  readonly lostTs = new Growable(Float64Array, 16);

  /** events that are the capture tool's `stackmap reset` trace_marker writes (RESET_MARKER), ascending */
  readonly resetMarks = new Growable(Int32Array, 4);

  /** user stacks are kept apart from the kernel stack table */
  readonly userStacks: string[][] = [];

  /** where each trace file's rows begin, one entry per sink in the order the files were read (segments.ts) */
  readonly fileStarts: { file: string | null; events: number; records: number }[] = [];

  /** each event's TGID and payload, when the load keeps them (event-details.ts); null otherwise */
  readonly details: EventDetails | null;
  /** the most distinct frames one file's sink adds (FRAME_LIMIT unless a test injects less) */
  readonly frameLimit: number;
  /** the events kept, when a load asks for some only (`--filter`); the stack records of the others go with them */
  readonly filter: EventFilter | null;

  constructor(
    readonly stacks: StackTable,
    opts: { details?: boolean; frameLimit?: number; filter?: EventFilter } = {},
  ) {
    this.details = opts.details ? new EventDetails() : null;
    this.frameLimit = opts.frameLimit ?? FRAME_LIMIT;
    this.filter = opts.filter ?? null;
  }
}
