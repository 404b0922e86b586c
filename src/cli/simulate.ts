import { escapeControls as esc, escapeLines, jsonForTerminal } from '../core/base/control-chars.ts';
import { prepareOutDir } from './out-dir.ts';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { exportCapture, type TraceFormat } from '../core/sim/export.ts';
import { maxCpus, runNode } from '../core/sim/run-node.ts';
import { isScenarioName, SCENARIO_NAMES, SCENARIOS, scenarioReport, type ScenarioName } from '../core/sim/scenarios.ts';
import { checkOptions, DEFAULT_OPTIONS, LIMITS, type OptionNames, type SimOptions } from '../core/sim/sim-options.ts';
import type { SimReport } from '../core/sim/sim-report.ts';
import { sideBySide, wrongIds, type WrongId } from '../core/sim/wrong-ids.ts';
import { parseOptions, UsageError } from './usage.ts';

const n = (x: number) => x.toLocaleString('en');

const USAGE = `usage: stackmap-explorer simulate --mode v4|v7|v8 --out DIR [options] [--json]
       stackmap-explorer simulate --scenario NAME --out DIR [--format text|trace-dat] [--json]

  Runs the stack map's insert and reset paths for real on a SharedArrayBuffer, one
  worker_threads worker per simulated CPU, and writes the capture (trace or trace.dat,
  stack_map_bin.*, stack_map, stack_map_stat, kallsyms) to DIR.

  --scenario NAME          a guided scenario, one of:
                           ${SCENARIO_NAMES.join(', ')}
                           (its options are fixed; the report adds scenario, gravestones,
                           refused, textDumpGenerations and effect {what, value, expected, ok})
  --mode v4|v7|v8          map ABI (default ${DEFAULT_OPTIONS.mode}); v8 as posted: capacity
                           16,384 (bits 14) and only the text stack_map
  --v8-bin                 v8 with the proposed follow-up: stack_map_bin v2 and --bits
  --cpus N                 simulated CPUs, 1..max(cores, 4) (default ${DEFAULT_OPTIONS.cpus})
  --bits B                 map size 2^B elements, 10..18 (default ${DEFAULT_OPTIONS.bits})
  --events N               events in all, split over the CPUs, CPUs..${n(LIMITS.events)}
                           (default ${n(DEFAULT_OPTIONS.events)})
  --resets N               resets, evenly spaced, 0..${n(LIMITS.resets)} (default ${DEFAULT_OPTIONS.resets})
  --race-window-us N       hold every insert between claim and publish, and every reset
                           between its steps, N microseconds, 0..${n(LIMITS.raceWindowUs)} (default 0)
  --seed S                 (default ${DEFAULT_OPTIONS.seed})
  --stacks N               distinct stacks in the workload, 1..1,000,000 (default ${DEFAULT_OPTIONS.stacks})
  --zipf S                 skew of the stacks' popularity, 0 = uniform (default ${DEFAULT_OPTIONS.zipf})
  --depth MIN-MAX          stack depths, 1-80; deeper than 64 bypasses the map
                           (default ${DEFAULT_OPTIONS.depthMin}-${DEFAULT_OPTIONS.depthMax})
  --phase-shift F          after each reset move the workload by F of its stacks, 0..1:
                           0 stationary, 1 a new population (default ${DEFAULT_OPTIONS.phaseShift})
  --rcu-off-share F        v8: share of stacks taken while RCU is not watching, which v8
                           discards (default ${DEFAULT_OPTIONS.rcuOffShare})
  --irq-rate F, --nmi-rate F   at each point between an insert's claim and publish, the
                           chance an IRQ / an NMI runs the insert path nested on that CPU,
                           0..0.5 (default 0)
  --boot-events N          events recorded before the map is published (the boot window):
                           stacks in full (default 0)
  --reserve-fail-share F   share of stack records whose ring reservation fails, 0..0.5:
                           lost, counted, the map not asked (default 0)
  --ring-kb N              ring buffer per CPU, 1..${n(LIMITS.ringKb)} (default ${DEFAULT_OPTIONS.ringKb})
  --ring-model seed|kernel record sizes as the seeds count them, or with the ring buffer's
                           event headers and page-granular overwrite (default ${DEFAULT_OPTIONS.ringModel})
  --event-bytes N          size of an event record, 16..4096, a multiple of 4 (default ${DEFAULT_OPTIONS.eventBytes})
  --dumps before-reset|end|none   which stack_map_bin dumps to take (default ${DEFAULT_OPTIONS.dumps})
  --cpu-resets-every N     each CPU also resets the map every N of its events (default 0)
  --format text|trace-dat  the trace as ftrace's text, \`trace\` (the default), or as
                           trace-cmd's binary, \`trace.dat\` (version 7): the stack map's
                           stack_id entries (v4/v7 4-byte ids, v8 u64 cookies gen << 32 | slot)
                           and kernel_stack records for full stacks, described by their format
                           files, as \`trace-cmd record\` saves them; the dumps beside it as usual
  --json                   print the report as one JSON object

  limits, so that a run ends within minutes and about 1 GB (measured on 2 cores):
    --stacks x the deepest --depth (every phase's stacks with --phase-shift): at most
      ${n(LIMITS.populationFrames)} frames (100,000 stacks of 80 frames take ~0.8 GB)
    --ring-kb x --cpus: at most ${n(LIMITS.ringKbAll)} KiB (a filled ring takes ~40x its size)
    (--resets + 1) x the entries a generation holds (its stacks, 2^bits, its events)
      x the deepest --depth: at most ${n(LIMITS.generationFrames)} frames (each generation is copied and dumped)
    the race window's waits (a generation's first inserts, 3 a reset): at most ${LIMITS.raceWindowSeconds} s

exit status: 0 on success, 1 when the run failed, 2 on a usage error`;

