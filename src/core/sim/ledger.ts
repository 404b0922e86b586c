import type { MapDump } from './dump-reader.ts';

/**
 * The ledger: every stack record left in the ring buffers, resolved against the dumps taken
 * exactly as the explorer resolves them (DESIGN 3, src/core/capture/dumps.ts + cookie-index.ts),
 * then compared with the truth the simulation kept.
 *
 * Resolution (in the order the dumps were taken, which is the order they are exported):
 * - dumps with a generation (bin v2, v8 text records) are merged per generation, slot by slot,
 *   the first record of a slot kept; dumps without one (bin v1, v7 text) are kept apart.
 *   As in the explorer, a dump with no record registers nothing.
 * - v8 cookie: `resolved` when a dump of its generation holds the slot, `no-slot` when dumps
 *   of the generation exist but lack it, `no-dump` when none exists.
 * - v4/v7 id: against every generation-less dump: `unverified` when those holding the slot all
 *   hold the same stack, `ambiguous` when they disagree, `no-slot` when none holds it,
 *   `no-dump` without generation-less dumps.
 * Outcome per id/cookie record:
 *   correct     resolved/unverified to the stack it stood for
 *   wrong       resolved/unverified to another stack: silently misresolved
 *   detected    the reader is told it cannot trust a stack: v8 no-dump / no-slot (generation
 *               mismatch or missing slot), v4/v7 ambiguous (dumps disagree)
 *   unresolved  v4/v7 no-dump / no-slot
 * Full stacks (fallbacks, bypasses) carry their own stack and are counted apart.
 */

export type RecordStatusName = 'resolved' | 'no-dump' | 'no-slot' | 'unverified' | 'ambiguous' | 'full';
export type Outcome = 'correct' | 'wrong' | 'detected' | 'unresolved' | 'full';

export interface LedgerInput {
  kind: 'full' | 'id' | 'cookie';
  slot: number;
  /** cookies only */
  generation: number | null;
  /** the key of the stack the record stood for (stackKey of its ips) */
  truth: string;
}

export interface LedgerEntry {
  status: RecordStatusName;
  /** the stack it resolved to (key), null when none */
  resolved: string | null;
  outcome: Outcome;
}

export interface Ledger {
  records: number;
  full: number;
  /** id and cookie records */
  ids: number;
  correct: number;
  wrong: number;
  detected: number;
  unresolved: number;
  status: Record<RecordStatusName, number>;
  entries: LedgerEntry[];
}

export function stackKey(ips: BigUint64Array | readonly bigint[]): string {
  return Array.from(ips, (x) => x.toString(16)).join(',');
}

export function computeLedger(records: readonly LedgerInput[], dumps: readonly MapDump[]): Ledger {
  const byGen = new Map<number, Map<number, string>>();
  const genless: Map<number, string>[] = [];
  for (const d of dumps) {
    let own: Map<number, string> | null = null;
    for (const r of d.records) {
      const key = stackKey(r.ips);
      const gen = d.format === 'bin' ? d.generation : r.generation;
      if (gen === null) {
        if (!own) genless.push((own = new Map()));
        if (!own.has(r.slot)) own.set(r.slot, key);
        continue;
      }
      let g = byGen.get(gen);
      if (!g) byGen.set(gen, (g = new Map()));
      if (!g.has(r.slot)) g.set(r.slot, key);
    }
  }
  const status: Record<RecordStatusName, number> = { resolved: 0, 'no-dump': 0, 'no-slot': 0, unverified: 0, ambiguous: 0, full: 0 };
  const out: Ledger = { records: records.length, full: 0, ids: 0, correct: 0, wrong: 0, detected: 0, unresolved: 0, status, entries: [] };
  for (const r of records) {
    let st: RecordStatusName;
    let resolved: string | null = null;
    if (r.kind === 'full') {
      st = 'full';
      resolved = r.truth;
    } else if (r.kind === 'cookie') {
      const g = byGen.get(r.generation ?? -1);
      if (!g) st = 'no-dump';
      else {
        resolved = g.get(r.slot) ?? null;
        st = resolved === null ? 'no-slot' : 'resolved';
      }
    } else if (genless.length === 0) st = 'no-dump';
    else {
      st = 'no-slot';
      for (const d of genless) {
        const hit = d.get(r.slot);
        if (hit === undefined) continue;
        if (resolved === null) {
          resolved = hit;
          st = 'unverified';
        } else if (hit !== resolved) {
          st = 'ambiguous';
          resolved = null;
          break;
        }
      }
    }
    let outcome: Outcome;
    if (st === 'full') outcome = 'full';
    else if (resolved !== null) outcome = resolved === r.truth ? 'correct' : 'wrong';
    else if (r.kind === 'cookie' || st === 'ambiguous') outcome = 'detected';
    else outcome = 'unresolved';
    status[st]++;
    out[outcome === 'full' ? 'full' : outcome]++;
    if (r.kind !== 'full') out.ids++;
    out.entries.push({ status: st, resolved, outcome });
  }
  return out;
}
