import type { TraceEvent, TraceLost, TraceSink, TraceStackRecord } from '../formats/types.ts';
import type { ColumnSink, InternTable } from '../formats/trace-text-shared.ts';
import type { DiagnosticLog } from '../formats/diagnostics.ts';
import type { LineCount } from '../formats/types.ts';
import { isResetMarker } from '../formats/event-line.ts';
import { CONTEXTS, contextOf } from '../formats/types.ts';
import { Float64Column, Growable, Int32Column, SmallInts, Uint8Column } from '../base/growable.ts';
import { StringTable } from '../base/string-table.ts';
import type { StackTable } from './stack-table.ts';
import { EventDetails } from './event-details.ts';
import { FieldKind, fieldFunctions, fieldKindOf, fieldRanges } from './event-fields.ts';
import type { EventFilter } from './event-filter.ts';

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

/** Where the trace columns stood: what rollback() returns them to. */
export interface TraceColumnsMark {
  events: number;
  records: number;
  own: number;
  lost: number;
  tasks: number;
  names: number;
  userStacks: number;
  fileStarts: number;
  weights: number;
  resetMarks: number;
  evidence: number;
  evidNames: number;
  ctxRecs: number;
}

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

/** A column read by index; a derived one is computed from the stored columns (`raw` makes the array). */
export interface Column<T> {
  readonly length: number;
  get(i: number): number;
  /** the values as a typed array (a derived column's is made on each call on the live columns, once on a snapshot) */
  raw(): T;
  /** a copy, safe to transfer */
  view(): T;
}

type Ints = Int8Array | Int16Array | Int32Array;

/**
 * A cookie's slot and generation are the kernel's u32s: the columns store their 32 bits (so
 * 2^32 - 1 sits as -1 in an Int32), and every reader takes them back with `>>> 0` where the
 * record is a cookie (recSlot) or a v8 cookie (recGen); -1 stands for none only elsewhere.
 */
export const cookieSlotAt = (kind: number, raw: number): number => (kind === RecordKind.CookieV7 || kind === RecordKind.CookieV8 ? raw >>> 0 : -1);
export const cookieGenAt = (kind: number, raw: number): number => (kind === RecordKind.CookieV8 ? raw >>> 0 : -1);

/** Every record's slot as a u32, -1 for a full or user stack. */
export function cookieSlots(kinds: Uint8Array, raw: Ints): Float64Array {
  const out = new Float64Array(kinds.length);
  for (let i = 0; i < kinds.length; i++) out[i] = cookieSlotAt(kinds[i], raw[i]);
  return out;
}

/** Every record's generation as a u32, -1 for none (v7 ids, full and user stacks). */
export function cookieGenerations(kinds: Uint8Array, raw: Ints): Float64Array {
  const out = new Float64Array(kinds.length);
  for (let i = 0; i < kinds.length; i++) out[i] = cookieGenAt(kinds[i], raw[i]);
  return out;
}

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
 * Events and stack records of every trace file, in columns. Events are the lines that are not
 * stack records; each stack record links to the event that triggered it (the last event line
 * before it on the same CPU of the same file), or -1 for an orphan.
 *
 * A record stores its kind, slot, generation, stack, status and event: its time, CPU, pid and
 * task are its event's (`recTs` and the like are derived), except for an orphan or a record whose
 * line says otherwise, whose own values are kept apart (`own*`, in record order). `evRecord` (the
 * first record of each event) is derived from `recEvent` too. Small integers (CPU, pid, task,
 * name, slot, generation) take 1, 2 or 4 bytes as their values need (SmallInts).
 */
export class TraceColumns {
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
  private readonly ownRec = new Growable(Int32Array, 16);
  private readonly ownTs = new Growable(Float64Array, 16);
  private readonly ownCpu = new Growable(Int32Array, 16);
  private readonly ownPid = new Growable(Int32Array, 16);
  private readonly ownTask = new Growable(Int32Array, 16);

  /** events that carry a weight (perf's sample period), ascending, and the weights */
  private readonly weightEv = new Growable(Int32Array, 16);
  private readonly weightVal = new Growable(Float64Array, 16);

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

  private readonly readOnly: boolean = false;
  /** a snapshot's derived arrays, made once */
  private derivedCache: Map<string, unknown> | null = null;

  /** where each trace file's rows begin, one entry per sink in the order the files were read (segments.ts) */
  readonly fileStarts: { file: string | null; events: number; records: number }[] = [];

  /** each event's TGID and payload, when the load keeps them (event-details.ts); null otherwise */
  readonly details: EventDetails | null;
  /** the most distinct frames one file's sink adds (FRAME_LIMIT unless a test injects less) */
  private readonly frameLimit: number;
  /** the events kept, when a load asks for some only (`--filter`); the stack records of the others go with them */
  readonly filter: EventFilter | null;

  constructor(
    private readonly stacks: StackTable,
    opts: { details?: boolean; frameLimit?: number; filter?: EventFilter } = {},
  ) {
    this.details = opts.details ? new EventDetails() : null;
    this.frameLimit = opts.frameLimit ?? FRAME_LIMIT;
    this.filter = opts.filter ?? null;
  }

  get eventCount(): number {
    return this.evTs.length;
  }
  get recordCount(): number {
    return this.recEvent.length;
  }

