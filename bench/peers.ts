// The first flame graph in Chromium, ours against speedscope and d3-flame-graph (issue 11, point 1),
// and FlameGraph's flamegraph.pl (perl, folded file to SVG, ../shared/peer-tools; issue 21),
// on the same stacks at 1k, 10k, 100k and 262k unique stacks.
//
// Each size is one `cli generate` capture (v8, depth 4-64, uniform popularity, 4 events per
// stack so nearly every stack is in the trace), cached in /tmp (bench/generated.ts). Our app is
// handed its files (trace, stack_map_bin, stack_map_stat, kallsyms) through its file input; the
// peers get the folded form of the same stacks and weights (bench/peers/folded.ts, checked
// against our flame tree). Timed from the file input's change event to the first painted flame
// graph (bench/peers/hooks.ts): ours, the `smx:flame-painted` mark whose wrapper shows the new
// capture's tree; speedscope, the frame after its first WebGL draw; d3-flame-graph, the frame
// after its SVG rects are in the DOM. Each tool capped at --cap seconds (120: ours draws 262k in ~7 s, so a peer not drawn by then is over 15x slower), "not drawn" is null.
//
//   npx tsx bench/peers.ts [--sizes 1k,10k,100k,262k] [--cap S] [--rounds N] [--budget S] [--json] [--smoke]
//   --budget S (1200): no size is started after S seconds
import type { Browser } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, newPage, serve, type Served } from '../scripts/browser.ts';
import type { Peer, Row } from './contract.ts';
import { generated } from './generated.ts';
import { foldedInput, type FoldedInput } from './peers/folded.ts';
import { OURS_HOOK, SPEEDSCOPE_HOOK } from './peers/hooks.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..');
const argv = process.argv.slice(2);
const arg = (n: string, d: string) => (argv.indexOf(n) >= 0 ? argv[argv.indexOf(n) + 1] : d);
const SMOKE = argv.includes('--smoke');
const JSON_OUT = argv.includes('--json');
const CAP_S = Number(arg('--cap', SMOKE ? '60' : '120'));
const REPEAT_S = 20;
const BUDGET_S = Number(arg('--budget', '1200'));
const SIZES: Record<string, number> = { '300': 300, '1k': 1000, '10k': 10_000, '100k': 100_000, '262k': 262_144 };
const sizes = arg('--sizes', SMOKE ? '300' : '1k,10k,100k,262k').split(',');
/** PEERS_SHOTS=DIR: a screenshot of each tool once timed, to see what was counted as drawn */
const SHOTS = process.env.PEERS_SHOTS ?? '';
const shot = async (page: import('@playwright/test').Page, name: string) => {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`) }).catch(() => {});
};
const log = (s: string) => (JSON_OUT ? process.stderr : process.stdout).write(s + '\n');

/** The built app: BENCH_DIST when the scoreboard built it, else built here. */
export function appDist(tag: string): string {
  const given = process.env.BENCH_DIST;
  if (given && existsSync(join(given, 'index.html'))) return given;
  const out = `/tmp/dist-bench-${tag}`;
  const r = spawnSync('npx', ['vite', 'build', '--outDir', out, '--emptyOutDir'], { cwd: repo, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vite build failed: ${r.stderr.slice(-1000)}`);
  return out;
}

/** Closes the page's context, giving up after 10 s (a page stuck in one long task can hold it up; main() then starts a new browser). */
const closeSoon = (page: import('@playwright/test').Page) =>
  Promise.race([
    page
      .context()
      .close()
      .catch(() => {}),
    new Promise((ok) => setTimeout(ok, 10_000)),
  ]);

interface Timing {
  ms: number | null;
  note?: string;
}

