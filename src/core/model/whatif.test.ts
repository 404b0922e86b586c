import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCpu } from '../sim/cpu-loop.ts';
import { exportCapture } from '../sim/export.ts';
import { REC } from '../sim/ring.ts';
import { Simulation } from '../sim/simulation.ts';
import type { SimOptions } from '../sim/sim-options.ts';
import { ingestFiles } from './test-helpers.ts';
import { mapMemoryBytes, whatIf, WHATIF_BITS, type WhatIfRow } from './whatif.ts';

/** One CPU, in this thread: the map on, or options/stackmap off before the CPU starts (every stack in full). */
function runOneCpu(opts: Partial<SimOptions>, mapOn: boolean) {
  const sim = new Simulation({ cpus: 1, resets: 0, dumps: 'none', ringKb: 32768, ...opts });
  if (!mapOn) sim.map.setOption(false);
  sim.start();
  const report = runCpu(sim.shared, 0, sim.config);
  const run = sim.finish([report]);
  return { sim, run };
}

/** What the map-on run wrote: its stack records' bytes (nothing evicted: the ring is large) and its map's counts. */
function onFigures(opts: Partial<SimOptions>) {
  const { sim, run } = runOneCpu(opts, true);
  let bytes = 0;
  let full = 0;
  let fallbacks = 0;
  for (const { rec } of run.items) {
    if (rec.type === REC.FULL || rec.type === REC.ID || rec.type === REC.COOKIE) bytes += rec.bytes;
    if (rec.type === REC.FULL) {
      full++;
      if (rec.truthGeneration === -1) fallbacks++; // INSERT_FALLBACK
    }
  }
  return { stored: sim.map.entries, fallbacks, counterFallbacks: run.counters.fallbacks, bytes, full, gravestones: sim.map.gravestones() };
}

describe('whatIf against the simulator', () => {
  for (const mode of ['v7', 'v8'] as const) {
    it(`${mode}: the map-off capture's figures at the run's bits equal the map-on run of the same workload and seed`, () => {
      // more distinct stacks than bits 10's 1,024 elements, so the pool runs out and stacks fall back
      const opts: Partial<SimOptions> = { mode, bits: 10, events: 6000, stacks: 2500, zipf: 0.6, seed: 7, depthMin: 4, depthMax: 30, v8Variant: 'bin' };
      const on = onFigures(opts);
      expect(on.fallbacks).toBeGreaterThan(0);
      expect(on.fallbacks).toBe(on.counterFallbacks);
      const { run } = runOneCpu(opts, false);
      expect(run.items.every(({ rec }) => rec.type === REC.EVENT || rec.type === REC.FULL)).toBe(true);
      const capture = ingestFiles(exportCapture(run));
      const w = whatIf(capture, { modes: [mode] });
      const row = w.bits.find((r) => r.bits === 10)!;
      expect(row.records).toBe(6000);
      expect(row.stored).toBe(on.stored);
      expect(row.fallbacks).toBe(on.fallbacks);
      // gravestones are not compared: once they fill the table (2,048 slots here), which stacks
      // reach the probe limit instead of claiming a slot depends on the hashes, and the capture's
      // ips (frame keys replayed) and hash seed are not the run's. Both runs fill it alike.
      expect(row.gravestones).toBeGreaterThan(0);
      expect(Math.abs(row.gravestones - on.gravestones)).toBeLessThanOrEqual(Math.ceil(on.gravestones * 0.05));
      expect(row.gravestones + row.stored).toBeLessThanOrEqual(2 ** 11);
      expect(row.bytesWithMap).toBe(on.bytes);
    });
  }

  it('larger bits store every distinct stack without fallbacks', () => {
    const { run } = runOneCpu({ mode: 'v8', bits: 10, events: 3000, stacks: 1500, zipf: 0.5, seed: 3, depthMin: 3, depthMax: 20, v8Variant: 'bin' }, false);
    const w = whatIf(ingestFiles(exportCapture(run)));
    const distinct = w.distinctStacks;
    for (const r of w.bits) {
      expect(r.stored).toBe(Math.min(distinct, r.capacity));
      if (r.capacity >= distinct) expect(r.fallbacks).toBe(0);
    }
    expect(w.recommended.bits).toBe(WHATIF_BITS.find((b) => w.bits.find((r) => r.mode === 'v8' && r.bits === b)!.fallbackShare <= 0.01));
  });
});

/** A plain model of the map for one stream: first come, first stored, while capacity lasts. */
function plainFigures(stream: number[], depths: number[], bits: number, mode: 'v7' | 'v8') {
  const cap = 2 ** bits;
  const stored = new Set<number>();
  let fallbacks = 0;
  let withMap = 0;
  let without = 0;
  for (const s of stream) {
    const full = 12 + 8 * depths[s];
    without += full;
    if (stored.has(s) || stored.size < cap) {
      stored.add(s);
      withMap += mode === 'v8' ? 16 : 12;
    } else {
      fallbacks++;
      withMap += full;
    }
  }
  return { stored: stored.size, fallbacks, withMap, without };
}

function traceOf(stream: number[], depths: number[]): string {
  const lines = ['# tracer: nop', '#'];
  stream.forEach((s, i) => {
    const ts = (1 + i * 1e-5).toFixed(6);
    lines.push(`          task-1     [000] .... ${ts}: kmem_cache_alloc: bytes=8`);
    lines.push(`          task-1     [000] .... ${ts}: <stack trace>`);
    for (let d = 0; d < depths[s]; d++) lines.push(` => f${s}_${d}+0x${(d * 4 + 1).toString(16)}/0x100`);
  });
  return lines.join('\n') + '\n';
}

describe('whatIf against a plain model', () => {
  it('stored, fallbacks and bytes match a first-come-first-stored model for random streams (a stack beyond capacity falls back whichever way it does)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 1400 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 1600 }),
        (depths, picks) => {
          const stream = picks.map((p) => p % depths.length);
          const w = whatIf(ingestFiles([['trace', traceOf(stream, depths)]]));
          for (const r of w.bits as WhatIfRow[]) {
            const p = plainFigures(stream, depths, r.bits, r.mode);
            expect([r.stored, r.fallbacks, r.bytesWithMap, r.bytesWithoutMap]).toEqual([p.stored, p.fallbacks, p.withMap, p.without]);
            expect(r.mapBytes).toBe(mapMemoryBytes(r.bits));
          }
        },
      ),
      { numRuns: 8 },
    );
  });

  it('counts the map memory as the v7 document does: about 8 MiB at bits 14, 130-135 MiB at bits 18', () => {
    expect(mapMemoryBytes(14) / 2 ** 20).toBeGreaterThan(8);
    expect(mapMemoryBytes(14) / 2 ** 20).toBeLessThan(9);
    expect(mapMemoryBytes(18) / 2 ** 20).toBeGreaterThanOrEqual(130);
    expect(mapMemoryBytes(18) / 2 ** 20).toBeLessThanOrEqual(135);
  });

  it('says why when there is nothing to replay', () => {
    const w = whatIf(ingestFiles([['trace', '# tracer: nop\n          task-1     [000] .... 1.000000: sched_switch: x\n']]));
    expect(w.records).toBe(0);
    expect(w.recommended.bits).toBeNull();
    expect(w.recommended.why).toMatch(/no full stack/);
  });
});
