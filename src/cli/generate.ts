import { escapeControls, escapeLines, jsonForTerminal } from '../core/base/control-chars.ts';
import { prepareOutDir } from './out-dir.ts';
import { resolve } from 'node:path';
import { MAX_STACKS, UsageError, writeCapture, type GenerateOptions, type GenerateReport } from './generate-capture.ts';
import { MAX_DEPTH } from './generate-stacks.ts';
import { parseOptions } from './usage.ts';
import { binVersionNote } from '../core/formats/seed-notes.ts';

/**
 * `generate`: a synthetic capture for benchmarks (DESIGN 5.3), of any size up to ~1 GB: its
 * arguments, usage text and the command. The capture itself (kernel, stacks, slots, the streamed
 * writers) is built and written by generate-capture.ts.
 */

export const DEFAULT_GENERATE: Omit<GenerateOptions, 'out'> = {
  events: null,
  mb: null,
  mode: 'v8',
  stacks: 4096,
  depthMin: 4,
  depthMax: 32,
  fullStacks: false,
  seed: 1,
  cpus: 4,
  symbols: 16_384,
  zipf: 1,
  frames: 'callgraph',
  everyStack: false,
  textDump: false,
  json: false,
};
const DEFAULT_EVENTS = 100_000;

const USAGE = `usage: stackmap-explorer generate --out DIR [--events N | --mb N] [--mode v7|v8] [--stacks N]
                                  [--depth MIN-MAX] [--full-stacks] [--frames callgraph|random]
                                  [--every-stack] [--seed S] [options] [--json]

  Writes a synthetic capture for benchmarks to DIR: trace, stack_map_bin, stack_map_stat,
  kallsyms (and stack_map with --text-dump). One generation, no reset; every stack record in
  the trace resolves against the dump. The trace is streamed to disk.

  --events N        event lines in the trace, each followed by its stack record
                    (default ${DEFAULT_EVENTS.toLocaleString('en-US')} unless --mb)
  --mb N            instead: stop once the trace holds N MiB (up to 4096; may overshoot by one
                    chunk, < 1 MiB)
  --mode v7|v8      <stack_id N> and stack_map_bin version 1 (the v7 document's), or
                    <stack_id N gen 1> and stack_map_bin version 2 (generation 1) (default
                    ${DEFAULT_GENERATE.mode}). Version 2 is the cookie ABI mail's proposal for the
                    follow-up series the v8 cover letter announces: v8 as posted has no
                    stack_map_bin
  --stacks N        distinct stacks in the map and its dumps, 1..${MAX_STACKS.toLocaleString('en-US')} (default ${DEFAULT_GENERATE.stacks});
                    the map's bits are the fewest in 10..18 that hold them
  --depth MIN-MAX   frames per stack, 1-${MAX_DEPTH} (default ${DEFAULT_GENERATE.depthMin}-${DEFAULT_GENERATE.depthMax})
  --full-stacks     every record a full <stack trace> (the map off); the dumps still hold the
                    same population, so both readings of one capture can be compared
  --seed S          (default ${DEFAULT_GENERATE.seed})
  --cpus N          CPUs in the trace, 1..256 (default ${DEFAULT_GENERATE.cpus})
  --symbols N       synthetic functions added to the kernel's real-named ones, 0..1000000
                    (default ${DEFAULT_GENERATE.symbols}); kallsyms lists them all
  --zipf S          skew of the stacks' popularity in the trace, 0 = uniform (default ${DEFAULT_GENERATE.zipf})
  --frames callgraph|random
                    callgraph: real call chains through each function's 1-3 call sites (tens of
                    thousands of distinct return addresses); random: every frame a random
                    function at a random offset inside it (millions) (default callgraph)
  --every-stack     the trace's first records name every stack once, in a random order (so a
                    flame graph of the trace holds every stack); needs --events >= --stacks
  --text-dump       also write the stack_map text dump
  --json            print the report as one JSON object

exit status: 0 on success, 1 when writing failed, 2 on a usage error`;