async function timeOurs(browser: Browser, url: string, files: string[], f: FoldedInput): Promise<Timing> {
  const page = await newPage(browser);
  try {
    await page.addInitScript(OURS_HOOK);
    // the flame graph by function, as the peers draw the folded file
    await page.goto(url + '/?frames=function');
    // the sample capture first: its paint must not be taken for ours
    await page.waitForFunction(() => (window as any).__smx.length > 0, null, { timeout: 60_000 });
    await page.getByTestId('file-input').setInputFiles(files);
    const handle = await page
      .waitForFunction(
        ({ nodes, unique }) => {
          const w = window as any;
          const p = w.__smx.find((x: any) => w.__t0 && x.t > w.__t0 && x.nodes === nodes && x.painted > 0 && x.unique === unique);
          return p ? p.t - w.__t0 : null;
        },
        { nodes: f.pageNodes, unique: f.uniqueStacks },
        { timeout: CAP_S * 1000, polling: 100 },
      )
      .catch(() => null);
    if (!handle) {
      const last = await page.evaluate(() => (window as any).__smx.slice(-1)[0] ?? null);
      return { ms: null, note: `not drawn in ${CAP_S} s (last paint: ${JSON.stringify(last)}; expected ${f.pageNodes} nodes, ${f.uniqueStacks} unique)` };
    }
    const ms = (await handle.jsonValue()) as number;
    await shot(page, `ours-${f.uniqueStacks}`);
    return { ms };
  } finally {
    await closeSoon(page);
  }
}

async function timeSpeedscope(browser: Browser, url: string, f: FoldedInput): Promise<Timing> {
  const page = await newPage(browser);
  try {
    await page.addInitScript(SPEEDSCOPE_HOOK);
    await page.goto(url + '/speedscope/index.html');
    await page.locator('input#file').waitFor({ state: 'attached', timeout: 30_000 });
    await page.locator('input#file').setInputFiles(f.path);
    const handle = await page
      .waitForFunction(
        () => {
          const w = window as any;
          return w.__gl.painted && w.__t0 ? w.__gl.painted - w.__t0 : null;
        },
        null,
        { timeout: CAP_S * 1000, polling: 100 },
      )
      .catch(() => null);
    if (!handle) return { ms: null, note: `not drawn in ${CAP_S} s` };
    const ms = (await handle.jsonValue()) as number;
    // it drew something: check that it is the flame chart of this file (its labels, no error page)
    await page.waitForFunction(() => (window as any).__gl.labels > 0, null, { timeout: 30_000 }).catch(() => null);
    const { labels, error } = await page.evaluate(() => ({
      labels: (window as any).__gl.labels as number,
      error: /something went wrong|unrecognized format/i.test(document.body.innerText),
    }));
    if (error || labels === 0) return { ms: null, note: `drew no flame chart (${error ? 'an import error' : 'no labels'})` };
    await shot(page, `speedscope-${f.uniqueStacks}`);
    return { ms };
  } finally {
    await closeSoon(page);
  }
}

async function timeD3(browser: Browser, url: string, f: FoldedInput): Promise<Timing> {
  const page = await newPage(browser);
  try {
    await page.addInitScript('window.__t0 = 0');
    await page.goto(url + '/peers/d3.html');
    await page.locator('#file').setInputFiles(f.path);
    const handle = await page
      .waitForFunction(
        () => {
          const p = (window as any).__peer;
          return p.error ? { error: p.error } : p.tDrawn ? p : null;
        },
        null,
        { timeout: CAP_S * 1000, polling: 250 },
      )
      .catch(() => null);
    if (!handle) return { ms: null, note: `not drawn in ${CAP_S} s` };
    const p = (await handle.jsonValue()) as { error?: string; t0: number; tDrawn: number; total: number; leaves: number; rects: number };
    if (p.error) return { ms: null, note: `failed: ${p.error.split('\n')[0]}` };
    if (p.total !== f.total || p.leaves !== f.leaves)
      return { ms: null, note: `built another tree: total ${p.total} (want ${f.total}), leaves ${p.leaves} (want ${f.leaves})` };
    await shot(page, `d3-${f.uniqueStacks}`);
    return { ms: p.tDrawn - p.t0 };
  } finally {
    await closeSoon(page);
  }
}

/**
 * A peer's timing, given up on from this side CAP_S + 30 s after it started: a page stuck in one
 * long task (d3-flame-graph on 100k stacks built a 10 GB renderer for 9 minutes) answers neither
 * its own waitForFunction timeout nor a close, so the cap is kept here and the caller starts a
 * new browser.
 */
