// Trace ingest against the newline loop (issue 11 point 5). Inputs come from `cli generate`
// (cached in /tmp/stackmap-bench-inputs/<args>), each figure is measured in a child process, and
// every ratio is to a plain JS loop counting `\n` over the same bytes in the same process, the
// two alternating, best of --rounds.
//
//   npx tsx bench/ingest.ts [--mb 100] [--rounds 3] [--json] [--smoke]
//   npx tsx bench/ingest.ts --against REV [--runs 3]     A (REV's src, or a folder's) and B (this tree) alternating
//
// Rows (bench contract, see bench/README.md): ingest-cookies-105mb (loadFiles over the files opened as the
// command line opens them (FileBlob), the CLI's path with
// its second thread for the trace (trace-parts.ts) where the tree has it, both bundled as
// build:cli bundles them, as the command line runs them, on
// a v8 cookie capture: trace, stack_map_bin, stack_map_stat, kallsyms), ingest-full-105mb (the
// same with --full-stacks), parser-noop-105mb (the trace reader alone, a sink that does nothing),
// cli-summary-process-105mb (the whole `summary` process of the bundled command line, against a
// process that reads the trace and counts its newlines), ingest-bytes-per-event (what the capture
// holds per event beyond the stack table: after GC by process.memoryUsage(), and as the sum of
// the trace columns' buffers). --smoke: ~1 MB inputs, correctness checks only.
import { arg, bundleCli, flag } from './args.ts';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openAsBlob, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { heldBytes, type Child, type Row } from './ingest-rows.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..');
const SMOKE = flag('--smoke');
const MB = Number(arg('--mb', SMOKE ? '1' : '100'));
const ROUNDS = Number(arg('--rounds', SMOKE ? '1' : '3'));
const JSON_OUT = flag('--json');
const CACHE = '/tmp/stackmap-bench-inputs';

const child = arg('--child', '');
if (child) {
  const out = await runChild(child as Child['kind'], arg('--src', join(repo, 'src')), arg('--input', ''), ROUNDS);
  process.stdout.write(JSON.stringify(out) + '\n');
} else if (arg('--against', '')) {
  compare(arg('--against', ''), Number(arg('--runs', '3')));
} else {
  main();
}

