/**
 * The trace columns' sink: one trace file's lines into the columns (trace-columns.ts's
 * `TraceColumns.sink` makes it), as ids from the reader's byte and text paths (ColumnSink) or as
 * event objects (TraceSink), each stack record linked to its event, a filter's events taken back,
 * the fields a v4/v7 id's event names noted, and the file's frame limit kept. A second piece read
 * on another thread is joined through trace-columns-join.ts with the sink's state.
 */
import { Growable } from '../base/growable.ts';
import type { DiagnosticLog } from '../formats/diagnostics.ts';
import { isResetMarker } from '../formats/event-line.ts';
import { PayloadBytes } from '../formats/payload-fields.ts';
import type { ColumnSink, InternTable } from '../formats/trace-text-shared.ts';
import { CONTEXTS, contextOf } from '../formats/types.ts';
import type { TraceEvent, TraceLost, TraceSink, TraceStackRecord } from '../formats/types.ts';
import { FieldKind, fieldFunctions, fieldKindOf, fieldRanges } from './event-fields.ts';
import { RecordKind, RecordStatus, type SinkStop, type TraceColumnsData, type TraceColumnsPart, type TracePieceState } from './trace-columns-data.ts';
import { absorbPiece, pieceStateOf, type JoinState } from './trace-columns-join.ts';
import { textInteger } from './event-filter.ts';

/** A trace file's sink: the reader's entry points, and the join's and the end's. */
export type ColumnsSink = TraceSink &
  ColumnSink & { absorb(p: TraceColumnsPart, partLine?: number): void; close(): SinkStop | null; pieceState(): TracePieceState };

/**
 * A sink for one trace file of `cols` (its own "last event per CPU"). Past `frameLimit` new distinct
 * frames it stops: the stack record that crossed it and everything after are counted, not kept,
 * and `close()` says so once in `log` (at the record's line, or `offset` for trace.dat).
 */
