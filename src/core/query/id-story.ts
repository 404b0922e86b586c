import { LEDGER_OUTCOMES } from '../formats/sim-ledger.ts';
import type { ExplorerData } from './explorer-data.ts';
import { STATUS_NAMES_WITH_NONE } from './overview.ts';

const WRONG = LEDGER_OUTCOMES.indexOf('wrong');
const DETECTED = LEDGER_OUTCOMES.indexOf('detected');
const CORRECT = LEDGER_OUTCOMES.indexOf('correct');
const FULL = LEDGER_OUTCOMES.indexOf('full');

/**
 * Why is this id wrong, in the explorer: a simulated capture read with its ledger.json, one wrong
 * (v4/v7) or detected (v8) id's story from what the files and the ledger hold together:
 *   written   the record's CPU, time, generation and slot (the ledger's), and the stack it stood
 *             for: the capture's stack of another record of the same run stack that resolves right
 *             (or is in full), where there is one;
 *   reset     the first reset the trace marks after it (`stackmap reset N`, RESET_MARKER), or none;
 *   taken     the first record the trace still holds naming the slot in the nearest later
 *             generation, as the ledger gives it: the stack that took the slot next, on which
 *             CPU, when (its first insert, unless the ring overwrote it);
 *   read      what the explorer resolves the id to (the dump's stack in that slot), and its status.
 */
export interface IdStoryView {
  /** the record and its event (-1 for an orphan record) */
  record: number;
  event: number;
  outcome: 'wrong' | 'detected';
  /** `frames`: the run's true stack from the ledger's stacks table (frame keys, leaf first; null for a version 1 ledger) */
  written: { ts: number; cpu: number; generation: number; slot: number; runStack: number; stack: number; frames: string[] | null };
  reset: { ts: number } | null;
  taken: { ts: number; cpu: number; generation: number; runStack: number; stack: number; frames: string[] | null } | null;
  read: { stack: number; status: string };
}

interface StoryIndex {
  /** records whose ledger outcome is wrong or detected, in trace order */
  records: Int32Array;
  /** a run stack's capture stack, from a record that resolves right or is in full */
  stackOfRun: Map<number, number>;
  /** the ledger record of each trace record, -1 for none */
  ledgerOf: Int32Array;
}

const cache = new WeakMap<ExplorerData, StoryIndex | null>();

function index(d: ExplorerData): StoryIndex | null {
  if (cache.has(d)) return cache.get(d)!;
  const l = d.capture.ledger;
  const ledgerOf = l ? d.ledgerIndex : null;
  let out: StoryIndex | null = null;
  if (l && ledgerOf) {
    const list: number[] = [];
    const stackOfRun = new Map<number, number>();
    for (let r = 0; r < ledgerOf.length; r++) {
      const j = ledgerOf[r];
      if (j < 0) continue;
      const o = l.outcome[j];
      if (o === WRONG || o === DETECTED) list.push(r);
      else if ((o === CORRECT || o === FULL) && d.rec.stack[r] >= 0 && !stackOfRun.has(l.stack[j])) stackOfRun.set(l.stack[j], d.rec.stack[r]);
    }
    out = { records: Int32Array.from(list), stackOfRun, ledgerOf };
  }
  cache.set(d, out);
  return out;
}

/** How many wrong or detected ids the ledger read with the capture names (0 without one). */
export function idStoryCount(d: ExplorerData): number {
  return index(d)?.records.length ?? 0;
}

/** The story of the n-th wrong or detected id (trace order), or null. */
export function idStoryAt(d: ExplorerData, n: number): IdStoryView | null {
  const x = index(d);
  return x && n >= 0 && n < x.records.length ? storyOf(d, x, x.records[n]) : null;
}

/** Where the event's record is among the wrong or detected ids (-1 when it is none of them). */
export function idStoryOfEvent(d: ExplorerData, e: number): number {
  const x = index(d);
  const r = e >= 0 && e < d.ev.record.length ? d.ev.record[e] : -1;
  if (!x || r < 0) return -1;
  let lo = 0;
  let hi = x.records.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (x.records[mid] < r) lo = mid + 1;
    else hi = mid;
  }
  return lo < x.records.length && x.records[lo] === r ? lo : -1;
}

function storyOf(d: ExplorerData, x: StoryIndex, r: number): IdStoryView {
  const l = d.capture.ledger!;
  const j = x.ledgerOf[r];
  const slot = l.slot[j];
  const gen = l.generation[j];
  const ts = l.ts[j];
  const framesOf = (k: number) => (l.trueStack[k] >= 0 ? (l.stacks[l.trueStack[k]] ?? null) : null);
  const written = { ts, cpu: l.cpu[j], generation: gen, slot, runStack: l.stack[j], stack: x.stackOfRun.get(l.stack[j]) ?? -1, frames: framesOf(j) };
  // the first reset marker after the write
  const t = d.capture.trace;
  const marks = t.resetMarks.raw();
  const evTs = t.evTs.raw();
  let reset: IdStoryView['reset'] = null;
  for (let k = 0; k < marks.length; k++) {
    const m = evTs[marks[k]];
    if (m > ts && (reset === null || m < reset.ts)) reset = { ts: m };
  }
  // the first record (trace order) naming the slot in the nearest later generation: who took it next
  let taken: IdStoryView['taken'] = null;
  const kind = d.rec.kind[r];
  for (let q = 0; q < x.ledgerOf.length; q++) {
    const k = x.ledgerOf[q];
    if (k < 0 || d.rec.kind[q] !== kind || l.slot[k] !== slot || l.generation[k] <= gen) continue;
    if (taken === null || l.generation[k] < taken.generation)
      taken = {
        ts: l.ts[k],
        cpu: l.cpu[k],
        generation: l.generation[k],
        runStack: l.stack[k],
        stack: x.stackOfRun.get(l.stack[k]) ?? d.rec.stack[q],
        frames: framesOf(k),
      };
  }
  const event = t.recEvent.get(r);
  return {
    record: r,
    event,
    outcome: l.outcome[j] === WRONG ? 'wrong' : 'detected',
    written,
    reset,
    taken,
    read: { stack: d.rec.stack[r], status: event >= 0 ? STATUS_NAMES_WITH_NONE[d.evStatus[event]] : 'orphan' },
  };
}
