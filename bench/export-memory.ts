// Export's memory against summary's (issue 34, 15 and "Costs in proportion": export's memory
// within 2x summary's). The bundled command line (built from this tree as build:cli does, into a
// temp folder) reads the largest legal dump, `cli generate --stacks 262144 --events 262144
// --every-stack [--frames random]`'s stack_map_bin and kallsyms (bench/generated.ts's cache, the
// same input as dump-ingest.ts's command-line rows), once with `summary --json` and once with
// `export --parquet DIR --json` into a fresh folder, one process after the other. Each process's
// peak resident memory is its VmHWM (the high-water mark of its own address space, every thread
// included), printed at exit by an --import hook that also samples VmRSS and the heap every
// 50 ms and names the table being written (the export's newest temporary file in DIR) when the
// high-water mark last rose: where the peak is, and how much of it is V8's heap and how much
// array buffers.
//
//   npx tsx bench/export-memory.ts [--json] [--smoke] [--rounds N] [--shape callgraph|random|both] [--max-old-space MB] [--against REV]
//
// --json: the last line of stdout is {"rows": [...]} (bench/README.md, the contract): rows
// `export-memory-262k` (call-graph walks) and `export-memory-262k-random` (random frames), each
// the export's peak in MB against summary's peak in MB as the baseline, the ratio, and the goal
// "<= 2x summary's peak". --rounds N: the lower peak of N runs of each (default 1: an export of
// the random dump takes ~30 s). --smoke: 2,000 stacks, no target (the ids stay those of the
// largest map). Both: the export's stacks table must hold the stacks summary counts and its
// frames table every ip of the dump (its own parser's count), else exit 1. --max-old-space MB
// passes --max-old-space-size=MB to both processes (how much of a peak is the heap's slack rather
// than live data). --against REV: the command line bundled from REV's src too (a commit, or a
// folder holding a src/), run alternately with the tree's (REV's summary and export, then the
// tree's, each round): each row says REV's peaks and ratio beside the tree's (`before`).
import { arg, bundleCli, srcAt } from './args.ts';
import { generated } from './generated.ts';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DiagnosticLog } from '../src/core/formats/diagnostics.ts';
import { createStackMapBinParser } from '../src/core/formats/stack-map-bin.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..');
const SMOKE = process.argv.includes('--smoke');
const JSON_OUT = process.argv.includes('--json');
const STACKS = SMOKE ? 2000 : 1 << 18;
const ROUNDS = Number(arg('--rounds', '1'));
const OLD_SPACE = arg('--max-old-space', '');
const AGAINST = arg('--against', '');
const GOAL = 2;
type Shape = 'callgraph' | 'random';
const SHAPE_ARG = arg('--shape', 'both');
if (SHAPE_ARG !== 'callgraph' && SHAPE_ARG !== 'random' && SHAPE_ARG !== 'both') throw new Error(`--shape callgraph|random|both, not ${SHAPE_ARG}`);
const SHAPES: Shape[] = SHAPE_ARG === 'both' ? ['callgraph', 'random'] : [SHAPE_ARG];

/**
 * At exit, on stderr: `memory {...}`, the process's VmHWM (KiB; maxRSS where there is no /proc),
 * the phase in which it last rose, and the largest VmRSS sampled with the heap and array buffers
 * at that sample. The phase is `read` until the export's first temporary table file appears in
 * the folder after --parquet, then that table's name. Samples are taken when the event loop turns
 * (every 50 ms at most; export yields between tables and row groups), so they place the peak,
 * while VmHWM itself is exact.
 */
const MEMORY_HOOK =
  'data:text/javascript,' +
  encodeURIComponent(
    `import{readFileSync,readdirSync,statSync}from"node:fs";
const a=process.argv,i=a.indexOf("--parquet"),dir=i>=0?a[i+1]:null;
let phase="read",hwm=0,rose="read",top={rss:0,heap:0,ab:0,phase:"read"};
const kb=(s,k)=>{const m=new RegExp(k+":\\\\s+(\\\\d+)").exec(s);return m?Number(m[1]):0};
function tick(){
  if(dir){try{let t=0;for(const n of readdirSync(dir)){if(!n.includes(".tmp-"))continue;const m=statSync(dir+"/"+n).mtimeMs;if(m>=t){t=m;phase=n.replace(/^\\./,"").replace(/\\.parquet.*/,"")}}}catch{}}
  let s="";try{s=readFileSync("/proc/self/status","utf8")}catch{}
  const h=kb(s,"VmHWM"),r=kb(s,"VmRSS");
  if(h>hwm){hwm=h;rose=phase}
  if(r>top.rss){const m=process.memoryUsage();top={rss:r,heap:m.heapUsed>>10,ab:m.arrayBuffers>>10,phase}}
}
setInterval(tick,50).unref();
process.on("exit",()=>{tick();if(!hwm)hwm=process.resourceUsage().maxRSS;process.stderr.write("\\nmemory "+JSON.stringify({hwm,rose,top})+"\\n")});`,
  );

