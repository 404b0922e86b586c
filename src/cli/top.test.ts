// `top` (DESIGN 5.4): its rows against the explorer's own top stacks (the page's, a second
// method), and its filters adding up: the pids' counts sum to the unfiltered total.
import { describe, expect, it } from 'vitest';
import { Explorer } from '../core/query/explorer.ts';
import { readFiles } from './read-files.ts';
import { formatTop, topRows } from './top.ts';
import { stackWeights } from '../core/query/flame.ts';
import { ALL } from '../core/query/api.ts';

const SAMPLES = new URL('../../public/samples/', import.meta.url).pathname;
const FILES = ['trace', 'stack_map_bin.gen1', 'stack_map_bin.gen2', 'stack_map_bin.gen3', 'kallsyms'].map((f) => SAMPLES + f);
const all = { limit: 1e9, generation: null, cpus: null, pids: null, events: null };

describe('top', () => {
  it('counts what the explorer counts: every stack with its occurrences, for a generation and a CPU too', async () => {
    const ex = new Explorer((await readFiles(FILES)).capture);
    for (const sel of [
      { generation: null, cpus: null },
      { generation: 2, cpus: null },
      { generation: null, cpus: [1, 3] },
    ] as const) {
      const mine = topRows(ex, { ...all, ...sel, cpus: sel.cpus ? [...sel.cpus] : null });
      const page = ex.topStacks({ selection: { range: null, ...sel, cpus: sel.cpus ? [...sel.cpus] : null }, filter: '', limit: 1e9, granularity: 'site' });
      const key = (frames: string[], count: number) => `${count} ${frames.join(';')}`;
      expect(mine.rows.map((r) => key(r.frames, r.count)).sort()).toEqual(page.rows.map((r) => key(ex.stackFrames(r.stack), r.count)).sort());
      expect(mine.total).toBeGreaterThan(0);
    }
  });

  it('--pid and --event: the pids partition the total, and so do the event names; an event no record has counts nothing', async () => {
    const ex = new Explorer((await readFiles(FILES)).capture);
    const total = topRows(ex, all).total;
    const d = ex.data;
    const pids = [...new Set(Array.from(d.ev.pid))];
    expect(pids.length).toBeGreaterThan(1);
    const sum = pids.reduce((n, pid) => n + topRows(ex, { ...all, pids: [pid] }).total, 0);
    expect(sum).toBe(total);
    const names = d.t.names.strings;
    expect(names.length).toBeGreaterThan(1);
    expect(names.reduce((n, name) => n + topRows(ex, { ...all, events: [name] }).total, 0)).toBe(total);
    expect(topRows(ex, { ...all, events: [...names] }).total).toBe(total);
    expect(topRows(ex, { ...all, events: ['no_such_event'] }).total).toBe(0);
  });

  it("--weight ref_count: each stack weighs what the page's flame graph weighs it (the dumps' ref_count over the selection's generations)", async () => {
    const ex = new Explorer((await readFiles(FILES)).capture);
    const mine = topRows(ex, { ...all, weight: 'refcount' });
    const page = stackWeights(ex.data, ALL, 'refcount');
    const byFrames = (frames: string[]) => frames.join(';');
    const want = new Map<string, number>();
    for (let i = 0; i < page.stacks.length; i++) want.set(byFrames(ex.data.stacks.framesOf(page.stacks[i])), page.weights[i]);
    expect(new Map(mine.rows.map((r) => [byFrames(r.frames), r.weight]))).toEqual(want);
    expect(mine.totalWeight).toBe(page.total);
    expect(mine.totalWeight).toBeGreaterThan(0);
  });

  it('prints as perf report --stdio: overhead, count, weight, the frames leaf first', async () => {
    const ex = new Explorer((await readFiles(FILES)).capture);
    const r = topRows(ex, { ...all, limit: 2 });
    expect(r.totalWeight).toBe(r.total);
    const text = formatTop(r.total, r.rows);
    const lines = text.split('\n');
    expect(lines[0]).toBe(`# ${r.total.toLocaleString('en-US')} stack records counted, the 2 heaviest stacks`);
    expect(lines[4]).toBe(
      `${(r.rows[0].share * 100).toFixed(2).padStart(8)}%  ${String(r.rows[0].count).padStart(8)}  ${String(r.rows[0].weight).padStart(8)}  ${r.rows[0].frames[0]}`,
    );
    expect(lines[5].trim()).toBe(r.rows[0].frames[1]);
  });
});