  /** the stack record an event triggered (its first), -1 when none */
  get evRecord(): Column<Int32Array> {
    return this.derived('evRecord', this.eventCount, () => {
      const out = new Int32Array(this.eventCount).fill(-1);
      const ev = this.recEvent.raw();
      for (let i = 0; i < ev.length; i++) {
        const e = ev[i];
        if (e >= 0 && out[e] === -1) out[e] = i;
      }
      return out;
    }, (e) => {
      const ev = this.recEvent.raw();
      for (let i = 0; i < ev.length; i++) if (ev[i] === e) return i;
      return -1;
    });
  }
  /** whether any event carries a weight of its own (perf's period) */
  get hasWeights(): boolean {
    return this.weightEv.length > 0;
  }
  /** each event's weight: its own (perf's period) where it has one, else 1 */
  get evWeight(): Column<Float64Array> {
    const we = this.weightEv;
    const wv = this.weightVal;
    return this.derived('evWeight', this.eventCount, () => {
      const out = new Float64Array(this.eventCount).fill(1);
      const es = we.raw();
      const vs = wv.raw();
      for (let k = 0; k < es.length; k++) out[es[k]] = vs[k];
      return out;
    }, (i) => {
      const k = rowOf(we.raw(), i);
      return k < 0 ? 1 : wv.get(k);
    });
  }
  /** each record's weight: its event's (1 for an orphan) */
  get recWeight(): Column<Float64Array> {
    return this.derived('recWeight', this.recordCount, () => {
      const ev = this.recEvent.raw();
      const w = this.evWeight.raw();
      const out = new Float64Array(ev.length);
      for (let r = 0; r < ev.length; r++) out[r] = ev[r] >= 0 ? w[ev[r]] : 1;
      return out;
    }, (r) => {
      const e = this.recEvent.get(r);
      return e >= 0 ? this.evWeight.get(e) : 1;
    });
  }
  get recTs(): Column<Float64Array> {
    return this.recordField('recTs', this.evTs, this.ownTs, () => new Float64Array(this.recordCount));
  }
  get recCpu(): Column<Int32Array> {
    return this.recordField('recCpu', this.evCpu, this.ownCpu, () => new Int32Array(this.recordCount));
  }
  get recPid(): Column<Int32Array> {
    return this.recordField('recPid', this.evPid, this.ownPid, () => new Int32Array(this.recordCount));
  }
  get recTask(): Column<Int32Array> {
    return this.recordField('recTask', this.evTask, this.ownTask, () => new Int32Array(this.recordCount));
  }

