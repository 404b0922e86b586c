// The built command line as a user gets it: `npm pack` (which runs build:cli), the tarball
// installed into an empty folder, `npx stackmap-explorer ...` there. It must print what the source
// CLI (`npm run cli`, tsx) prints for the same files, and start its simulator workers.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('../', import.meta.url).pathname;
const SAMPLES = join(root, 'public/samples');
const samples = readdirSync(SAMPLES)
  .filter((f) => f !== 'index.json')
  .sort()
  .map((f) => join(SAMPLES, f));
const opts = { encoding: 'utf8' as const, maxBuffer: 64 << 20 };

describe('the packed command line', () => {
  let dir = '';
  const npx = (...args: string[]) => run('npx', ['--no-install', 'stackmap-explorer', ...args], { ...opts, cwd: dir });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'smx-pack-'));
    const packed = await run('npm', ['pack', '--silent', '--pack-destination', dir], { ...opts, cwd: root });
    const tgz = packed.stdout.trim().split('\n').pop()!;
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'smx-pack-test', private: true }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, tgz)], { ...opts, cwd: dir });
  }, 300_000);

  it('holds only the bundle, and --help works through npx', async () => {
    const files = readdirSync(join(dir, 'node_modules/stackmap-explorer')).sort();
    expect(files).toEqual(['LICENSE', 'README.md', 'bin', 'dist-cli', 'package.json']);
    // the bundle holds the code: what the install adds is DuckDB's native addon for sql (and its own dependencies), not the page's libraries
    const installed = readdirSync(join(dir, 'node_modules'));
    for (const pageOnly of ['react', 'react-dom', 'd3', 'apache-arrow', 'comlink', 'zustand', 'hyparquet-writer']) expect(installed).not.toContain(pageOnly);
    expect(readdirSync(join(dir, 'node_modules/@duckdb'))).not.toContain('duckdb-wasm');
    expect(readdirSync(join(dir, 'node_modules/stackmap-explorer/dist-cli'))).toEqual(expect.arrayContaining(['stackmap-explorer.mjs', 'sim-worker.mjs']));
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