export function parseGenerateArgs(args: string[]): GenerateOptions {
  const o: Omit<GenerateOptions, 'out'> & { out: string | null } = { ...DEFAULT_GENERATE, out: null };
  const num = (flag: string, v: string | undefined, lo: number, hi: number, integer = true): number => {
    if (v === undefined) throw new UsageError(`${flag} needs a value`);
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)))
      throw new UsageError(`${flag}: not a${integer ? 'n integer' : ' number'}: ${v}`);
    if (n < lo || n > hi) throw new UsageError(`${flag} must be in [${lo}, ${hi}]`);
    return n;
  };
  // the numeric options, each with its bounds: declared to parseOptions and read from one list
  const numbers: [flag: string, key: 'events' | 'mb' | 'stacks' | 'seed' | 'cpus' | 'symbols' | 'zipf', lo: number, hi: number, integer: boolean][] = [
    ['events', 'events', 1, 1e9, true],
    ['mb', 'mb', 0.001, 4096, false],
    ['stacks', 'stacks', 1, MAX_STACKS, true],
    ['seed', 'seed', 0, 2 ** 32 - 1, true],
    ['cpus', 'cpus', 1, 256, true],
    ['symbols', 'symbols', 0, 1_000_000, true],
    ['zipf', 'zipf', 0, 10, false],
  ];
  const string = { type: 'string' } as const;
  const p = parseOptions(args, {
    ...Object.fromEntries(['out', 'mode', 'depth', 'frames', ...numbers.map(([f]) => f)].map((f) => [f, string])),
    'full-stacks': { type: 'boolean' },
    'every-stack': { type: 'boolean' },
    'text-dump': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (p.positionals.length > 0) throw new UsageError(`generate takes no file arguments: ${p.positionals[0]}`);
  const given = (name: string) => p.string(name);
  if (given('out') !== undefined) {
    o.out = given('out') || null;
    if (!o.out) throw new UsageError('--out needs a directory');
  }
  for (const [flag, key, lo, hi, integer] of numbers) {
    const v = given(flag);
    if (v !== undefined) o[key] = num(`--${flag}`, v, lo, hi, integer);
  }
  const mode = given('mode');
  if (mode !== undefined) {
    if (mode !== 'v7' && mode !== 'v8') throw new UsageError('--mode must be v7 or v8');
    o.mode = mode;
  }
  const depth = given('depth');
  if (depth !== undefined) {
    const m = /^(\d{1,6})-(\d{1,6})$/.exec(depth);
    if (!m) throw new UsageError('--depth MIN-MAX, e.g. 4-64');
    o.depthMin = Number(m[1]);
    o.depthMax = Number(m[2]);
    if (o.depthMin < 1 || o.depthMax > MAX_DEPTH || o.depthMin > o.depthMax) throw new UsageError(`--depth must lie within 1-${MAX_DEPTH}`);
  }
  if (p.flag('full-stacks')) o.fullStacks = true;
  const frames = given('frames');
  if (frames !== undefined) {
    if (frames !== 'callgraph' && frames !== 'random') throw new UsageError(`--frames callgraph|random, not ${frames}`);
    o.frames = frames;
  }
  if (p.flag('every-stack')) o.everyStack = true;
  if (p.flag('text-dump')) o.textDump = true;
  if (p.flag('json')) o.json = true;
  if (!o.out) throw new UsageError('--out DIR is required');
  if (o.events !== null && o.mb !== null) throw new UsageError('--events and --mb exclude each other');
  if (o.events === null && o.mb === null) o.events = DEFAULT_EVENTS;
  if (o.everyStack && o.events !== null && o.events < o.stacks) throw new UsageError(`--every-stack needs --events of at least --stacks (${o.stacks})`);
  return o as GenerateOptions;
}

/** `generate ...`: writes the capture, prints the report; returns the exit status. */
export async function generate(args: string[]): Promise<number> {
  // --help or -h among the options (not after --)
  const dashes = args.indexOf('--');
  if ((dashes < 0 ? args : args.slice(0, dashes)).some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  let o: GenerateOptions;
  try {
    o = parseGenerateArgs(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${escapeLines(e.message)}\n${USAGE}\n`);
    return 2;
  }
  const dir = resolve(o.out);
  // before the run, so an unwritable folder fails at once
  const unwritable = prepareOutDir(dir);
  if (unwritable) {
    process.stderr.write(escapeLines(unwritable) + '\n');
    return 1;
  }
  let report: GenerateReport;
  try {
    report = writeCapture({ ...o, out: dir });
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${escapeLines(e.message)}\n`);
      return 2;
    }
    process.stderr.write(`generate failed: ${escapeLines((e as Error).message)}\n`);
    return 1;
  }
  if (o.json) process.stdout.write(jsonForTerminal(report, 2) + '\n');
  else {
    const mb = (n: number) => (n / 2 ** 20).toFixed(1);
    process.stdout.write(
      `${report.mode}: ${report.events} events on ${report.cpus} CPUs, ${report.cookies ? `${report.cookies} cookies` : `${report.fullStacks} full stacks`}; ` +
        `${report.stacks} stacks (${report.stacksInTrace} in the trace), bits ${report.bits}; ${report.symbols} symbols\n` +
        report.files
          .map((f) => `  ${f.name}  ${mb(f.bytes)} MiB${f.name === 'stack_map_bin' ? `  (${binVersionNote(report.mode === 'v8' ? '2' : '1')})` : ''}\n`)
          .join('') +
        `wrote ${report.files.length} files to ${escapeControls(dir)}\n`,
    );
  }
  return 0;
}
