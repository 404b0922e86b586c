// The flame graph with a root frame per group (flame.ts groupedFlame) held to the regex reading of
// testing/weighed-capture.ts: per task and per event, the group's node holds that group's records
// (or bytes_alloc, weighed by the field), and each group's leaf paths hold its stacks.
import { describe, expect, it } from 'vitest';
import { loadFiles } from '../capture/load.ts';
import { ExplorerData } from './explorer-data.ts';
import { flame, ROOT_NAME } from './flame.ts';
import { eventGroups, fieldValues } from './weigh.ts';
import { readByRegex, sumBy, weighedCapture } from '../testing/weighed-capture.ts';
import type { FlameTree } from './api.ts';

const cap = weighedCapture();
const expected = readByRegex(cap.trace, cap.dump);
const load = async (details: boolean) =>
  new ExplorerData(
    await loadFiles(
      [
        { name: 'trace', blob: new Blob([cap.trace]) },
        { name: 'stack_map', blob: new Blob([cap.dump]) },
      ],
      { details },
    ),
  );
const ALL = { range: null, generation: null, cpus: null };

/** the root's children: name -> value */
const groupsOf = (t: FlameTree) =>
  new Map(
    Array.from(t.parent.keys())
      .filter((i) => i > 0 && t.parent[i] === 0)
      .map((i) => [t.names[t.name[i]], t.value[i]]),
  );

/** path from the root (names joined by ;) -> self weight */
function selfByPath(t: FlameTree): Map<string, number> {
  const out = new Map<string, number>();
  const path: string[] = [];
  for (let i = 1; i < t.parent.length; i++) {
    path.length = t.depth[i] - 1;
    path.push(t.names[t.name[i]]);
    if (t.self[i] > 0) out.set(path.join(';'), (out.get(path.join(';')) ?? 0) + t.self[i]);
  }
  return out;
}

describe('flame graph grouped', () => {
  it('by task: a root frame per comm holding its records, each stack under it (top-down, by call site)', async () => {
    const d = await load(false);
    const t = flame(
      d,
      { selection: ALL, mode: 'top-down', weight: 'occurrences', granularity: 'site', focus: null, highlightStack: null },
      eventGroups(d, 'task'),
    ).tree;
    expect(t.names[t.name[0]]).toBe(ROOT_NAME);
    const want = sumBy(expected, (e) => e.comm);
    expect(groupsOf(t)).toEqual(new Map([...want].map(([k, v]) => [k, v.count])));
    const paths = sumBy(expected, (e) => [e.comm, ...[...e.frames].reverse()].join(';'));
    expect(selfByPath(t)).toEqual(new Map([...paths].map(([k, v]) => [k, v.count])));
  });

  it('by event, weighed by bytes_alloc (the record weights a field view gives): each event holds its bytes', async () => {
    const d = await load(true);
    // as the page's worker weighs: each record its event's bytes_alloc, 0 where there is none
    const values = fieldValues(d, 'bytes_alloc');
    const recEvent = d.t.recEvent.raw();
    const w = Float64Array.from({ length: d.recordCount }, (_, r) =>
      recEvent[r] >= 0 && values[recEvent[r]] === values[recEvent[r]] ? values[recEvent[r]] : 0,
    );
    const view = Object.create(d, { recWeight: { value: w }, hasWeights: { value: true } }) as ExplorerData;
    const t = flame(
      view,
      { selection: ALL, mode: 'top-down', weight: 'field:bytes_alloc', granularity: 'site', focus: null, highlightStack: null },
      eventGroups(d, 'event'),
    ).tree;
    const want = sumBy(expected, (e) => e.event);
    // sched_wakeup has no bytes_alloc: it weighs 0 and is no node
    expect(groupsOf(t)).toEqual(new Map([...want].filter(([, v]) => v.bytes > 0).map(([k, v]) => [k, v.bytes])));
  });

  it('bottom-up: the group first, then the leaf functions', async () => {
    const d = await load(false);
    const t = flame(
      d,
      { selection: ALL, mode: 'bottom-up', weight: 'occurrences', granularity: 'site', focus: null, highlightStack: null },
      eventGroups(d, 'task'),
    ).tree;
    const paths = sumBy(expected, (e) => [e.comm, ...e.frames].join(';'));
    expect(selfByPath(t)).toEqual(new Map([...paths].map(([k, v]) => [k, v.count])));
  });
});