/** A generated capture for `mode`, made once per argument set and kept in /tmp. */
function input(full: boolean, mb = MB): string {
  const key = `mb-${mb}-v8${full ? '-full' : ''}`;
  const dir = join(CACHE, key);
  if (!existsSync(join(dir, 'trace'))) {
    mkdirSync(CACHE, { recursive: true });
    rmSync(dir, { recursive: true, force: true });
    const args = ['tsx', 'src/cli/main.ts', 'generate', '--mb', String(mb), '--mode', 'v8', '--out', dir, ...(full ? ['--full-stacks'] : [])];
    execFileSync('npx', args, { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return dir;
}

/** The newline loop: what every time here is a ratio to. */
function newlines(bytes: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) n++;
  return n;
}

/** Best wall time and best CPU time (every thread of the process: less disturbed by other processes on a busy machine) of `rounds` runs. */
async function best<T>(rounds: number, fn: () => Promise<T>): Promise<{ ms: number; cpu: number; value: T }> {
  let ms = Infinity;
  let cpu = Infinity;
  let value!: T;
  for (let r = 0; r < rounds; r++) {
    const c = process.cpuUsage();
    const t = performance.now();
    value = await fn();
    ms = Math.min(ms, performance.now() - t);
    const u = process.cpuUsage(c);
    cpu = Math.min(cpu, (u.user + u.system) / 1000);
  }
  return { ms, cpu, value };
}

/** One measurement in this process, over the src folder given (this tree's, or a copy of another revision's). */
async function runChild(kind: Child['kind'], src: string, dir: string, rounds: number): Promise<Child> {
  const core = join(src, 'core');
  const { loadFiles } = (await import(pathToFileURL(join(core, 'capture/load.ts')).href)) as typeof import('../src/core/capture/load.ts');
  const files = readdirSync(dir).sort();
  const traceBytes = new Uint8Array(readFileSync(join(dir, 'trace')));
  const mb = kind === 'parser' ? traceBytes.length / 1e6 : files.reduce((n, f) => n + readFileSync(join(dir, f)).length, 0) / 1e6;
  const loop = async () => newlines(traceBytes);
  // the files opened as the command line opens them (read-files.ts: FileBlob, 1 MiB reads of its own) where the
  // tree has it; node's openAsBlob (64 KiB chunks through its stream, ~2-4x the read time) for an older tree
  const blobs = async (code?: { FileBlob?: { of(path: string, stat: Stats): Blob } }) =>
    Promise.all(
      files.map(async (f) => {
        const path = join(dir, f);
        return { name: f, blob: code?.FileBlob ? code.FileBlob.of(path, statSync(path)) : await openAsBlob(path) };
      }),
    );
  let base = Infinity;
  let ms = Infinity;
  let baseCpu = Infinity;
  let cpu = Infinity;
  let check = '';
  let memory: Child['memory'] = null;
  for (let r = 0; r < rounds; r++) {
    const b = await best(3, loop);
    base = Math.min(base, b.ms);
    baseCpu = Math.min(baseCpu, b.cpu);
    if (kind === 'parser') {
      const { createTraceTextParser } = await import(pathToFileURL(join(core, 'formats/trace-text.ts')).href);
      const { DiagnosticLog } = await import(pathToFileURL(join(core, 'formats/diagnostics.ts')).href);
      const t = await best(1, async () => {
        const p = createTraceTextParser({ file: 'trace', diagnostics: new DiagnosticLog('trace') }, { event() {}, stackRecord() {}, lost() {} });
        for (let i = 0; i < traceBytes.length; i += 1 << 16) p.push(traceBytes.subarray(i, i + (1 << 16)));
        return p.end();
      });
      ms = Math.min(ms, t.ms);
      cpu = Math.min(cpu, t.cpu);
      check = `${t.value.lines.total} lines, ${t.value.lines.unused} unused`;
    } else if (kind === 'ingest') {
      const code = await bundled(src);
      const named = await blobs(code);
      // the command line's second thread for the trace (trace-parts.ts) made as readFiles makes it (timed too; `true`:
      // an older tree split ahead when told), both bundled as build:cli bundles them, as the command line runs them
      type Make = (paths: Map<Blob, string>, minBytes?: number, ahead?: boolean) => ReturnType<NonNullable<typeof code.nodeTraceParts>>;
      const nodeTraceParts = (code.nodeTraceParts ?? null) as Make | null;
      const t = await best(1, async () => {
        const parts = nodeTraceParts?.(new Map(named.map((f) => [f.blob, join(dir, f.name)])), undefined, true);
        try {
          return await code.loadFiles(named, { parts: parts ?? undefined });
        } finally {
          parts?.close?.();
        }
      });
      ms = Math.min(ms, t.ms);
      cpu = Math.min(cpu, t.cpu);
      const c = t.value;
      check = `${c.trace.eventCount} events, ${c.trace.recordCount} records, ${c.stacks.size} stacks, ${c.diagnostics.length} diagnostics`;
    } else {
      const gc = (globalThis as { gc?: () => void }).gc;
      if (!gc) throw new Error('the memory child needs --expose-gc');
      const named = await blobs();
      const held = async (only: typeof named) => {
        gc();
        const m0 = process.memoryUsage();
        const c = await loadFiles(only);
        gc();
        gc();
        const m1 = process.memoryUsage();
        return { c, bytes: m1.heapUsed + m1.arrayBuffers - (m0.heapUsed + m0.arrayBuffers), stackBytes: heldBytes(c.stacks) };
      };
      // what the other files (dumps, kallsyms, stat) hold is not per event: measured without the trace, then taken off
      const rest = await held(named.filter((f) => f.name !== 'trace'));
      const restBytes = rest.bytes - rest.stackBytes;
      rest.c = null as never;
      const all = await held(named);
      const c = all.c;
      const events = c.trace.eventCount;
      memory = {
        events,
        process: (all.bytes - all.stackBytes - restBytes) / events,
        columns: heldBytes(c.trace, [c.stacks]) / events,
        stackBytes: all.stackBytes,
        restBytes,
      };
      check = `${events} events, ${c.trace.recordCount} records`;
      ms = 0;
      base = 0;
      if (c.trace.eventCount < 0) console.log(c); // keep the capture alive up to the second reading
      break;
    }
  }
  return { kind, mb, ms, baseMs: base, cpuMs: cpu, baseCpuMs: baseCpu, check, memory };
}

/** loadFiles and nodeTraceParts of `src` bundled as build:cli bundles them (packages from the tree's own folder), into a temp folder removed at exit (from source, tsx compiled the worker at each start). */
async function bundled(src: string): Promise<{
  loadFiles: typeof import('../src/core/capture/load.ts').loadFiles;
  nodeTraceParts?: typeof import('../src/cli/trace-parts.ts').nodeTraceParts;
  FileBlob?: typeof import('../src/cli/file-blob.ts').FileBlob;
}> {
  const { build } = await import('esbuild');
  const { cliBuildOptions } = await import('../scripts/build-cli.ts');
  const out = mkdtempSync(join(tmpdir(), 'ingest-bundle-'));
  process.on('exit', () => rmSync(out, { recursive: true, force: true }));
  const parts = join(src, 'cli/trace-parts.ts');
  const fileBlob = join(src, 'cli/file-blob.ts');
  const entry = join(out, 'entry.ts');
  writeFileSync(
    entry,
    `export { loadFiles } from ${JSON.stringify(join(src, 'core/capture/load.ts'))};\n` +
      (existsSync(parts) ? `export { nodeTraceParts } from ${JSON.stringify(parts)};\n` : '') +
      (existsSync(fileBlob) ? `export { FileBlob } from ${JSON.stringify(fileBlob)};\n` : ''),
  );
  const entries: Record<string, string> = { entry, ...(existsSync(parts) ? { 'trace-part-worker': join(src, 'cli/trace-part-worker.ts') } : {}) };
  await build({ ...cliBuildOptions(join(src, '..'), out, entries), chunkNames: '[name]-[hash]', logLevel: 'warning' });
  return import(pathToFileURL(join(out, 'entry.mjs')).href);
}

function spawnChild(kind: Child['kind'], src: string, dir: string, rounds: number): Child {
  const p = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '--max-old-space-size=8000',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--child',
      kind,
      '--src',
      src,
      '--input',
      dir,
      '--rounds',
      String(rounds),
    ],
    { cwd: repo, encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  if (p.status !== 0) throw new Error(`${kind} child failed: ${p.stderr}`);
  return JSON.parse(p.stdout.trim().split('\n').pop()!) as Child;
}

/** Wall time of the `summary` process, and of a process that reads the trace and counts its newlines, alternating. */
function cliRound(cli: string, dir: string): { ms: number; baseMs: number; check: string } {
  const files = readdirSync(dir)
    .sort()
    .map((f) => join(dir, f));
  const t0 = performance.now();
  const p = spawnSync(process.execPath, [cli, 'summary', '--json', ...files], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const ms = performance.now() - t0;
  if (p.status !== 0) throw new Error(`summary failed: ${p.stderr}`);
  const s = JSON.parse(p.stdout);
  const t1 = performance.now();
  const loop = `const b=require('fs').readFileSync(${JSON.stringify(join(dir, 'trace'))});let n=0;for(let i=0;i<b.length;i++)if(b[i]===10)n++;if(n<0)console.log(n)`;
  spawnSync(process.execPath, ['-e', loop]);
  const baseMs = performance.now() - t1;
  return { ms, baseMs, check: `${s.events} events, ${s.cookies} cookies, ${s.resolved} resolved` };
}

async function main(): Promise<void> {
  const cookies = input(false);
  const full = input(true);
  const src = join(repo, 'src');
  const log = (s: string) => (JSON_OUT ? process.stderr.write(s + '\n') : console.log(s));
  const rows: Row[] = [];
  const size = `${Math.round(MB * 1.048576)}mb`;
  const speed = (id: string, what: string, c: Child, goals: boolean) => {
    const value = c.mb / (c.ms / 1000);
    const base = c.mb / (c.baseMs / 1000);
    const times = c.ms / c.baseMs;
    const met = goals ? times <= 4 && value >= 200 : undefined;
    log(
      `${id}: ${value.toFixed(1)} MB/s, ${times.toFixed(2)}x the newline loop (${c.ms.toFixed(0)} vs ${c.baseMs.toFixed(0)} ms; CPU ${(c.cpuMs / c.baseCpuMs).toFixed(2)}x) -- ${c.check}`,
    );
    rows.push({
      id,
      what,
      value,
      unit: 'MB/s',
      baseline: { what: 'a JS loop counting \\n over the same bytes, same process, alternating', value: base, unit: 'MB/s' },
      ratio: value / base,
      ...(goals ? { goal: '<= 4x the newline loop and >= 200 MB/s', met } : {}),
      note: `${times.toFixed(2)}x the newline loop's wall time, ${(c.cpuMs / c.baseCpuMs).toFixed(2)}x its CPU time (${c.cpuMs.toFixed(0)} vs ${c.baseCpuMs.toFixed(0)} ms); ${c.check}`,
    });
  };
  speed(
    `ingest-cookies-${size}`,
    `loadFiles (CLI path, bundled as build:cli bundles it) on a v8 <stack_id N gen G> capture of ${MB} MiB`,
    spawnChild('ingest', src, cookies, ROUNDS),
    true,
  );
  speed(
    `ingest-full-${size}`,
    `loadFiles (CLI path, bundled as build:cli bundles it) on a <stack trace> capture of ${MB} MiB`,
    spawnChild('ingest', src, full, ROUNDS),
    true,
  );
  speed(
    `parser-noop-${size}`,
    `the trace text reader alone, a sink that does nothing, ${MB} MiB of cookies`,
    spawnChild('parser', src, cookies, ROUNDS),
    false,
  );

  const cli = await bundleCli(repo, mkdtempSync(join(tmpdir(), 'ingest-cli-')));
  let c = { ms: Infinity, baseMs: Infinity, check: '' };
  for (let r = 0; r < ROUNDS; r++) {
    const x = cliRound(cli, cookies);
    c = { ms: Math.min(c.ms, x.ms), baseMs: Math.min(c.baseMs, x.baseMs), check: x.check };
  }
  rmSync(join(cli, '..'), { recursive: true, force: true });
  log(
    `cli-summary-process-${size}: ${c.ms.toFixed(0)} ms, ${(c.ms / c.baseMs).toFixed(2)}x a node process counting newlines (${c.baseMs.toFixed(0)} ms) -- ${c.check}`,
  );
  rows.push({
    id: `cli-summary-process-${size}`,
    what: `the whole \`node stackmap-explorer.mjs summary --json\` process (bundled as build:cli does) on the ${MB} MiB cookie capture`,
    value: c.ms,
    unit: 'ms',
    baseline: { what: 'a node process reading the trace and counting \\n, alternating', value: c.baseMs, unit: 'ms' },
    ratio: c.ms / c.baseMs,
    note: c.check,
  });

  const m = spawnChild('memory', src, cookies, 1).memory!;
  log(
    `ingest-bytes-per-event: ${m.process.toFixed(1)} B/event after GC (process.memoryUsage), ${m.columns.toFixed(1)} B/event in the trace columns' buffers -- ${m.events} events`,
  );
  rows.push({
    id: 'ingest-bytes-per-event',
    what: 'memory the capture holds per event beyond the stack table and the other files, after GC (heapUsed + arrayBuffers)',
    value: m.process,
    unit: 'B/event',
    goal: '<= 32 B/event',
    met: m.process <= 32,
    peers: [{ name: "sum of the trace columns' buffers", value: m.columns, unit: 'B/event' }],
    note: `${m.events} events (each with its stack record); the stack table's ${m.stackBytes} bytes taken off, and the ${m.restBytes} bytes the other files hold (loaded alone)`,
  });
  if (SMOKE) {
    // at 1 MB the process figure is within the noise of the heap (it can come out negative): only the columns' sum must be there
    for (const r of rows) {
      const v = r.unit === 'B/event' ? r.peers![0].value! : r.value;
      if (!(v > 0) || !Number.isFinite(v)) throw new Error(`${r.id}: no figure (${v})`);
    }
    const events = rows[0].note!.match(/(\d+) events/);
    if (!events || Number(events[1]) === 0) throw new Error('the smoke capture read no events');
    for (const r of rows) delete r.met;
  }
  if (JSON_OUT) console.log(JSON.stringify({ rows }));
}

/** A (REV's src, copied to a temp folder) and B (this tree) as alternating child processes, best of `runs`. */
function compare(rev: string, runs: number): void {
  const tmp = mkdtempSync(join(tmpdir(), 'ingest-ab-'));
  try {
    // REV may also be a folder holding a src/ to compare with (a copy made elsewhere)
    const tar = existsSync(join(rev, 'src'))
      ? execFileSync('tar', ['-c', '-C', rev, 'src'], { maxBuffer: 1 << 30 })
      : execFileSync('git', ['-C', repo, 'archive', rev, 'src'], { maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', tmp], { input: tar });
    writeFileSync(join(tmp, 'package.json'), '{"type":"module"}\n');
    symlinkSync(join(repo, 'node_modules'), join(tmp, 'node_modules'));
    const sides = [
      { name: `A ${rev}`, src: join(tmp, 'src') },
      { name: 'B tree', src: join(repo, 'src') },
    ];
    const inputs = { cookies: input(false), full: input(true) };
    const cases: { id: string; kind: Child['kind']; dir: string }[] = [
      { id: 'ingest-cookies', kind: 'ingest', dir: inputs.cookies },
      { id: 'ingest-full', kind: 'ingest', dir: inputs.full },
      { id: 'parser-noop', kind: 'parser', dir: inputs.cookies },
      { id: 'bytes-per-event', kind: 'memory', dir: inputs.cookies },
    ];
    const summary: Record<string, unknown> = {};
    for (const k of cases) {
      const got: Child[][] = [[], []];
      for (let i = 0; i < runs; i++) {
        for (const [s, side] of sides.entries()) {
          const c = spawnChild(k.kind, side.src, k.dir, 1);
          got[s].push(c);
          const fig = c.memory
            ? `${c.memory.process.toFixed(1)} B/event (columns ${c.memory.columns.toFixed(1)})`
            : `${c.ms.toFixed(0)} ms wall (${(c.ms / c.baseMs).toFixed(2)}x the newline loop), ${c.cpuMs.toFixed(0)} ms CPU (${(c.cpuMs / c.baseCpuMs).toFixed(2)}x)`;
          console.log(`${k.id} ${side.name}: ${fig} -- ${c.check}`);
        }
      }
      // the run of each side that took the least CPU, and its ratios to the newline loop of that process
      const fastest = (cs: Child[]) => cs.reduce((x, c) => (c.cpuMs < x.cpuMs ? c : x));
      if (k.kind === 'memory') {
        const a = Math.min(...got[0].map((c) => c.memory!.process));
        const b = Math.min(...got[1].map((c) => c.memory!.process));
        summary[k.id] = {
          A: +a.toFixed(1),
          B: +b.toFixed(1),
          'B/A': +(b / a).toFixed(3),
          columnsA: got[0][0].memory!.columns,
          columnsB: got[1][0].memory!.columns,
        };
      } else {
        const a = fastest(got[0]);
        const b = fastest(got[1]);
        summary[k.id] = {
          cpuA: Math.round(a.cpuMs),
          cpuB: Math.round(b.cpuMs),
          'B/A cpu': +(b.cpuMs / a.cpuMs).toFixed(3),
          wallA: Math.round(Math.min(...got[0].map((c) => c.ms))),
          wallB: Math.round(Math.min(...got[1].map((c) => c.ms))),
          loopCpuA: +(a.cpuMs / a.baseCpuMs).toFixed(2),
          loopCpuB: +(b.cpuMs / b.baseCpuMs).toFixed(2),
        };
      }
    }
    const clis = sides.map((s, i) => bundleCli(join(s.src, '..'), join(tmp, `cli-${i}`)));
    Promise.all(clis).then((paths) => {
      const got: number[][] = [[], []];
      for (let i = 0; i < runs; i++) {
        for (const [s, side] of sides.entries()) {
          const x = cliRound(paths[s], inputs.cookies);
          got[s].push(x.ms);
          console.log(`cli-summary-process ${side.name}: ${x.ms.toFixed(0)} ms (a node process counting newlines: ${x.baseMs.toFixed(0)} ms) -- ${x.check}`);
        }
      }
      const a = Math.min(...got[0]);
      const b = Math.min(...got[1]);
      summary['cli-summary-process-ms'] = { A: Math.round(a), B: Math.round(b), 'B/A': +(b / a).toFixed(3) };
      console.log(JSON.stringify(summary));
      rmSync(tmp, { recursive: true, force: true });
    });
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}