export function columnsSink(
  cols: TraceColumnsData,
  file?: string,
  /** `piece`: the rest of a file read on another thread; its records without an event of their context are counted where it is absorbed */
  opts: { log?: DiagnosticLog; unit?: 'line' | 'offset'; piece?: boolean } = {},
): ColumnsSink {
  const frameTable = cols.stacks.frames;
  const frameEnd = frameTable.size + cols.frameLimit;
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
  cols.fileStarts.push({ file: file ?? null, events: cols.evTs.length, records: cols.recEvent.length });
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
  const evidNames = cols.evidNames;
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
  /**
   * CPUs with a candidate read from the chunk now pushed (each once: `listed`), whose payloads
   * bytesDone copies aside. A CPU keeps its one candidate across chunks (aside), so it is listed
   * again by its next candidate, not by its count going from 0 (a count of 1 left from the last
   * chunk let a new candidate's bytes go unsaved, read after the caller reused its buffer).
   */
  const candCpus: number[] = [];
  const listed = new Uint8Array(1024);
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
    if (k === undefined || k < 0) k = fieldKind[nm] = fieldKindOf(cols.names.strings[nm], line, from, to);
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
      k = fieldKind[nm] = fieldKindOf(cols.names.strings[nm], payload, 0, payload.length);
    }
    if (k === FieldKind.None) return;
    let c = candCount[cpu];
    if (c === CANDIDATES) {
      prune(cpu);
      c = candCount[cpu];
    }
    if (listed[cpu] === 0) {
      listed[cpu] = 1;
      candCpus.push(cpu);
    }
    const j = cpu * CANDIDATES + c;
    candEv[j] = i;
    candKind[j] = k;
    candFrom[j] = from;
    candTo[j] = to;
    candBytes[j] = b;
    candCount[cpu] = c + 1;
  };
  const { evidRec, evidA, evidB } = cols;
  const unnoted = new Growable(Int32Array, 16);
  /** the record just linked (a v4/v7 id or a full stack) takes its event's noted fields */
  const noteRecord = (cpu: number) => {
    if (cpu < 0 || cpu >= 1024) return;
    resolve(cpu);
    if (pendEv[cpu] < 0) {
      // a piece's: the file before it decides (absorb)
      if (opts.piece) unnoted.push(cols.recEvent.length - 1);
      return;
    }
    if (pendEv[cpu] !== cols.recEvent.get(cols.recEvent.length - 1)) return;
    evidRec.push(cols.recEvent.length - 1);
    evidA.push(pendA[cpu]);
    evidB.push(pendB[cpu]);
  };
  let lastTs = NaN;
  /** the last event eventIds took and its values (-1: none, or taken back): most records are that event's */
  let lastEv = -1;
  let lastEvTs = 0;
  let lastEvPid = 0;
  let lastEvTask = 0;
  const filter = cols.filter;
  /** with a filter: whether the last event on `cpu` was left out (or none came), so its stack records are too */
  const leftOut = (cpu: number, ctx = -1): boolean => eventFor(cpu, ctx) < 0;
  const { evTs, evCpu, evPid, evTask, evName, recEvent, recKind, recSlot, recGen, recStack, recStatus, details } = cols;
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
      cols.ctxRec.push(recEvent.length - 1);
      cols.ctxKey.push(ctx);
    }
    const same =
      ev >= 0 &&
      (ev === lastEv ? lastEvTs === ts && lastEvPid === pid && lastEvTask === task : evTs.get(ev) === ts && evPid.get(ev) === pid && evTask.get(ev) === task);
    if (!same) {
      cols.ownRec.push(recEvent.length - 1);
      cols.ownTs.push(ts);
      cols.ownCpu.push(cpu);
      cols.ownPid.push(pid);
      cols.ownTask.push(task);
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
  const stacks = cols.stacks;
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
  /** The event just taken (`i`, on `cpu`) left out by the filter: its columns' row undone, its stack records to follow it. */
  const takeBack = (i: number, cpu: number) => {
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
  };
  /** a filter's reading of a payload's fields from its bytes, no payload string made (details off) */
  const fieldBytes = new PayloadBytes(textInteger);
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
      const name = cols.names.strings[evName.get(i)];
      // most events are left out by their name alone: no payload string for them
      const payload = filter.selectsName(name) ? line.slice(from, to) : null;
      if (
        payload === null ||
        !filter.matches({ name, comm: cols.tasks.strings[evTask.get(i)], pid: evPid.get(i), cpu, tgid: tgid >= 0 ? tgid : null, payload })
      )
        return takeBack(i, cpu);
      details?.push(tgid, payload);
      noteFields(i, cpu, evName.get(i), line, from, to);
      return;
    }
    const i = evTs.length - 1;
    details!.push(tgid, line.slice(from, to));
    noteFields(i, evCpu.get(i), evName.get(i), line, from, to);
  };
  /** what the join (trace-columns-join.ts) reads and moves on */
  const join: JoinState = { frameEnd, lastOnCpu, farCpus, lastOnCtx, pendEv, pendA, pendB, unnoted, eventFor, resolve };
  return {
    tasks: cols.tasks,
    names: cols.names,
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
      if (filter) {
        const i = evTs.length - 1;
        const nm = evName.get(i);
        const name = cols.names.strings[nm];
        // a filter leaves most events out by their name alone: no payload decoded for them
        if (!filter.selectsName(name)) return eventMore(tgid, '', 0, 0);
        if (!details) {
          // the fields the filter names read from the bytes: no payload string
          const cpu = evCpu.get(i);
          const raw = fieldBytes.at(b, from, to);
          if (!filter.matches({ name, comm: cols.tasks.strings[evTask.get(i)], pid: evPid.get(i), cpu, tgid: tgid >= 0 ? tgid : null, payload: '', raw }))
            return takeBack(i, cpu);
          noteFieldsBytes(i, cpu, nm, b, from, to);
          return;
        }
      }
      const payload = text(b, from, to);
      eventMore(tgid, payload, 0, payload.length);
    },
    bytesDone: () => {
      for (const cpu of candCpus) {
        keepAside(cpu);
        listed[cpu] = 0;
      }
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
        cols.weightEv.push(evTs.length);
        cols.weightVal.push(e.weight);
      }
      eventIds(e.ts, e.cpu, e.pid, cols.tasks.intern(e.comm), cols.names.intern(e.name), ctx);
      details?.push(e.tgid ?? -1, e.payload);
      // a trace.dat's payload (printed from its raw fields and its own kallsyms) is not judged: a
      // simulated one's call_site names did not line up with its dumps' frames, so every id read as contradicted
      if (!e.raw) noteFields(evTs.length - 1, e.cpu, evName.get(evTs.length - 1), e.payload, 0, e.payload.length);
      if (e.name === 'print' && isResetMarker(e.payload)) cols.resetMarks.push(evTs.length - 1);
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
      const task = cols.tasks.intern(r.comm);
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
        recStack.push(cols.stacks.intern(r.frames ?? []));
        recStatus.push(RecordStatus.Full);
      } else {
        recKind.push(RecordKind.User);
        recStack.push(-1);
        recStatus.push(RecordStatus.User);
        cols.userStacks.push(r.frames ?? []);
      }
    },
    lost: (l: TraceLost) => {
      if (stop) {
        stop.lost++;
        return;
      }
      cols.lostCpu.push(l.cpu);
      cols.lostCount.push(l.count ?? -1);
      cols.lostTs.push(lastTs);
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
      const r = absorbPiece(cols, join, p);
      ctxFallbacks += r.ctxFallbacks;
      if (r.hasLastTs) lastTs = r.lastTs;
      if (r.stop) {
        stop = r.stop;
        partAt = partLine ?? null;
      }
    },
    pieceState: (): TracePieceState => pieceStateOf(join),
    close: (): SinkStop | null => {
      if (ctxFallbacks > 0 && opts.log && !opts.piece) {
        // flags that name a context no earlier event on the CPU had: the files cannot tell whose record it is
        const msg = `${ctxFallbacks.toLocaleString('en-US')} stack record${ctxFallbacks === 1 ? '' : 's'} in a context (latency flags) no earlier event on ${ctxFallbacks === 1 ? 'its' : 'their'} CPU had: given to the last event on the CPU, as when a trace prints no flags`;
        opts.log.forFile(msg);
      }
      if (stop && opts.log) {
        const limit = cols.frameLimit.toLocaleString('en-US');
        const left = `${stop.events.toLocaleString('en-US')} events, ${stop.records.toLocaleString('en-US')} stack records and ${stop.lost.toLocaleString('en-US')} lost-event markers`;
        if (stop.place !== null) {
          const msg = `more than ${limit} distinct frames: the stacks before this stack record are kept, nothing from it on (${left} read, not kept)`;
          if (opts.unit === 'offset') opts.log.atOffset(stop.place, msg);
          else opts.log.atLine(stop.place, msg);
        } else {
          const from = partAt !== null ? ` in the part read from line ${partAt.toLocaleString('en-US')} on` : '';
          opts.log.forFile(
            `more than ${limit} distinct frames${from}: the stacks before the first record past them are kept, nothing from it on (${left} read, not kept)`,
          );
        }
      }
      return stop;
    },
  };
}
