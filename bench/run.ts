// `npm run bench`: the scoreboard (issue 11). Runs every bench script as a child process with
// `--json`, Node and browser ones alternating so two heavy browser runs never sit side by side,
// collects their rows (bench/contract.ts), and writes bench/results.json (rows, date, node and
// chromium versions, cores, commit) and the table in bench/RESULTS.md between the results
// markers. A script that is missing, fails, times out or prints no valid rows becomes failed
// rows, never a crash; the run then exits 1. Then the two writers, retention.ts and phases.ts,
// refresh RETENTION.md and PHASES.md.
//
//   npx tsx bench/run.ts [--only id,...] [--smoke] [--no-write]
//
// --only runs the scripts that give those rows (an id, its prefix, or a script's name) and
// prints their table without touching results.json or RESULTS.md (one committed table, one run).
// --smoke passes --smoke to every script (tiny inputs, no targets) and writes nothing.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRows, type Row } from './contract.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..');

export interface Script {
  /** file under bench/ */
  file: string;
  /** the rows it is expected to give (a missing one becomes a failed row) */
  rows: string[];
  browser: boolean;
  /** seconds before it is killed */
  timeout: number;
  args?: string[];
}

/** In run order: Node and browser alternate, the heaviest browser ones furthest apart. */
export const SCRIPTS: Script[] = [
  { file: 'cli-start.ts', rows: ['cli-start-help'], browser: false, timeout: 120 },
  { file: 'flame-browser.ts', rows: ['flame-first-paint-262k', 'flame-aggregate-262k', 'flame-culled-262k'], browser: true, timeout: 420 },
  {
    file: 'sim-insert.ts',
    rows: ['sim-insert-hit-1w', 'sim-insert-hit-2w', 'sim-insert-hit-4w', 'sim-insert-hit-nohash-1w', 'sim-insert-hit-nohash-2w', 'sim-insert-hit-nohash-4w'],
    browser: false,
    timeout: 180,
  },
  { file: 'timeline-browser.ts', rows: ['timeline-frame-p95-10m', 'timeline-frame-p50-10m'], browser: true, timeout: 420 },
  {
    file: 'ingest.ts',
    rows: ['ingest-cookies-105mb', 'ingest-full-105mb', 'parser-noop-105mb', 'cli-summary-process-105mb', 'ingest-bytes-per-event'],
    browser: false,
    timeout: 420,
  },
  {
    file: 'peers.ts',
    rows: ['flame-peers-1k', 'flame-peers-10k', 'flame-peers-100k', 'flame-peers-262k'],
    browser: true,
    timeout: 1500,
    args: ['--budget', '900'],
  },
  {
    file: 'flame-browser.ts',
    rows: ['flame-first-paint-262k-every', 'flame-aggregate-262k-every', 'flame-culled-262k-every'],
    browser: true,
    timeout: 900,
    args: ['--every-stack'],
  },
  {
    file: 'flame-browser.ts',
    rows: ['flame-first-paint-262k-every-random', 'flame-aggregate-262k-every-random', 'flame-culled-262k-every-random'],
    browser: true,
    timeout: 900,
    args: ['--every-stack', '--shape', 'random'],
  },
  { file: 'filter.ts', rows: ['filter-ratio-105mb', 'filter-fields-bytes-per-event'], browser: false, timeout: 600 },
  {
    file: 'dump-ingest.ts',
    rows: [
      'dump-ingest-262k',
      'dump-ingest-262k-random',
      'dump-summary-cli-262k',
      'dump-summary-cli-262k-peak',
      'dump-summary-cli-262k-random',
      'dump-summary-cli-262k-random-peak',
    ],
    browser: false,
    timeout: 600,
  },
  // ~65-105 s measured at load 3-5 (two exports of ~20-60 s each); bundling and generating the two dumps when not cached ~10 s more
  { file: 'export-memory.ts', rows: ['export-memory-262k', 'export-memory-262k-random'], browser: false, timeout: 420 },
  { file: 'linear.ts', rows: ['linear-worst-ratio', 'linear-line-shape-ratio', 'linear-tar-members'], browser: false, timeout: 120 },
  { file: 'zstd-linear.ts', rows: ['zstd-linear-worst-ratio'], browser: false, timeout: 300 },
  { file: 'whatif.ts', rows: ['whatif-replay-200k'], browser: false, timeout: 300 },
  {
    file: 'trace-dat.ts',
    rows: ['trace-dat-v6-read', 'trace-dat-v7-none-read', 'trace-dat-v7-zlib-read', 'trace-dat-v7-zstd-read'],
    browser: false,
    timeout: 300,
  },
  { file: 'big-trace-browser.ts', rows: ['big-trace-1gb'], browser: true, timeout: 420 },
];

