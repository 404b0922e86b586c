import { RingBytes } from '../capture/ring-bytes.ts';
import type { ExplorerData } from './explorer-data.ts';
import type { Selection, SelectionSummary } from './api.ts';
import { isAll, SelectionFilter } from './selection.ts';
import { RecordKind, RecordStatus, STATUS_NAMES } from '../capture/trace-columns-data.ts';

/** local copies: an imported binding can cost a getter call per access under module transforms (tsx, vitest) */
const { CookieV7: COOKIE_V7, CookieV8: COOKIE_V8 } = RecordKind;
const { Full: FULL, Resolved: RESOLVED, Unverified: UNVERIFIED, Ambiguous: AMBIGUOUS } = RecordStatus;

/**
 * The summary's counts for a selection. With ALL they are summarize()'s global numbers, and
 * uniqueStacks is the stack table's size (every distinct stack from every source, dumps
 * included). With a filter they count the selection's events and stack records, and
 * uniqueStacks is the number of distinct stacks among the selection's records (resolved and
 * unverified cookies, full stacks): a dump's stacks belong to no range or CPU, so they are left out.
 */
export function selectionSummary(d: ExplorerData, sel: Selection): SelectionSummary {
  const f = new SelectionFilter(sel);
  const all = isAll(sel);
  const statusCounts = new Float64Array(STATUS_NAMES.length);
  let cookies = 0;
  let resolved = 0;
  const seen = all ? null : new Uint8Array(d.stacks.nodeCount);
  let unique = 0;
  const { status: recStatus, kind: recKind, stack: recStack } = d.rec;
  // a cookie's own generation is its effective one; its slot, the capture's column as a u32
  const recGen = d.recGen;
  const recSlot = d.t.recSlot.raw();
  const stacks = d.stacks;
  const bytes = new RingBytes();
  const scan = d.recordScan(f);
  for (let p = scan.p0; p < scan.p1; p++) {
    const r = scan.order === null ? p : scan.order[p];
    if (scan.check && !d.recordIn(f, r)) continue;
    const st = recStatus[r];
    statusCounts[st]++;
    const kind = recKind[r];
    if (kind === COOKIE_V7 || kind === COOKIE_V8) {
      cookies++;
      const s = recStack[r];
      bytes.cookie(kind === COOKIE_V8 ? recGen[r] : null, recSlot[r] >>> 0, s >= 0 && st !== AMBIGUOUS ? stacks.depth(s) : -1);
      if (st !== RESOLVED && st !== UNVERIFIED) continue;
      resolved++;
    } else if (st !== FULL) continue;
    else bytes.full(recStack[r] >= 0 ? stacks.depth(recStack[r]) : 0);
    const s = recStack[r];
    if (seen && s >= 0 && !seen[s]) {
      seen[s] = 1;
      unique++;
    }
  }
  let events = 0;
  const es = d.eventScan(f);
  if (!es.check) events = es.p1 - es.p0;
  else for (let p = es.p0; p < es.p1; p++) if (d.eventIn(f, es.order === null ? p : es.order[p])) events++;
  const status: Record<string, number> = {};
  STATUS_NAMES.forEach((name, i) => (status[name] = statusCounts[i]));
  return {
    events,
    cookies,
    fullStacks: statusCounts[FULL],
    resolved,
    unresolved: cookies - resolved,
    uniqueStacks: all ? d.stacks.size : unique,
    status,
    dedupRate: bytes.dedupRate,
    ringBuffer: bytes.result(events),
  };
}
