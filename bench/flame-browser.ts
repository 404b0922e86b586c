// The flame graph over the prefix tree (issue 11 point 3): a generated stack_map_bin of 262,144
// stacks (bits=18, depth 4-64) with kallsyms and a trace, handed to the app's file input in
// headless Chromium, timed from the hand-over to the first paint of the flame canvas with the new
// capture; and flame() of the whole capture in Node.
//
//   npx tsx bench/flame-browser.ts [--dist DIR] [--rounds N] [--json] [--smoke]
//   npx tsx bench/flame-browser.ts --dist-a DIR_A [--against REV]   A and B alternating
//   options: --stacks N (262144), --depth 4-64, --events N (1000), --capture DIR (use as is)
//
// Browser row `flame-first-paint-262k`: from the `change` event of the app's file input to the
// paint signal of the flame canvas (FlameCanvas sets data-paint-count on its wrapper after each
// paint) whose tree has the node count the new capture's flame graph has (worked out in Node);
// baseline: the same page reading the same files' bytes (File.arrayBuffer), in the same round.
// With --dist-a (another build, e.g. main at an older commit, which may have no paint signal),
// both builds are also timed by a signal that needs none: the second animation frame after the
// flame pane shows the new tree's node count (the canvas is drawn in the frame after its commit),
// alternating A and B, best of --rounds each.
//
// Node row `flame-aggregate-262k`: flame() (top-down) over every stack of the capture's dump,
// each weighted by its ref_count (the selection's occurrences replaced by the dump's stacks, so
// all 262,144 take part; the trace alone holds a few hundred), against a plain loop over the
// stack table's nodes (a weight summed into each parent) in the same child process, best of
// --rounds. --against REV runs REV's src/core as A in alternating child processes.
//
// The renderer's memory: CDP Performance.getMetrics JSHeapUsedSize of the page after the paint
// (the main thread's heap; the ingest worker's heap is not in it).
import { arg, flag } from './args.ts';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser } from '@playwright/test';
import { launch, newPage, serve } from '../scripts/browser.ts';
import type { Row } from './contract.ts';
import { generated } from './generated.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));
const SMOKE = flag('--smoke');
/** the trace names every stack of the dump (generate --every-stack): the flame graph of the trace holds them all */
const EVERY = flag('--every-stack');
/** generate's --frames: call-graph walks (tens of thousands of distinct return addresses) or random frames (millions) */
const SHAPE = arg('--shape', 'callgraph');
if (SHAPE !== 'callgraph' && SHAPE !== 'random') throw new Error(`--shape callgraph|random, not ${SHAPE}`);
const JSON_OUT = flag('--json');
const STACKS = Number(arg('--stacks', SMOKE ? '3000' : '262144'));
const ROUNDS = Number(arg('--rounds', SMOKE ? '1' : '3'));
const log = (s: string) => (JSON_OUT ? process.stderr : process.stdout).write(s + '\n');

interface NodeFigures {
  ms: number;
  baseMs: number;
  /** flame nodes of the whole-dump tree, its total, the dump's stacks and their ref_counts summed */
  nodes: number;
  total: number;
  stacks: number;
  refs: number;
  /** the app's default flame graph (top-down, occurrences, everything selected): its node count */
  appNodes: number;
  appNodesWhole: number;
  /** the page's cut request over every stack of the dump: time (a fresh ExplorerData: its function tree included) and nodes made */
  culledMs: number;
  culledNodes: number;
}

