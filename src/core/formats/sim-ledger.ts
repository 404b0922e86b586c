import { LineSplitter, TOO_LONG } from './lines.ts';
import type { ChunkParser, LineCount, ParseContext } from './types.ts';

/**
 * `ledger.json`, written beside a simulated run's capture (DESIGN 5.4): each stack record's truth,
 * in the trace's order, as the simulator knows it and no other file holds: the CPU, time, kind,
 * slot and generation it was written with, the stack it stood for (the population's index), and
 * what a reader of the capture gets (`outcome`: correct, wrong, detected, unresolved, full; the
 * simulator resolves as the explorer does). One JSON document, one stack or record a line:
 *
 *   {"format":"stackmap-sim-ledger","version":2,"mode":"v7","stacks":[
 *   ["__kmalloc+0x64","kmalloc_trace+0x284",...],
 *   ...
 *   ],"records":[
 *   {"cpu":0,"ts":100.123456,"kind":"id","slot":12,"generation":0,"stack":87,"event":5,"trueStack":0,"resolvedTo":1,"outcome":"wrong"},
 *   ...
 *   ]}
 *
 * Version 2 adds the `stacks` table (frame keys `sym+0xoff`, leaf first: the stacks the records
 * name) and per record `event` (the index of the event it belongs to among the trace's events in
 * file order, as `events.event_id` counts them: the last event before it on its CPU; null for an
 * orphan), `trueStack` (the stack it was written for, an index into `stacks`) and `resolvedTo`
 * (the stack a reader of the capture gets for it, an index into `stacks`; null when none:
 * unresolved, detected). Version 1 (no table, none of the three) is still read: those columns -1.
 *
 * The reader takes it line by line (a run holds millions of records), each line parsed alone; a
 * line it cannot read is a diagnostic and the others are kept.
 */

export const LEDGER_FORMAT = 'stackmap-sim-ledger';
/** how a ledger's first line starts (sniff.ts) */
export const LEDGER_HEAD = `{"format":"${LEDGER_FORMAT}"`;

export const LEDGER_KINDS = ['id', 'cookie', 'full'] as const;
export const LEDGER_OUTCOMES = ['correct', 'wrong', 'detected', 'unresolved', 'full'] as const;
export type LedgerOutcomeName = (typeof LEDGER_OUTCOMES)[number];

export interface LedgerRecordOut {
  cpu: number;
  ts: number;
  kind: (typeof LEDGER_KINDS)[number];
  slot: number;
  generation: number;
  stack: number;
  /** the event's index (events.event_id), null for an orphan */
  event: number | null;
  /** index into the stacks table */
  trueStack: number;
  /** index into the stacks table, null when the record resolves to none */
  resolvedTo: number | null;
  outcome: LedgerOutcomeName;
}

/** The file's bytes (version 2) for `records` of a run in `mode`, `stacks` the table their trueStack and resolvedTo index. */
export function writeSimLedger(mode: string, records: readonly LedgerRecordOut[], stacks: readonly (readonly string[])[]): Uint8Array {
  const parts = [`${LEDGER_HEAD},"version":2,"mode":${JSON.stringify(mode)},"stacks":[\n`];
  stacks.forEach((s, i) => parts.push(JSON.stringify(s), i < stacks.length - 1 ? ',\n' : '\n'));
  parts.push('],"records":[\n');
  records.forEach((r, i) => {
    parts.push(
      JSON.stringify({
        cpu: r.cpu,
        ts: r.ts,
        kind: r.kind,
        slot: r.slot,
        generation: r.generation,
        stack: r.stack,
        event: r.event,
        trueStack: r.trueStack,
        resolvedTo: r.resolvedTo,
        outcome: r.outcome,
      }),
    );
    parts.push(i < records.length - 1 ? ',\n' : '\n');
  });
  parts.push(']}\n');
  return new TextEncoder().encode(parts.join(''));
}

/** A ledger read back: the records as columns (kind and outcome as indices of LEDGER_KINDS and LEDGER_OUTCOMES). */
export interface ParsedLedger {
  mode: string | null;
  /** 1 or 2; null without a readable header */
  version: number | null;
  count: number;
  kind: Uint8Array;
  outcome: Uint8Array;
  slot: Int32Array;
  generation: Int32Array;
  stack: Int32Array;
  cpu: Int32Array;
  ts: Float64Array;
  /** version 2: the event's index (events.event_id); -1 for an orphan and in version 1 */
  event: Int32Array;
  /** version 2: the true stack, an index into `stacks`; -1 in version 1 */
  trueStack: Int32Array;
  /** version 2: the stack a reader gets, an index into `stacks`; -1 for none and in version 1 */
  resolvedTo: Int32Array;
  /** version 2: the stacks table, frame keys leaf first; empty in version 1 */
  stacks: string[][];
  lines: LineCount;
}

const int = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31;

