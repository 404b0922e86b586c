import { kernelPages, kernelRecordBytes, RB, RECORD_SIZE, type RingModel } from './ring.ts';
import type { SimOptions } from './sim-options.ts';
import type { RunResult } from './sim-report.ts';

/**
 * The retention experiment of the v8 cover letter, on the simulator: an allocation workload with
 * a stack after every event, the same events with the map off, with v7 (12 B id) and with v8
 * (16 B cookie), in a 512 KB per-CPU buffer, under both ring models (ring.ts: 'seed', the
 * letter's data sizes only; 'kernel', the ring buffer's event headers and page overwrite).
 *
 * "Off" is the same event sequence written to a ring of the same size and model with every stack
 * in full (each CPU keeps that accounting ring beside its real one), so off, v7 and v8 see exactly
 * the same events. Bytes/event is the ring data kept divided by the events kept, as the letter
 * defines it (Ring.bytesIn: data, no ring-buffer headers, in both models).
 *
 * What is taken from the seeds and what is assumed or fitted is listed per scenario (`sizes`);
 * a scenario whose sizes were chosen to hit the letter's numbers is `fitted` and every one of its
 * rows says "fitted, not a reproduction".
 */

/** The v8 cover letter's table (QEMU arm64, 4 CPUs, buffer_size_kb=512, kmem_cache_alloc with options/stacktrace). */
export const LETTER = {
  off: { events: 4867, bytesPerEvent: 107.4 },
  on: { events: 10552, bytesPerEvent: 49.8 },
  gain: 2.17,
} as const;

/** The cookie ABI mail: the v7 letter's workload, its record sizes, and the gain it expected for v8 (from arithmetic, "I will re-measure"). */
export const MAIL = {
  frames: 20,
  full: 172,
  id: 12,
  cookie: 16,
  v7Gain: 2.17,
  v8Gain: 2.0,
} as const;

export type SizeSource = 'seed' | 'assumed' | 'fitted';

export interface SizeNote {
  what: string;
  value: string;
  source: SizeSource;
  where: string;
}

export interface RetentionScenario {
  name: string;
  /** 'fitted': sizes chosen to hit the letter's numbers, not a reproduction */
  kind: 'letter-shaped' | 'fitted';
  note: string;
  sizes: SizeNote[];
  options: Partial<SimOptions>;
}

const LETTER_SHAPE: Partial<SimOptions> = {
  // one CPU doing the work (see the sizes); the map is shared, the buffers are per CPU, so the
  // three idle CPUs of the letter's machine change nothing here
  cpus: 1,
  ringKb: 512,
  // v8 as posted: 16,384 stacks
  bits: 14,
  // the letter's 100 rounds of 500 open()/close(), one allocation each
  events: 50_000,
  resets: 0,
  stacks: 64,
  zipf: 1.0,
  dumps: 'end',
  textDump: false,
  seed: 8,
};

const SEED_SIZES: SizeNote[] = [
  { what: 'ring buffer per CPU', value: '512 KB', source: 'seed', where: 'v8 cover letter: buffer_size_kb=512 per CPU' },
  { what: 'CPUs', value: '4', source: 'seed', where: 'v8 cover letter: QEMU arm64, 4 CPUs' },
  {
    what: 'CPUs recording',
    value: '1 (a 1-CPU run)',
    source: 'assumed',
    where:
      'the letter does not say; inferred from 4,867 x 107.4 B and 10,552 x 49.8 B each being about one 512 KB buffer. The buffers are per CPU, so idle CPUs change nothing',
  },
  { what: 'v7 id record', value: '12 B', source: 'seed', where: 'cookie ABI mail: trace_entry + 4' },
  { what: 'v8 cookie record', value: '16 B', source: 'seed', where: 'cookie ABI mail: trace_entry + 8' },
  { what: 'map capacity', value: '16,384 stacks', source: 'seed', where: 'v8 cover letter' },
  {
    what: 'events written',
    value: '50,000',
    source: 'assumed',
    where: "the letter's 100 x 500 open()/close(), taken as one kmem_cache_alloc each; any count that wraps the buffer gives the same retention",
  },
  {
    what: 'distinct stacks, popularity',
    value: '64, Zipf 1.0',
    source: 'assumed',
    where: 'the letter does not give them; with every stack stored once in the map, "on" does not depend on them',
  },
];