/** flame() of the whole dump with `core` (a src/core folder), best of `rounds`, and the plain node loop. */
async function nodeFigures(core: string, dir: string, rounds: number): Promise<NodeFigures> {
  const { loadFiles } = await import(pathToFileURL(join(core, 'capture/load.ts')).href);
  const { Explorer } = await import(pathToFileURL(join(core, 'query/explorer.ts')).href);
  const names = ['kallsyms', 'stack_map_bin', 'trace'];
  const cap = await loadFiles(names.map((n) => ({ name: n, blob: new Blob([readFileSync(join(dir, n))]) })));
  const ex = new Explorer(cap);
  const d = ex.data;
  const all = { range: null, generation: null, cpus: null };
  // by function, as the peers and the rows before granularity existed measured it
  const req = { selection: all, mode: 'top-down', weight: 'occurrences', focus: null, highlightStack: null, granularity: 'function' } as const;
  // the page asks top-down with a cull (FlameGraph.tsx CULL_SHARE): the tree it draws; an older build (A) draws the whole
  const appNodes = ex.flame({ ...req, cull: { minShare: 1 / 4096, zoom: [] } }).tree.parent.length;
  const appNodesWhole = ex.flame(req).tree.parent.length;
  const stacks: number[] = [];
  const counts: number[] = [];
  let refs = 0;
  // every dump stack's ref_count (an older src/core keeps the index as refByGen)
  for (const m of (d.refByGen ?? d.refs.byGeneration()).values() as Iterable<Map<number, number>>) {
    for (const [s, r] of m) {
      stacks.push(s);
      counts.push(r);
      refs += r;
    }
  }
  const whole = {
    stacks: Int32Array.from(stacks),
    counts: Float64Array.from(counts),
    total: refs,
    first: new Int32Array(stacks.length),
    v7: new Float64Array(stacks.length),
    v8: new Float64Array(stacks.length),
  };
  d.occurrences = () => whole;
  const parent: Int32Array = d.node.parent;
  const plainLoop = () => {
    const t = performance.now();
    const w = new Float64Array(parent.length);
    for (let i = 0; i < stacks.length; i++) w[stacks[i]] += counts[i];
    for (let k = parent.length - 1; k > 0; k--) w[parent[k]] += w[k];
    const ms = performance.now() - t;
    if (w[0] !== refs) throw new Error(`the plain loop summed ${w[0]}, the dump holds ${refs}`);
    return ms;
  };
  // the page's request (top-down, cut to what a view draws) over every stack: what a first paint asks the worker
  const culledReq = { ...req, cull: { minShare: 1 / 4096, zoom: [] as string[] } };
  let culledMs = Infinity;
  let culledNodes = 0;
  for (let r = 0; r < rounds; r++) {
    // a fresh ExplorerData each round: the cut reuses totals for one, as a zoom does
    const fresh = new Explorer(cap);
    fresh.data.occurrences = () => whole;
    const t = performance.now();
    culledNodes = fresh.flame(culledReq).tree.parent.length;
    culledMs = Math.min(culledMs, performance.now() - t);
  }
  let ms = Infinity;
  let baseMs = Infinity;
  let tree = null as null | { parent: Int32Array; total: number; value: Float64Array; self: Float64Array };
  for (let r = 0; r < rounds; r++) {
    baseMs = Math.min(baseMs, plainLoop());
    tree = null;
    const t = performance.now();
    tree = ex.flame(req).tree;
    ms = Math.min(ms, performance.now() - t);
  }
  // the tree holds every ref once: the root's value, and self + children at the root
  let rootKids = 0;
  for (let i = 1; i < tree!.parent.length; i++) if (tree!.parent[i] === 0) rootKids += tree!.value[i];
  if (tree!.total !== refs || rootKids + tree!.self[0] !== refs)
    throw new Error(`flame total ${tree!.total} (root children ${rootKids}), the dump holds ${refs} refs`);
  return { ms, baseMs, nodes: tree!.parent.length, total: tree!.total, stacks: stacks.length, refs, appNodes, appNodesWhole, culledMs, culledNodes };
}

