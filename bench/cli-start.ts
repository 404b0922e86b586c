// How fast the command line starts (issue 11, point 6: `--help` within 2x of `node -e 0`).
// Builds the CLI (npm run build:cli), then times, alternating, best of 10 each:
//   node -e 0 | node dist-cli/stackmap-explorer.mjs --help | npm run --silent cli -- --help (tsx,
//   the first 3 rounds only: it is there for scale)
// and prints the ratios to `node -e 0`. `--json`: the last line is `{"rows": [...]}` (the
// scoreboard's contract, bench/README.md); `--smoke`: 2 runs each, the same checks, no target.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { buildCli } from '../scripts/build-cli.ts';

const root = new URL('../', import.meta.url).pathname;
const SMOKE = process.argv.includes('--smoke');
const RUNS = SMOKE ? 2 : Number(process.env.CLI_START_RUNS ?? 10);

export interface CliStart {
  runs: number;
  nodeMs: number;
  bundleMs: number;
  tsxMs: number;
  /** bundled --help / node -e 0 */
  ratio: number;
  /** npm run cli -- --help (tsx) / node -e 0 */
  tsxRatio: number;
  target: number;
  met: boolean;
}

function timeOnce(cmd: string, args: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

export async function measureCliStart(runs = RUNS): Promise<CliStart> {
  await buildCli();
  const bundle = root + 'dist-cli/stackmap-explorer.mjs';
  if (!existsSync(bundle)) throw new Error('build:cli wrote no dist-cli/stackmap-explorer.mjs');
  const cases: [string, string[]][] = [
    [process.execPath, ['-e', '0']],
    [process.execPath, [bundle, '--help']],
    ['npm', ['run', '--silent', 'cli', '--', '--help']],
  ];
  const best = cases.map(() => Infinity);
  for (const [cmd, args] of cases) timeOnce(cmd, args); // warm the file cache
  for (let i = 0; i < runs; i++) {
    cases.forEach(([cmd, args], k) => {
      // npm + tsx (~10x, for scale only) in the first three rounds: it is most of this script's time
      if (k === 2 && i >= 3) return;
      best[k] = Math.min(best[k], timeOnce(cmd, args));
    });
  }
  const [nodeMs, bundleMs, tsxMs] = best;
  const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
  const ratio = bundleMs / nodeMs;
  return {
    runs,
    nodeMs: round(nodeMs, 1),
    bundleMs: round(bundleMs, 1),
    tsxMs: round(tsxMs, 1),
    ratio: round(ratio),
    tsxRatio: round(tsxMs / nodeMs),
    target: 2,
    met: ratio <= 2,
  };
}

/** The scoreboard's rows (bench/README.md): the bundle against `node -e 0`, and tsx for scale. */
export function cliStartRows(r: CliStart, smoke = false) {
  const node = { what: 'node -e 0 (best of the same alternating runs)', value: r.nodeMs, unit: 'ms' };
  return [
    {
      id: 'cli-start-help',
      what: `node dist-cli/stackmap-explorer.mjs --help, best of ${r.runs}`,
      value: r.bundleMs,
      unit: 'ms',
      baseline: node,
      ratio: r.ratio,
      goal: `<= ${r.target}x node -e 0`,
      ...(smoke ? {} : { met: r.met }),
    },
    {
      id: 'cli-start-tsx',
      what: `npm run cli -- --help (npm + tsx from source), best of ${Math.min(3, r.runs)}`,
      value: r.tsxMs,
      unit: 'ms',
      baseline: node,
      ratio: r.tsxRatio,
      note: 'for scale: what the bundle saves',
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await measureCliStart();
  console.log(`cli start, best of ${r.runs}, alternating:`);
  console.log(`  node -e 0                                  ${r.nodeMs.toFixed(1)} ms`);
  console.log(
    `  node dist-cli/stackmap-explorer.mjs --help ${r.bundleMs.toFixed(1)} ms  ${r.ratio.toFixed(2)}x  (target <= ${r.target}x: ${SMOKE ? 'not checked in --smoke' : r.met ? 'met' : 'NOT met'})`,
  );
  console.log(`  npm run cli -- --help (tsx)                ${r.tsxMs.toFixed(1)} ms  ${r.tsxRatio.toFixed(2)}x`);
  if (process.argv.includes('--json')) console.log(JSON.stringify({ rows: cliStartRows(r, SMOKE) }));
}
