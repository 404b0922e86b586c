// The bench scripts the scoreboard runs (bench/run.ts SCRIPTS), with `--smoke --json`: tiny
// inputs, each must exit 0 and print rows in the contract (bench/contract.ts). No timing is
// checked. Every Node script runs; of the browser ones only bench/peers.ts (the app and both
// peers, one small capture), since each browser script starts its own Chromium and the four
// together take minutes on this 2-core machine; BENCH_SMOKE_ALL=1 runs all of them (as
// `npx tsx bench/run.ts --smoke` does). Two lanes side by side, Node and browser (one production
// build shared through BENCH_DIST), so at most two run at a time; each test waits for its own.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowProblem, type Row } from './contract.ts';
import { runScript, SCRIPTS, sizeless, type Script, type ScriptRun } from './run.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));
const dist = `/tmp/dist-bench-smoke-${process.pid}`;
const BROWSER = SCRIPTS.filter((s) => s.browser && (process.env.BENCH_SMOKE_ALL === '1' || s.file === 'peers.ts'));
const CHOSEN = SCRIPTS.filter((s) => !s.browser || BROWSER.includes(s));
const results = new Map<string, Promise<{ run: ScriptRun; rows: Row[] }>>();

/** runs the lane's scripts one after another, each result as soon as it is known */
function lane(scripts: Script[], env: Record<string, string>) {
  let prev: Promise<unknown> = Promise.resolve();
  for (const s of scripts) {
    const p = prev.then(() => runScript({ ...s, timeout: 120 }, ['--smoke'], false, env));
    results.set(s.file, p);
    prev = p.catch(() => {});
  }
}

beforeAll(() => {
  const b = spawnSync('npx', ['vite', 'build', '--outDir', dist, '--emptyOutDir'], { cwd: repo, encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`vite build failed: ${b.stderr.slice(-1000)}`);
  const env = { BENCH_DIST: dist };
  lane(
    SCRIPTS.filter((s) => !s.browser),
    env,
  );
  lane(BROWSER, env);
}, 120_000);

afterAll(() => rmSync(dist, { recursive: true, force: true }));

describe('bench scripts --smoke --json', () => {
  for (const s of CHOSEN) {
    it(`bench/${s.file} prints valid rows`, async () => {
      const { run, rows } = await results.get(s.file)!;
      expect(run.error ?? '', `bench/${s.file}`).toBe('');
      expect(run.status).toBe('ok');
      for (const r of rows) expect(rowProblem(r), r.id).toBeNull();
      // the rows the scoreboard expects from it (their ids), when it names them
      const ids = rows.map((r) => r.id);
      for (const id of s.rows)
        expect(
          ids.some((x) => x === id || x.startsWith(sizeless(id))),
          id,
        ).toBe(true);
    }, 600_000);
  }
});