  /**
   * A sink for one trace file (its own "last event per CPU"). Past `frameLimit` new distinct
   * frames it stops: the stack record that crossed it and everything after are counted, not kept,
   * and `close()` says so once in `log` (at the record's line, or `offset` for trace.dat).
   */
  sink(
    file?: string,
    /** `piece`: the rest of a file read on another thread; its records without an event of their context are counted where it is absorbed */
    opts: { log?: DiagnosticLog; unit?: 'line' | 'offset'; piece?: boolean } = {},
  ): TraceSink & ColumnSink & { absorb(p: TraceColumnsPart, partLine?: number): void; close(): SinkStop | null; pieceState(): TracePieceState } {
    if (this.readOnly) throw new Error('a snapshot of the trace columns is read-only');
    const frameTable = this.stacks.frames;
    const frameEnd = frameTable.size + this.frameLimit;
    let stop: SinkStop | null = null;
    /** set by the frame table's wrapper: a frame past the limit was asked for, the open stack is not kept */
    let crossed = false;
    /** (a piece absorbed past the limit) the line the piece began at, for the diagnostic */
    let partAt: number | null = null;
    const halt = (place: number | null) => {
      stop = { place, events: 0, records: 1, lost: 0 };
    };
    /** frames for the reader: each new one counted against the limit, none interned once past it */
    const frames: InternTable = {
      get strings() {
        return frameTable.strings;
      },
      intern: (s: string) => {
        if (crossed || stop) return 0;
        const id = frameTable.intern(s);
        if (id >= frameEnd) crossed = true;
        return id;
      },
      internRange: (text: string, from: number, to: number) => {
        if (crossed || stop) return 0;
        const id = frameTable.internRange(text, from, to);
        if (id >= frameEnd) crossed = true;
        return id;
      },
    };
    this.fileStarts.push({ file: file ?? null, events: this.evTs.length, records: this.recEvent.length });
    /** the last event on CPUs 0..1023, on others in `farCpus` */
    const lastOnCpu = new Int32Array(1024).fill(-1);
    const farCpus = new Map<number, number>();
    /**
     * per CPU 0..1023 and context (types.ts contextOf: the latency flags' irq column and preempt
     * depth), the last event of that context (-1 none yet, -2 left out by a filter): under nested
     * interrupts a stack record belongs to the last event of its own context, which the kernel
     * wrote it for, not to the nested event written in between
     */
    const lastOnCtx = new Int32Array(1024 * CONTEXTS).fill(-1);
    /** the context of the event taken last (eventIds), for a filter taking it back */
    let lastEventCtx = -1;
    /** the event a stack record of `ctx` on `cpu` belongs to (-1 none, -2 left out by a filter) */
    const eventFor = (cpu: number, ctx: number): number => {
      if (cpu < 0 || cpu >= 1024) return farCpus.get(cpu) ?? -1;
      if (ctx >= 0) {
        const e = lastOnCtx[cpu * CONTEXTS + ctx];
        if (e !== -1) return e;
        // flags that name a context no event of this file had on this CPU: the last event on it, said once
        if (lastOnCpu[cpu] !== -1) ctxFallbacks++;
      }
      return lastOnCpu[cpu];
    };
    let ctxFallbacks = 0;
    /** per CPU 0..1023: the event whose fields named functions (pendEv), and the names' ids */
    const pendEv = new Int32Array(1024).fill(-1);
    const pendA = new Int32Array(1024);
    const pendB = new Int32Array(1024);
    /** per event name id: which field names its functions (field-evidence.ts FieldKind), -1 not yet known */
    const fieldKind: number[] = [];
    const evidNames = this.evidNames;
    const found: [string | null, string | null] = [null, null];
    /** the fields of event `i` (name id `nm`, payload line[from, to)) noted for its CPU's next v7 id */
    /**
     * Events read from bytes (noteFieldsBytes) whose fields are not looked at yet, per CPU, oldest
     * first: their index, kind, payload and bytes. `resolve` looks at them newest first and stops
     * at the first that names functions, so pendEv ends as noteFields would have left it; it runs
     * only when a record takes the fields (noteRecord) and before the bytes go (bytesDone): a v8
     * cookie takes none, so most payloads are never read. A CPU with CANDIDATES of them keeps
     * only the newest that names functions (`prune`: the ones before it can no longer be pendEv,
     * nor can the ones after it, which name none), its names still not made strings.
     */
    const CANDIDATES = 8;
    const candCount = new Uint8Array(1024);
    const candEv = new Int32Array(1024 * CANDIDATES);
    const candKind = new Uint8Array(1024 * CANDIDATES);
    const candFrom = new Int32Array(1024 * CANDIDATES);
    const candTo = new Int32Array(1024 * CANDIDATES);
    const candBytes: (Uint8Array | null)[] = new Array<Uint8Array | null>(1024 * CANDIDATES).fill(null);
    /** CPUs that may have candidates */
    const candCpus: number[] = [];
    const ranges = new Int32Array(4);
    let decoder: TextDecoder | null = null;
    const text = (b: Uint8Array, from: number, to: number): string => (decoder ??= new TextDecoder()).decode(b.subarray(from, to));
    const resolve = (cpu: number) => {
      const n = candCount[cpu];
      if (n === 0) return;
      candCount[cpu] = 0;
      let found = false;
      for (let j = cpu * CANDIDATES + n - 1; j >= cpu * CANDIDATES; j--) {
        const b = candBytes[j]!;
        candBytes[j] = null;
        if (found || !fieldRanges(candKind[j], b, candFrom[j], candTo[j], ranges)) continue;
        found = true;
        pendEv[cpu] = candEv[j];
        pendA[cpu] = evidNames.intern(text(b, ranges[0], ranges[1]));
        pendB[cpu] = ranges[2] < 0 ? -1 : evidNames.intern(text(b, ranges[2], ranges[3]));
      }
    };
    const prune = (cpu: number) => {
      const base = cpu * CANDIDATES;
      let keep = -1;
      for (let j = base + candCount[cpu] - 1; j >= base; j--) {
        if (keep < 0 && fieldRanges(candKind[j], candBytes[j]!, candFrom[j], candTo[j], ranges)) keep = j;
        else candBytes[j] = null;
      }
      if (keep < 0) {
        candCount[cpu] = 0;
        return;
      }
      if (keep !== base) {
        candEv[base] = candEv[keep];
        candKind[base] = candKind[keep];
        candFrom[base] = candFrom[keep];
        candTo[base] = candTo[keep];
        candBytes[base] = candBytes[keep];
        candBytes[keep] = null;
      }
      candCount[cpu] = 1;
    };
    /** per CPU: a copy of its one candidate's payload, kept when the chunk it was read from goes */
    const aside: (Uint8Array | null)[] = new Array<Uint8Array | null>(1024).fill(null);
    /**
     * Before the bytes go: `cpu`'s candidates pruned to the one that may still be its noted event,
     * and that one's payload copied aside (names are made only when a record takes them).
     */
    const keepAside = (cpu: number) => {
      if (candCount[cpu] === 0) return;
      prune(cpu);
      if (candCount[cpu] === 0) return;
      const j = cpu * CANDIDATES;
      const b = candBytes[j]!;
      if (b === aside[cpu]) return;
      const n = candTo[j] - candFrom[j];
      let copy = aside[cpu];
      if (copy === null || copy.length < n) copy = aside[cpu] = new Uint8Array(Math.max(n, 256));
      copy.set(b.subarray(candFrom[j], candTo[j]));
      candBytes[j] = copy;
      candFrom[j] = 0;
      candTo[j] = n;
    };
    const noteFields = (i: number, cpu: number, nm: number, line: string, from: number, to: number) => {
      if (cpu < 0 || cpu >= 1024) return;
      resolve(cpu);
      let k = fieldKind[nm];
      if (k === undefined || k < 0) k = fieldKind[nm] = fieldKindOf(this.names.strings[nm], line, from, to);
      if (k === FieldKind.None || !fieldFunctions(k, line, from, to, found)) return;
      pendEv[cpu] = i;
      pendA[cpu] = evidNames.intern(found[0]!);
      pendB[cpu] = found[1] === null ? -1 : evidNames.intern(found[1]);
    };
    /** noteFields for a payload read from its bytes: a candidate of its CPU's (`resolve`) */
    const noteFieldsBytes = (i: number, cpu: number, nm: number, b: Uint8Array, from: number, to: number) => {
      if (cpu < 0 || cpu >= 1024) return;
      let k = fieldKind[nm];
      if (k === undefined || k < 0) {
        const payload = text(b, from, to);
        k = fieldKind[nm] = fieldKindOf(this.names.strings[nm], payload, 0, payload.length);
      }
      if (k === FieldKind.None) return;
      let c = candCount[cpu];
      if (c === CANDIDATES) {
        prune(cpu);
        c = candCount[cpu];
      }
      if (c === 0) candCpus.push(cpu);
      const j = cpu * CANDIDATES + c;
      candEv[j] = i;
      candKind[j] = k;
      candFrom[j] = from;
      candTo[j] = to;
      candBytes[j] = b;
      candCount[cpu] = c + 1;
    };
    const { evidRec, evidA, evidB } = this;
    const unnoted = new Growable(Int32Array, 16);
    /** the record just linked (a v4/v7 id or a full stack) takes its event's noted fields */
    const noteRecord = (cpu: number) => {
      if (cpu < 0 || cpu >= 1024) return;
      resolve(cpu);
      if (pendEv[cpu] < 0) {
        // a piece's: the file before it decides (absorb)
        if (opts.piece) unnoted.push(this.recEvent.length - 1);
        return;
      }
      if (pendEv[cpu] !== this.recEvent.get(this.recEvent.length - 1)) return;
      evidRec.push(this.recEvent.length - 1);
      evidA.push(pendA[cpu]);
      evidB.push(pendB[cpu]);
    };
    let lastTs = NaN;
    /** the last event eventIds took and its values (-1: none, or taken back): most records are that event's */
    let lastEv = -1;
    let lastEvTs = 0;
    let lastEvPid = 0;
    let lastEvTask = 0;
    const filter = this.filter;
    /** with a filter: whether the last event on `cpu` was left out (or none came), so its stack records are too */
    const leftOut = (cpu: number, ctx = -1): boolean => eventFor(cpu, ctx) < 0;
    const { evTs, evCpu, evPid, evTask, evName, recEvent, recKind, recSlot, recGen, recStack, recStatus, details } = this;
    const eventIds = (ts: number, cpu: number, pid: number, task: number, name: number, ctx = -1) => {
      if (stop) {
        stop.events++;
        return;
      }
      const i = evTs.length;
      lastEventCtx = ctx;
      if (ctx >= 0 && cpu >= 0 && cpu < 1024) lastOnCtx[cpu * CONTEXTS + ctx] = i;
      evTs.push(ts);
      evCpu.push(cpu);
      evPid.push(pid);
      evTask.push(task);
      evName.push(name);
      if (cpu >= 0 && cpu < 1024) lastOnCpu[cpu] = i;
      else farCpus.set(cpu, i);
      lastTs = ts;
      lastEv = i;
      lastEvTs = ts;
      lastEvPid = pid;
      lastEvTask = task;
    };
    /** a record's link to its event, its own values kept when they are not the event's */
    const link = (ts: number, cpu: number, pid: number, task: number, ctx = -1): void => {
      const ev = eventFor(cpu, ctx);
      recEvent.push(ev);
      if (ctx >= 0 && cpu >= 0 && cpu < 1024 && lastOnCtx[cpu * CONTEXTS + ctx] === -1) {
        this.ctxRec.push(recEvent.length - 1);
        this.ctxKey.push(ctx);
      }
      const same = ev >= 0 && (ev === lastEv ? lastEvTs === ts && lastEvPid === pid && lastEvTask === task : evTs.get(ev) === ts && evPid.get(ev) === pid && evTask.get(ev) === task);
      if (!same) {
        this.ownRec.push(recEvent.length - 1);
        this.ownTs.push(ts);
        this.ownCpu.push(cpu);
        this.ownPid.push(pid);
        this.ownTask.push(task);
      }
      lastTs = ts;
    };
    const cookieIds = (ts: number, cpu: number, pid: number, task: number, slot: number, generation: number, ctx = -1) => {
      if (stop) {
        stop.records++;
        return;
      }
      // a filter left its event out: its stack records go with it
      if (filter && leftOut(cpu, ctx)) return;
      link(ts, cpu, pid, task, ctx);
      if (generation < 0) noteRecord(cpu);
      recKind.push(generation < 0 ? RecordKind.CookieV7 : RecordKind.CookieV8);
      recSlot.push(slot);
      recGen.push(generation);
      recStack.push(-1);
      recStatus.push(RecordStatus.NoDump);
    };
    const stacks = this.stacks;
    const fullIds = (ts: number, cpu: number, pid: number, task: number, ids: Int32Array, n: number, lineNo?: number, ctx = -1) => {
      if (stop) {
        stop.records++;
        return;
      }
      if (crossed) {
        halt(lineNo ?? null);
        return;
      }
      if (filter && leftOut(cpu, ctx)) return;
      link(ts, cpu, pid, task, ctx);
      noteRecord(cpu);
      recSlot.push(-1);
      recGen.push(-1);
      recKind.push(RecordKind.Full);
      recStack.push(stacks.internFrameIds(ids, 0, n));
      recStatus.push(RecordStatus.Full);
    };
    const eventMore = (tgid: number, line: string, from: number, to: number) => {
      if (stop) return;
      if (!details && !filter) {
        const i = evTs.length - 1;
        noteFields(i, evCpu.get(i), evName.get(i), line, from, to);
        return;
      }
      if (filter) {
        const i = evTs.length - 1;
        const cpu = evCpu.get(i);
        const name = this.names.strings[evName.get(i)];
        // most events are left out by their name alone: no payload string for them
        const payload = filter.selectsName(name) ? line.slice(from, to) : null;
        if (payload === null || !filter.matches({ name, comm: this.tasks.strings[evTask.get(i)], pid: evPid.get(i), cpu, tgid: tgid >= 0 ? tgid : null, payload })) {
          evTs.truncate(i);
          evCpu.truncate(i);
          evPid.truncate(i);
          evTask.truncate(i);
          evName.truncate(i);
          lastEv = -1;
          if (cpu >= 0 && cpu < 1024) {
            lastOnCpu[cpu] = -2;
            if (lastEventCtx >= 0) lastOnCtx[cpu * CONTEXTS + lastEventCtx] = -2;
          } else farCpus.set(cpu, -2);
          return;
        }
        details?.push(tgid, payload);
        noteFields(i, cpu, evName.get(i), line, from, to);
        return;
      }
      const i = evTs.length - 1;
      details!.push(tgid, line.slice(from, to));
      noteFields(i, evCpu.get(i), evName.get(i), line, from, to);
    };
    return {
      tasks: this.tasks,
      names: this.names,
      frames,
      // the column fast path, with a filter too: an event is taken, then its payload (eventMore)
      // decides whether it stays; one the filter leaves out is taken back, and its stack records with it
      eventIds,
      cookieIds,
      fullIds,
      eventMoreBytes: (tgid: number, b: Uint8Array, from: number, to: number) => {
        if (stop) return;
        if (!details && !filter) {
          const i = evTs.length - 1;
          noteFieldsBytes(i, evCpu.get(i), evName.get(i), b, from, to);
          return;
        }
        // a filter leaves most events out by their name alone: no payload decoded for them
        if (filter && !filter.selectsName(this.names.strings[evName.get(evTs.length - 1)])) return eventMore(tgid, '', 0, 0);
        const payload = text(b, from, to);
        eventMore(tgid, payload, 0, payload.length);
      },
      bytesDone: () => {
        for (const cpu of candCpus) keepAside(cpu);
        candCpus.length = 0;
      },
      eventMore,
      event: (e: TraceEvent) => {
        if (stop) {
          stop.events++;
          return;
        }
        const ctx = contextOf(e.flags, 0, e.flags.length);
        if (filter && !filter.matches(e)) {
          if (e.cpu >= 0 && e.cpu < 1024) {
            lastOnCpu[e.cpu] = -2;
            if (ctx >= 0) lastOnCtx[e.cpu * CONTEXTS + ctx] = -2;
          } else farCpus.set(e.cpu, -2);
          return;
        }
        if (e.weight !== undefined) {
          this.weightEv.push(evTs.length);
          this.weightVal.push(e.weight);
        }
        eventIds(e.ts, e.cpu, e.pid, this.tasks.intern(e.comm), this.names.intern(e.name), ctx);
        details?.push(e.tgid ?? -1, e.payload);
        // a trace.dat's payload (printed from its raw fields and its own kallsyms) is not judged: a
        // simulated one's call_site names did not line up with its dumps' frames, so every id read as contradicted
        if (!e.raw) noteFields(evTs.length - 1, e.cpu, evName.get(evTs.length - 1), e.payload, 0, e.payload.length);
        if (e.name === 'print' && isResetMarker(e.payload)) this.resetMarks.push(evTs.length - 1);
      },
      stackRecord: (r: TraceStackRecord) => {
        if (stop) {
          stop.records++;
          return;
        }
        const ctx = r.ctx ?? -1;
        if (filter && leftOut(r.cpu, ctx)) return;
        // a full stack once the file's frames reach the limit: the first not kept
        if (r.kind === 'full' && (crossed || frameTable.size >= frameEnd)) {
          halt(r.lineNo);
          return;
        }
        const task = this.tasks.intern(r.comm);
        if (r.kind === 'cookie') {
          cookieIds(r.ts, r.cpu, r.pid, task, r.slot, r.generation ?? -1, ctx);
          return;
        }
        link(r.ts, r.cpu, r.pid, task, ctx);
        if (r.kind === 'full') noteRecord(r.cpu);
        recSlot.push(-1);
        recGen.push(-1);
        if (r.kind === 'full') {
          recKind.push(RecordKind.Full);
          recStack.push(this.stacks.intern(r.frames ?? []));
          recStatus.push(RecordStatus.Full);
        } else {
          recKind.push(RecordKind.User);
          recStack.push(-1);
          recStatus.push(RecordStatus.User);
          this.userStacks.push(r.frames ?? []);
        }
      },
      lost: (l: TraceLost) => {
        if (stop) {
          stop.lost++;
          return;
        }
        this.lostCpu.push(l.cpu);
        this.lostCount.push(l.count ?? -1);
        this.lostTs.push(lastTs);
      },
      absorb: (p: TraceColumnsPart, partLine?: number) => {
        // a piece carries no details: a load that keeps them reads each file on one thread (load.ts)
        if (details) throw new Error('a trace read in pieces has no event details');
        if (filter) throw new Error('a trace read in pieces is not filtered');
        if (stop) {
          // the file stopped before the piece: none of it is kept
          stop.events += p.evTs.length;
          stop.records += p.recEvent.length;
          stop.lost += p.lostCpu.length;
          return;
        }
        const evBase = evTs.length;
        const taskOf = p.tasks.map((t) => this.tasks.intern(t));
        const nameOf = p.names.map((t) => this.names.intern(t));
        // the piece's frames and stacks interned in the order it made them: the order one reader
        // of the whole file would have made them in, so every id comes out the same; past the
        // file's frame limit, none (-1), and the piece is kept up to the first record that needs one
        const frameOf = new Int32Array(p.frames.length).fill(-1);
        for (let f = 0; f < p.frames.length; f++) {
          const id = stacks.frames.intern(p.frames[f]);
          if (id >= frameEnd) break;
          frameOf[f] = id;
        }
        const nodeOf = new Int32Array(p.nodeFrame.length).fill(-1);
        let path = new Int32Array(64);
        /** the stack of the piece's node `leaf` here, or -1 when a frame of it is past the limit */
        const stackOf = (leaf: number): number => {
          let n = 0;
          for (let v = leaf; v > 0; v = p.nodeParent[v]) {
            if (n === path.length) {
              const next = new Int32Array(n * 2);
              next.set(path);
              path = next;
            }
            const f = frameOf[p.nodeFrame[v]];
            if (f < 0) return -1;
            path[n++] = f;
          }
          return (nodeOf[leaf] = stacks.internFrameIds(path, 0, n));
        };
        // records first: one whose event is in the piece before links to the last event of its
        // CPU here, as it would have had the whole file been read by one reader
        let o = 0;
        let keptRecords = p.recEvent.length;
        let keptEvents = p.evTs.length;
        let stopTs = Infinity;
        let users = 0;
        // the piece's records it linked with no event of their context before them (ascending, `c`
        // the next): here that context may have one
        // the piece's columns as locals (read once per loop, not through the object)
        const { ownTs: pOwnTs, evTs: pEvTs, ownTask: pOwnTask, ownPid: pOwnPid, ownCpu: pOwnCpu, recKind: pRecKind, recEvent: pRecEvent, ownRec: pOwnRec, evidRec: pEvidRec, evidB: pEvidB, ctxRec: pCtxRec, recStatus: pRecStatus, recStack: pRecStack, recSlot: pRecSlot, recGen: pRecGen, evidA: pEvidA, evTask: pEvTask, evPid: pEvPid, evCpu: pEvCpu, ctxKey: pCtxKey, evName: pEvName } = p;
        let c = 0;
        // the fields noted for its records: the piece's, and for those read before their CPU noted
        // any in the piece, this file's as it stands (its records' event may be before the piece)
        const evidOf = p.evidNames.map((t) => this.evidNames.intern(t));
        const unnotedRecs = p.state?.unnoted ?? new Int32Array(0);
        let ek = 0;
        let uk = 0;
        // the next record any of those lists names (own values, a context, noted fields): the
        // others take their event here and their stack, nothing more
        const nRec = pRecEvent.length;
        const headOf = (list: ArrayLike<number>, k: number) => (k < list.length ? list[k] : nRec);
        const nextSpecial = () => Math.min(headOf(pOwnRec, o), headOf(pCtxRec, c), headOf(pEvidRec, ek), headOf(unnotedRecs, uk));
        const recBase = recEvent.length;
        const evOut = new Int32Array(nRec);
        const stackOut = new Int32Array(nRec);
        /**
         * The records [from, to), none of them special: their events here and their stacks, in a
         * function of its own (a small loop is optimized soon; this one runs once a file). The
         * first whose stack is past the frame limit, or -1.
         */
        const plain = (from: number, to: number): number => {
          for (let r = from; r < to; r++) {
            const st = pRecStack[r];
            if (st >= 0) {
              const stack = nodeOf[st] >= 0 ? nodeOf[st] : stackOf(st);
              if (stack < 0) return r;
              stackOut[r] = stack;
            } else stackOut[r] = -1;
            evOut[r] = pRecEvent[r] + evBase;
          }
          return -1;
        };
        /** stops at record `r`: it and everything after it in the piece are not kept (past the frame limit) */
        const stopAt = (r: number) => {
          const e = pRecEvent[r];
          const own = o < pOwnRec.length && pOwnRec[o] === r;
          keptRecords = r;
          stopTs = own ? pOwnTs[o] : pEvTs[e];
          keptEvents = e >= 0 ? e + 1 : pEvTs.findIndex((t) => t > stopTs);
          if (keptEvents < 0) keptEvents = pEvTs.length;
        };
        let special = nextSpecial();
        for (let from = 0; ; ) {
          const past = plain(from, special);
          if (past >= 0) {
            stopAt(past);
            break;
          }
          if (special >= nRec) break;
          const r = special;
          from = r + 1;
          const e = pRecEvent[r];
          const st = pRecStack[r];
          const stack = st < 0 ? -1 : nodeOf[st] >= 0 ? nodeOf[st] : stackOf(st);
          if (st >= 0 && stack < 0) {
            stopAt(r);
            break;
          }
          stackOut[r] = stack;
          const own = o < pOwnRec.length && pOwnRec[o] === r;
          const k = c < pCtxRec.length && pCtxRec[c] === r ? pCtxKey[c++] : -1;
          const cpuOfRec = own ? pOwnCpu[o] : e >= 0 ? pEvCpu[e] : -1;
          const cpuHere = k < 0 ? -1 : cpuOfRec;
          const byCtx = k >= 0 && cpuHere >= 0 && cpuHere < 1024 ? lastOnCtx[cpuHere * CONTEXTS + k] : -1;
          // no event of its context in the whole file before it, but one on its CPU: said, as one reader says it
          if (k >= 0 && byCtx === -1 && cpuHere >= 0 && cpuHere < 1024 && (e >= 0 || lastOnCpu[cpuHere] !== -1)) ctxFallbacks++;
          const at = recBase + r;
          /** this record keeps its own values (they are not those of the event it is linked to) */
          const keep = (ts: number, cpu: number, pid: number, task: number) => {
            this.ownRec.push(at);
            this.ownTs.push(ts);
            this.ownCpu.push(cpu);
            this.ownPid.push(pid);
            this.ownTask.push(task);
          };
          if (byCtx >= 0) {
            // an event of its context before the piece: the one a reader of the whole file gives it
            const ts = own ? pOwnTs[o] : pEvTs[e];
            const pid = own ? pOwnPid[o] : pEvPid[e];
            const task = own ? taskOf[pOwnTask[o]] : taskOf[pEvTask[e]];
            evOut[r] = byCtx;
            if (evTs.get(byCtx) !== ts || evPid.get(byCtx) !== pid || evTask.get(byCtx) !== task) keep(ts, cpuHere, pid, task);
          } else if (e < 0) {
            // no event in the piece: the last of its CPU here (link, as one reader links it)
            const ts = pOwnTs[o];
            const cpu = pOwnCpu[o];
            const pid = pOwnPid[o];
            const task = taskOf[pOwnTask[o]];
            const ev = eventFor(cpu, -1);
            evOut[r] = ev;
            if (ev < 0 || evTs.get(ev) !== ts || evPid.get(ev) !== pid || evTask.get(ev) !== task) keep(ts, cpu, pid, task);
            lastTs = ts;
          } else {
            evOut[r] = e + evBase;
            if (own) keep(pOwnTs[o], pOwnCpu[o], pOwnPid[o], taskOf[pOwnTask[o]]);
          }
          if (ek < pEvidRec.length && pEvidRec[ek] === r) {
            // noted in the piece for the event it linked there: not if it is linked before the piece now
            if (byCtx < 0) {
              evidRec.push(at);
              evidA.push(evidOf[pEvidA[ek]]);
              evidB.push(pEvidB[ek] < 0 ? -1 : evidOf[pEvidB[ek]]);
            }
            ek++;
          } else if (uk < unnotedRecs.length && unnotedRecs[uk] === r) {
            uk++;
            const ev = evOut[r];
            if (cpuOfRec >= 0 && cpuOfRec < 1024) {
              resolve(cpuOfRec);
              if (pendEv[cpuOfRec] >= 0 && pendEv[cpuOfRec] === ev) {
                evidRec.push(at);
                evidA.push(pendA[cpuOfRec]);
                evidB.push(pendB[cpuOfRec]);
              }
            }
          }
          if (own) o++;
          special = nextSpecial();
        }
        recEvent.append(evOut, 0, keptRecords);
        recStack.append(stackOut, 0, keptRecords);
        recKind.append(pRecKind, 0, keptRecords);
        recSlot.append(pRecSlot, 0, keptRecords);
        recGen.append(pRecGen, 0, keptRecords);
        recStatus.append(pRecStatus, 0, keptRecords);
        // what the next piece (or line) finds: the piece's last noted fields and last event of each context, per CPU
        const state = p.state;
        if (state && keptRecords === pRecEvent.length) {
          for (let k = 0; k < state.pendLast.length; k += 4) {
            const cpu = state.pendLast[k];
            resolve(cpu);
            pendEv[cpu] = state.pendLast[k + 1] + evBase;
            pendA[cpu] = evidOf[state.pendLast[k + 2]];
            pendB[cpu] = state.pendLast[k + 3] < 0 ? -1 : evidOf[state.pendLast[k + 3]];
          }
          for (let k = 0; k < state.ctxLast.length; k += 2) lastOnCtx[state.ctxLast[k]] = state.ctxLast[k + 1] + evBase;
        }
        for (let k = 0; k < p.weightEv.length && p.weightEv[k] < keptEvents; k++) {
          this.weightEv.push(p.weightEv[k] + evBase);
          this.weightVal.push(p.weightVal[k]);
        }
        evTs.append(pEvTs, 0, keptEvents);
        evCpu.append(pEvCpu, 0, keptEvents);
        evPid.append(pEvPid, 0, keptEvents);
        const ids = new Int32Array(keptEvents);
        evTask.append(mapInto(ids, pEvTask, taskOf, keptEvents), 0, keptEvents);
        evName.append(mapInto(ids, pEvName, nameOf, keptEvents), 0, keptEvents);
        lastPerCpu(pEvCpu, keptEvents, evBase, lastOnCpu, farCpus);
        // (the piece starts with an event line, so each of its lost markers has a time of its own)
        let keptLost = 0;
        for (let k = 0; k < p.lostCpu.length && p.lostTs[k] <= stopTs; k++, keptLost++) {
          this.lostCpu.push(p.lostCpu[k]);
          this.lostCount.push(p.lostCount[k]);
          this.lostTs.push(p.lostTs[k]);
        }
        for (let k = 0; k < p.resetMarks.length && p.resetMarks[k] < keptEvents; k++) this.resetMarks.push(p.resetMarks[k] + evBase);
        if (keptRecords < p.recEvent.length) for (let r = 0; r < keptRecords; r++) if (pRecKind[r] === RecordKind.User) users++;
        for (let k = 0; k < (keptRecords < p.recEvent.length ? users : p.userStacks.length); k++) this.userStacks.push(p.userStacks[k]);
        if (keptRecords < p.recEvent.length) {
          stop = { place: null, events: p.evTs.length - keptEvents, records: p.recEvent.length - keptRecords, lost: p.lostCpu.length - keptLost };
          partAt = partLine ?? null;
        }
      },
      pieceState: (): TracePieceState => {
        const pend: number[] = [];
        for (let cpu = 0; cpu < 1024; cpu++) {
          resolve(cpu);
          if (pendEv[cpu] >= 0) pend.push(cpu, pendEv[cpu], pendA[cpu], pendB[cpu]);
        }
        const ctx: number[] = [];
        for (let key = 0; key < lastOnCtx.length; key++) if (lastOnCtx[key] >= 0) ctx.push(key, lastOnCtx[key]);
        return { unnoted: unnoted.view(), pendLast: Int32Array.from(pend), ctxLast: Int32Array.from(ctx) };
      },
      close: (): SinkStop | null => {
        if (ctxFallbacks > 0 && opts.log && !opts.piece) {
          // flags that name a context no earlier event on the CPU had: the files cannot tell whose record it is
          const msg = `${ctxFallbacks.toLocaleString('en-US')} stack record${ctxFallbacks === 1 ? '' : 's'} in a context (latency flags) no earlier event on ${ctxFallbacks === 1 ? 'its' : 'their'} CPU had: given to the last event on the CPU, as when a trace prints no flags`;
          opts.log.forFile(msg);
        }
        if (stop && opts.log) {
          const limit = this.frameLimit.toLocaleString('en-US');
          const left = `${stop.events.toLocaleString('en-US')} events, ${stop.records.toLocaleString('en-US')} stack records and ${stop.lost.toLocaleString('en-US')} lost-event markers`;
          if (stop.place !== null) {
            const msg = `more than ${limit} distinct frames: the stacks before this stack record are kept, nothing from it on (${left} read, not kept)`;
            if (opts.unit === 'offset') opts.log.atOffset(stop.place, msg);
            else opts.log.atLine(stop.place, msg);
          } else {
            const from = partAt !== null ? ` in the part read from line ${partAt.toLocaleString('en-US')} on` : '';
            opts.log.forFile(`more than ${limit} distinct frames${from}: the stacks before the first record past them are kept, nothing from it on (${left} read, not kept)`);
          }
        }
        return stop;
      },
    };
  }

