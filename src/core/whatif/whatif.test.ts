import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCpu } from '../sim/cpu-loop.ts';
import { exportCapture } from '../sim/export.ts';
import { REC } from '../sim/ring.ts';
import { Simulation } from '../sim/simulation.ts';
import type { SimOptions } from '../sim/sim-options.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { prepareWhatIf, whatIfColumns } from './whatif-input.ts';
import { mapMemoryBytes, mapPoolBytes, whatIf, whatIfFromInput, whatIfSteps, WHATIF_BITS, type WhatIfRow } from './whatif.ts';

/** One CPU, in this thread: the map on, or options/stackmap off before the CPU starts (every stack in full). */
function runOneCpu(opts: Partial<SimOptions>, mapOn: boolean) {
  const sim = new Simulation({ cpus: 1, resets: 0, dumps: 'none', ringKb: 8192, ...opts });
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
    }, 30_000); // a simulation and its capture's ingest: slow on a loaded 2-core machine
  }

  it('larger bits store every distinct stack without fallbacks', () => {
    const { run } = runOneCpu({ mode: 'v8', bits: 10, events: 3000, stacks: 1500, zipf: 0.5, seed: 3, depthMin: 3, depthMax: 20, v8Variant: 'bin' }, false);
    const w = whatIf(ingestFiles(exportCapture(run)));
    const distinct = w.distinctStacks;
    for (const r of w.bits) {
      expect(r.stored).toBe(Math.min(distinct, r.capacity));
      if (r.capacity >= distinct) expect(r.fallbacks).toBe(0);
    }
    const bin = w.recommendedByMode.find((m) => m.v8Variant === 'bin')!;
    expect(bin.bits).toBe(WHATIF_BITS.find((b) => w.bits.find((r) => r.v8Variant === 'bin' && r.bits === b)!.fallbackShare <= 0.01));
    // v8 as posted has no size to choose: its fixed 16,384 (bits 14) holds all 1,500 distinct stacks
    expect(w.recommended).toMatchObject({ mode: 'v8', v8Variant: 'posted', bits: 14 });
    expect(w.recommended.why).toMatch(/^v8 as posted: a fixed 16384 stacks/);
  }, 30_000);
});