export function createSimLedgerParser(ctx: ParseContext): ChunkParser<ParsedLedger> {
  const diag = ctx.diagnostics;
  let used = 0;
  let unused = 0;
  let mode: string | null = null;
  let version: number | null = null;
  /** version 2: reading the stacks table, until its `],"records":[` line */
  let inStacks = false;
  const stacks: string[][] = [];
  let header = false;
  let closed = false;
  let n = 0;
  let cap = 1024;
  let cols = alloc(cap);
  const bad = (lineNo: number, why: string) => {
    unused++;
    diag.atLine(lineNo, why);
  };
  const grow = () => {
    const next = alloc((cap *= 2));
    for (const k of Object.keys(cols) as (keyof typeof cols)[]) (next[k] as { set(a: ArrayLike<number>): void }).set(cols[k]);
    cols = next;
  };
  const onLine = (line: string, lineNo: number) => {
    const t = line.trim();
    if (t === '') {
      used++;
      return;
    }
    if (!header) {
      header = true;
      if (!t.startsWith(LEDGER_HEAD)) return bad(lineNo, `not a simulator ledger: the first line does not start with ${LEDGER_HEAD}`);
      try {
        const h = JSON.parse(t.endsWith('[') ? t + ']}' : t) as { version?: unknown; mode?: unknown };
        if (h.version !== 1 && h.version !== 2) return bad(lineNo, `ledger version ${String(h.version)}: only versions 1 and 2 are read`);
        version = h.version;
        inStacks = version === 2;
        mode = typeof h.mode === 'string' ? h.mode : null;
        used++;
      } catch {
        bad(lineNo, 'the ledger header is not JSON');
      }
      return;
    }
    if (t === ']}') {
      closed = true;
      used++;
      return;
    }
    if (closed) return bad(lineNo, 'after the end of the ledger');
    if (inStacks) {
      if (t === '],"records":[') {
        inStacks = false;
        used++;
        return;
      }
      let s: unknown;
      try {
        s = JSON.parse(t.endsWith(',') ? t.slice(0, -1) : t);
      } catch {
        s = null;
      }
      // a bad stack line still takes its index, so the records' indices keep their meaning
      const ok = Array.isArray(s) && s.every((f) => typeof f === 'string');
      stacks.push(ok ? (s as string[]) : []);
      if (!ok) return bad(lineNo, 'not a ledger stack (an array of frames)');
      used++;
      return;
    }
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(t.endsWith(',') ? t.slice(0, -1) : t) as Record<string, unknown>;
    } catch {
      return bad(lineNo, 'not a ledger record (not JSON)');
    }
    const kind = LEDGER_KINDS.indexOf(r.kind as never);
    const outcome = LEDGER_OUTCOMES.indexOf(r.outcome as never);
    if (kind < 0 || outcome < 0 || !int(r.cpu) || !int(r.slot) || !int(r.generation) || !int(r.stack) || typeof r.ts !== 'number' || !Number.isFinite(r.ts)) {
      return bad(lineNo, 'not a ledger record (a field missing or of the wrong type)');
    }
    const index = (v: unknown, max: number) => (v === null ? -1 : int(v) && v >= 0 && v < max ? v : -2);
    let event = -1;
    let trueStack = -1;
    let resolvedTo = -1;
    if (version === 2) {
      event = index(r.event, 2 ** 31 - 1);
      trueStack = r.trueStack === null ? -2 : index(r.trueStack, stacks.length);
      resolvedTo = index(r.resolvedTo, stacks.length);
      if (event < -1 || trueStack < 0 || resolvedTo < -1)
        return bad(lineNo, 'not a ledger record (event, trueStack or resolvedTo missing, or not an index of the stacks table)');
    }
    if (n === cap) grow();
    cols.kind[n] = kind;
    cols.outcome[n] = outcome;
    cols.slot[n] = r.slot;
    cols.generation[n] = r.generation;
    cols.stack[n] = r.stack;
    cols.cpu[n] = r.cpu;
    cols.ts[n] = r.ts;
    cols.event[n] = event;
    cols.trueStack[n] = trueStack;
    cols.resolvedTo[n] = resolvedTo;
    n++;
    used++;
  };
  const splitter = new LineSplitter(onLine, undefined, (lineNo) => bad(lineNo, TOO_LONG));
  return {
    push: (chunk) => splitter.push(chunk),
    end(): ParsedLedger {
      const total = splitter.end();
      if (header && !closed && mode !== null) diag.forFile('the ledger ends without its closing "]}": cut short, the records read are kept');
      const cut = <T extends { subarray(a: number, b: number): T }>(a: T) => a.subarray(0, n);
      return {
        mode,
        version,
        count: n,
        kind: cut(cols.kind),
        outcome: cut(cols.outcome),
        slot: cut(cols.slot),
        generation: cut(cols.generation),
        stack: cut(cols.stack),
        cpu: cut(cols.cpu),
        ts: cut(cols.ts),
        event: cut(cols.event),
        trueStack: cut(cols.trueStack),
        resolvedTo: cut(cols.resolvedTo),
        stacks,
        lines: { total, used, unused },
      };
    },
  };
}

function alloc(n: number) {
  return {
    kind: new Uint8Array(n),
    outcome: new Uint8Array(n),
    slot: new Int32Array(n),
    generation: new Int32Array(n),
    stack: new Int32Array(n),
    cpu: new Int32Array(n),
    ts: new Float64Array(n),
    event: new Int32Array(n),
    trueStack: new Int32Array(n),
    resolvedTo: new Int32Array(n),
  };
}