/** The options by their flags, for the limits' messages. */
const FLAGS: OptionNames = {
  cpus: '--cpus',
  bits: '--bits',
  events: '--events',
  resets: '--resets',
  stacks: '--stacks',
  depth: '--depth',
  ringKb: '--ring-kb',
  eventBytes: '--event-bytes',
  raceWindowUs: '--race-window-us',
  phaseShift: '--phase-shift',
  cpuResetEvery: '--cpu-resets-every',
};

export function parseSimulateArgs(args: string[]): {
  options: Partial<SimOptions>;
  out: string;
  json: boolean;
  scenario: ScenarioName | null;
  format: TraceFormat;
} {
  const o: Partial<SimOptions> = {};
  let out: string | null = null;
  let json = false;
  let format: TraceFormat = 'text';
  let scenario: ScenarioName | null = null;
  const num = (flag: string, v: string | undefined, integer = true): number => {
    if (v === undefined) throw new UsageError(`${flag} needs a value`);
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)))
      throw new UsageError(`${flag}: not a${integer ? 'n integer' : ' number'}: ${v}`);
    return n;
  };
  const string = { type: 'string' } as const;
  const parsed = parseOptions(args, {
    ...Object.fromEntries(
      [
        'scenario',
        'phase-shift',
        'rcu-off-share',
        'irq-rate',
        'nmi-rate',
        'boot-events',
        'reserve-fail-share',
        'mode',
        'cpus',
        'bits',
        'events',
        'resets',
        'race-window-us',
        'seed',
        'stacks',
        'zipf',
        'depth',
        'ring-kb',
        'ring-model',
        'event-bytes',
        'dumps',
        'cpu-resets-every',
        'out',
        'format',
      ].map((n) => [n, string]),
    ),
    'v8-bin': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (parsed.positionals.length > 0) throw new UsageError(`simulate takes no file arguments: ${parsed.positionals[0]}`);
  for (const { flag: a, value } of parsed.given) {
    const v = () => value;
    switch (a) {
      case '--scenario': {
        const n = v() ?? '';
        if (!isScenarioName(n)) throw new UsageError(`--scenario must be one of ${SCENARIO_NAMES.join(', ')}`);
        scenario = n;
        break;
      }
      case '--v8-bin':
        o.v8Variant = 'bin';
        break;
      case '--phase-shift':
        o.phaseShift = num(a, v(), false);
        break;
      case '--rcu-off-share':
        o.rcuOffShare = num(a, v(), false);
        break;
      case '--irq-rate':
        o.irqRate = num(a, v(), false);
        break;
      case '--nmi-rate':
        o.nmiRate = num(a, v(), false);
        break;
      case '--boot-events':
        o.bootEvents = num(a, v());
        break;
      case '--reserve-fail-share':
        o.reserveFailShare = num(a, v(), false);
        break;
      case '--mode': {
        const m = v();
        if (m !== 'v4' && m !== 'v7' && m !== 'v8') throw new UsageError(`--mode must be v4, v7 or v8`);
        o.mode = m;
        break;
      }
      case '--cpus':
        o.cpus = num(a, v());
        if (o.cpus < 1 || o.cpus > maxCpus()) throw new UsageError(`--cpus must be 1..${maxCpus()}`);
        break;
      case '--bits':
        o.bits = num(a, v());
        break;
      case '--events':
        o.events = num(a, v());
        break;
      case '--resets':
        o.resets = num(a, v());
        break;
      case '--race-window-us':
        o.raceWindowUs = num(a, v(), false);
        break;
      case '--seed':
        o.seed = num(a, v());
        break;
      case '--stacks':
        o.stacks = num(a, v());
        break;
      case '--zipf':
        o.zipf = num(a, v(), false);
        break;
      case '--depth': {
        const m = /^(\d+)-(\d+)$/.exec(v() ?? '');
        if (!m) throw new UsageError('--depth MIN-MAX, e.g. 8-20');
        o.depthMin = Number(m[1]);
        o.depthMax = Number(m[2]);
        if (o.depthMin < 1 || o.depthMax > 80 || o.depthMin > o.depthMax) throw new UsageError('--depth must lie within 1-80');
        break;
      }
      case '--ring-kb':
        o.ringKb = num(a, v());
        break;
      case '--ring-model': {
        const m = v();
        if (m !== 'seed' && m !== 'kernel') throw new UsageError('--ring-model must be seed or kernel');
        o.ringModel = m;
        break;
      }
      case '--event-bytes':
        o.eventBytes = num(a, v());
        break;
      case '--dumps': {
        const d = v();
        if (d !== 'before-reset' && d !== 'end' && d !== 'none') throw new UsageError('--dumps must be before-reset, end or none');
        o.dumps = d;
        break;
      }
      case '--cpu-resets-every':
        o.cpuResetEvery = num(a, v());
        break;
      case '--out':
        out = v() ?? null;
        if (!out) throw new UsageError('--out needs a directory');
        break;
      case '--json':
        json = true;
        break;
      case '--format': {
        const f = v();
        if (f !== 'text' && f !== 'trace-dat') throw new UsageError('--format must be text or trace-dat');
        format = f;
        break;
      }
      default:
        throw new UsageError(`unknown option: ${a}`);
    }
  }
  if (!out) throw new UsageError('--out DIR is required');
  if (scenario && Object.keys(o).length > 0) throw new UsageError(`--scenario fixes the options; drop ${Object.keys(o).join(', ')}`);
  const options = scenario ? SCENARIOS[scenario].options : o;
  try {
    checkOptions({ ...DEFAULT_OPTIONS, ...options }, FLAGS);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return { options, out, json, scenario, format };
}

/** `simulate ...`: runs the simulator headless, writes the capture, prints the report; returns the exit status. */
export async function simulate(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  let parsed;
  try {
    parsed = parseSimulateArgs(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${escapeLines(e.message)}\n${USAGE}\n`);
    return 2;
  }
  const dir = resolve(parsed.out);
  // before the run, so an unwritable folder fails at once
  const unwritable = prepareOutDir(dir);
  if (unwritable) {
    process.stderr.write(escapeLines(unwritable) + '\n');
    return 1;
  }
  try {
    const sc = parsed.scenario ? SCENARIOS[parsed.scenario] : null;
    const run = await runNode(parsed.options, sc?.during ? { during: sc.during } : {});
    const files = exportCapture(run, parsed.format);
    for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
    const verdict = sc ? scenarioReport(sc, run) : null;
    const wrong = wrongIds(run, WRONG_IDS);
    const report = { ...(verdict ?? run.report), out: dir, files: [...files.keys()], wrongIds: wrong };
    if (parsed.json) process.stdout.write(jsonForTerminal(report, 2) + '\n');
    else {
      const r = run.report;
      const l = r.ledger;
      process.stdout.write(
        [
          `${r.mode}: ${r.cpus} CPUs, ${r.events} events, bits ${r.bits}, ${r.generations} generations (${r.resets.ebusy} EBUSY, ${r.resets.refused} refused, ${r.estale} ESTALE)`,
          eventsLine(r),
          `map: ${r.attempts} attempts = ${r.successes} successes + ${r.fallbacks} fallbacks + ${r.bypasses} bypasses; entries ${r.entries}/${r.capacity}, ${r.duplicates} duplicates, ${r.gravestones} gravestones`,
          `ledger: ${l.ids} ids/cookies: ${l.correct} correct, ${l.wrong} wrong, ${l.detected} detected, ${l.unresolved} unresolved; ${l.full} full stacks`,
          retentionLine(r),
          `ns/insert per worker: ${r.workers.map((w) => w.nsPerInsert).join(', ')} (the kernel's algorithm in JavaScript, its hits in WebAssembly; the kernel's own insert is about 50 ns, v7 document)`,
          `wrote ${files.size} files to ${esc(dir)}`,
          ...(verdict
            ? [
                `scenario ${verdict.scenario}: ${verdict.effect.what}: ${verdict.effect.value} (expected ${verdict.effect.expected}) ${verdict.effect.ok ? 'seen' : 'NOT SEEN'}`,
              ]
            : []),
          ...wrongLines(wrong, l.wrong),
        ].join('\n') + '\n',
      );
    }
    return 0;
  } catch (e) {
    process.stderr.write(`simulation failed: ${escapeLines(String((e as Error).stack))}\n`);
    return 1;
  }
}

/** How many wrong ids `--json` lists (the first in trace order), and how many the text shows side by side. */
const WRONG_IDS = 50;
const WRONG_SHOWN = 3;

/** The first wrong ids' two stacks side by side: what the dumps resolve the id to, and what it was written for. */
function wrongLines(wrong: readonly WrongId[], total: number): string[] {
  if (wrong.length === 0) return [];
  const shown = wrong.slice(0, WRONG_SHOWN);
  const out = [`wrong ids: ${total}; the first ${shown.length}, resolved | true stack, leaf first, * where they differ (--json lists the first ${WRONG_IDS}):`];
  for (const w of shown) {
    out.push(`id ${w.id} on CPU ${w.cpu} at ${w.ts.toFixed(6)}, written in generation ${w.generation}:`);
    out.push(...sideBySide(w, esc));
  }
  return out;
}

/** Where every event's stack went, adding up to the events: the map's attempts and what never reached it. */
function eventsLine(r: SimReport): string {
  const off = r.events - r.attempts - r.deepStacks - r.rcuDiscards - r.reserveFails - r.bootStacks;
  const parts = [
    `${r.attempts} map attempts`,
    `${r.deepStacks} deeper than 64 frames (in full, not counted by the map)`,
    `${r.rcuDiscards} discarded (RCU not watching)`,
  ];
  if (r.bootStacks > 0) parts.push(`${r.bootStacks} before the map was published (in full)`);
  if (r.reserveFails > 0) parts.push(`${r.reserveFails} lost to a failed ring reservation`);
  if (off !== 0) parts.push(`${off} with options/stackmap off (in full, not counted)`);
  const nested =
    r.interrupts.events > 0
      ? ` (${r.interrupts.events} of the events are interrupts nested in inserts; ${r.interrupts.sameStackInFlight} of their inserts met the same stack unpublished on their own CPU)`
      : '';
  return `events: ${r.events} = ${parts.join(' + ')}${nested}`;
}

/** Events a full ring keeps without and with the map, saying when a ring never filled (then the gain is only a lower bound). */
function retentionLine(r: SimReport): string {
  const t = r.retention;
  const base = `retention: off ${t.eventsOff} events (${t.bytesPerEventOff} B/event), on ${t.eventsOn} (${t.bytesPerEventOn} B/event), ${t.gain}x`;
  if (t.eventsOn >= r.events && t.eventsOff >= r.events)
    return `${base}; neither ring filled (${r.events} events), so this says nothing of retention: run more --events or a smaller --ring-kb`;
  if (t.eventsOn >= r.events) return `${base}; the rings with the map never wrapped (all ${r.events} events kept), so the gain is at least this`;
  return base;
}