interface Memory {
  /** KiB */
  hwm: number;
  rose: string;
  top: { rss: number; heap: number; ab: number; phase: string };
}

interface Run {
  ms: number;
  mem: Memory;
  stdout: string;
}

function run(cli: string, args: string[]): Run {
  const t = performance.now();
  const p = spawnSync(process.execPath, [...(OLD_SPACE ? [`--max-old-space-size=${OLD_SPACE}`] : []), '--import', MEMORY_HOOK, cli, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const ms = performance.now() - t;
  if (p.status !== 0) throw new Error(`node ${cli} ${args.join(' ')} exited ${p.status ?? p.signal}: ${p.stderr.slice(-2000)}`);
  const m = /^memory (\{.*\})$/m.exec(p.stderr);
  if (!m) throw new Error(`${args[0]} printed no memory line: ${p.stderr.slice(-500)}`);
  return { ms, mem: JSON.parse(m[1]) as Memory, stdout: p.stdout };
}

const MB = (kib: number) => (kib * 1024) / 1e6;

interface Round {
  summary: Run;
  exp: Run;
  check: string;
  wrong: string;
}

/** summary --json, then export --parquet into a fresh folder (removed after). */
function round(cli: string, files: string[], ips: number, tmp: string): Round {
  const summary = run(cli, ['summary', '--json', ...files]);
  const s = JSON.parse(summary.stdout) as { uniqueStacks: number; diagnostics: unknown[] };
  const dir = mkdtempSync(join(tmp, 'parquet-'));
  try {
    const exp = run(cli, ['export', '--parquet', dir, '--json', ...files]);
    const e = JSON.parse(exp.stdout) as { tables: { table: string; rows: number; bytes: number }[] };
    const rows = (name: string) => e.tables.find((t) => t.table === name)?.rows ?? -1;
    const mb = e.tables.reduce((x, t) => x + t.bytes, 0) / 1e6;
    const check = `${s.uniqueStacks} stacks, ${s.diagnostics.length} diagnostics; export: stacks ${rows('stacks')} rows, frames ${rows('frames')}, dumps ${rows('dumps')}, ${mb.toFixed(1)} MB of Parquet`;
    const wrong =
      rows('stacks') !== s.uniqueStacks
        ? `the export's stacks table has ${rows('stacks')} rows where summary counts ${s.uniqueStacks} stacks`
        : rows('frames') !== ips
          ? `the export's frames table has ${rows('frames')} rows where the dump holds ${ips} ips`
          : '';
    return { summary, exp, check, wrong };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function shapeRow(cli: string, shape: Shape, tmp: string, before: string | null): object {
  const g = generated(['--stacks', String(STACKS), '--events', String(STACKS), '--every-stack', ...(shape === 'random' ? ['--frames', 'random'] : [])]);
  const files = ['kallsyms', 'stack_map_bin'].map((n) => join(g.dir, n));
  // the dump's ips, as its own parser counts them: the frames table's rows (one a frame of each stack)
  const p = createStackMapBinParser({ file: 'stack_map_bin', diagnostics: new DiagnosticLog('stack_map_bin') });
  const bin = readFileSync(files[1]);
  p.push(bin);
  const ips = p.end().columns!.ips;
  const rounds: Round[] = [];
  const roundsBefore: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (before) roundsBefore.push(round(before, files, ips, tmp));
    rounds.push(round(cli, files, ips, tmp));
  }
  // the lower peak of each over the rounds (a peak is a high-water mark: the GC's timing raises it, nothing lowers it)
  const best = (rs: Round[], f: (r: Round) => Run) => rs.map(f).reduce((a, b) => (b.mem.hwm < a.mem.hwm ? b : a));
  const s = best(rounds, (r) => r.summary);
  const e = best(rounds, (r) => r.exp);
  const was = before
    ? (() => {
        const bs = best(roundsBefore, (r) => r.summary);
        const be = best(roundsBefore, (r) => r.exp);
        return {
          rev: AGAINST,
          value: Math.round(MB(be.mem.hwm)),
          baseline: Math.round(MB(bs.mem.hwm)),
          ratio: Math.round((be.mem.hwm / bs.mem.hwm) * 100) / 100,
          exportS: Math.round(be.ms / 100) / 10,
        };
      })()
    : null;
  const sMb = MB(s.mem.hwm);
  const eMb = MB(e.mem.hwm);
  const ratio = eMb / sMb;
  const wrong = [...rounds, ...roundsBefore].map((r) => r.wrong).find(Boolean) ?? '';
  const binMb = bin.length / 1e6;
  const where = (m: Memory) =>
    `peak last rose while ${m.rose === 'read' ? 'reading' : `writing ${m.rose}`}; largest sample ${MB(m.top.rss).toFixed(0)} MB RSS ` +
    `(${m.top.phase === 'read' ? 'reading' : m.top.phase}: heap ${MB(m.top.heap).toFixed(0)} MB, array buffers ${MB(m.top.ab).toFixed(0)} MB)`;
  const note =
    `${rounds[0].check}; export ${(e.ms / 1000).toFixed(1)} s, ${where(e.mem)}; summary ${(s.ms / 1000).toFixed(1)} s, ${where(s.mem)}` +
    (OLD_SPACE ? `; both with --max-old-space-size=${OLD_SPACE}` : '') +
    (SMOKE ? '; smoke run: no target' : '') +
    (was ? `; ${AGAINST} alternately: export ${was.value} MB, summary ${was.baseline} MB (${was.ratio}x), export ${was.exportS} s` : '');
  process.stdout.write(
    JSON.stringify({
      shape,
      stacks: STACKS,
      exportMb: Math.round(eMb),
      summaryMb: Math.round(sMb),
      ratio: Math.round(ratio * 100) / 100,
      exportMem: e.mem,
      summaryMem: s.mem,
      ...(was && { before: was }),
    }) + '\n',
  );
  if (wrong) {
    console.error(`${shape}: ${wrong}`);
    process.exitCode = 1;
  }
  return {
    // the ids of the largest map, whatever the run's size (as dump-ingest.ts's)
    id: `export-memory-262k${shape === 'random' ? '-random' : ''}`,
    what:
      `the bundled command line's export --parquet DIR on cli generate's stack_map_bin of ${STACKS.toLocaleString('en-US')} stacks, ` +
      `${shape === 'callgraph' ? 'call-graph walks' : 'random frames'} (${ips.toLocaleString('en-US')} ips, ${binMb.toFixed(1)} MB) + kallsyms: ` +
      `peak resident memory (VmHWM) against summary --json's on the same files${ROUNDS > 1 ? `, the lower of ${ROUNDS} runs each` : ''}`,
    value: Math.round(eMb),
    unit: 'MB',
    baseline: { what: "summary --json's peak resident memory (VmHWM), same files", value: Math.round(sMb), unit: 'MB' },
    ratio: Math.round(ratio * 100) / 100,
    goal: `<= ${GOAL}x summary's peak (issue 34: export's memory within 2x summary's)`,
    ...(SMOKE ? {} : { met: ratio <= GOAL }),
    ...(was && { before: was }),
    note,
  };
}

const tmp = mkdtempSync(join(tmpdir(), 'export-memory-'));
const cleanups = [tmp];
try {
  const cli = await bundleCli(repo, join(tmp, 'cli'));
  // REV's src beside it (its bundle may load packages through the folder's node_modules link): removed at the end
  const root = AGAINST ? srcAt(repo, AGAINST, 'export-memory-rev-') : null;
  if (root) cleanups.push(root);
  const before = root ? await bundleCli(root, join(tmp, 'cli-before')) : null;
  const rows: object[] = [];
  for (const shape of SHAPES) rows.push(shapeRow(cli, shape, tmp, before));
  if (JSON_OUT) console.log(JSON.stringify({ rows }));
  else
    for (const r of rows as {
      id: string;
      value: number;
      baseline: { value: number };
      ratio: number;
      before?: { rev: string; value: number; baseline: number; ratio: number };
    }[])
      console.log(
        `${r.id}: export ${r.value} MB, summary ${r.baseline.value} MB, ${r.ratio}x (goal <= ${GOAL}x)` +
          (r.before ? `; ${r.before.rev}: export ${r.before.value} MB, summary ${r.before.baseline} MB, ${r.before.ratio}x` : ''),
      );
} finally {
  for (const d of cleanups) rmSync(d, { recursive: true, force: true });
}
