/**
 * The trace columns: events and stack records of every trace file (TraceColumns, over the fields
 * of trace-columns-data.ts), their derived columns, marks, rollbacks and snapshots. A file's
 * sink is trace-columns-sink.ts, the join of a piece read on another thread
 * trace-columns-join.ts.
 */
import { Growable, SmallInts } from '../base/growable.ts';
import type { DiagnosticLog } from '../formats/diagnostics.ts';
import type { StackTable } from './stack-table.ts';
import { RecordKind, TraceColumnsData, type Ints, type TraceColumnsPart } from './trace-columns-data.ts';
import { columnsSink, type ColumnsSink } from './trace-columns-sink.ts';

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

/** A column read by index; a derived one is computed from the stored columns (`raw` makes the array). */
export interface Column<T> {
  readonly length: number;
  get(i: number): number;
  /** the values as a typed array (a derived column's is made on each call on the live columns, once on a snapshot) */
  raw(): T;
  /** a copy, safe to transfer */
  view(): T;
}

/**
 * A cookie's slot and generation are the kernel's u32s: the columns store their 32 bits (so
 * 2^32 - 1 sits as -1 in an Int32), and every reader takes them back with `>>> 0` where the
 * record is a cookie (recSlot) or a v8 cookie (recGen); -1 stands for none only elsewhere.
 */
export const cookieSlotAt = (kind: number, raw: number): number => (kind === RecordKind.CookieV7 || kind === RecordKind.CookieV8 ? raw >>> 0 : -1);

/** Every record's slot as a u32, -1 for a full or user stack. */
export function cookieSlots(kinds: Uint8Array, raw: Ints): Float64Array {
  const out = new Float64Array(kinds.length);
  for (let i = 0; i < kinds.length; i++) out[i] = cookieSlotAt(kinds[i], raw[i]);
  return out;
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
export class TraceColumns extends TraceColumnsData {
  private readonly readOnly: boolean = false;
  /** a snapshot's derived arrays, made once */
  private derivedCache: Map<string, unknown> | null = null;

  get eventCount(): number {
    return this.evTs.length;
  }
  get recordCount(): number {
    return this.recEvent.length;
  }

  /** the stack record an event triggered (its first), -1 when none */
  get evRecord(): Column<Int32Array> {
    return this.derived(
      'evRecord',
      this.eventCount,
      () => {
        const out = new Int32Array(this.eventCount).fill(-1);
        const ev = this.recEvent.raw();
        for (let i = 0; i < ev.length; i++) {
          const e = ev[i];
          if (e >= 0 && out[e] === -1) out[e] = i;
        }
        return out;
      },
      (e) => {
        const ev = this.recEvent.raw();
        for (let i = 0; i < ev.length; i++) if (ev[i] === e) return i;
        return -1;
      },
    );
  }
  /** whether any event carries a weight of its own (perf's period) */
  get hasWeights(): boolean {
    return this.weightEv.length > 0;
  }
  /** each event's weight: its own (perf's period) where it has one, else 1 */
  get evWeight(): Column<Float64Array> {
    const we = this.weightEv;
    const wv = this.weightVal;
    return this.derived(
      'evWeight',
      this.eventCount,
      () => {
        const out = new Float64Array(this.eventCount).fill(1);
        const es = we.raw();
        const vs = wv.raw();
        for (let k = 0; k < es.length; k++) out[es[k]] = vs[k];
        return out;
      },
      (i) => {
        const k = rowOf(we.raw(), i);
        return k < 0 ? 1 : wv.get(k);
      },
    );
  }
  /** each record's weight: its event's (1 for an orphan) */
  get recWeight(): Column<Float64Array> {
    return this.derived(
      'recWeight',
      this.recordCount,
      () => {
        const ev = this.recEvent.raw();
        const w = this.evWeight.raw();
        const out = new Float64Array(ev.length);
        for (let r = 0; r < ev.length; r++) out[r] = ev[r] >= 0 ? w[ev[r]] : 1;
        return out;
      },
      (r) => {
        const e = this.recEvent.get(r);
        return e >= 0 ? this.evWeight.get(e) : 1;
      },
    );
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
  ): ColumnsSink {
    if (this.readOnly) throw new Error('a snapshot of the trace columns is read-only');
    return columnsSink(this, file, opts);
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
    const groups = [
      this.eventColumns(),
      this.recordColumns(),
      this.ownColumns(),
      this.lostColumns(),
      this.weightColumns(),
      [this.resetMarks],
      this.evidColumns(),
      [this.ctxRec, this.ctxKey],
    ];
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

  /**
   * Drops every column's growth slack (at a finish; a later append grows it again), but for a
   * slack of at most 1/16 of the length: what a column sized ahead (`reserveFor`) has left, not
   * worth a copy of the whole column.
   */
  trim(): void {
    for (const v of Object.values(this)) if (v instanceof Growable || v instanceof SmallInts) v.trim(TRIM_KEEP);
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
  private recordField<T extends Float64Array | Int32Array>(
    key: string,
    ofEvent: Growable<Float64Array> | SmallInts,
    own: Growable<T>,
    alloc: () => T,
  ): Column<T> {
    const recEvent = this.recEvent;
    const ownRec = this.ownRec;
    return this.derived(
      key,
      this.recordCount,
      () => {
        const out = alloc();
        const vals = ofEvent.raw();
        // a loop for times and one for small integers: one loop for both was polymorphic in V8 (10M records: 415 ms for times and CPUs)
        if (out instanceof Float64Array) gatherF64(out, recEvent.raw(), vals as Float64Array);
        else gatherInts(out, recEvent.raw(), vals as Ints);
        const rows = ownRec.raw();
        const mine = own.raw();
        for (let k = 0; k < rows.length; k++) out[rows[k]] = mine[k];
        return out;
      },
      (i) => {
        const k = rowOf(ownRec.raw(), i);
        return k >= 0 ? own.get(k) : ofEvent.get(recEvent.get(i));
      },
    );
  }

  /** the columns of every event (one row an event), of every stack record, and of the field evidence: what a rollback truncates together, and what column-sizer.ts sizes */
  eventColumns() {
    return [this.evTs, this.evCpu, this.evPid, this.evTask, this.evName];
  }
  recordColumns() {
    return [this.recEvent, this.recKind, this.recSlot, this.recGen, this.recStack, this.recStatus];
  }
  private ownColumns() {
    return [this.ownRec, this.ownTs, this.ownCpu, this.ownPid, this.ownTask];
  }
  private weightColumns() {
    return [this.weightEv, this.weightVal];
  }
  evidColumns() {
    return [this.evidRec, this.evidA, this.evidB];
  }
  private lostColumns() {
    return [this.lostCpu, this.lostCount, this.lostTs];
  }
}

/** The slack a finish's trim leaves a column, as a share of its length (TraceColumns.trim). */
const TRIM_KEEP = 1 / 16;

/** A record field's column: each record's event's value (`vals[ev[r]]`); its own values are set after (recordField). */
function gatherF64(out: Float64Array, ev: Int32Array, vals: Float64Array): void {
  for (let i = 0; i < ev.length; i++) {
    const e = ev[i];
    if (e >= 0) out[i] = vals[e];
  }
}
function gatherInts(out: Int32Array, ev: Int32Array, vals: Ints): void {
  for (let i = 0; i < ev.length; i++) {
    const e = ev[i];
    if (e >= 0) out[i] = vals[e];
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
  // the typed array's own conversion: Int32Array.from goes through the iterator
  return a instanceof Int32Array ? a : new Int32Array(a);
}