/** Not timing rows: they rewrite their own reports, after the scoreboard. */
const WRITERS: { file: string; args: string[] }[] = [
  { file: 'retention.ts', args: ['--out', 'bench/RETENTION.md'] },
  { file: 'phases.ts', args: ['--out', 'bench/PHASES.md'] },
];

const name = (s: Script) => s.file.replace(/\.ts$/, '');

/** Does `want` (an id, an id's prefix, or a script name) select this script? */
export function selects(s: Script, want: string[]): boolean {
  return want.some(
    (w) => w === name(s) || w === s.file || s.rows.some((id) => id === w || id.startsWith(w + '-')) || (s.rows.length === 0 && w.startsWith(name(s))),
  );
}

export interface ScriptRun {
  file: string;
  status: 'ok' | 'failed' | 'missing';
  seconds: number;
  error?: string;
}

/** Runs one script with `--json` (and `extra`), echoing its output; never throws. */
/** An expected id without its size (`flame-peers-1k` -> `flame-peers`): a smoke run's rows have other sizes. */
export const sizeless = (id: string) => id.replace(/-[0-9]+[a-z]*$/, '');

export function runScript(s: Script, extra: string[], echo = true, env: Record<string, string> = {}): Promise<{ run: ScriptRun; rows: Row[] }> {
  const smoke = extra.includes('--smoke');
  const path = join(here, s.file);
  const failedRows = (why: string): Row[] =>
    (s.rows.length ? s.rows : [name(s)]).map((id) => ({ id, what: `bench/${s.file}`, value: null, unit: '', failed: why, script: s.file }));
  if (!existsSync(path)) {
    const why = `bench/${s.file} does not exist`;
    return Promise.resolve({ run: { file: s.file, status: 'missing', seconds: 0, error: why }, rows: failedRows(why) });
  }
  const t0 = performance.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path, '--json', ...(s.args ?? []), ...extra], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
      detached: true, // its own process group, so a timeout ends the browser it started too
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b;
      if (echo) process.stdout.write(b.toString().replace(/^(?=.)/gm, `  [${name(s)}] `));
    });
    child.stderr.on('data', (b: Buffer) => {
      err += b;
      if (err.length > 1 << 20) err = err.slice(-(1 << 19));
      if (echo) process.stderr.write(b.toString().replace(/^(?=.)/gm, `  [${name(s)}] `));
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, s.timeout * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const seconds = Math.round((performance.now() - t0) / 100) / 10;
      const fail = (why: string) => done({ run: { file: s.file, status: 'failed', seconds, error: why }, rows: failedRows(why) });
      if (timedOut) return fail(`killed after ${s.timeout} s`);
      const rows = parseRows(out);
      const tail = err.trim().split('\n').slice(-3).join(' | ').slice(0, 400);
      if (rows instanceof Error) return fail(`exit ${code ?? signal}: ${rows.message}${tail ? ` (stderr: ${tail})` : ''}`);
      for (const r of rows) r.script = s.file;
      const got = new Set(rows.map((r) => r.id));
      const lost = s.rows.filter((id) => !got.has(id) && !(smoke && [...got].some((g) => g.startsWith(sizeless(id)))));
      const all = [...rows, ...failedRows(`bench/${s.file} gave no such row`).filter((r) => lost.includes(r.id))];
      // a non-zero exit with valid rows: the rows stand (a missed target may exit 1), the status says so
      done({
        run: {
          file: s.file,
          status: code === 0 && lost.length === 0 ? 'ok' : 'failed',
          seconds,
          ...(code === 0 ? {} : { error: `exit ${code ?? signal}` }),
          ...(lost.length ? { error: `no row ${lost.join(', ')}` } : {}),
        },
        rows: all,
      });
    });
  });
}

