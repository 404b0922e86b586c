/**
 * The two-thread join: a trace file's second piece, read by a TraceColumns of its own on another
 * thread (split-trace.ts), appended to the columns of the sink that read the first piece as one
 * reader of the whole file would have filled them (`absorbPiece`), and what a piece's sink knew at
 * its end for the next one (`pieceStateOf`). The sink (trace-columns-sink.ts) calls both with its
 * own state (JoinState); absorb runs once a file, its loops cold.
 */
import type { Growable } from '../base/growable.ts';
import { CONTEXTS } from '../formats/types.ts';
import { RecordKind, type SinkStop, type TraceColumnsData, type TraceColumnsPart, type TracePieceState } from './trace-columns-data.ts';

/** What a file's sink holds that the join reads and moves on (its arrays, shared; its functions, closures over them). */
export interface JoinState {
  /** the first new distinct frame past the file's limit (the sink's `frameEnd`) */
  readonly frameEnd: number;
  /** the last event on CPUs 0..1023, on others in `farCpus` */
  readonly lastOnCpu: Int32Array;
  readonly farCpus: Map<number, number>;
  /** per CPU 0..1023 and context, the last event of that context */
  readonly lastOnCtx: Int32Array;
  /** per CPU 0..1023: the event whose fields named functions, and the names' ids */
  readonly pendEv: Int32Array;
  readonly pendA: Int32Array;
  readonly pendB: Int32Array;
  /** records a piece's sink read with no noted fields on their CPU yet */
  readonly unnoted: Growable<Int32Array>;
  /** the event a stack record of `ctx` on `cpu` belongs to */
  eventFor(cpu: number, ctx: number): number;
  /** `cpu`'s events read from bytes looked at for noted fields */
  resolve(cpu: number): void;
}

/** What an absorb leaves the sink to set: where it stopped, the last orphan's time, the context fallbacks it counted. */
export interface AbsorbResult {
  stop: SinkStop | null;
  lastTs: number;
  hasLastTs: boolean;
  ctxFallbacks: number;
}

/**
 * Appends piece `p` to `cols` (whose sink, not stopped, holds `j`): its frames and stacks
 * interned in the order it made them, its records linked to their events here (a record whose
 * event is before the piece to the last of its CPU or context here), past the file's frame limit
 * kept up to the first record that needs a frame beyond it.
 */