/** A plain model of the map for one stream: first come, first stored, while capacity lasts. */
function plainFigures(stream: number[], depths: number[], bits: number, mode: 'v7' | 'v8') {
  const cap = 2 ** bits;
  const stored = new Set<number>();
  let fallbacks = 0;
  let withMap = 0;
  let without = 0;
  /** records whose stack was already stored: the v7 document's "Dedup rate" counts these */
  let reused = 0;
  for (const s of stream) {
    const full = 12 + 8 * depths[s];
    without += full;
    if (stored.has(s)) reused++;
    if (stored.has(s) || stored.size < cap) {
      stored.add(s);
      withMap += mode === 'v8' ? 16 : 12;
    } else {
      fallbacks++;
      withMap += full;
    }
  }
  return { stored: stored.size, fallbacks, withMap, without, reused };
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
  it('the dedup rate, as the v7 document means it: the share of stack records that reused a stored stack (40 records of 5 stacks: 35 of 40)', () => {
    // the stacks counted another way: the text's distinct frame sequences, by regex
    const stream = Array.from({ length: 40 }, (_, i) => i % 5);
    const text = traceOf(stream, [3, 4, 5, 6, 7]);
    const seqs = text
      .split(/^.*<stack trace>\n/m)
      .slice(1)
      .map((b) =>
        b
          .split('\n')
          .filter((l) => l.startsWith(' => '))
          .join('|'),
      );
    const distinct = new Set(seqs).size;
    expect([seqs.length, distinct]).toEqual([40, 5]);
    const w = whatIf(ingestFiles([['trace', text]]));
    for (const r of w.bits) {
      expect(r.fallbacks).toBe(0);
      expect(r.reused).toBe(seqs.length - distinct);
      expect(r.dedupRate).toBe((seqs.length - distinct) / seqs.length);
      // every record a success: successes / records would say 100%
      expect(r.successes).toBe(seqs.length);
    }
  });

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
            expect([r.stored, r.fallbacks, r.bytesWithMap, r.bytesWithoutMap, r.reused]).toEqual([p.stored, p.fallbacks, p.withMap, p.without, p.reused]);
            // the dedup rate is the share of records that reused a stored stack, not successes / records
            expect(r.dedupRate).toBeCloseTo(p.reused / stream.length, 12);
            expect(r.mapBytes).toBe(mapMemoryBytes(r.bits));
          }
        },
      ),
      { numRuns: 8 },
    );
  }, 30_000); // 8 captures, each replayed 18 times: slow on a loaded 2-core machine

  it('counts the map memory as the seeds do: "about 8.6 MiB" at 16,384 stacks (v8 letter), a pool of "roughly 8 MiB" at bits 14 and "130-135 MiB" at bits 18 (v7 document)', () => {
    expect((mapMemoryBytes(14) / 2 ** 20).toFixed(1)).toBe('8.6');
    expect(Math.round(mapPoolBytes(14) / 2 ** 20)).toBe(8);
    expect(mapPoolBytes(18) / 2 ** 20).toBeGreaterThanOrEqual(130);
    expect(mapPoolBytes(18) / 2 ** 20).toBeLessThanOrEqual(135);
  });

  it('the boot window: records before the map was published stay in full with the map on (issue 22)', () => {
    const { run } = runOneCpu({ mode: 'v8', bits: 10, events: 3000, stacks: 300, zipf: 0.5, seed: 3, depthMin: 3, depthMax: 20, v8Variant: 'bin' }, false);
    const c = ingestFiles(exportCapture(run));
    const plain = whatIf(c, { modes: ['v8'] });
    const some = whatIf(c, { modes: ['v8'], bootRecords: 1000 });
    const all = whatIf(c, { modes: ['v8'], bootRecords: 1e9 });
    expect(some.records).toBe(plain.records);
    for (const [i, r] of some.bits.entries()) {
      expect(r.boot).toBe(1000);
      expect(r.records).toBe(plain.bits[i].records - 1000);
      expect(r.bytesWithoutMap).toBe(plain.bits[i].bytesWithoutMap);
      expect(r.bytesWithMap).toBeGreaterThan(plain.bits[i].bytesWithMap);
    }
    // every record before publication: the map changes nothing
    for (const r of all.bits) {
      expect(r.bytesWithMap).toBe(r.bytesWithoutMap);
      expect(r.successes).toBe(0);
    }
  });

  it('says why when there is nothing to replay', () => {
    const w = whatIf(ingestFiles([['trace', '# tracer: nop\n          task-1     [000] .... 1.000000: sched_switch: x\n']]));
    expect(w.records).toBe(0);
    expect(w.recommended.bits).toBeNull();
    expect(w.recommended.why).toMatch(/no full stack/);
  });
});

describe("the recommendation's words", () => {
  it("give the stack records' bytes in the decimal units the page's table prints (kB = 1,000 B), not as raw counts", () => {
    // 60 records of stack 0 (depth 20) and 60 of stack 1 (depth 4): in full 12 + 8 x depth B each, by hand
    const stream = Array.from({ length: 120 }, (_, i) => i % 2);
    const w = whatIf(ingestFiles([['trace', traceOf(stream, [20, 4])]]));
    const without = 60 * (12 + 8 * 20) + 60 * (12 + 8 * 4); // 12,960 B
    const v8 = 120 * 16; // every record a 16 B cookie: 1,920 B
    const v7 = 120 * 12; // a 12 B id: 1,440 B
    const posted = w.recommendedByMode.find((m) => m.v8Variant === 'posted')!;
    expect(posted.why).toContain('cuts the stack records from 13.0 kB to 1.9 kB');
    const v7why = w.recommendedByMode.find((m) => m.mode === 'v7')!.why;
    expect(v7why).toContain('the map cuts the stack records from 13.0 kB to 1.4 kB');
    for (const m of w.recommendedByMode) expect(m.why).not.toMatch(new RegExp(`\\b(${without}|${v8}|${v7})\\b`));
  });
});

