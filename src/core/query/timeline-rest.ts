// What an event filter left out of the timeline: per lane and pixel column, the events of the
// whole capture's answer less the filtered capture's (TimelineResult.rest).
import { TIMELINE_STATUSES, type TimelineResult } from './api.ts';

/** `all` (the whole capture) less `r` (its filtered form), per lane of `r` and column, every status summed; 0 where a lane is not in `all` or the columns differ. */
export function filteredOut(all: TimelineResult, r: TimelineResult): Uint32Array {
  const S = TIMELINE_STATUSES;
  const B = r.buckets;
  const laneOf = new Map(all.lanes.map((l, i) => [l.key, i]));
  const rest = new Uint32Array(r.lanes.length * B);
  r.lanes.forEach((l, i) => {
    const j = laneOf.get(l.key);
    if (j === undefined || all.buckets !== B) return;
    for (let b = 0; b < B; b++) {
      let n = 0;
      for (let s = 0; s < S; s++) n += all.counts[(j * B + b) * S + s] - r.counts[(i * B + b) * S + s];
      rest[i * B + b] = Math.max(0, n);
    }
  });
  return rest;
}
