// Weights and groups (issue 35) against a second reading: the test capture's lines read by
// regular expressions, bytes_alloc summed per stack, task, event and TGID, each cookie resolved
// through the dump text by the test's own parse (testing/weighed-capture.ts).
import { describe, expect, it } from 'vitest';
import { loadFiles } from '../capture/load.ts';
import { exportFolded } from '../export/exports.ts';
import { ALL } from './api.ts';
import { ExplorerData } from './explorer-data.ts';
import { eventGroups, fieldValues, parseGroupBy, parseWeightBy, weighStacks } from './weigh.ts';
import { readByRegex, sumBy, weighedCapture } from '../testing/weighed-capture.ts';

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
const stackKey = (frames: readonly string[]) => frames.join(';');

describe('weigh', () => {
  it('parses --weight and --group as DESIGN 5.5 names them', () => {
    expect(['occurrences', 'ref_count', 'refcount', 'period', 'field:bytes_alloc', 'field:x.y', 'bytes', 'field:', 'field:1a'].map(parseWeightBy)).toEqual([
      'occurrences',
      'refcount',
      'refcount',
      'period',
      'field:bytes_alloc',
      'field:x.y',
      null,
      null,
      null,
    ]);
    expect(['task', 'process', 'event', 'field:comm', 'pid', 'field:'].map(parseGroupBy)).toEqual(['task', 'process', 'event', 'field:comm', null, null]);
  });

  it("field:bytes_alloc: each stack's records and summed bytes equal the regex reading; events without a number are unweighed", async () => {
    const d = await load(true);
    // the capture has what the test needs: hex values, values not a number, events without the field, an unresolved cookie
    expect(cap.trace).toMatch(/bytes_alloc=0x/);
    expect(cap.trace).toMatch(/bytes_alloc=n\/a/);
    expect(cap.trace).toMatch(/<stack_id 9999 gen 1>/);
    const r = weighStacks(d, { selection: ALL, weight: 'occurrences', eventWeights: fieldValues(d, 'bytes_alloc') });
    const want = sumBy(expected, (e) => stackKey(e.frames));
    const got = new Map(r.rows.map((x) => [stackKey(d.stacks.framesOf(x.stack)), { count: x.count, bytes: x.weight, unweighed: x.unweighed }]));
    expect(got).toEqual(want);
    expect(r.total).toBe(expected.length);
    expect(r.totalWeight).toBe(expected.reduce((n, e) => n + (e.bytesAlloc ?? 0), 0));
    expect(r.unweighed).toBe(expected.filter((e) => e.bytesAlloc === null).length);
    expect(r.unweighed).toBeGreaterThan(0);
    // heaviest first
    for (let i = 1; i < r.rows.length; i++) expect(r.rows[i - 1].weight).toBeGreaterThanOrEqual(r.rows[i].weight);
    // a callback weighs the same as the array
    const values = fieldValues(d, 'bytes_alloc');
    const byFn = weighStacks(d, { selection: ALL, weight: 'occurrences', eventWeights: (e) => values[e] });
    expect(byFn).toEqual(r);
  });

  it('without kept payloads a field weighs nothing, and every event is unweighed', async () => {
    const d = await load(false);
    const r = weighStacks(d, { selection: ALL, weight: 'occurrences', eventWeights: fieldValues(d, 'bytes_alloc') });
    expect([r.total, r.totalWeight, r.unweighed]).toEqual([expected.length, 0, expected.length]);
  });

  it('occurrences and period weigh each record 1 (no perf periods here); refcount cannot be grouped', async () => {
    const d = await load(false);
    for (const weight of ['occurrences', 'period'] as const) {
      const r = weighStacks(d, { selection: ALL, weight });
      expect(r.totalWeight).toBe(expected.length);
      for (const x of r.rows) expect(x.weight).toBe(x.count);
    }
    expect(() => weighStacks(d, { selection: ALL, weight: 'refcount', groups: eventGroups(d, 'task') })).toThrow(/ref_count/);
  });

  it("group by task, event and process: per group and per group and stack, the regex's records and bytes", async () => {
    const d = await load(true);
    const eventWeights = fieldValues(d, 'bytes_alloc');
    const cases = [
      { by: 'task', key: (e: (typeof expected)[number]) => e.comm },
      { by: 'event', key: (e: (typeof expected)[number]) => e.event },
      // the TGID where the line prints one, else the pid
      { by: 'process', key: (e: (typeof expected)[number]) => String(e.tgid ?? e.pid) },
    ] as const;
    for (const c of cases) {
      const groups = eventGroups(d, c.by);
      const r = weighStacks(d, { selection: ALL, weight: 'occurrences', eventWeights, groups });
      const name = (g: number) => (c.by === 'process' ? /-(\d+)$/.exec(groups.names[g])![1] : groups.names[g]);
      const perGroup = new Map<string, { count: number; bytes: number; unweighed: number }>();
      const perRow = new Map<string, { count: number; bytes: number; unweighed: number }>();
      for (const x of r.rows) {
        const k = name(x.group);
        const y = perGroup.get(k) ?? { count: 0, bytes: 0, unweighed: 0 };
        perGroup.set(k, { count: y.count + x.count, bytes: y.bytes + x.weight, unweighed: y.unweighed + x.unweighed });
        perRow.set(`${k} ${stackKey(d.stacks.framesOf(x.stack))}`, { count: x.count, bytes: x.weight, unweighed: x.unweighed });
      }
      expect(perGroup, c.by).toEqual(sumBy(expected, c.key));
      expect(perRow, c.by).toEqual(sumBy(expected, (e) => `${c.key(e)} ${stackKey(e.frames)}`));
    }
    // sh's lines print (-------): its pid stands in, said in a note
    expect(eventGroups(d, 'process').notes.join()).toMatch(/no TGID: grouped by their pid/);
    expect(eventGroups(d, 'process').names).toContain('system_server-1403');
  });

  it('group by field:NAME: a group per value, [no NAME] for events without it', async () => {
    const d = await load(true);
    const g = eventGroups(d, 'field:gfp_flags');
    const r = weighStacks(d, { selection: ALL, weight: 'occurrences', groups: g });
    const sums = new Map<string, number>();
    for (const x of r.rows) sums.set(g.names[x.group], (sums.get(g.names[x.group]) ?? 0) + x.count);
    const want = sumBy(expected, (e) => (e.event === 'kmem_cache_alloc' ? 'GFP_KERNEL' : '[no gfp_flags]'));
    expect(sums).toEqual(new Map([...want].map(([k, v]) => [k, v.count])));
    expect(g.notes.join()).toMatch(/have no gfp_flags/);
  });

  it("the folded export weighed by bytes_alloc and grouped by task: `comm;root;...;leaf BYTES`, each line the regex's sum", async () => {
    const d = await load(true);
    const text = exportFolded(d, ALL, 'occurrences', 'site', { eventWeights: fieldValues(d, 'bytes_alloc'), groups: eventGroups(d, 'task') });
    const want = new Map(
      [...sumBy(expected, (e) => [e.comm, ...[...e.frames].reverse()].join(';'))].filter(([, v]) => v.bytes > 0).map(([k, v]) => [k, v.bytes]),
    );
    const got = new Map(
      text
        .trimEnd()
        .split('\n')
        .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
    );
    expect(got).toEqual(want);
  });
});
