// The timeline's hit test: the event nearest a point of a lane, described for the tooltip.
import { LEDGER_OUTCOMES } from '../formats/sim-ledger.ts';
import { RecordKind } from '../capture/trace-columns-data.ts';
import { cookieSlotAt } from '../capture/trace-columns.ts';
import type { EventInfo, Selection } from './api.ts';
import type { ExplorerData } from './explorer-data.ts';
import { STATUS_NAMES_WITH_NONE } from './overview.ts';
import { NO_GEN, SelectionFilter } from './selection.ts';
import { laneOf, lanesFor, OTHER_TASKS } from './timeline.ts';

/** local copies: an imported binding can cost a getter call per access under module transforms (tsx, vitest) */
const { CookieV7: COOKIE_V7, CookieV8: COOKIE_V8 } = RecordKind;

/** The event with the given index, described for a tooltip. */
export function eventInfo(d: ExplorerData, e: number): EventInfo {
  const t = d.t;
  const r = d.ev.record[e];
  const status = d.evStatus[e];
  const stack = r >= 0 ? d.rec.stack[r] : -1;
  const kind = r >= 0 ? d.rec.kind[r] : -1;
  const gen = d.evGen[e];
  return {
    index: e,
    ts: d.ev.ts[e],
    cpu: d.ev.cpu[e],
    // one event's pid, name and slot from the capture's own columns: the full-width ones
    // (ExplorerData's, made when first read: 160 MB at 10M events) are not made for a tooltip
    pid: t.evPid.get(e),
    task: t.tasks.strings[d.ev.task[e]],
    name: t.names.strings[t.evName.get(e)],
    status: STATUS_NAMES_WITH_NONE[status],
    generation: gen === NO_GEN ? null : gen,
    slot: kind === COOKIE_V7 || kind === COOKIE_V8 ? cookieSlotAt(kind, t.recSlot.get(r)) : null,
    stack,
    frames: stack >= 0 ? d.stacks.framesOf(stack).slice(0, 12) : [],
    ...truthOf(d, r),
  };
}

/** The record's truth from a simulated run's ledger (EventInfo.truth), or nothing. */
function truthOf(d: ExplorerData, r: number): { truth?: EventInfo['truth'] } {
  const idx = r >= 0 ? d.ledgerIndex : null;
  const j = idx ? idx[r] : -1;
  const l = d.capture.ledger;
  if (!l || j < 0) return {};
  return { truth: { outcome: LEDGER_OUTCOMES[l.outcome[j]], generation: l.generation[j], stack: l.stack[j] } };
}

/**
 * The selection's event nearest to `t` in a lane (a CPU number, or a task key as in
 * TimelineResult.lanes, OTHER_TASKS for the other-tasks lane), within `tolerance` seconds.
 */
export function eventNear(d: ExplorerData, t: number, lane: number, lanes: 'cpu' | 'task', tolerance: number, sel: Selection): EventInfo | null {
  const f = new SelectionFilter(sel);
  const tol = Math.max(0, tolerance);
  const lo = Math.max(t - tol, f.lo);
  const hi = Math.min(t + tol, f.hi);
  if (!(lo <= hi)) return null;
  let inLane: (e: number) => boolean;
  if (lanes === 'cpu') inLane = (e) => d.ev.cpu[e] === lane;
  else if (lane === OTHER_TASKS) {
    const L = lanesFor(d, 'task', sel);
    const other = L.lanes.findIndex((l) => l.key === OTHER_TASKS);
    inLane = (e) => other >= 0 && laneOf(d, L, e) === other;
  } else inLane = (e) => d.ev.task[e] === lane;
  const [p0, p1] = d.eventSpan(lo, hi);
  let best = -1;
  let bestDist = Infinity;
  for (let p = p0; p < p1; p++) {
    const e = d.evAt(p);
    const ts = d.ev.ts[e];
    if (!inLane(e) || !f.test(ts, d.ev.cpu[e], d.evGen[e])) continue;
    const dist = Math.abs(ts - t);
    if (dist < bestDist) {
      bestDist = dist;
      best = e;
    }
  }
  return best < 0 ? null : eventInfo(d, best);
}
