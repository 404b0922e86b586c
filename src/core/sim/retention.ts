import type { SimOptions } from './sim-options.ts';
import type { RunResult } from './sim-report.ts';

/**
 * The retention experiment of the v8 cover letter: 4 CPUs, buffer_size_kb=512 per CPU, an
 * allocation workload with a stack after every event, the same run with the map off and on.
 * "Off" is the same event sequence written to a ring of the same size with every stack in full
 * (each CPU keeps that accounting ring beside its real one), so off, v7 and v8 see exactly the
 * same events. Bytes/event is the ring data kept divided by the events kept, as the letter
 * defines it.
 *
 * The letter: off 4,867 events at 107.4 B/event, on (v8) 10,552 at 49.8 B/event: 2.17x.
 * 4,867 x 107.4 B and 10,552 x 49.8 B are both ~512 KiB: one CPU's buffer, so the letter's
 * open()/close() loop ran on one CPU. Here every CPU records, so totals are ~4 buffers; the
 * per-CPU figures compare with the letter's.
 */

export const LETTER = {
  off: { events: 4867, bytesPerEvent: 107.4 },
  on: { events: 10552, bytesPerEvent: 49.8 },
  gain: 2.17,
} as const;

export interface RetentionScenario {
  name: string;
  note: string;
  options: Partial<SimOptions>;
}

const COMMON: Partial<SimOptions> = {
  cpus: 4,
  ringKb: 512,
  bits: 14,
  // the letter's 100 rounds of 500 open()/close(): 50,000 allocations
  events: 50_000,
  resets: 0,
  stacks: 64,
  zipf: 1.0,
  dumps: 'end',
  textDump: false,
  seed: 8,
};

export const RETENTION_SCENARIOS: RetentionScenario[] = [
  {
    name: 'kmem_cache_alloc 56 B, stacks ~20 frames',
    note: 'a 6.x kmem_cache_alloc record (56 B) and the ~20-frame (172 B) stacks the cookie proposal counts',
    options: { ...COMMON, eventBytes: 56, depthMin: 14, depthMax: 26 },
  },
  {
    name: 'fitted to the letter: 32 B events, stacks ~8 frames',
    note: "sizes that reproduce the letter's 107.4 B/event off (32 + 12 + 8 x 8); its 49.8 B/event on leaves at most ~34 B for an event beside a 16 B cookie",
    options: { ...COMMON, eventBytes: 32, depthMin: 5, depthMax: 11 },
  },
];

export interface RetentionRow {
  label: string;
  events: number;
  eventsPerCpu: number;
  bytesPerEvent: number;
  /** events retained / events retained with the map off */
  gain: number;
}

export interface RetentionResult {
  scenario: RetentionScenario;
  rows: RetentionRow[];
  /** v7 and v8 runs: fallbacks and bypasses (stacks that still went in full) */
  fallbacks: { v7: number; v8: number };
}

export async function retentionExperiment(
  scenario: RetentionScenario,
  run: (o: Partial<SimOptions>) => Promise<RunResult>,
): Promise<RetentionResult> {
  const v7 = (await run({ ...scenario.options, mode: 'v7' })).report;
  const v8 = (await run({ ...scenario.options, mode: 'v8' })).report;
  const cpus = v8.cpus;
  const off = v8.retention;
  const row = (label: string, events: number, bpe: number): RetentionRow => ({
    label,
    events,
    eventsPerCpu: Math.round(events / cpus),
    bytesPerEvent: bpe,
    gain: Math.round((events / off.eventsOff) * 100) / 100,
  });
  return {
    scenario,
    rows: [
      row('stackmap off', off.eventsOff, off.bytesPerEventOff),
      row('stackmap on, v7 (12 B id)', v7.retention.eventsOn, v7.retention.bytesPerEventOn),
      row('stackmap on, v8 (16 B cookie)', v8.retention.eventsOn, v8.retention.bytesPerEventOn),
    ],
    fallbacks: { v7: v7.fallbacks + v7.bypasses, v8: v8.fallbacks + v8.bypasses },
  };
}

export function formatRetention(results: RetentionResult[]): string {
  const out: string[] = [
    '| workload | run | events retained (4 CPUs) | per CPU | bytes/event | gain |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
    `| v8 cover letter | stackmap off | ${LETTER.off.events} (one CPU) | ${LETTER.off.events} | ${LETTER.off.bytesPerEvent} | 1.00 |`,
    `| v8 cover letter | stackmap on (v8) | ${LETTER.on.events} (one CPU) | ${LETTER.on.events} | ${LETTER.on.bytesPerEvent} | ${LETTER.gain} |`,
  ];
  for (const r of results) {
    for (const row of r.rows) {
      out.push(`| ${r.scenario.name} | ${row.label} | ${row.events} | ${row.eventsPerCpu} | ${row.bytesPerEvent} | ${row.gain.toFixed(2)} |`);
    }
  }
  return out.join('\n') + '\n';
}
