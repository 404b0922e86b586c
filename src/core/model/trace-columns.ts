import type { TraceEvent, TraceLost, TraceSink, TraceStackRecord } from '../formats/types.ts';
import { Growable, StringTable } from './growable.ts';
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
} as const;

export const STATUS_NAMES = ['resolved', 'no-dump', 'no-slot', 'unverified', 'ambiguous', 'full', 'user'] as const;
export type StatusName = (typeof STATUS_NAMES)[number];

export const RecordKind = { CookieV7: 0, CookieV8: 1, Full: 2, User: 3 } as const;

/** Where the trace columns stood: what rollback() returns them to. */
export interface TraceColumnsMark {
  events: number;
  records: number;
  lost: number;
  tasks: number;
  names: number;
  userStacks: number;
  fileStarts: number;
}

/**
 * Events and stack records of every trace file, in columns. Events are the lines that are not
 * stack records; each stack record links to the event that triggered it (the last event line
 * before it on the same CPU of the same file), or -1 for an orphan.
 */
export class TraceColumns {
  readonly tasks = new StringTable();
  readonly names = new StringTable();

  readonly evTs = new Growable(Float64Array);
  readonly evCpu = new Growable(Int32Array);
  readonly evPid = new Growable(Int32Array);
  readonly evTask = new Growable(Int32Array);
  readonly evName = new Growable(Int32Array);
  /** the stack record an event triggered, -1 when none */
  readonly evRecord = new Growable(Int32Array);

  readonly recTs = new Growable(Float64Array);
  readonly recCpu = new Growable(Int32Array);
  readonly recPid = new Growable(Int32Array);
  readonly recTask = new Growable(Int32Array);
  readonly recKind = new Growable(Uint8Array);
  readonly recSlot = new Growable(Int32Array);
  /** v8 generation, -1 for none */
  readonly recGen = new Growable(Int32Array);
  /** stack node (full stacks now; cookies once resolved), -1 for none */
  readonly recStack = new Growable(Int32Array);
  readonly recStatus = new Growable(Uint8Array);
  readonly recEvent = new Growable(Int32Array);

  readonly lostCpu = new Growable(Int32Array);
  /** -1: unknown count */
  readonly lostCount = new Growable(Int32Array);
  /** time of the last event before the marker on any CPU (NaN if none) */
  readonly lostTs = new Growable(Float64Array);

  /** user stacks are kept apart from the kernel stack table */
  readonly userStacks: string[][] = [];

  private readonly readOnly: boolean = false;

  /** where each trace file's rows begin, one entry per sink in the order the files were read (segments.ts) */
  readonly fileStarts: { file: string | null; events: number; records: number }[] = [];

  constructor(private readonly stacks: StackTable) {}

  get eventCount(): number {
    return this.evTs.length;
  }
  get recordCount(): number {
    return this.recTs.length;
  }

  /** A sink for one trace file (its own "last event per CPU"). */
  sink(file?: string): TraceSink {
    if (this.readOnly) throw new Error('a snapshot of the trace columns is read-only');
    this.fileStarts.push({ file: file ?? null, events: this.evTs.length, records: this.recTs.length });
    const lastEventOnCpu = new Map<number, number>();
    let lastTs = NaN;
    return {
      event: (e: TraceEvent) => {
        const i = this.evTs.length;
        this.evTs.push(e.ts);
        this.evCpu.push(e.cpu);
        this.evPid.push(e.pid);
        this.evTask.push(this.tasks.intern(e.comm));
        this.evName.push(this.names.intern(e.name));
        this.evRecord.push(-1);
        lastEventOnCpu.set(e.cpu, i);
        lastTs = e.ts;
      },
      stackRecord: (r: TraceStackRecord) => {
        const i = this.recTs.length;
        this.recTs.push(r.ts);
        this.recCpu.push(r.cpu);
        this.recPid.push(r.pid);
        this.recTask.push(this.tasks.intern(r.comm));
        const ev = lastEventOnCpu.get(r.cpu) ?? -1;
        this.recEvent.push(ev);
        if (ev >= 0 && this.evRecord.get(ev) === -1) this.evRecord.set(ev, i);
        if (r.kind === 'cookie') {
          this.recKind.push(r.generation === null ? RecordKind.CookieV7 : RecordKind.CookieV8);
          this.recSlot.push(r.slot);
          this.recGen.push(r.generation ?? -1);
          this.recStack.push(-1);
          this.recStatus.push(RecordStatus.NoDump);
        } else if (r.kind === 'full') {
          this.recKind.push(RecordKind.Full);
          this.recSlot.push(-1);
          this.recGen.push(-1);
          this.recStack.push(this.stacks.intern(r.frames ?? []));
          this.recStatus.push(RecordStatus.Full);
        } else {
          this.recKind.push(RecordKind.User);
          this.recSlot.push(-1);
          this.recGen.push(-1);
          this.recStack.push(-1);
          this.recStatus.push(RecordStatus.User);
          this.userStacks.push(r.frames ?? []);
        }
        lastTs = r.ts;
      },
      lost: (l: TraceLost) => {
        this.lostCpu.push(l.cpu);
        this.lostCount.push(l.count ?? -1);
        this.lostTs.push(lastTs);
      },
    };
  }

  mark(): TraceColumnsMark {
    return {
      events: this.evTs.length,
      records: this.recTs.length,
      lost: this.lostCpu.length,
      tasks: this.tasks.size,
      names: this.names.size,
      userStacks: this.userStacks.length,
      fileStarts: this.fileStarts.length,
    };
  }

  /** Forgets every event, stack record, lost marker, task and event name added since `m`. */
  rollback(m: TraceColumnsMark): void {
    if (this.readOnly) throw new Error('a snapshot of the trace columns is read-only');
    const groups = [this.eventColumns(), this.recordColumns(), this.lostColumns()];
    const columns = Object.values(this).filter((v) => v instanceof Growable).length;
    if (columns !== groups.flat().length) throw new Error('TraceColumns.rollback: a column is missing from eventColumns/recordColumns/lostColumns');
    for (const g of this.eventColumns()) g.truncate(m.events);
    for (const g of this.recordColumns()) g.truncate(m.records);
    for (const g of this.lostColumns()) g.truncate(m.lost);
    this.tasks.truncate(m.tasks);
    this.names.truncate(m.names);
    this.userStacks.length = m.userStacks;
    this.fileStarts.length = m.fileStarts;
  }

  /**
   * The columns as they are now, read-only, over `stacks` (the stack table's snapshot), sharing
   * the arrays: later appends, rollbacks and cookie resolutions here do not show in it.
   */
  snapshot(stacks: StackTable): TraceColumns {
    const s = Object.create(TraceColumns.prototype) as TraceColumns;
    const own = this as unknown as Record<string, unknown>;
    const fields: Record<string, unknown> = { stacks, readOnly: true, tasks: this.tasks.snapshot(), names: this.names.snapshot(), userStacks: this.userStacks.slice(), fileStarts: this.fileStarts.slice() };
    for (const [k, v] of Object.entries(own)) if (v instanceof Growable) fields[k] = v.frozen();
    Object.assign(s, fields);
    return s;
  }

  private eventColumns() {
    return [this.evTs, this.evCpu, this.evPid, this.evTask, this.evName, this.evRecord];
  }
  private recordColumns() {
    return [this.recTs, this.recCpu, this.recPid, this.recTask, this.recKind, this.recSlot, this.recGen, this.recStack, this.recStatus, this.recEvent];
  }
  private lostColumns() {
    return [this.lostCpu, this.lostCount, this.lostTs];
  }
}
