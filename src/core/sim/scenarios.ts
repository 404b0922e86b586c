import { BinDumpReader, ESTALE } from './dump-reader.ts';
import { readTextDump } from './dump-reader.ts';
import type { SimOptions } from './sim-options.ts';
import type { RunResult, SimReport } from './sim-report.ts';
import type { Simulation } from './simulation.ts';

/**
 * Guided scenarios (DESIGN 5.3): named presets that show one effect of the stack map's design
 * on every run. Each is a set of options for `Simulation` plus, where the effect needs a reader
 * racing a reset, a script (`during`) that runs on the host thread beside `Simulation.drive`.
 * The effect is made certain by the workload and the race window, not by luck: a new stack
 * population after each reset (v7's stale ids land on other stacks), a race window wider than
 * the time between two CPUs' inserts of one of four hot stacks (duplicates, in-flight fallbacks),
 * more distinct stacks than the pool holds (gravestones), a reset issued between two passes of
 * one read (ESTALE, a spliced text dump), resets issued by the CPUs while tracing (v4 refusals).
 * Node (`cli simulate --scenario`) and the page run the same definitions.
 */

export const SCENARIO_NAMES = [
  'v7-wrong-stack',
  'v8-detects',
  'v7-duplicates',
  'v8-fallback',
  'pool-exhausted',
  'estale',
  'text-splice',
  'v4-refused',
  'nmi-nested',
  'boot-window',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export interface ScenarioEffect {
  what: string;
  value: number;
  expected: string;
  ok: boolean;
}

/**
 * What the host offers a scenario's script. The host holds the CPUs (Simulation.hold) from before
 * they start until the script returns: they keep recording past the scenario's events meanwhile,
 * so a script waiting for records (after a reset it made) gets them on a machine of any speed.
 */
export interface ScenarioHost {
  sleep(ms: number): Promise<void>;
  /** the CPUs have all ended (held, only if one failed or the run was stopped) */
  finished(): boolean;
}

export interface Scenario {
  name: ScenarioName;
  title: string;
  /** what to watch while it runs, in two or three sentences */
  watch: string;
  /** the expected verdict, in words */
  expected: string;
  options: Partial<SimOptions>;
  during?: (sim: Simulation, host: ScenarioHost) => Promise<void>;
  effect(r: ScenarioFacts): ScenarioEffect;
}

/** The report's numbers a verdict is judged on. */
export interface ScenarioFacts {
  report: SimReport;
  /** the most generations found in one text dump */
  textDumpGenerations: number;
}

/** `simulate --scenario NAME --json`: every simulate field plus these. */
export interface ScenarioReport extends SimReport {
  scenario: ScenarioName;
  refused: number;
  textDumpGenerations: number;
  effect: ScenarioEffect;
}

/** The same phased workload for the v7/v8 pair: a new population of stacks after every reset, only the final dump saved. */
const PHASED: Partial<SimOptions> = {
  cpus: 4,
  bits: 14,
  events: 40000,
  resets: 3,
  stacks: 1500,
  zipf: 0.6,
  phaseShift: 1,
  dumps: 'end',
  ringKb: 1024,
  seed: 1,
};

/** Four hot stacks hit by every CPU at once after each reset, each first insert held 2 ms between claim and publish. */
const CONTENDED: Partial<SimOptions> = {
  cpus: 4,
  events: 8000,
  resets: 20,
  stacks: 4,
  zipf: 0,
  raceWindowUs: 2000,
  dumps: 'end',
  seed: 1,
};

/** Many distinct stacks, each new to the map once per generation: many claims for an interrupt to come between claim and publish. */
const CLAIMS: Partial<SimOptions> = {
  cpus: 2,
  bits: 14,
  events: 12000,
  resets: 3,
  stacks: 1500,
  zipf: 0.3,
  phaseShift: 1,
  ringKb: 4096,
  dumps: 'end',
  seed: 1,
};

const atLeast = (what: string, value: number, min: number): ScenarioEffect => ({ what, value, expected: `>= ${min}`, ok: value >= min });

export const SCENARIOS: Record<ScenarioName, Scenario> = {
  'v7-wrong-stack': {
    name: 'v7-wrong-stack',
    title: 'v7: an old id resolves to the wrong stack',
    watch:
      'Four CPUs record a population of stacks; after each of three resets the workload moves to new stacks, as when you reset between test phases. ' +
      'Only the final stack_map is saved. Ids recorded before a reset still sit in the ring buffer, and where a new stack took their slot they resolve to it: plausible, and wrong. ' +
      'The id alone cannot tell; its event often can: a kmem_cache_alloc event names its call_site, a frame of its true stack, and the explorer marks an id contradicted when the stack it resolves to lacks that function.',
    expected: "wrong > 0: the id alone cannot tell, its event's call_site often can",
    options: { ...PHASED, mode: 'v7' },
    effect: ({ report }) => atLeast('ids resolved to another stack (silently wrong)', report.ledger.wrong, 1),
  },
  'v8-detects': {
    name: 'v8-detects',
    title: 'v8: the same run, the cookie detects it',
    watch:
      'The same workload, seed and resets with v8 as posted: each record carries its generation (<stack_id N gen G>), so a cookie from before a reset ' +
      'does not match the final dump. It is reported as unresolvable instead of resolving to a stranger.',
    expected: 'wrong = 0 and detected > 0',
    options: { ...PHASED, mode: 'v8' },
    effect: ({ report }) => ({
      what: `cookies detected as from another generation (wrong: ${report.ledger.wrong})`,
      value: report.ledger.detected,
      expected: 'wrong = 0, detected > 0',
      ok: report.ledger.wrong === 0 && report.ledger.detected > 0,
    }),
  },
  'v7-duplicates': {
    name: 'v7-duplicates',
    title: 'duplicates under contention (v7)',
    watch:
      "Four CPUs hit the same four stacks. After each reset two CPUs can find the same stack's slot empty at once: one wins the cmpxchg and the other, " +
      'losing it to the same stack, advances by one slot and inserts it again (the v7 document). The winner is then held 2 ms before it publishes, ' +
      'and a CPU meeting the unpublished slot waits for it (the v8 letter records such a stack "in full instead of waiting"), so only the cmpxchg\'s loser makes a copy. ' +
      'ref_count is split across the copies.',
    expected: 'duplicates > 0, some after a lost cmpxchg',
    options: { ...CONTENDED, mode: 'v7', bits: 10, claimRaceUs: 500 },
    effect: ({ report }) => ({
      what: `duplicate copies of a stack in one generation (cmpxchg lost to the same stack, then advanced: ${report.lostSameHash})`,
      value: report.duplicates,
      expected: '>= 1, lost cmpxchgs >= 1',
      ok: report.duplicates >= 1 && report.lostSameHash >= 1,
    }),
  },
  'v8-fallback': {
    name: 'v8-fallback',
    title: 'v8 falls back instead of duplicating',
    watch:
      'The same contention with v8 as posted: a CPU that meets the same stack being inserted elsewhere records it in full (a fallback) instead of ' +
      'inserting a second copy, so the map holds each stack once per generation.',
    expected: 'duplicates = 0 and in-flight fallbacks > 0',
    options: { ...CONTENDED, mode: 'v8', bits: 14 },
    effect: ({ report }) => ({
      what: `stacks recorded in full because the same stack was in flight (duplicates: ${report.duplicates})`,
      value: report.fallbackReasons.inFlight,
      expected: 'duplicates = 0, in-flight fallbacks > 0',
      ok: report.duplicates === 0 && report.fallbackReasons.inFlight > 0,
    }),
  },
  'pool-exhausted': {
    name: 'pool-exhausted',
    title: 'pool exhausted: gravestones and probe pressure',
    watch:
      'bits 10: a pool of 1,024 elements, and 3,000 distinct stacks. Once the pool is empty a winning cmpxchg finds no element: the key stays claimed ' +
      'with nothing behind it (a gravestone), the stack is recorded in full (a drop), and later inserts probe past the gravestones.',
    expected: 'gravestones > 0',
    options: { mode: 'v7', cpus: 4, bits: 10, events: 16000, resets: 0, stacks: 3000, zipf: 0, dumps: 'end', seed: 1 },
    effect: ({ report }) =>
      atLeast(`claimed-but-empty slots (drops: ${report.fallbacks}, probes per insert: ${(report.probesPerInsert ?? 0).toFixed(2)})`, report.gravestones, 1),
  },
  estale: {
    name: 'estale',
    title: 'reset during a binary read: ESTALE',
    watch:
      'A reader opens stack_map_bin and reads its first page; then a reset lands before the next read. The next pass fails with ESTALE instead of ' +
      'splicing the new generation into the stream; the reader reopens the file and reads the new map whole.',
    expected: 'ESTALE >= 1',
    options: { mode: 'v7', cpus: 4, bits: 14, events: 20000, resets: 0, stacks: 600, zipf: 0.8, dumps: 'end', seed: 1 },
    during: async (sim, host) => {
      if (!(await waitFor(host, () => sim.map.entries >= 200))) return;
      const r = new BinDumpReader(sim.map, 4096);
      try {
        r.read(); // the header
        r.read(); // the first page of records
        sim.tryReset(); // another writer: echo 0 > stack_map
        for (;;) {
          const c = r.read();
          if (c === ESTALE) {
            sim.noteEstale();
            break;
          }
          if (c === null) break;
        }
      } finally {
        r.close();
      }
      // reopen and read again, as the v7 document says
      if (await waitFor(host, () => sim.map.entries >= 50)) sim.takeBinDump();
    },
    effect: ({ report }) => atLeast('binary reads failed with ESTALE', report.estale, 1),
  },
  'text-splice': {
    name: 'text-splice',
    title: 'text read spans a reset: two generations spliced',
    watch:
      'A reader cats stack_map (v8 as posted has no binary export) 64 records per pass; a reset lands between two passes. The text export has no ' +
      'generation check, so the file holds records of two generations, each printed with its own gen: the explorer reports the splice.',
    expected: 'one text dump holds 2 generations',
    // the CPUs record until the read below is done (the host holds them: ScenarioHost), so the
    // records of the new generation it waits for come however fast the insert path is
    options: { mode: 'v8', cpus: 4, bits: 14, events: 30000, resets: 0, stacks: 600, zipf: 0.5, dumps: 'end', textDump: false, seed: 1 },
    during: async (sim, host) => {
      if (!(await waitFor(host, () => sim.map.entries >= 300))) return;
      const dump = readTextDump(sim.map, 64, (pass, slot) => {
        if (pass !== 1) return;
        sim.tryReset();
        // the rest of the read must meet records of the new generation: wait until one lies past the cursor
        const until = performance.now() + 10_000;
        while (performance.now() < until && !publishedAfter(sim, slot)) {
          /* the CPUs keep recording on other threads */
        }
      });
      sim.addDump(dump);
    },
    effect: (f) => atLeast('generations in one text dump', f.textDumpGenerations, 2),
  },
  'v4-refused': {
    name: 'v4-refused',
    title: 'v4: reset refused while tracing',
    watch:
      'v4 cleared the ring buffer with the map and refused to reset while tracing was on. Each CPU writes 0 > stack_map every 500 events while recording: ' +
      'refused. The host resets twice the v4 way: tracing off, reset (map and ring buffers), tracing on.',
    expected: 'refused > 0, and the two resets with tracing off succeed',
    options: { mode: 'v4', cpus: 4, bits: 10, events: 8000, resets: 2, stacks: 300, cpuResetEvery: 500, dumps: 'before-reset', seed: 1 },
    effect: ({ report }) => ({
      what: `resets refused while tracing (done with tracing off: ${report.resets.done})`,
      value: report.resets.refused,
      expected: '>= 1, and 2 resets done',
      ok: report.resets.refused >= 1 && report.resets.done === 2,
    }),
  },
  'nmi-nested': {
    name: 'nmi-nested',
    title: 'an NMI inside an insert, on the same CPU (v8)',
    watch:
      "Each CPU takes IRQs and NMIs (5% each at every point between an insert's claim and its publish) that record an event and run the same insert " +
      "path nested inside the CPU's own insert; half of them take the interrupted stack. v8 finds that stack's slot claimed and unpublished by its " +
      'own CPU and records it in full instead of spinning (the cover letter), so nothing waits on itself; v7 waits for the publish, which cannot come while ' +
      "the interrupt runs, until its wait's bound (tracing_map's, the seeds give none), then records it in full too.",
    expected: 'nested same-stack inserts recorded in full > 0, duplicates = 0, every event recorded',
    options: { ...CLAIMS, mode: 'v8', irqRate: 0.05, nmiRate: 0.05 },
    effect: ({ report }) => ({
      what: `nested inserts that met their own CPU's unpublished slot of the same stack and recorded it in full (nested inserts: ${report.interrupts.inserts}, duplicates: ${report.duplicates})`,
      value: report.interrupts.sameStackInFlight,
      expected: '> 0, duplicates = 0',
      ok: report.interrupts.sameStackInFlight > 0 && report.duplicates === 0 && report.events === 12000 + report.interrupts.events,
    }),
  },
  'boot-window': {
    name: 'boot-window',
    title: 'the boot window: full stacks until the map is published',
    watch:
      'With trace_options=stackmap on the command line, tracing starts before the map is published: the first 1,000 events of each CPU record their ' +
      'stacks in full through the regular path, whose ring reservation can fail (1% here: the stack is lost, counted). Then the map is published and ' +
      'deduplication starts (the v7 document, boot-time activation).',
    expected: 'boot stacks in full > 0, then ids from the map; reservation failures counted',
    options: {
      mode: 'v8',
      cpus: 4,
      bits: 14,
      events: 20000,
      resets: 0,
      stacks: 500,
      zipf: 1.1,
      bootEvents: 4000,
      reserveFailShare: 0.01,
      dumps: 'end',
      seed: 1,
    },
    effect: ({ report }) => ({
      what: `stacks recorded in full before the map was published (then ${report.successes} from the map; ${report.reserveFails} reservations failed)`,
      value: report.bootStacks,
      expected: '> 0, then successes > 0, reservation failures > 0',
      ok: report.bootStacks > 0 && report.successes > 0 && report.reserveFails > 0,
    }),
  },
};

export function isScenarioName(s: string): s is ScenarioName {
  return (SCENARIO_NAMES as readonly string[]).includes(s);
}

/** The scenario's verdict and the report's extra fields, from a finished run. */
export function scenarioReport(sc: Scenario, run: RunResult): ScenarioReport {
  const textDumpGenerations = Math.max(0, ...run.dumps.filter((d) => d.format === 'text').map((d) => d.generationsSeen.length));
  return {
    ...run.report,
    scenario: sc.name,
    refused: run.report.resets.refused,
    textDumpGenerations,
    effect: sc.effect({ report: run.report, textDumpGenerations }),
  };
}

async function waitFor(host: ScenarioHost, cond: () => boolean): Promise<boolean> {
  while (!cond()) {
    if (host.finished()) return false;
    await host.sleep(1);
  }
  return true;
}

function publishedAfter(sim: Simulation, slot: number): boolean {
  for (let s = sim.map.slots - 1; s >= slot; s--) if (sim.map.published(s) >= 0) return true;
  return false;
}
