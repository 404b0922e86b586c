// Top stacks by group (top-stacks-grouped.ts) held to the regex reading of the weighed test
// capture (testing/weighed-capture.ts): per task and stack, its records; weighed by bytes_alloc
// through the record weights a field view gives, its bytes.
import { describe, expect, it } from 'vitest';
import { loadFiles } from '../capture/load.ts';
import { ExplorerData } from './explorer-data.ts';
import { groupedTopStacks } from './top-stacks-grouped.ts';
import { eventGroups, fieldValues } from './weigh.ts';
import { readByRegex, sumBy, weighedCapture } from '../testing/weighed-capture.ts';

const cap = weighedCapture();
const expected = readByRegex(cap.trace, cap.dump);
const ALL = { range: null, generation: null, cpus: null };

describe('top stacks grouped', () => {
  it('a row per task and stack: its records and its bytes_alloc, as the regex reading sums them', async () => {
    const d = new ExplorerData(
      await loadFiles(
        [
          { name: 'trace', blob: new Blob([cap.trace]) },
          { name: 'stack_map', blob: new Blob([cap.dump]) },
        ],
        { details: true },
      ),
    );
    const values = fieldValues(d, 'bytes_alloc');
    const recEvent = d.t.recEvent.raw();
    const w = Float64Array.from({ length: d.recordCount }, (_, r) =>
      recEvent[r] >= 0 && values[recEvent[r]] === values[recEvent[r]] ? values[recEvent[r]] : 0,
    );
    const view = Object.create(d, { recWeight: { value: w }, hasWeights: { value: true } }) as ExplorerData;
    const a = groupedTopStacks(view, { selection: ALL, filter: '', limit: 1e6, granularity: 'site' }, eventGroups(d, 'task'));
    const want = sumBy(expected, (e) => `${e.comm}|${e.frames.join(';')}`);
    const got = new Map(a.rows.map((r) => [`${r.group}|${d.stacks.framesOf(r.stack).join(';')}`, { count: r.count, bytes: r.weight }]));
    expect(got).toEqual(new Map([...want].map(([k, v]) => [k, { count: v.count, bytes: v.bytes }])));
    // by count, busiest first
    expect(a.rows.map((r) => r.count)).toEqual(a.rows.map((r) => r.count).sort((x, y) => y - x));
    // sorted by weight instead
    const byW = groupedTopStacks(
      view,
      { selection: ALL, filter: '', limit: 1e6, granularity: 'site', sort: { key: 'weight', dir: 'desc' } },
      eventGroups(d, 'task'),
    );
    expect(byW.rows.map((r) => r.weight)).toEqual(byW.rows.map((r) => r.weight).sort((x, y) => y - x));
  });
});