describe('whatIf inputs', () => {
  const captureTxt = (kb: string) =>
    `# stackmap explorer capture, by capture.sh, 2026-12-01T10:00:00Z\n# tracefs: /t\n# buffer_size_kb: ${kb} (per CPU, read from tracefs before the restore)\n# cpus: 1 (per_cpu/cpu* in tracefs)\n`;
  const trace = traceOf([0, 1, 0, 2, 1, 0], [3, 5, 2]);

  it("takes the buffer size from the capture's capture.txt, says so, and an asked size still overrides", () => {
    const cap = ingestFiles([
      ['trace', trace],
      ['capture.txt', captureTxt('8')],
    ]);
    const w = whatIf(cap);
    expect([w.bufferKb, w.bufferSource]).toEqual([8, 'capture']);
    expect(w.notes[0]).toBe('buffer 8 KiB per CPU (as the capture recorded it: buffer_size_kb in capture.txt)');
    // the same figures as asking for 8 KiB outright
    const asked = whatIf(ingestFiles([['trace', trace]]), { bufferKb: 8 });
    expect(asked.bufferSource).toBe('option');
    expect(w.bits).toEqual(asked.bits);
    const over = whatIf(cap, { bufferKb: 64 });
    expect([over.bufferKb, over.bufferSource]).toEqual([64, 'option']);
    const none = whatIf(
      ingestFiles([
        ['trace', trace],
        ['capture.txt', captureTxt('unknown')],
      ]),
    );
    expect([none.bufferKb, none.bufferSource]).toEqual([1408, 'default']);
    expect(none.notes[0]).toContain('the default');
  });

  it('property: the items in time order are those of a plain stable sort of event and orphan objects', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ ts: fc.integer({ min: 0, max: 20 }), cpu: fc.integer({ min: 0, max: 3 }), orphan: fc.boolean(), s: fc.integer({ min: 0, max: 4 }) }),
          { minLength: 1, maxLength: 60 },
        ),
        (recs) => {
          // an orphan: a <stack trace> whose event line is not there (after another stack of the same event)
          const lines = ['# tracer: nop', '#'];
          for (const r of recs) {
            const ts = (1 + r.ts * 1e-3).toFixed(6);
            const head = `          task-1     [00${r.cpu}] .... ${ts}:`;
            if (!r.orphan) lines.push(`${head} kmem_cache_alloc: bytes=8`);
            lines.push(`${head} <stack trace>`, ` => f${r.s}+0x1/0x10`, ` => g+0x2/0x10`);
          }
          const cap = ingestFiles([['trace', lines.join('\n') + '\n']]);
          const cols = whatIfColumns(cap);
          const x = prepareWhatIf(cols);
          // the plain way: objects, orphans then events as the columns list them, Array.prototype.sort (stable) by time
          const items = Array.from({ length: cols.count }, (_, i) => ({ ts: cols.ts[i], cpu: cols.cpu[i], event: cols.event[i], stack: cols.stack[i] }));
          items.sort((a, b) => a.ts - b.ts);
          const cpus = [...new Set(items.map((i) => i.cpu))].sort((a, b) => a - b);
          expect(x.cpus).toEqual(cpus);
          expect(Array.from(x.cpuIndex, (c) => x.cpus[c])).toEqual(items.map((i) => i.cpu));
          expect(Array.from(x.event)).toEqual(items.map((i) => i.event));
          expect(Array.from(x.stack)).toEqual(items.map((i) => i.stack));
          // every full stack record is an item's stack once: as an event's or as an orphan
          expect(Array.from(x.stack).filter((s) => s >= 0).length).toBe(recs.length);
          expect(x.words.map((w) => w.length / 2)).toEqual(Array.from(x.depths));
        },
      ),
      { numRuns: 60, seed: 12 },
    );
  });

  it('reports each step, the map-off ring then each mode and bits', () => {
    const steps: [number, number][] = [];
    whatIfFromInput(prepareWhatIf(whatIfColumns(ingestFiles([['trace', trace]]))), { modes: ['v8'] }, (d, t) => steps.push([d, t]));
    expect(steps).toEqual(Array.from({ length: whatIfSteps(1) }, (_, i) => [i + 1, 1 + WHATIF_BITS.length]));
  });
});