// ---------------------------------------------------------------- the table

const group = (x: number, d: number) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: 0 });
export function fmt(v: number | null, unit: string): string {
  if (v === null) return '—';
  const d = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${group(v, d)} ${unit}`.trim();
}
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The Markdown table of `rows`: every row with its baseline, ratio, peers, goal and verdict. */
export function table(rows: Row[]): string {
  const head = '| row | what | value | baseline | ratio | peers | goal | met |\n| --- | --- | --- | --- | --- | --- | --- | --- |';
  const lines = rows.map((r) => {
    const base = r.baseline ? `${fmt(r.baseline.value, r.baseline.unit)} (${r.baseline.what})` : '';
    const ratio = r.ratio !== undefined ? `${group(r.ratio, r.ratio >= 10 ? 1 : 2)}x` : '';
    const peers = (r.peers ?? []).map((p) => `${p.name}: ${p.value === null ? 'none' : fmt(p.value, p.unit)}${p.note ? ` (${p.note})` : ''}`).join('; ');
    const met = r.failed ? `**failed**: ${r.failed}` : r.met === undefined ? '' : r.met ? 'met' : '**not met**';
    const what = r.note ? `${r.what}. ${r.note}` : r.what;
    return `| \`${r.id}\` | ${cell(what)} | ${fmt(r.value, r.unit)} | ${cell(base)} | ${ratio} | ${cell(peers)} | ${cell(r.goal ?? '')} | ${cell(met)} |`;
  });
  return [head, ...lines].join('\n');
}

const START = '<!-- results:start -->';
const END = '<!-- results:end -->';

/** RESULTS.md with the text between the markers replaced (the markers appended when absent). */
export function withTable(readme: string, body: string): string {
  const block = `${START}\n${body}\n${END}`;
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a >= 0 && b > a) return readme.slice(0, a) + block + readme.slice(b + END.length);
  return readme.replace(/\n*$/, '\n\n## Results\n\n') + block + '\n';
}

// ---------------------------------------------------------------- the run

function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { cwd: repo, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '';
}