export function absorbPiece(cols: TraceColumnsData, j: JoinState, p: TraceColumnsPart): AbsorbResult {
  const { evTs, evCpu, evPid, evTask, evName, recEvent, recKind, recSlot, recGen, recStack, recStatus, evidRec, evidA, evidB, stacks } = cols;
  const { frameEnd, lastOnCpu, farCpus, lastOnCtx, pendEv, pendA, pendB, eventFor, resolve } = j;
  let fallbacks = 0;
  let lastTs = NaN;
  let hasLastTs = false;
  const evBase = evTs.length;
  const taskOf = p.tasks.map((t) => cols.tasks.intern(t));
  const nameOf = p.names.map((t) => cols.names.intern(t));
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
  const {
    ownTs: pOwnTs,
    evTs: pEvTs,
    ownTask: pOwnTask,
    ownPid: pOwnPid,
    ownCpu: pOwnCpu,
    recKind: pRecKind,
    recEvent: pRecEvent,
    ownRec: pOwnRec,
    evidRec: pEvidRec,
    evidB: pEvidB,
    ctxRec: pCtxRec,
    recStatus: pRecStatus,
    recStack: pRecStack,
    recSlot: pRecSlot,
    recGen: pRecGen,
    evidA: pEvidA,
    evTask: pEvTask,
    evPid: pEvPid,
    evCpu: pEvCpu,
    ctxKey: pCtxKey,
    evName: pEvName,
  } = p;
  let c = 0;
  // the fields noted for its records: the piece's, and for those read before their CPU noted
  // any in the piece, this file's as it stands (its records' event may be before the piece)
  const evidOf = p.evidNames.map((t) => cols.evidNames.intern(t));
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
  for (let from = 0; ;) {
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
    if (k >= 0 && byCtx === -1 && cpuHere >= 0 && cpuHere < 1024 && (e >= 0 || lastOnCpu[cpuHere] !== -1)) fallbacks++;
    const at = recBase + r;
    /** this record keeps its own values (they are not those of the event it is linked to) */
    const keep = (ts: number, cpu: number, pid: number, task: number) => {
      cols.ownRec.push(at);
      cols.ownTs.push(ts);
      cols.ownCpu.push(cpu);
      cols.ownPid.push(pid);
      cols.ownTask.push(task);
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
      hasLastTs = true;
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
  recEvent.append(evOut, 0, keptRecords, true);
  recStack.append(stackOut, 0, keptRecords, true);
  recKind.append(pRecKind, 0, keptRecords, true);
  recSlot.append(pRecSlot, 0, keptRecords, true);
  recGen.append(pRecGen, 0, keptRecords, true);
  recStatus.append(pRecStatus, 0, keptRecords, true);
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
    cols.weightEv.push(p.weightEv[k] + evBase);
    cols.weightVal.push(p.weightVal[k]);
  }
  evTs.append(pEvTs, 0, keptEvents, true);
  evCpu.append(pEvCpu, 0, keptEvents, true);
  evPid.append(pEvPid, 0, keptEvents, true);
  const ids = new Int32Array(keptEvents);
  evTask.append(mapInto(ids, pEvTask, taskOf, keptEvents), 0, keptEvents, true);
  evName.append(mapInto(ids, pEvName, nameOf, keptEvents), 0, keptEvents, true);
  lastPerCpu(pEvCpu, keptEvents, evBase, lastOnCpu, farCpus);
  // (the piece starts with an event line, so each of its lost markers has a time of its own)
  let keptLost = 0;
  for (let k = 0; k < p.lostCpu.length && p.lostTs[k] <= stopTs; k++, keptLost++) {
    cols.lostCpu.push(p.lostCpu[k]);
    cols.lostCount.push(p.lostCount[k]);
    cols.lostTs.push(p.lostTs[k]);
  }
  for (let k = 0; k < p.resetMarks.length && p.resetMarks[k] < keptEvents; k++) cols.resetMarks.push(p.resetMarks[k] + evBase);
  if (keptRecords < p.recEvent.length) for (let r = 0; r < keptRecords; r++) if (pRecKind[r] === RecordKind.User) users++;
  for (let k = 0; k < (keptRecords < p.recEvent.length ? users : p.userStacks.length); k++) cols.userStacks.push(p.userStacks[k]);
  const stop =
    keptRecords < p.recEvent.length
      ? { place: null, events: p.evTs.length - keptEvents, records: p.recEvent.length - keptRecords, lost: p.lostCpu.length - keptLost }
      : null;
  return { stop, lastTs, hasLastTs, ctxFallbacks: fallbacks };
}

/** What a piece's sink knew at its end (TracePieceState): its CPUs' noted fields and each context's last event. */
export function pieceStateOf(j: JoinState): TracePieceState {
  const { resolve, pendEv, pendA, pendB, lastOnCtx } = j;
  const pend: number[] = [];
  for (let cpu = 0; cpu < 1024; cpu++) {
    resolve(cpu);
    if (pendEv[cpu] >= 0) pend.push(cpu, pendEv[cpu], pendA[cpu], pendB[cpu]);
  }
  const ctx: number[] = [];
  for (let key = 0; key < lastOnCtx.length; key++) if (lastOnCtx[key] >= 0) ctx.push(key, lastOnCtx[key]);
  return { unnoted: j.unnoted.view(), pendLast: Int32Array.from(pend), ctxLast: Int32Array.from(ctx) };
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