  /**
   * The columns as a piece for another TraceColumns' sink to absorb (TraceColumnsPart): views of
   * the columns' own arrays, not copies (posted, their buffers are transferred), so nothing is
   * pushed here afterwards.
   */
  exportPart(): TraceColumnsPart {
    const st = this.stacks.columns();
    return {
      evTs: this.evTs.raw(),
      evCpu: this.evCpu.raw(),
      evPid: this.evPid.raw(),
      evTask: this.evTask.raw(),
      evName: this.evName.raw(),
      recEvent: this.recEvent.raw(),
      recKind: this.recKind.raw(),
      recSlot: this.recSlot.raw(),
      recGen: this.recGen.raw(),
      recStack: this.recStack.raw(),
      recStatus: this.recStatus.raw(),
      ownRec: this.ownRec.raw(),
      ownTs: this.ownTs.raw(),
      ownCpu: this.ownCpu.raw(),
      ownPid: this.ownPid.raw(),
      ownTask: this.ownTask.raw(),
      weightEv: this.weightEv.raw(),
      weightVal: this.weightVal.raw(),
      evidRec: this.evidRec.raw(),
      ctxRec: this.ctxRec.raw(),
      ctxKey: this.ctxKey.raw(),
      evidA: this.evidA.raw(),
      evidB: this.evidB.raw(),
      evidNames: this.evidNames.strings.slice(),
      lostCpu: this.lostCpu.raw(),
      lostCount: this.lostCount.raw(),
      lostTs: this.lostTs.raw(),
      resetMarks: this.resetMarks.raw(),
      userStacks: this.userStacks.slice(),
      tasks: this.tasks.strings.slice(),
      names: this.names.strings.slice(),
      frames: this.stacks.frames.strings.slice(),
      nodeFrame: st.frame,
      nodeParent: st.parent,
    };
  }