async function chromiumVersion(): Promise<string> {
  try {
    const { launch } = await import('../scripts/browser.ts');
    const b = await launch();
    const v = b.version();
    await b.close();
    return v;
  } catch (e) {
    return `unavailable: ${(e as Error).message.split('\n')[0]}`;
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--only');
  const only = at >= 0 ? (argv[at + 1] ?? '').split(',').filter(Boolean) : null;
  const smoke = argv.includes('--smoke');
  const write = !only && !smoke && !argv.includes('--no-write');
  const chosen = only ? SCRIPTS.filter((s) => selects(s, only)) : SCRIPTS;
  if (only && chosen.length === 0) {
    console.error(`--only ${only.join(',')}: no script gives such a row; scripts: ${SCRIPTS.map(name).join(', ')}`);
    process.exit(2);
  }
  const t0 = performance.now();
  const started = new Date().toISOString();
  const load = loadavg().map((x) => Math.round(x * 100) / 100);
  const runs: ScriptRun[] = [];
  let rows: Row[] = [];
  // one production build for every browser script (they read BENCH_DIST), made from this tree now
  if (chosen.some((s) => s.browser) && !process.env.BENCH_DIST) {
    const out = `/tmp/dist-bench-run-${process.pid}`;
    console.log(`building the app into ${out} (BENCH_DIST for the browser scripts)`);
    const t = performance.now();
    const b = spawnSync('npx', ['vite', 'build', '--outDir', out, '--emptyOutDir'], { cwd: repo, encoding: 'utf8' });
    const seconds = Math.round((performance.now() - t) / 100) / 10;
    runs.push({ file: 'vite build', status: b.status === 0 ? 'ok' : 'failed', seconds, ...(b.status === 0 ? {} : { error: b.stderr.slice(-400) }) });
    if (b.status === 0) process.env.BENCH_DIST = out;
  }
  for (const s of chosen) {
    console.log(`\n== bench/${s.file}${s.browser ? ' (browser)' : ''}`);
    const r = await runScript(s, smoke ? ['--smoke'] : []);
    runs.push(r.run);
    console.log(`== bench/${s.file}: ${r.run.status} in ${r.run.seconds} s${r.run.error ? ` (${r.run.error})` : ''}`);
    rows.push(...r.rows);
  }
  if (process.env.BENCH_DIST?.startsWith(`/tmp/dist-bench-run-${process.pid}`)) rmSync(process.env.BENCH_DIST, { recursive: true, force: true });
  if (only)
    rows = rows.filter(
      (r) =>
        chosen.some((s) => s.rows.length === 0 && r.script === s.file) ||
        only.some((w) => r.id === w || r.id.startsWith(w + '-') || r.script === w || r.script === w + '.ts'),
    );
  const benchSeconds = Math.round((performance.now() - t0) / 1000);
  if (!only && !smoke) {
    for (const w of WRITERS) {
      console.log(`\n== bench/${w.file} ${w.args.join(' ')}`);
      const t = performance.now();
      const r = spawnSync(process.execPath, ['--import', 'tsx', join(here, w.file), ...w.args], { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] });
      const seconds = Math.round((performance.now() - t) / 100) / 10;
      runs.push({ file: w.file, status: r.status === 0 ? 'ok' : 'failed', seconds, ...(r.status === 0 ? {} : { error: `exit ${r.status ?? r.signal}` }) });
      console.log(`== bench/${w.file}: ${r.status === 0 ? 'ok' : 'failed'} in ${seconds} s`);
    }
  }
  const wallSeconds = Math.round((performance.now() - t0) / 1000);
  const body = table(rows);
  console.log('\n' + body + `\n\nscripts ${benchSeconds} s, whole run ${wallSeconds} s`);
  if (write) {
    const dirty = sh('git', ['status', '--porcelain', '--', 'src', 'bench', 'scripts']) !== '';
    const env = {
      date: started,
      commit: sh('git', ['rev-parse', 'HEAD']),
      dirty,
      node: process.version,
      chromium: await chromiumVersion(),
      cores: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      memoryGB: Math.round(totalmem() / 2 ** 30),
      loadAverageAtStart: load,
      wallSeconds,
    };
    writeFileSync(join(here, 'results.json'), JSON.stringify({ ...env, scripts: runs, rows }, null, 2) + '\n');
    const readmePath = join(here, 'RESULTS.md');
    const stamp =
      `From one \`npm run bench\` on ${started.slice(0, 16).replace('T', ' ')} UTC, commit \`${env.commit.slice(0, 10)}\`${dirty ? ' (with uncommitted changes)' : ''}: ` +
      `Node ${env.node}, Chromium ${env.chromium}, ${env.cores} cores (${env.cpu}), load average ${load.join(' ')} at the start; ` +
      `the whole run took ${wallSeconds} s (${runs.map((r) => `${r.file.replace(/\.ts$/, '')} ${Math.round(r.seconds)} s${r.status === 'ok' ? '' : ` ${r.status}`}`).join(', ')}). ` +
      `Every ratio is measured within that run (bench/results.json has the raw rows).\n\n`;
    writeFileSync(readmePath, withTable(readFileSync(readmePath, 'utf8'), stamp + body));
    console.log('wrote bench/results.json and the table in bench/RESULTS.md');
  }
  const bad = runs.filter((r) => r.status !== 'ok');
  if (bad.length) console.error(`\nfailed: ${bad.map((r) => `${r.file} (${r.error})`).join('; ')}`);
  process.exit(bad.length ? 1 : 0);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
