import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { RaceJob, RaceResult } from './insert-race.worker.ts';
import { createMapBuffer, type MapParams, type Mode } from './map-layout.ts';
import { SharedStackMap } from './shared-map.ts';
import { buildPopulation } from './workload.ts';

// worker_threads CPUs hitting one map at once: no ref_count increment may be lost (the cmpxchg
// loop whose first guess is a plain read), and every success is one element's reference. The
// expected totals are counted by the workers themselves, apart from the map's counters.

const pop = buildPopulation({ kind: 'population', stacks: 300, zipf: 0, depthMin: 4, depthMax: 24, seed: 5 });
const BOOT = new URL('./node-worker-boot.mjs', import.meta.url);
const ENTRY = new URL('./insert-race.worker.ts', import.meta.url).href;


async function race2(sab: SharedArrayBuffer, params: MapParams, inserts: number, stacks: number, sync = new SharedArrayBuffer(4)): Promise<RaceResult[]> {
  return Promise.all(
    Array.from({ length: params.cpus }, (_, cpu) => {
      const job: RaceJob = { entry: ENTRY, map: sab, params, pop: pop.shared, sync, cpu, inserts, stacks };
      const w = new Worker(BOOT, { workerData: job });
      return new Promise<RaceResult>((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      }).finally(() => w.terminate());
    }),
  );
}

/** every published element's ref_count, summed (slots that share an element counted once) */
function refTotal(m: SharedStackMap): number {
  const seen = new Set<number>();
  let n = 0;
  for (let s = 0; s < m.slots; s++) {
    const e = m.published(s);
    if (e < 0 || seen.has(e)) continue;
    seen.add(e);
    n += m.elementRef(e);
  }
  return n;
}

describe('concurrent inserts on worker_threads', () => {
  it('hits on a warm map: every insert hits, and the ref_counts grow by exactly the hits', async () => {
    const params: MapParams = { mode: 'v7', bits: 12, cpus: 4, hashSeed: 0x5bd1e995 };
    const sab = createMapBuffer(params);
    const m = new SharedStackMap(sab, params);
    for (let i = 0; i < pop.words.length; i++) expect(m.insert(0, pop.words[i], pop.depths[i])).toBeGreaterThanOrEqual(0);
    const before = refTotal(m);
    expect(before).toBe(pop.words.length);
    const r = await race2(sab, params, 40_000, 300);
    const hits = r.reduce((n, x) => n + x.slots, 0);
    expect(r.reduce((n, x) => n + x.fallbacks, 0)).toBe(0);
    expect(hits).toBe(4 * 40_000);
    expect(refTotal(m) - before).toBe(hits);
  }, 60_000);

  it.each(['v4', 'v7', 'v8'] as Mode[])('%s from empty on a few hot stacks: each success is one reference, v8 never holds a stack twice', async (mode) => {
    const params: MapParams = { mode, bits: mode === 'v8' ? 14 : 10, cpus: 4, hashSeed: 0x27d4eb2f };
    const sab = createMapBuffer(params);
    const r = await race2(sab, params, 20_000, 6);
    const m = new SharedStackMap(sab, params);
    const slots = r.reduce((n, x) => n + x.slots, 0);
    const fallbacks = r.reduce((n, x) => n + x.fallbacks, 0);
    expect(slots + fallbacks).toBe(4 * 20_000);
    const c = m.counters();
    expect(c.successes).toBe(slots);
    expect(c.fallbacks).toBe(fallbacks);
    expect(c.attempts).toBe(4 * 20_000);
    expect(refTotal(m)).toBe(slots);
    const held = new Map<string, number>();
    for (let s = 0; s < m.slots; s++) {
      const e = m.published(s);
      if (e < 0) continue;
      const k = Array.from(m.elementIps(e)).join(',');
      held.set(k, (held.get(k) ?? 0) + 1);
    }
    expect(held.size).toBe(6);
    if (mode === 'v8') for (const n of held.values()) expect(n).toBe(1);
  }, 60_000);
});