  mark(): TraceColumnsMark {
    return {
      events: this.evTs.length,
      records: this.recEvent.length,
      own: this.ownRec.length,
      lost: this.lostCpu.length,
      tasks: this.tasks.size,
      names: this.names.size,
      userStacks: this.userStacks.length,
      fileStarts: this.fileStarts.length,
      weights: this.weightEv.length,
      resetMarks: this.resetMarks.length,
      evidence: this.evidRec.length,
      evidNames: this.evidNames.size,
      ctxRecs: this.ctxRec.length,
    };
  }

  /** Forgets every event, stack record, lost marker, task and event name added since `m`. */
  rollback(m: TraceColumnsMark): void {
    if (this.readOnly) throw new Error('a snapshot of the trace columns is read-only');
    const groups = [this.eventColumns(), this.recordColumns(), this.ownColumns(), this.lostColumns(), this.weightColumns(), [this.resetMarks], this.evidColumns(), [this.ctxRec, this.ctxKey]];
    const columns = Object.values(this).filter((v) => v instanceof Growable || v instanceof SmallInts).length;
    if (columns !== groups.flat().length) throw new Error('TraceColumns.rollback: a column is missing from its groups');
    for (const g of this.eventColumns()) g.truncate(m.events);
    for (const g of this.recordColumns()) g.truncate(m.records);
    for (const g of this.ownColumns()) g.truncate(m.own);
    for (const g of this.lostColumns()) g.truncate(m.lost);
    for (const g of this.weightColumns()) g.truncate(m.weights);
    this.resetMarks.truncate(m.resetMarks);
    for (const g of this.evidColumns()) g.truncate(m.evidence);
    this.ctxRec.truncate(m.ctxRecs);
    this.ctxKey.truncate(m.ctxRecs);
    this.evidNames.truncate(m.evidNames);
    this.tasks.truncate(m.tasks);
    this.names.truncate(m.names);
    this.userStacks.length = m.userStacks;
    this.fileStarts.length = m.fileStarts;
    this.details?.truncate(m.events);
  }