function capped(t: Promise<Timing>): Promise<Timing> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Timing>((ok) => {
    timer = setTimeout(() => ok({ ms: null, note: `not drawn in ${CAP_S} s (the page stopped answering)` }), (CAP_S + 30) * 1000);
  });
  t.catch(() => {});
  return Promise.race([t, late]).finally(() => clearTimeout(timer));
}

/** FlameGraph's flamegraph.pl (../shared/peer-tools, not vendored): the folded file to an SVG, a process timed from start to exit. */
const FLAMEGRAPH_PL = join(repo, '../shared/peer-tools/flamegraph.pl');
function timeFlamegraphPl(f: FoldedInput): Timing {
  if (!existsSync(FLAMEGRAPH_PL)) return { ms: null, note: `not run: ${FLAMEGRAPH_PL} is absent` };
  const t = performance.now();
  const r = spawnSync('perl', [FLAMEGRAPH_PL, f.path], { encoding: 'utf8', maxBuffer: 1 << 30, timeout: CAP_S * 1000 });
  const ms = performance.now() - t;
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') return { ms: null, note: `not drawn in ${CAP_S} s` };
  if (r.status !== 0) return { ms: null, note: `failed (exit ${r.status}): ${r.stderr.slice(0, 200)}` };
  // an SVG with a rectangle per drawn frame
  const rects = (r.stdout.match(/<rect /g) ?? []).length;
  if (!r.stdout.startsWith('<?xml') || rects < 2) return { ms: null, note: `wrote no flame graph (${rects} rectangles)` };
  return { ms };
}

const best = (xs: Timing[]): Timing => {
  const ok = xs.filter((x) => x.ms !== null);
  return ok.length ? ok.reduce((a, b) => (b.ms! < a.ms! ? b : a)) : xs[0];
};

