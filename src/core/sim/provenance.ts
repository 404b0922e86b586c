import type { Ledger } from './ledger.ts';
import { REC } from './ring.ts';
import type { ResetMark, TraceItem } from './sim-report.ts';

/**
 * Why one id or cookie reads wrong (v4/v7: resolved to another stack) or is reported as
 * unresolvable (v8: detected), told from what the simulation knows and no file holds: where and
 * when it was written and for which stack, the reset that emptied its slot, who took the slot
 * next, and what a reader of the files gets.
 */
export interface IdStory {
  /** its index among the run's stack records (the ledger's entry) */
  record: number;
  outcome: 'wrong' | 'detected';
  kind: 'id' | 'cookie';
  slot: number;
  /** the write: CPU, time, the generation the map was in, the stack it stood for (a population index) */
  written: { cpu: number; ts: number; generation: number; stack: number };
  /** the reset that ended that generation: its time when the host's Simulation did it, null when not recorded (a live run's tracefs worker, a CPU's own reset) */
  reset: { ts: number | null; generation: number } | null;
  /** the first record naming the slot in a later generation: the CPU, time and stack that took it next */
  takenBy: { cpu: number; ts: number; generation: number; stack: number } | null;
  /** what a reader of the files gets: the ledger's status, and the stack it resolves to (wrong), else null */
  read: { status: string; stack: number | null };
}

/**
 * The stories of the run's wrong and detected ids, oldest first, at most `limit`. `items` and
 * `ledger` as Simulation.collect gives them (the ledger's entries are the stack records in
 * `items` order), `stackKeys` the population's stack keys by index.
 */
export function idStories(items: readonly TraceItem[], ledger: Ledger, stackKeys: readonly string[], resets: readonly ResetMark[], limit = 50): IdStory[] {
  const keyIndex = new Map(stackKeys.map((k, i) => [k, i]));
  const stackRecs: TraceItem[] = [];
  /** the first id or cookie record of each slot in each generation: who took the slot then */
  const firstOf = new Map<string, TraceItem>();
  let maxGen = 0;
  for (const it of items) {
    const t = it.rec.type;
    if (t === REC.EVENT) continue;
    stackRecs.push(it);
    if (t !== REC.ID && t !== REC.COOKIE) continue;
    const g = it.rec.truthGeneration;
    if (g > maxGen) maxGen = g;
    const k = `${it.rec.a}/${g}`;
    if (!firstOf.has(k)) firstOf.set(k, it);
  }
  const out: IdStory[] = [];
  for (let i = 0; i < stackRecs.length && out.length < limit; i++) {
    const e = ledger.entries[i];
    if (!e || (e.outcome !== 'wrong' && e.outcome !== 'detected')) continue;
    const { rec, cpu } = stackRecs[i];
    const gen = rec.truthGeneration;
    let taken: TraceItem | undefined;
    for (let g = gen + 1; g <= maxGen && !taken; g++) taken = firstOf.get(`${rec.a}/${g}`);
    const mark = resets.find((r) => r.generation === gen + 1);
    out.push({
      record: i,
      outcome: e.outcome,
      kind: rec.type === REC.COOKIE ? 'cookie' : 'id',
      slot: rec.a,
      written: { cpu, ts: rec.ts, generation: gen, stack: rec.truthStack },
      reset: mark ? { ts: mark.ts, generation: mark.generation } : gen < maxGen || taken ? { ts: null, generation: gen + 1 } : null,
      takenBy: taken ? { cpu: taken.cpu, ts: taken.rec.ts, generation: taken.rec.truthGeneration, stack: taken.rec.truthStack } : null,
      read: { status: e.status, stack: e.resolved === null ? null : (keyIndex.get(e.resolved) ?? null) },
    });
  }
  return out;
}