  /** Drops every column's growth slack (at a finish; a later append grows it again). */
  trim(): void {
    for (const v of Object.values(this)) if (v instanceof Growable || v instanceof SmallInts) v.trim();
    this.details?.trim();
  }

  /**
   * The columns as they are now, read-only, over `stacks` (the stack table's snapshot), sharing
   * the arrays: later appends, rollbacks and cookie resolutions here do not show in it.
   */
  snapshot(stacks: StackTable): TraceColumns {
    const s = Object.create(TraceColumns.prototype) as TraceColumns;
    const own = this as unknown as Record<string, unknown>;
    const fields: Record<string, unknown> = {
      stacks,
      readOnly: true,
      derivedCache: new Map(),
      tasks: this.tasks.snapshot(),
      names: this.names.snapshot(),
      evidNames: this.evidNames.snapshot(),
      userStacks: this.userStacks.slice(),
      fileStarts: this.fileStarts.slice(),
      details: this.details && this.details.frozen(),
    };
    for (const [k, v] of Object.entries(own)) if (v instanceof Growable || v instanceof SmallInts) fields[k] = v.frozen();
    Object.assign(s, fields);
    return s;
  }

  /** A derived column: `make` builds its array (kept on a snapshot), `one` reads one value without it. */
  private derived<T extends Float64Array | Int32Array>(key: string, length: number, make: () => T, one: (i: number) => number): Column<T> {
    const cache = this.derivedCache;
    const raw = (): T => {
      if (!cache) return make();
      let a = cache.get(key) as T | undefined;
      if (!a) cache.set(key, (a = make()));
      return a;
    };
    return {
      length,
      get: cache ? (i) => raw()[i] : one,
      raw,
      view: () => raw().slice() as T,
    };
  }