async function main(): Promise<void> {
  const dist = appDist('peers');
  const nm = join(repo, 'node_modules');
  const served: Served = await serve({
    '/': dist,
    '/speedscope/': join(nm, 'speedscope/dist/release'),
    '/d3fg/': join(nm, 'd3-flame-graph/dist'),
    '/d3/': join(nm, 'd3/dist'),
    '/peers/': join(here, 'peers'),
  });
  let browser = await launch();
  const rows: Row[] = [];
  /** a peer that was not drawn at a size is not tried at larger ones (it would only use the cap again) */
  const gaveUp = new Map<string, string>();
  try {
    const t0 = performance.now();
    for (const label of sizes) {
      // past the budget, the sizes left are not started (the scoreboard shows them as failed rows),
      // so the sizes done still print their rows before the scoreboard's own timeout
      if ((performance.now() - t0) / 1000 > BUDGET_S) {
        log(`${label}: not started, past the --budget of ${BUDGET_S} s`);
        continue;
      }
      const n = SIZES[label];
      if (!n) throw new Error(`unknown size ${label}: one of ${Object.keys(SIZES).join(', ')}`);
      const cap = generated(['--stacks', String(n), '--depth', '4-64', '--zipf', '0', '--events', String(4 * n), '--seed', '1']);
      const f = await foldedInput(cap);
      log(
        `${label}: ${f.uniqueStacks} unique stacks, ${f.lines} folded lines (${(f.bytes / 1e6).toFixed(1)} MB), ${f.treeNodes} flame nodes, ${f.leaves} leaves, weight ${f.total}`,
      );
      const rounds = Number(arg('--rounds', SMOKE ? '1' : n <= 1000 ? '3' : n <= 10_000 ? '2' : '1'));
      const got: Record<'ours' | 'speedscope' | 'd3' | 'flamegraph', Timing[]> = { ours: [], speedscope: [], d3: [], flamegraph: [] };
      for (let r = 0; r < rounds; r++) {
        // alternating, so a slow spell of the machine falls on all three
        got.ours.push(await timeOurs(browser, served.url, cap.files, f));
        for (const [peer, fn] of [
          ['speedscope', timeSpeedscope],
          ['d3', timeD3],
        ] as const) {
          const skip = gaveUp.get(peer);
          // a peer that took over REPEAT_S seconds is timed once: its best of more would not change the row
          if (r > 0 && !skip && (got[peer][0].ms === null || got[peer][0].ms! > REPEAT_S * 1000)) continue;
          const t = skip ? { ms: null, note: skip } : await capped(fn(browser, served.url, f));
          if (t.ms === null && !skip) {
            gaveUp.set(peer, `not tried: ${t.note} at ${label}`);
            // a page still busy in one long task can keep its renderer (shared by the next pages)
            // running after its context is closed: a new browser, so it slows no later timing
            await Promise.race([browser.close().catch(() => {}), new Promise((ok) => setTimeout(ok, 10_000))]);
            browser = await launch();
          }
          got[peer].push(t);
        }
        const fgSkip = gaveUp.get('flamegraph');
        if (r === 0 || (got.flamegraph[0].ms !== null && got.flamegraph[0].ms! <= REPEAT_S * 1000)) {
          const t = fgSkip ? { ms: null, note: fgSkip } : timeFlamegraphPl(f);
          if (t.ms === null && !fgSkip) gaveUp.set('flamegraph', `not tried: ${t.note} at ${label}`);
          got.flamegraph.push(t);
        }
        const show = (t: Timing[]) => (t[r] ? (t[r].ms?.toFixed(0) ?? t[r].note) : 'not repeated');
        log(
          `  round ${r + 1}: ours ${show(got.ours)} ms, speedscope ${show(got.speedscope)}, d3-flame-graph ${show(got.d3)}, flamegraph.pl ${show(got.flamegraph)}`,
        );
      }
      const ours = best(got.ours);
      const ss = best(got.speedscope);
      const d3 = best(got.d3);
      const fg = best(got.flamegraph);
      const round = (x: number | null) => (x === null ? null : Math.round(x));
      const peers: Peer[] = [
        { name: 'speedscope', value: round(ss.ms), unit: 'ms', ...(ss.note ? { note: ss.note } : {}) },
        { name: 'd3-flame-graph', value: round(d3.ms), unit: 'ms', ...(d3.note ? { note: d3.note } : {}) },
        {
          name: 'flamegraph.pl',
          value: round(fg.ms),
          unit: 'ms',
          note: `FlameGraph's perl script, folded file to SVG (a process)${fg.note ? `; ${fg.note}` : ''}`,
        },
      ];
      const row: Row = {
        id: `flame-peers-${label}`,
        what: `first flame graph from the file handed over, ${f.uniqueStacks.toLocaleString('en-US')} unique stacks (depth 4-64, ${f.total.toLocaleString('en-US')} records), best of ${rounds} (a tool over ${REPEAT_S} s: once)`,
        value: round(ours.ms) ?? Number.NaN,
        unit: 'ms',
        peers,
        note: `ours reads the capture (trace ${(cap.report.files[0].bytes / 1e6).toFixed(0)} MB + stack_map_bin + kallsyms); the peers read its folded form (${(f.bytes / 1e6).toFixed(1)} MB, ${f.lines.toLocaleString('en-US')} lines)${ours.note ? `; ours: ${ours.note}` : ''}`,
      };
      if (!SMOKE) {
        row.goal = 'faster than every peer that draws it';
        // a peer not drawn within the cap is reported as that ("not drawn in N s"), never as a ratio
        const drawn = [ss, d3, fg].filter((t) => t.ms !== null);
        row.met = ours.ms !== null && drawn.every((t) => ours.ms! < t.ms!);
        if (ss.ms !== null) row.ratio = Math.round((ours.ms! / ss.ms) * 100) / 100;
        if (ss.ms !== null) row.baseline = { what: 'speedscope, same stacks', value: round(ss.ms)!, unit: 'ms' };
      }
      if (ours.ms === null) throw new Error(`ours was not drawn at ${label}: ${ours.note}`);
      rows.push(row);
    }
  } finally {
    await browser.close();
    await served.close();
  }
  if (JSON_OUT) console.log(JSON.stringify({ rows }));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