const EVENT_56: SizeNote = {
  what: 'event record',
  value: '56 B',
  source: 'assumed',
  where:
    'the letter gives no size: kmem_cache_alloc on a 64-bit 6.x kernel, trace_entry 8 + call_site 8 + ptr 8 + bytes_req 8 + bytes_alloc 8 + gfp_flags 8 + node 4 + accounted 1, padded to 8',
};

export const RETENTION_SCENARIOS: RetentionScenario[] = [
  {
    name: "the v7 document's stacks: 56 B events, stacks of 80-160 B (9-18 frames)",
    kind: 'letter-shaped',
    note: 'The stack sizes the v7 document gives ("full kernel stack traces (typically 80-160 bytes each)"): depths spread uniformly over 9..18 frames (12 + 8 x depth = 84..156 B) across the distinct stacks',
    sizes: [
      ...SEED_SIZES,
      EVENT_56,
      {
        what: 'full stack record',
        value: '12 + 8 x depth, 84..156 B',
        source: 'seed',
        where: 'v7 document, Overview: "full kernel stack traces (typically 80-160 bytes each)"; 12 + 8 x depth as the cookie ABI mail counts a record',
      },
      {
        what: 'depth distribution',
        value: 'uniform 9..18 per distinct stack',
        source: 'assumed',
        where: 'the document gives the range, not how stacks spread in it',
      },
    ],
    options: { ...LETTER_SHAPE, eventBytes: 56, depthMin: 9, depthMax: 18 },
  },
  {
    name: 'letter-shaped: 56 B events, 20-frame stacks (172 B)',
    kind: 'letter-shaped',
    note: 'Every stack 20 frames deep: the 172 B full record the cookie ABI mail counts',
    sizes: [
      ...SEED_SIZES,
      EVENT_56,
      {
        what: 'full stack record',
        value: '172 B (20 frames)',
        source: 'seed',
        where: 'cookie ABI mail: "full stack, ~20 frames trace_entry + size + 8*20 = 172 B"',
      },
      { what: 'depth distribution', value: 'every stack exactly 20 frames', source: 'assumed', where: 'the mail says ~20 frames, not how they spread' },
    ],
    options: { ...LETTER_SHAPE, eventBytes: 56, depthMin: 20, depthMax: 20 },
  },
  {
    name: 'letter-shaped: 56 B events, stacks of 14-26 frames',
    kind: 'letter-shaped',
    note: 'Stack depths spread uniformly over 14..26 frames across the distinct stacks (mean 20 over stacks; the mean over events follows the Zipf popularity)',
    sizes: [
      ...SEED_SIZES,
      EVENT_56,
      { what: 'full stack record', value: '12 + 8 x depth, 124..220 B', source: 'assumed', where: "spread around the seed's 20 frames (172 B)" },
      { what: 'depth distribution', value: 'uniform 14..26 per distinct stack', source: 'assumed', where: 'the mail says ~20 frames, not how they spread' },
    ],
    options: { ...LETTER_SHAPE, eventBytes: 56, depthMin: 14, depthMax: 26 },
  },
  {
    name: 'fitted to the letter: 32 B events, 8-frame stacks (76 B)',
    kind: 'fitted',
    note: "Sizes chosen to land near the letter's numbers: 32 + 12 + 8 x 8 = 108 B/event off (letter 107.4), 32 + 16 = 48 B/event on (letter 49.8); neither size is a kmem_cache_alloc record or a 20-frame stack",
    sizes: [
      ...SEED_SIZES,
      { what: 'event record', value: '32 B', source: 'fitted', where: "the letter's 49.8 B/event on, less a 16 B cookie, leaves 33.8 B (a multiple of 4: 32)" },
      {
        what: 'full stack record',
        value: '76 B (8 frames)',
        source: 'fitted',
        where: "the letter's 107.4 B/event off, less 32 B, leaves 75.4 B: 12 + 8 x 7.9 (8 frames: 76 B)",
      },
      { what: 'depth distribution', value: 'every stack exactly 8 frames', source: 'fitted', where: 'as above' },
    ],
    options: { ...LETTER_SHAPE, eventBytes: 32, depthMin: 8, depthMax: 8 },
  },
];

