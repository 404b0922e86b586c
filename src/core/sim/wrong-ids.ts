import { framesOfKey } from './export.ts';
import { REC } from './ring.ts';
import type { RunResult } from './sim-report.ts';

/**
 * The run's wrong ids as evidence (DESIGN 5.5, `simulate --json`'s `wrongIds`): each id (or
 * cookie) the capture resolves to another stack than the one it was written for, in trace order,
 * with both stacks' frame keys (sym+0xoff, leaf first): what the dumps resolve its slot to, and
 * the stack the simulator knows it stood for.
 */
export interface WrongId {
  cpu: number;
  /** the record's time, seconds (the trace prints it to the microsecond) */
  ts: number;
  /** the id as the trace holds it: its slot */
  id: number;
  /** the generation it was written in (the map's resets before it) */
  generation: number;
  resolvedFrames: string[];
  trueFrames: string[];
}

/** The first `limit` wrong ids in trace order. */
export function wrongIds(run: RunResult, limit = 50): WrongId[] {
  const out: WrongId[] = [];
  let k = 0;
  for (const { cpu, rec } of run.items) {
    if (out.length >= limit) break;
    if (rec.type === REC.EVENT) continue;
    const e = run.ledger.entries[k++];
    if (e.outcome !== 'wrong' || e.resolved === null) continue;
    out.push({
      cpu,
      ts: rec.ts,
      id: rec.a,
      generation: rec.truthGeneration,
      resolvedFrames: framesOfKey(run, e.resolved),
      trueFrames: framesOfKey(run, run.stackKeys[rec.truthStack]),
    });
  }
  return out;
}

/**
 * A wrong id's two stacks side by side, `resolved | true`, one frame a line, leaf first; a frame
 * that differs from the other side's at the same depth marked `*` (a missing one shown as `-`).
 */
export function sideBySide(w: WrongId, esc: (s: string) => string = (s) => s): string[] {
  const left = w.resolvedFrames.map(esc);
  const right = w.trueFrames.map(esc);
  const width = Math.max('resolved to'.length, ...left.map((f) => f.length)) + 2;
  const lines = [`  ${'resolved to'.padEnd(width)} | written for`];
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const mark = w.resolvedFrames[i] === w.trueFrames[i] ? ' ' : '*';
    lines.push(`${mark} ${(left[i] ?? '-').padEnd(width)} | ${right[i] ?? '-'}`);
  }
  return lines;
}