  /** A record's time, CPU, pid or task: its event's, or its own where kept. */
  private recordField<T extends Float64Array | Int32Array>(key: string, ofEvent: Growable<Float64Array> | SmallInts, own: Growable<T>, alloc: () => T): Column<T> {
    const recEvent = this.recEvent;
    const ownRec = this.ownRec;
    return this.derived(key, this.recordCount, () => gatherRecords(alloc(), recEvent.raw(), ofEvent.raw(), ownRec.raw(), own.raw()), (i) => {
      const k = rowOf(ownRec.raw(), i);
      return k >= 0 ? own.get(k) : ofEvent.get(recEvent.get(i));
    });
  }

  private eventColumns() {
    return [this.evTs, this.evCpu, this.evPid, this.evTask, this.evName];
  }
  private recordColumns() {
    return [this.recEvent, this.recKind, this.recSlot, this.recGen, this.recStack, this.recStatus];
  }
  private ownColumns() {
    return [this.ownRec, this.ownTs, this.ownCpu, this.ownPid, this.ownTask];
  }
  private weightColumns() {
    return [this.weightEv, this.weightVal];
  }
  private evidColumns() {
    return [this.evidRec, this.evidA, this.evidB];
  }
  private lostColumns() {
    return [this.lostCpu, this.lostCount, this.lostTs];
  }
}