export const RING_MODELS: readonly RingModel[] = ['seed', 'kernel'];

export interface RetentionRow {
  label: string;
  ringModel: RingModel;
  run: 'off' | 'v7' | 'v8';
  events: number;
  bytesPerEvent: number;
  /** events retained / events retained with the map off */
  gain: number;
}

export interface RetentionModelResult {
  ringModel: RingModel;
  rows: RetentionRow[];
  /** v8 gain / v7 gain on the same events */
  v8OverV7: number;
  /** stacks the map did not take (fallbacks, bypasses, deep stacks), so recorded in full with the map on */
  fullWithMap: { v7: number; v8: number };
  /** events retained with the map off in the v7 and the v8 run (the same events: they must agree) */
  offAgree: boolean;
}

export interface RetentionResult {
  scenario: RetentionScenario;
  models: RetentionModelResult[];
  /** what the sizes give by arithmetic, for scenarios with one stack depth */
  arithmetic: Record<RingModel, { off: string; v7: string; v8: string }> | null;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export async function retentionExperiment(
  scenario: RetentionScenario,
  run: (o: Partial<SimOptions>) => Promise<RunResult>,
  models: readonly RingModel[] = RING_MODELS,
): Promise<RetentionResult> {
  const out: RetentionModelResult[] = [];
  for (const ringModel of models) {
    const v7 = (await run({ ...scenario.options, ringModel, mode: 'v7' })).report;
    const v8 = (await run({ ...scenario.options, ringModel, mode: 'v8' })).report;
    const off = v8.retention;
    const row = (run: RetentionRow['run'], label: string, events: number, bpe: number): RetentionRow => ({
      label,
      ringModel,
      run,
      events,
      bytesPerEvent: bpe,
      gain: round2(events / off.eventsOff),
    });
    const full = (r: typeof v7) => r.fallbacks + r.bypasses + r.deepStacks;
    out.push({
      ringModel,
      rows: [
        row('off', 'stackmap off', off.eventsOff, off.bytesPerEventOff),
        row('v7', 'stackmap on, v7 (12 B id)', v7.retention.eventsOn, v7.retention.bytesPerEventOn),
        row('v8', 'stackmap on, v8 (16 B cookie)', v8.retention.eventsOn, v8.retention.bytesPerEventOn),
      ],
      v8OverV7: Math.round((v8.retention.eventsOn / v7.retention.eventsOn) * 1000) / 1000,
      fullWithMap: { v7: full(v7), v8: full(v8) },
      offAgree: v7.retention.eventsOff === v8.retention.eventsOff,
    });
  }
  const o = scenario.options;
  const fixedDepth = o.depthMin !== undefined && o.depthMin === o.depthMax ? o.depthMin : null;
  return {
    scenario,
    models: out,
    arithmetic: fixedDepth !== null ? retentionArithmetic((o.ringKb ?? 512) * 1024, o.eventBytes ?? 56, RECORD_SIZE.full(fixedDepth)) : null,
  };
}

/**
 * The events one CPU's full buffer keeps, from the sizes alone (one stack size): 'seed', the
 * buffer over (event + stack); 'kernel', whole pages of (event + header) + (stack + header) pairs,
 * between pages - 1 and pages of them (the tail page is partly filled).
 */
export function retentionArithmetic(ringBytes: number, eventBytes: number, fullBytes: number): Record<RingModel, { off: string; v7: string; v8: string }> {
  const seed = (stack: number) => `${ringBytes.toLocaleString('en-US')} / ${eventBytes + stack} = ${(ringBytes / (eventBytes + stack)).toFixed(1)}`;
  const pages = kernelPages(ringBytes);
  const kernel = (stack: number) => {
    const pair = kernelRecordBytes(eventBytes) + kernelRecordBytes(stack);
    const perPage = Math.floor(RB.PAGE_DATA / pair);
    // an event that still fits after the last whole pair (its stack going to the next page) makes the pattern irregular
    const rest = RB.PAGE_DATA - perPage * pair;
    const exact = rest < kernelRecordBytes(eventBytes);
    return exact
      ? `${perPage}/page (4080 / ${pair}), x ${pages - 1}..${pages} pages = ${((pages - 1) * perPage).toLocaleString('en-US')}..${(pages * perPage).toLocaleString('en-US')}`
      : `about ${(RB.PAGE_DATA / pair).toFixed(1)}/page x ${pages - 1}..${pages} pages`;
  };
  return {
    seed: { off: seed(fullBytes), v7: seed(RECORD_SIZE.id), v8: seed(RECORD_SIZE.cookie) },
    kernel: { off: kernel(fullBytes), v7: kernel(RECORD_SIZE.id), v8: kernel(RECORD_SIZE.cookie) },
  };
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** The markdown of RETENTION.md's tables (the bench adds its header and notes). */
export function formatRetention(results: RetentionResult[]): string {
  const out: string[] = [];
  out.push('## Results', '');
  out.push('| workload | ring model | run | events retained (one CPU) | bytes/event | gain vs off | v8 / v7 |');
  out.push('| --- | --- | --- | ---: | ---: | ---: | ---: |');
  out.push(`| **v8 cover letter** (measured, QEMU arm64) | a real kernel | stackmap off | ${fmt(LETTER.off.events)} | ${LETTER.off.bytesPerEvent} | 1.00 | |`);
  out.push(
    `| **v8 cover letter** (measured, QEMU arm64) | a real kernel | stackmap on, v8 as posted | ${fmt(LETTER.on.events)} | ${LETTER.on.bytesPerEvent} | ${LETTER.gain} | |`,
  );
  out.push(`| **cookie ABI mail** (the v7 letter's workload) | a real kernel | stackmap on, v7 (12 B id), measured | | | ${MAIL.v7Gain} | |`);
  out.push(
    `| **cookie ABI mail** (the v7 letter's workload) | arithmetic | stackmap on, v8 (16 B cookie), expected | | | ~${MAIL.v8Gain.toFixed(1)} | ~${round2(MAIL.v8Gain / MAIL.v7Gain)} |`,
  );
  for (const r of results) {
    const fitted = r.scenario.kind === 'fitted';
    const name = fitted ? `${r.scenario.name} (**fitted, not a reproduction**)` : r.scenario.name;
    for (const m of r.models) {
      for (const row of m.rows) {
        const ratio = row.run === 'v8' ? m.v8OverV7.toFixed(3) : '';
        out.push(`| ${name} | ${row.ringModel} | ${row.label} | ${fmt(row.events)} | ${row.bytesPerEvent} | ${row.gain.toFixed(2)} | ${ratio} |`);
      }
    }
  }
  out.push('');
  out.push('## Sizes: from the seeds, assumed, or fitted', '');
  for (const r of results) {
    out.push(`### ${r.scenario.name}${r.scenario.kind === 'fitted' ? ' (fitted, not a reproduction)' : ''}`, '');
    out.push(r.scenario.note + '.', '');
    out.push('| size | value | source | where from |', '| --- | --- | --- | --- |');
    for (const s of r.scenario.sizes) out.push(`| ${s.what} | ${s.value} | ${s.source === 'fitted' ? '**fitted**' : s.source} | ${s.where} |`);
    out.push('');
    if (r.arithmetic) {
      out.push("By arithmetic from these sizes (one CPU's full buffer):", '');
      for (const m of RING_MODELS) {
        const a = r.arithmetic[m];
        out.push(`- ${m}: off ${a.off}; v7 ${a.v7}; v8 ${a.v8}`);
      }
      out.push('');
    }
    for (const m of r.models) {
      const warn = m.offAgree ? '' : ' (the v7 and v8 runs saw different "off" counts: the event sequences differ)';
      out.push(`- ${m.ringModel} ring: stacks the map did not take (recorded in full with the map on): v7 ${m.fullWithMap.v7}, v8 ${m.fullWithMap.v8}${warn}`);
    }
    out.push('');
  }
  return out.join('\n') + '\n';
}
