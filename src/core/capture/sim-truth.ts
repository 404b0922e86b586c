import { LEDGER_KINDS, LEDGER_OUTCOMES } from '../formats/sim-ledger.ts';
import type { Capture } from './ingest.ts';
import { RecordKind, RecordStatus } from './trace-columns-data.ts';

/**
 * A simulated run's truth read with its capture (its ledger.json, formats/sim-ledger.ts): per CPU,
 * the ledger's records are the trace's stack records in order (a text trace merges the CPUs by
 * time, a trace.dat keeps them apart), so the k-th record of a CPU in one is the k-th of that CPU
 * in the other (checked: the same kind and slot). What the files alone cannot say, it does: which of
 * the `unverified` v7 ids resolve to the stack they were written for.
 */
export interface SimTruth {
  /** the ledger's records and whether they line up with the trace's */
  records: number;
  matched: boolean;
  /** where they stop lining up, when they do not */
  why: string | null;
  /**
   * the trace's v4/v7 ids resolved with no generation to check (status unverified, and contradicted
   * ones too: found a stack their event's fields deny), and the ledger's verdict on each
   */
  unverified: number;
  unverifiedRight: number;
  unverifiedWrong: number;
  /** of those, the contradicted ids (their event's own fields name a function the stack lacks: field-evidence.ts), and the ledger's verdict on each */
  contradicted: number;
  contradictedRight: number;
  contradictedWrong: number;
  /** every record's outcome as the ledger gives it */
  outcomes: Record<(typeof LEDGER_OUTCOMES)[number], number>;
}

const KIND_OF: Record<number, number> = {
  [RecordKind.CookieV7]: LEDGER_KINDS.indexOf('id'),
  [RecordKind.CookieV8]: LEDGER_KINDS.indexOf('cookie'),
  [RecordKind.Full]: LEDGER_KINDS.indexOf('full'),
};

export function simTruth(c: Capture): SimTruth | null {
  const l = c.ledger;
  if (!l) return null;
  const t = c.trace;
  const kinds = t.recKind.raw();
  const statuses = t.recStatus.raw();
  const outcomes = Object.fromEntries(LEDGER_OUTCOMES.map((o) => [o, 0])) as SimTruth['outcomes'];
  for (let i = 0; i < l.count; i++) outcomes[LEDGER_OUTCOMES[l.outcome[i]]]++;
  const out: SimTruth = {
    records: l.count,
    matched: true,
    why: null,
    unverified: 0,
    unverifiedRight: 0,
    unverifiedWrong: 0,
    contradicted: 0,
    contradictedRight: 0,
    contradictedWrong: 0,
    outcomes,
  };
  const { index, why } = alignLedger(c);
  if (!index) {
    out.matched = false;
    out.why = why;
  } else
    for (let i = 0; i < kinds.length; i++) {
      const j = index[i];
      if (j < 0) continue;
      const st = statuses[i];
      const o = LEDGER_OUTCOMES[l.outcome[j]];
      if (st !== RecordStatus.Unverified && st !== RecordStatus.Contradicted) continue;
      out.unverified++;
      if (o === 'correct') out.unverifiedRight++;
      else if (o === 'wrong') out.unverifiedWrong++;
      if (st === RecordStatus.Contradicted) {
        out.contradicted++;
        if (o === 'correct') out.contradictedRight++;
        else if (o === 'wrong') out.contradictedWrong++;
      }
    }
  if (!out.matched) {
    out.unverified = 0;
    out.unverifiedRight = 0;
    out.unverifiedWrong = 0;
    out.contradicted = 0;
    out.contradictedRight = 0;
    out.contradictedWrong = 0;
  }
  return out;
}

/**
 * Each trace record's ledger record (-1 for a user stack), lined up per CPU and checked (the
 * same kind and slot); null, with where it stops lining up, when the ledger is another run's.
 */
export function alignLedger(c: Capture): { index: Int32Array | null; why: string | null } {
  // the summary and the explorer both ask, once each per capture: made once
  let a = aligned.get(c);
  if (!a) aligned.set(c, (a = align(c)));
  return a;
}

const aligned = new WeakMap<Capture, { index: Int32Array | null; why: string | null }>();

function align(c: Capture): { index: Int32Array | null; why: string | null } {
  const l = c.ledger;
  if (!l) return { index: null, why: 'no ledger' };
  const t = c.trace;
  const kinds = t.recKind.raw();
  const slots = t.recSlot.raw();
  const cpus = t.recCpu.raw();
  // each CPU's ledger records, in order
  const byCpu = new Map<number, number[]>();
  for (let j = 0; j < l.count; j++) {
    let q = byCpu.get(l.cpu[j]);
    if (!q) byCpu.set(l.cpu[j], (q = []));
    q.push(j);
  }
  const next = new Map<number, number>();
  const index = new Int32Array(kinds.length).fill(-1);
  let seen = 0;
  for (let i = 0; i < kinds.length; i++) {
    if (kinds[i] === RecordKind.User) continue;
    const cpu = cpus[i];
    const k = next.get(cpu) ?? 0;
    const j = byCpu.get(cpu)?.[k];
    if (j === undefined) return { index: null, why: `CPU ${cpu} has more stack records in the trace than in the ledger` };
    next.set(cpu, k + 1);
    seen++;
    if (KIND_OF[kinds[i]] !== l.kind[j] || (kinds[i] !== RecordKind.Full && slots[i] >>> 0 !== l.slot[j])) {
      return {
        index: null,
        why: `CPU ${cpu}'s stack record ${k + 1} is ${LEDGER_KINDS[KIND_OF[kinds[i]]] ?? 'another record'} ${kinds[i] === RecordKind.Full ? '' : `of slot ${slots[i] >>> 0} `}in the trace, ${LEDGER_KINDS[l.kind[j]]}${l.kind[j] === LEDGER_KINDS.indexOf('full') ? '' : ` of slot ${l.slot[j]}`} in the ledger`,
      };
    }
    index[i] = j;
  }
  if (seen < l.count) return { index: null, why: `the ledger has ${l.count} records, the trace ${seen} stack records` };
  return { index, why: null };
}