/** A record field's column: each record's event's value (`vals[ev[r]]`), its own where it has one (`own[k]` for record `rows[k]`). */
function gatherRecords<T extends Float64Array | Int32Array>(out: T, ev: Int32Array, vals: ArrayLike<number>, rows: Int32Array, own: ArrayLike<number>): T {
  for (let i = 0; i < ev.length; i++) {
    const e = ev[i];
    if (e >= 0) out[i] = vals[e];
  }
  for (let k = 0; k < rows.length; k++) out[rows[k]] = own[k];
  return out;
}

/** `out` with `out[i] = map[src[i]]` for i < n (a loop of its own: absorb runs once a file, its loops cold). */
function mapInto(out: Int32Array, src: ArrayLike<number>, map: ArrayLike<number>, n: number): Int32Array {
  for (let i = 0; i < n; i++) out[i] = map[src[i]];
  return out;
}

/** The last of events `[0, n)` on each CPU (`cpus` theirs), numbered from `base`, into `last` (CPUs 0..1023) and `far`. */
function lastPerCpu(cpus: ArrayLike<number>, n: number, base: number, last: Int32Array, far: Map<number, number>): void {
  for (let i = 0; i < n; i++) {
    const cpu = cpus[i];
    if (cpu >= 0 && cpu < 1024) last[cpu] = base + i;
    else far.set(cpu, base + i);
  }
}

/** Where `i` is in the ascending `rows` (a sparse column's row numbers), or -1: a binary search. */
function rowOf(rows: Int32Array, i: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid] < i) lo = mid + 1;
    else hi = mid;
  }
  return lo < rows.length && rows[lo] === i ? lo : -1;
}

/** A column of small integers as an Int32Array (the array itself when it already is one). */
export function int32(a: Ints): Int32Array {
  return a instanceof Int32Array ? a : Int32Array.from(a);
}
