// The built command line as a user gets it: `npm pack` (which runs build:cli), the tarball
// installed into an empty folder, `npx stackmap-explorer ...` there. It must print what the source
// CLI (`npm run cli`, tsx) prints for the same files, and start its simulator workers.
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLE_NAMES } from '../src/core/tables/schema.ts';

const run = promisify(execFile);
const root = new URL('../', import.meta.url).pathname;
const SAMPLES = join(root, 'public/samples');
const samples = readdirSync(SAMPLES)
  .filter((f) => f !== 'index.json')
  .sort()
  .map((f) => join(SAMPLES, f));
const opts = { encoding: 'utf8' as const, maxBuffer: 64 << 20 };

let dir = '';
// packed and installed once, for both blocks below
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smx-pack-'));
  const packed = await run('npm', ['pack', '--silent', '--pack-destination', dir], { ...opts, cwd: root });
  const tgz = packed.stdout.trim().split('\n').pop()!;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'smx-pack-test', private: true }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, tgz)], { ...opts, cwd: dir });
}, 300_000);

describe('the packed command line', () => {
  const npx = (...args: string[]) => run('npx', ['--no-install', 'stackmap-explorer', ...args], { ...opts, cwd: dir });

  it('holds only the bundle, and --help works through npx', async () => {
    const files = readdirSync(join(dir, 'node_modules/stackmap-explorer')).sort();
    expect(files).toEqual(['LICENSE', 'README.md', 'bin', 'dist-cli', 'package.json']);
    // the bundle holds the code: what the install adds is DuckDB's native addon for sql (and its own dependencies), not the page's libraries
    const installed = readdirSync(join(dir, 'node_modules'));
    for (const pageOnly of ['react', 'react-dom', 'd3', 'apache-arrow', 'comlink', 'zustand', 'hyparquet-writer']) expect(installed).not.toContain(pageOnly);
    expect(readdirSync(join(dir, 'node_modules/@duckdb'))).not.toContain('duckdb-wasm');
    expect(readdirSync(join(dir, 'node_modules/stackmap-explorer/dist-cli'))).toEqual(
      expect.arrayContaining(['stackmap-explorer.mjs', 'sim-worker.mjs', 'THIRD_PARTY_NOTICES.txt']),
    );
    // the licences of the packages bundled (esbuild drops their comments), each as its own LICENSE file says it
    const notices = readFileSync(join(dir, 'node_modules/stackmap-explorer/dist-cli/THIRD_PARTY_NOTICES.txt'), 'utf8');
    for (const name of ['fflate', 're2js', 'modern-tar', 'hyparquet', 'hyparquet-writer']) {
      const pkgDir = join(root, 'node_modules', name);
      const lic = readdirSync(pkgDir).find((f) => /^licen[sc]e/i.test(f));
      expect(notices, name).toContain(`${name} ${JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version}`);
      if (lic) expect(notices, name).toContain(readFileSync(join(pkgDir, lic), 'utf8').trim());
    }
    const r = await npx('--help');
    expect(r.stdout).toMatch(/^usage: stackmap-explorer summary/);
    expect(r.stdout).toMatch(/stackmap-explorer generate --out DIR/);
    expect(r.stdout).toMatch(/stackmap-explorer whatif \[--json\]/);
  }, 60_000);

  it('summary --json on the sample equals npm run cli -- summary --json', async () => {
    const built = await npx('summary', '--json', ...samples);
    const source = await run('npm', ['run', '--silent', 'cli', '--', 'summary', '--json', ...samples], { ...opts, cwd: root });
    const b = JSON.parse(built.stdout);
    expect(b.events).toBe(4000);
    expect(b).toEqual(JSON.parse(source.stdout));
  }, 120_000);

  it('simulate --scenario v4-refused starts its worker_threads from the bundle', async () => {
    const out = join(dir, 'sim-out');
    const r = await npx('simulate', '--scenario', 'v4-refused', '--out', out, '--json');
    const rep = JSON.parse(r.stdout);
    expect(rep.scenario).toBe('v4-refused');
    expect(rep.mode).toBe('v4');
    expect(rep.workers.length).toBe(rep.cpus);
    expect(rep.effect.ok).toBe(true);
    expect(readdirSync(out)).toEqual(expect.arrayContaining(['trace', 'kallsyms']));
  }, 120_000);

  it('in a checkout without the bundle, the command says how to build it (not npx\'s bare "not found")', async () => {
    const bare = mkdtempSync(join(tmpdir(), 'smx-bare-'));
    mkdirSync(join(bare, 'bin'));
    copyFileSync(join(root, 'bin/stackmap-explorer.mjs'), join(bare, 'bin/stackmap-explorer.mjs'));
    const r = await run(process.execPath, [join(bare, 'bin/stackmap-explorer.mjs'), '--help'], opts).then(
      () => ({ code: 0, err: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, err: e.stderr }),
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain('npm run build:cli');
  }, 60_000);

  it('generate writes a capture from the bundle', async () => {
    const out = join(dir, 'gen-out');
    const r = await npx('generate', '--out', out, '--events', '500', '--stacks', '40', '--json');
    expect(JSON.parse(r.stdout)).toMatchObject({ events: 500, stacks: 40 });
    const s = JSON.parse((await npx('summary', '--json', ...readdirSync(out).map((f) => join(out, f)))).stdout);
    expect([s.events, s.cookies, s.resolved, s.uniqueStacks]).toEqual([500, 500, 500, 40]);
  }, 120_000);
});

// The installed bin as a Unix tool (issue 23, Done when): from a pipe, into `| head` and into
// flamegraph.pl, Ctrl-C at several points of a long export, four exports at once into one folder,
// and every file of that fleet read by arrow-rs (parquet-wasm) cell for cell as DuckDB reads it.
describe('the packed command line as a Unix tool', () => {
  const bin = () => join(dir, 'node_modules/stackmap-explorer/bin/stackmap-explorer.mjs');
  /** the bin run by node itself (no npx wrapper: a signal reaches the command's own process) */
  const P = (...args: string[]) => run(process.execPath, [bin(), ...args], opts);
  const sh = (script: string) =>
    run('bash', ['-c', script], { ...opts, env: { ...process.env, P: `${process.execPath} ${bin()}` } }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  const filesOf = (d: string) =>
    readdirSync(d)
      .sort()
      .map((f) => join(d, f));
  /** every file and folder under d, relative to it */
  const tree = (d: string) => (existsSync(d) ? (readdirSync(d, { recursive: true }) as string[]).sort() : []);
  const counts = (s: { events: number; cookies: number; resolved: number; unresolved: number; fullStacks: number; uniqueStacks: number }) => ({
    events: s.events,
    cookies: s.cookies,
    resolved: s.resolved,
    unresolved: s.unresolved,
    fullStacks: s.fullStacks,
    uniqueStacks: s.uniqueStacks,
  });
  let captures: string[][] = [];
  let long: string[] = [];

  beforeAll(async () => {
    // four small captures of different shapes, and one long one for the interrupts
    const shapes = [
      ['--mode', 'v8', '--seed', '1'],
      ['--mode', 'v7', '--seed', '2'],
      ['--mode', 'v8', '--seed', '3', '--full-stacks'],
      ['--mode', 'v7', '--seed', '4', '--depth', '2-40'],
    ];
    captures = await Promise.all(
      shapes.map(async (shape, k) => {
        const out = join(dir, `cap${k}`);
        await P('generate', '--out', out, '--events', '4000', '--stacks', String(100 + 50 * k), ...shape);
        return filesOf(out);
      }),
    );
    await P('generate', '--out', join(dir, 'long'), '--mb', '24');
    long = filesOf(join(dir, 'long'));
  }, 300_000);

  it('reads a pipe as a file (-, /dev/stdin, <(...)); | head ends it quietly with 0; folded into flamegraph.pl', async () => {
    const trace = captures[0].find((f) => f.endsWith('/trace'))!;
    const rest = captures[0].filter((f) => f !== trace);
    const direct = JSON.parse((await P('summary', '--json', ...captures[0])).stdout);
    const q = (s: string) => `'${s}'`;
    for (const how of [
      `cat ${q(trace)} | $P summary --json - ${rest.map(q).join(' ')}`,
      `cat ${q(trace)} | $P summary --json /dev/stdin ${rest.map(q).join(' ')}`,
      `$P summary --json <(cat ${q(trace)}) ${rest.map(q).join(' ')}`,
    ]) {
      const r = await sh(how);
      expect([r.code, r.stderr], how).toEqual([0, '']);
      const piped = JSON.parse(r.stdout);
      expect(counts(piped), how).toEqual(counts(direct));
      expect(piped.top, how).toEqual(direct.top);
    }
    // the reader goes after three lines: exit 0 for the whole pipeline, nothing on stderr
    const head = await sh(`set -o pipefail; $P sql "SELECT * FROM events" ${captures[0].map(q).join(' ')} | head -3`);
    expect([head.code, head.stderr, head.stdout.trimEnd().split('\n').length]).toEqual([0, '', 3]);
    // FlameGraph's own flamegraph.pl draws the folded export: its root counts every stack occurrence
    const FG = join(root, '../shared/peer-tools/flamegraph.pl');
    const svg = await sh(`set -o pipefail; $P export --format folded ${captures[0].map(q).join(' ')} | perl ${q(FG)}`);
    expect([svg.code, svg.stderr]).toEqual([0, '']);
    const all = /<title>all \(([\d,]+) samples, 100%\)<\/title>/.exec(svg.stdout);
    expect(all?.[1].replaceAll(',', '')).toBe(String(direct.resolved + direct.fullStacks));
  }, 120_000);

  it('Ctrl-C (and SIGTERM) at several points of a long export: exit 130, the folder as it was, sql still answers', async () => {
    const fleet = join(dir, 'int-fleet');
    await P('export', '--parquet', fleet, ...captures[1]);
    const before = tree(fleet);
    const trace = long.find((f) => f.endsWith('/trace'))!;
    const rest = long.filter((f) => f !== trace);
    const ended = (child: ReturnType<typeof spawn>) => new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    /** the export, interrupted once `ready` holds; a run that ended before the signal (exit 0) is run again, up to 3 times */
    const interrupt = async (
      point: string,
      ready: (child: ReturnType<typeof spawn>) => Promise<boolean>,
      signal: NodeJS.Signals = 'SIGINT',
      into = fleet,
      stdin = false,
    ) => {
      for (let attempt = 0; attempt < 3; attempt++) {
        const args = stdin ? ['-', ...rest] : long;
        const child = spawn(process.execPath, [bin(), 'export', '--parquet', into, ...args], { stdio: [stdin ? 'pipe' : 'ignore', 'ignore', 'pipe'] });
        let err = '';
        child.stderr!.on('data', (d) => (err += d));
        child.stdin?.on('error', () => {}); // the pipe closes under the last write once the signal has ended it
        const code = ended(child);
        if (await ready(child)) child.kill(signal);
        const c = await code;
        if (c === 0) {
          // it finished first: the capture is whole; take it out again and retry
          if (into !== fleet) rmSync(into, { recursive: true, force: true });
          else {
            // as the fleet was: its one capture flat again (the export converted it to folders)
            rmSync(fleet, { recursive: true, force: true });
            await P('export', '--parquet', fleet, ...captures[1]);
          }
          continue;
        }
        // the one line said is the layout's conversion (put back by the interrupt): no error, no stack trace
        expect([c, err.split('\n').filter((l) => l && !/ held capture \w+ as .*: moved to /.test(l))], point).toEqual([130, []]);
        return;
      }
      throw new Error(`${point}: the export ended each time before the signal reached it`);
    };
    /** polls for a condition the export shows on disk, while it runs */
    const appears = (what: (names: string[]) => boolean) => async (child: ReturnType<typeof spawn>) => {
      while (child.exitCode === null) {
        if (what(tree(fleet))) return true;
        await new Promise((r) => setTimeout(r, 10));
      }
      return false;
    };
    /** table t's temporary file: `.t.parquet.tmp-PID` flat, `t/.<id>.parquet.tmp-PID` in the folders layout */
    const tmpOf = (t: string) => (names: string[]) =>
      names.some((n) => n.includes(`.${t}.parquet.tmp-`) || (n.startsWith(`${t}/`) && n.includes('.parquet.tmp-')));
    // while the trace is still coming in on stdin: half of it written, the pipe taken up
    const half = readFileSync(trace).subarray(0, 12 << 20);
    const reading = async (child: ReturnType<typeof spawn>) => {
      await new Promise<void>((resolve) => child.stdin!.write(half, () => resolve()));
      return true;
    };
    await interrupt('reading standard input', reading, 'SIGINT', fleet, true);
    expect(tree(fleet)).toEqual(before);
    for (const [point, table, signal] of [
      ['the first table', 'events', 'SIGINT'],
      ['a middle table', 'frames', 'SIGTERM'],
      ['a late table', 'dumps', 'SIGINT'],
    ] as const) {
      await interrupt(point, appears(tmpOf(table)), signal);
      // nothing of the interrupted capture: no temporary file, no table, no lock
      expect(tree(fleet), point).toEqual(before);
    }
    const c = await P('sql', '--csv', 'SELECT count(*) AS n FROM captures', fleet);
    expect(c.stdout).toBe('n\r\n1\r\n');
    // into a new folder, interrupted while reading: the folder it made is gone again
    const fresh = join(dir, 'int-new');
    await interrupt('reading, into a new folder', reading, 'SIGINT', fresh, true);
    expect(existsSync(fresh)).toBe(false);
  }, 300_000);

  it('four exports started together into one folder: every capture there once, counts equal to each summary --json, and arrow-rs reads every file as DuckDB does', async () => {
    const fleet = join(dir, 'fleet4');
    const results = await Promise.all(captures.map((files, k) => P('export', '--parquet', fleet, '--label', `capture ${k}`, '--json', ...files)));
    const ids = results.map((r) => JSON.parse(r.stdout).captureId as string);
    expect(new Set(ids).size).toBe(4);
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const con = await db.connect();
    const rowsOf = async (q: string) => (await con.runAndReadAll(q)).getRowObjectsJS();
    try {
      const t = (name: string) => `read_parquet('${fleet}/${name}/*.parquet')`;
      const caps = await rowsOf(`SELECT capture_id, label FROM ${t('captures')} ORDER BY label`);
      expect(caps.map((r) => [r.capture_id, r.label])).toEqual(ids.map((id, k) => [id, `capture ${k}`]));
      for (const [k, files] of captures.entries()) {
        const s = JSON.parse((await P('summary', '--json', ...files)).stdout);
        const w = `WHERE capture_id = '${ids[k]}'`;
        const [r] = await rowsOf(`SELECT
            (SELECT count(*) FROM ${t('events')} ${w}) AS events,
            count(*) FILTER (WHERE kind IN ('cookie-v7', 'cookie-v8')) AS cookies,
            count(*) FILTER (WHERE kind IN ('cookie-v7', 'cookie-v8') AND status IN ('resolved', 'unverified')) AS resolved,
            count(*) FILTER (WHERE kind IN ('cookie-v7', 'cookie-v8') AND status NOT IN ('resolved', 'unverified')) AS unresolved,
            count(*) FILTER (WHERE status = 'full') AS fullStacks,
            (SELECT count(*) FROM ${t('stacks')} ${w}) AS uniqueStacks
          FROM ${t('records')} ${w}`);
        expect(Object.fromEntries(Object.entries(r).map(([key, v]) => [key, Number(v)])), `capture ${k}`).toEqual(counts(s));
      }
      // every file of the folder, zero-row tables included, through arrow-rs (parquet-wasm) and DuckDB
      const { readParquet } = await import('parquet-wasm/node');
      const { tableFromIPC } = await import('apache-arrow');
      const norm = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v);
      const parquetFiles = tree(fleet).filter((f) => f.endsWith('.parquet'));
      expect(parquetFiles.length).toBe(TABLE_NAMES.length * 4);
      let empty = 0;
      let cells = 0;
      for (const f of parquetFiles) {
        const file = join(fleet, f);
        const a = tableFromIPC(readParquet(new Uint8Array(readFileSync(file))).intoIPCStream());
        const cols = a.schema.fields.map((_, j) => a.getChildAt(j)!);
        const arrowRs = Array.from({ length: a.numRows }, (_, i) => cols.map((c) => norm(c.get(i))));
        const duck = (await con.runAndReadAll(`SELECT * FROM read_parquet('${file}')`)).getRowsJS().map((row) => row.map(norm));
        expect(arrowRs, f).toEqual(duck);
        expect(
          a.schema.fields.map((x) => x.name),
          f,
        ).toEqual((await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`)).getRowObjectsJS().map((x) => x.column_name));
        if (a.numRows === 0) empty++;
        cells += a.numRows * cols.length;
      }
      expect(empty).toBeGreaterThan(0);
      expect(cells).toBeGreaterThan(100_000);
    } finally {
      con.closeSync();
      db.closeSync();
    }
  }, 300_000);
});