function spawnNode(core: string, dir: string, rounds: number): NodeFigures {
  const r = spawnSync(
    process.execPath,
    ['--max-old-space-size=8000', '--import', 'tsx', fileURLToPath(import.meta.url), '--node-child', core, '--capture', dir, '--rounds', String(rounds)],
    {
      cwd: repo,
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    },
  );
  if (r.status !== 0) throw new Error(`node child (${core}) exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as NodeFigures;
}

/** src/core as of `rev`, in a temp folder that runs as ES modules; removed by the caller. */
function coreAt(rev: string): { core: string; tmp: string } {
  const tmp = mkdtempSync(join(tmpdir(), 'flame-ab-'));
  const tar = execFileSync('git', ['-C', repo, 'archive', rev, 'src/core'], { maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', tmp], { input: tar });
  writeFileSync(join(tmp, 'package.json'), '{"type":"module"}\n');
  symlinkSync(join(repo, 'node_modules'), join(tmp, 'node_modules'));
  return { core: join(tmp, 'src/core'), tmp };
}

/**
 * In the page before the app: the hand-over time, the paint signal of the flame pane, and the
 * frame-based signal. Plain JS in a string: tsx's transform would add helpers the page lacks.
 */
const HOOK = `(() => {
  const fb = (window.__fb = { t0: 0, expected: [], paint: 0, seen: 0, dom: 0, readMs: -1, loaded: 0 });
  document.addEventListener('change', (e) => {
    if (e.target && e.target.dataset && e.target.dataset.testid === 'file-input') fb.t0 = performance.now();
  }, true);
  new MutationObserver((recs) => {
    for (const r of recs) {
      const el = r.target;
      // the load finished: what comes after it is the queries and the drawing
      if (fb.t0 && !fb.loaded && el.dataset.testid === 'load-progress' && el.dataset.status === 'done') fb.loaded = performance.now();
      if (fb.t0 && !fb.paint && el.dataset.testid === 'flame-main' && fb.expected.includes(Number(el.dataset.nodes))) fb.paint = performance.now();
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-paint-count', 'data-status'] });
  const tick = () => {
    if (fb.t0 && !fb.dom) {
      const el = document.querySelector('[data-testid="flame-main"]');
      if (el && fb.expected.includes(Number(el.dataset.nodes))) {
        if (fb.seen) fb.dom = performance.now();
        else fb.seen = 1;
      }
    }
    requestAnimationFrame(tick);
  };
  fb.start = () => requestAnimationFrame(tick);
})();`;

interface PageFigures {
  readMs: number;
  /** by the paint signal (null: the build has none) */
  paintMs: number | null;
  /** by the second frame after the pane shows the new tree */
  frameMs: number;
  heapMb: number;
  painted: number;
  /** to the load's end (load-progress data-status done), then from there to the paint */
  loadMs: number;
}

async function timePage(browser: Browser, url: string, files: string[], expected: number[], signal: boolean): Promise<PageFigures> {
  const page = await newPage(browser);
  try {
    await page.addInitScript({ content: HOOK });
    // by function, as `expected` counts the nodes (req above)
    await page.goto(url + '/?frames=function');
    // the app opens with its sample: that tree's paints must not be taken for the new one's
    await page.getByTestId('flame-main').waitFor({ timeout: 60_000 });
    await page.evaluate(() => {
      const input = document.createElement('input');
      input.type = 'file';
      input.multiple = true;
      input.id = 'bench-read';
      input.addEventListener('change', async () => {
        const t = performance.now();
        let bytes = 0;
        for (const f of input.files ?? []) bytes += (await f.arrayBuffer()).byteLength;
        (window as any).__fb.readMs = performance.now() - t;
        (window as any).__fb.readBytes = bytes;
      });
      document.body.append(input);
    });
    await page.locator('#bench-read').setInputFiles(files);
    await page.waitForFunction(() => (window as any).__fb.readMs >= 0, null, { timeout: 60_000 });
    await page.evaluate((n) => {
      const fb = (window as any).__fb;
      fb.expected = n;
      fb.start();
    }, expected);
    await page.getByTestId('file-input').setInputFiles(files);
    const done = signal ? '(window as any).__fb.paint > 0 && (window as any).__fb.dom > 0' : '(window as any).__fb.dom > 0';
    await page.waitForFunction(done.replaceAll('(window as any)', 'window'), null, { timeout: SMOKE ? 60_000 : 300_000, polling: 50 }).catch(async (e) => {
      const el = page.getByTestId('flame-main');
      const seen = {
        fb: await page.evaluate(() => (window as any).__fb),
        nodes: await el.getAttribute('data-nodes').catch(() => null),
        paints: await el.getAttribute('data-paint-count').catch(() => null),
      };
      throw new Error(`no flame paint of the new capture (${expected} nodes expected): ${JSON.stringify(seen)}; ${String(e).slice(0, 200)}`);
    });
    const fb = await page.evaluate(() => (window as any).__fb);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const heap = metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? NaN;
    const painted = Number((await page.getByTestId('flame-main').getAttribute('data-painted-nodes')) ?? 0);
    if (signal && !(painted > 0)) throw new Error('the flame canvas painted no rectangles');
    return {
      readMs: fb.readMs,
      paintMs: signal ? fb.paint - fb.t0 : null,
      frameMs: fb.dom - fb.t0,
      heapMb: heap / 2 ** 20,
      painted,
      loadMs: fb.loaded ? fb.loaded - fb.t0 : NaN,
    };
  } finally {
    await page.context().close();
  }
}

async function main(): Promise<void> {
  const genArgs = [
    '--stacks',
    String(STACKS),
    '--depth',
    arg('--depth', '4-64'),
    '--events',
    EVERY ? String(Math.max(STACKS, Number(arg('--events', '0')))) : arg('--events', '1000'),
  ];
  if (SHAPE === 'random') genArgs.push('--frames', 'random', '--symbols', '50000');
  if (EVERY) genArgs.push('--every-stack');
  const capture = arg('--capture', '') || generated(genArgs).dir;
  const files = ['kallsyms', 'stack_map_bin', 'trace'].map((n) => join(capture, n));
  const against = arg('--against', '');
  const rows: Row[] = [];
  const tag = (STACKS >= 262144 ? '262k' : `${Math.round(STACKS / 1000)}k`) + (EVERY ? '-every' : '') + (SHAPE === 'random' ? '-random' : '');

  // Node: B (and A) in alternating child processes
  const A = against ? coreAt(against) : null;
  const nodeB: NodeFigures[] = [];
  const nodeA: NodeFigures[] = [];
  try {
    for (let r = 0; r < (A ? ROUNDS : 1); r++) {
      if (A) {
        nodeA.push(spawnNode(A.core, capture, 1));
        log(`node A ${against}: flame ${nodeA.at(-1)!.ms.toFixed(0)} ms, plain loop ${nodeA.at(-1)!.baseMs.toFixed(1)} ms`);
      }
      nodeB.push(spawnNode(join(repo, 'src/core'), capture, A ? 1 : ROUNDS));
      log(`node B: flame ${nodeB.at(-1)!.ms.toFixed(0)} ms, plain loop ${nodeB.at(-1)!.baseMs.toFixed(1)} ms`);
    }
  } finally {
    if (A) rmSync(A.tmp, { recursive: true, force: true });
  }
  const best = (xs: NodeFigures[]) => xs.reduce((a, b) => (b.ms / b.baseMs < a.ms / a.baseMs ? b : a));
  const nb = best(nodeB);
  if (nodeA.length && best(nodeA).nodes !== nb.nodes) throw new Error(`A built ${best(nodeA).nodes} flame nodes, B ${nb.nodes}`);
  log(`node: ${nb.stacks} stacks, ${nb.refs} refs -> ${nb.nodes} flame nodes; the app's default tree: ${nb.appNodes} nodes`);
  rows.push({
    id: `flame-aggregate-${tag}`,
    what: `flame() top-down in Node over every stack of the dump (${nb.stacks}, weighted by ref_count) -> ${nb.nodes} nodes`,
    value: Math.round(nb.ms),
    unit: 'ms',
    baseline: { what: 'a plain loop over the stack table nodes (weights summed into parents)', value: Math.round(nb.baseMs * 10) / 10, unit: 'ms' },
    ratio: nb.ms / nb.baseMs,
    ...(nodeA.length
      ? {
          note: `A (${against}) best ${best(nodeA).ms.toFixed(0)} ms (${(best(nodeA).ms / best(nodeA).baseMs).toFixed(1)}x its loop), B/A by the ratio to the loop ${(nb.ms / nb.baseMs / (best(nodeA).ms / best(nodeA).baseMs)).toFixed(3)}`,
        }
      : {}),
  });

  rows.push({
    id: `flame-culled-${tag}`,
    what: `flame() top-down as the page asks it (cut to 1/4096 of the view) in Node over every stack of the dump (${nb.stacks}) -> ${nb.culledNodes} of ${nb.nodes} nodes made`,
    value: Math.round(nb.culledMs),
    unit: 'ms',
    baseline: { what: 'a plain loop over the stack table nodes (weights summed into parents)', value: Math.round(nb.baseMs * 10) / 10, unit: 'ms' },
    ratio: nb.culledMs / nb.baseMs,
    note: `the whole tree (flame-aggregate) took ${nb.ms.toFixed(0)} ms in the same process`,
  });

  // the browser
  // the scoreboard's build of this tree (BENCH_DIST); repo/dist may be an old `npm run test:e2e` build
  const distB = arg('--dist', process.env.BENCH_DIST || join(repo, 'dist'));
  const distA = arg('--dist-a', '');
  const sB = await serve({ '/': distB });
  const sA = distA ? await serve({ '/': distA }) : null;
  const browser = await launch(['--enable-precise-memory-info']);
  const gotB: PageFigures[] = [];
  const gotA: PageFigures[] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      if (sA) {
        // an older build draws the whole tree or, as this one, the cut
        gotA.push(await timePage(browser, sA.url, files, [nb.appNodesWhole, nb.appNodes], false));
        log(
          `browser A ${basename(distA)}: ${gotA.at(-1)!.frameMs.toFixed(0)} ms (frame signal), read ${gotA.at(-1)!.readMs.toFixed(0)} ms, heap ${gotA.at(-1)!.heapMb.toFixed(0)} MB`,
        );
      }
      gotB.push(await timePage(browser, sB.url, files, [nb.appNodes], true));
      const b = gotB.at(-1)!;
      log(
        `browser B: ${b.paintMs!.toFixed(0)} ms to the paint (${b.painted} rectangles; the load done at ${b.loadMs.toFixed(0)} ms; frame signal ${b.frameMs.toFixed(0)} ms), read ${b.readMs.toFixed(0)} ms, heap ${b.heapMb.toFixed(0)} MB`,
      );
    }
  } finally {
    await browser.close();
    await sB.close();
    await sA?.close();
  }
  const paint = Math.min(...gotB.map((g) => g.paintMs!));
  const read = Math.min(...gotB.map((g) => g.readMs));
  const heap = Math.max(...gotB.map((g) => g.heapMb));
  const fastest = gotB.reduce((a, g) => (g.paintMs! < a.paintMs! ? g : a));
  const ab = gotA.length
    ? `; A/B by the frame signal, best of ${ROUNDS} alternating: A ${Math.min(...gotA.map((g) => g.frameMs)).toFixed(0)} ms, B ${Math.min(...gotB.map((g) => g.frameMs)).toFixed(0)} ms, A heap ${Math.max(...gotA.map((g) => g.heapMb)).toFixed(0)} MB`
    : '';
  rows.push({
    id: `flame-first-paint-${tag}`,
    what: `stack_map_bin of ${STACKS} stacks + kallsyms + trace: file input to the first flame paint in Chromium`,
    value: Math.round(paint),
    unit: 'ms',
    baseline: { what: 'the same page reading the same files (File.arrayBuffer)', value: Math.round(read), unit: 'ms' },
    ratio: paint / read,
    // issue 38's bound: "< 1 s beyond reading" (the files read by the same page, the baseline)
    goal: '< 1 s beyond reading the files',
    ...(SMOKE ? {} : { met: paint - read < 1000 }),
    note: `of which the load ${fastest.loadMs.toFixed(0)} ms (file input to load-progress done), the rest ${(fastest.paintMs! - fastest.loadMs).toFixed(0)} ms the queries and the paint; renderer main-thread heap after the paint ${heap.toFixed(0)} MB (CDP JSHeapUsedSize); the flame graph of the trace's selection has ${nb.appNodes} nodes${ab}`,
  });
  for (const r of rows)
    log(`${r.id}: ${r.value} ${r.unit} (baseline ${r.baseline?.value} ${r.baseline?.unit}, ratio ${r.ratio?.toFixed(2)})${r.note ? ' -- ' + r.note : ''}`);
  if (JSON_OUT) console.log(JSON.stringify({ rows }));
}

// last: everything above is initialized by now
const nodeChild = arg('--node-child', '');
if (nodeChild) {
  const figures = await nodeFigures(nodeChild, arg('--capture', ''), ROUNDS);
  process.stdout.write(JSON.stringify(figures) + '\n');
} else {
  await main();
}
