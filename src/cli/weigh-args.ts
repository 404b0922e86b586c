import { eventGroups, fieldOf, fieldValues, parseGroupBy, parseWeightBy, type EventGroups, type GroupBy, type WeightBy } from '../core/query/weigh.ts';
import type { ExplorerData } from '../core/query/explorer-data.ts';
import type { FlameWeight } from '../core/query/api.ts';
import { UsageError } from './usage.ts';

export const WEIGHT_HELP = `--weight W         what a stack weighs: occurrences (default), ref_count (the dumps' count),
                     period (perf's sample period, 1 where none was printed), or field:NAME,
                     the sum of a numeric field of its events (bytes_alloc, len, ...; decimal or
                     0x hex: an event without it weighs 0, and how many is said on stderr)`;
export const GROUP_HELP = `--group G          a root frame per task (comm), process (TGID where the trace prints one,
                     else pid), event (its name) or field:NAME (its value)`;

/** `--weight W`, or a usage error naming what it takes */
export function weightArg(v: string | null | undefined): WeightBy {
  if (v === null || v === undefined) return 'occurrences';
  const w = parseWeightBy(v);
  if (w === null) throw new UsageError(`--weight takes occurrences, ref_count, period or field:NAME, not ${v}`);
  return w;
}

/** `--group G` (null: none), or a usage error naming what it takes */
export function groupArg(v: string | null | undefined, weight: WeightBy): GroupBy | null {
  if (v === null || v === undefined) return null;
  const g = parseGroupBy(v);
  if (g === null) throw new UsageError(`--group takes task, process, event or field:NAME, not ${v}`);
  if (weight === 'refcount') throw new UsageError("--weight ref_count is a stack's count in the dumps, not an event's: it cannot be split by --group");
  return g;
}

/** Whether the load must keep each event's payload and TGID (LoadOptions.details) for these. */
export const needsDetails = (weight: WeightBy, group: GroupBy | null): boolean =>
  fieldOf(weight) !== null || (group !== null && group !== 'task' && group !== 'event');

/** The core's form of --weight and --group over a loaded capture: per-event weights and groups, computed once. */
export function weighing(
  d: ExplorerData,
  weight: WeightBy,
  group: GroupBy | null,
): { weight: FlameWeight; field: string | null; eventWeights: Float64Array | null; groups: EventGroups | null } {
  const field = fieldOf(weight);
  return {
    weight: field === null ? (weight as FlameWeight) : 'occurrences',
    field,
    eventWeights: field === null ? null : fieldValues(d, field),
    groups: group === null ? null : eventGroups(d, group),
  };
}

/** stderr's note on the events that weighed 0: `312 events have no bytes_alloc` */
export const unweighedNote = (n: number, field: string): string =>
  `${n.toLocaleString('en-US')} event${n === 1 ? ' has' : 's have'} no ${field} (or not a number): weighed 0`;
