// What a what-if costs the rest of the page, in headless Chromium: a generated capture of N events
// each with a full stack (the map off) loaded through the file input; once every pane has
// answered, the what-if pane's buffer size is changed (a new what-if: 2 modes x 9 bits replayed)
// and, until its answer is shown, the timeline is zoomed in and out with W and S every 40 ms. The
// page's Worker is wrapped before the app loads, so every Comlink call to any worker is timed from
// its postMessage to its answer: the worst timeline call during the what-if is the delay a user
// sees. The same hook works on any build, so A (the app at REV) and B (this tree) are measured the
// same way, alternating.
//
//   npx tsx bench/whatif-browser.ts [--events N] [--runs N] [--against REV] [--b REV | --dist DIR] [--json] [--smoke]
//   (A = the app at REV, B = this tree's build, or the app at --b REV; alternating)
//
// Rows: whatif-timeline-worst-ms (B's worst timeline delay; baseline A's), whatif-page-ms (from the
// change to the table shown).
import { arg, flag } from './args.ts';
import type { Browser } from '@playwright/test';
import { captureShown, launch, newPage, serve } from '../scripts/browser.ts';
import type { Row } from './contract.ts';
import { generated } from './generated.ts';
import { buildAt, thisDist } from './timeline-build.ts';

const SMOKE = flag('--smoke');
const JSON_OUT = flag('--json');
const EVENTS = Number(arg('--events', SMOKE ? '5000' : '200000'));
const RUNS = Number(arg('--runs', SMOKE ? '1' : '3'));
const AGAINST = arg('--against', '');
const log = (s: string) => (JSON_OUT ? process.stderr : process.stdout).write(s + '\n');

/** Installed before the app: times every Comlink call (APPLY) to every worker, by its path. */
const HOOK = `(() => {
  const calls = [];
  window.__wi = { calls };
  const W = window.Worker;
  window.Worker = class extends W {
    constructor(url, opts) {
      super(url, opts);
      this.__open = new Map();
      this.__name = (opts && opts.name) || String(url);
      this.addEventListener('message', (e) => {
        const d = e.data;
        const o = d && this.__open.get(d.id);
        if (!o) return;
        this.__open.delete(d.id);
        calls.push({ worker: this.__name, path: o.path, t0: o.t0, t1: performance.now() });
      });
    }
    postMessage(msg, transfer) {
      if (msg && msg.type === 'APPLY' && msg.id) this.__open.set(msg.id, { path: (msg.path || []).join('.'), t0: performance.now() });
      return super.postMessage(msg, transfer);
    }
  };
})();`;

interface Call {
  worker: string;
  path: string;
  t0: number;
  t1: number;
}

interface Run {
  /** worst timeline call while nothing else runs */
  idleWorst: number;
  /** worst timeline call (started before the what-if was shown) during the what-if */
  worst: number;
  timelineCalls: number;
  /** from the input's change to the new table shown, nothing else asked meanwhile */
  pageMs: number;
  /** the same while the timeline is zoomed */
  pageKeysMs: number;
  /** the most steps the pane's progress showed done before the answer (0: never seen; A has none) */
  progressSeen: number;
  /** answers from what-if workers for two sizes asked one after the other, the first mid-replay (B: 1, the first cancelled; -1: not tried) */
  supersededAnswers: number;
  /** whether the first size's table was ever shown at the end (never) */
  supersededShown: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function oneRun(browser: Browser, url: string, trace: string): Promise<Run> {
  const page = await newPage(browser);
  try {
    await page.addInitScript(HOOK);
    await page.goto(url + '/');
    await page.waitForFunction(() => document.querySelector('[data-testid="load-progress"]')?.getAttribute('data-status') === 'done', null, {
      timeout: 60_000,
    });
    await page.getByTestId('file-input').setInputFiles([trace]);
    await captureShown(page, EVENTS, 10 * 60_000);
    // the first what-if (asked on load) shown
    await page
      .getByTestId('whatif-row')
      .first()
      .waitFor({ timeout: 10 * 60_000 });
    await sleep(500);
    const box = (await page.getByTestId('timeline').boundingBox())!;
    await page.mouse.move(box.x + 4, box.y - 40);
    const press = async (ms: number, until?: () => Promise<boolean>) => {
      const end = Date.now() + ms;
      let k = 0;
      while (Date.now() < end && !(until && (await until()))) {
        await page.keyboard.press(k++ % 2 === 0 ? 'KeyW' : 'KeyS');
        await sleep(40);
      }
    };
    const timelineCalls = async (from: number, to: number) =>
      ((await page.evaluate(() => (window as unknown as { __wi: { calls: Call[] } }).__wi.calls)) as Call[]).filter(
        (c) => c.path === 'timeline' && c.t0 >= from && c.t0 <= to,
      );
    // idle: the timeline's own delay
    const idleFrom = await page.evaluate(() => performance.now());
    await press(1500);
    const idleTo = await page.evaluate(() => performance.now());
    const idle = await timelineCalls(idleFrom, idleTo);
    // a new what-if (another buffer size): alone, then while the timeline is zoomed
    const input = page.getByTestId('whatif-buffer-kb');
    let progressSeen = 0;
    const whatIf = async (keys: boolean) => {
      const kb = String(400 + Math.floor(Math.random() * 500));
      await input.fill(kb);
      const from = await page.evaluate(() => performance.now());
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      const shown = async () => {
        progressSeen = Math.max(
          progressSeen,
          Number(
            (await page
              .getByTestId('whatif-progress')
              .getAttribute('data-done', { timeout: 50 })
              .catch(() => '0')) ?? 0,
          ),
        );
        return ((await page.getByTestId('whatif-basis').textContent()) ?? '').includes(`buffer ${kb} KB`);
      };
      if (keys) await press(10 * 60_000, shown);
      else while (!(await shown())) await sleep(20);
      return { from, to: await page.evaluate(() => performance.now()) };
    };
    const alone = await whatIf(false);
    await sleep(300);
    const { from, to } = await whatIf(true);
    await sleep(300);
    const during = await timelineCalls(from, to);
    // superseded: a new size while a replay is on its way ends it (B: no answer from its worker), the newer one is shown
    const calls = async () => (await page.evaluate(() => (window as unknown as { __wi: { calls: Call[] } }).__wi.calls)) as Call[];
    const whatifAnswers = async () => (await calls()).filter((c) => c.worker === 'whatif').length;
    const runsBefore = await whatifAnswers();
    /** -1: not tried (A has no what-if worker, or the first replay ended before the second size was asked) */
    let answered = -1;
    let basis = '';
    if (runsBefore > 0) {
      await input.fill('333');
      await page.waitForFunction(() => Number(document.querySelector('[data-testid="whatif-progress"]')?.getAttribute('data-done') ?? 0) >= 2, null, {
        timeout: 120_000,
        polling: 10,
      });
      const first = await whatifAnswers();
      await input.fill('444');
      await page.waitForFunction(() => (document.querySelector('[data-testid="whatif-basis"]')?.textContent ?? '').includes('buffer 444 KB'), null, {
        timeout: 600_000,
        polling: 50,
      });
      await sleep(300);
      basis = (await page.getByTestId('whatif-basis').textContent()) ?? '';
      if (first === runsBefore) answered = (await whatifAnswers()) - runsBefore;
    }
    if (during.length === 0) throw new Error('no timeline call during the what-if: the keys did not reach the timeline');
    return {
      idleWorst: Math.max(...idle.map((c) => c.t1 - c.t0)),
      worst: Math.max(...during.map((c) => c.t1 - c.t0)),
      timelineCalls: during.length,
      pageMs: alone.to - alone.from,
      pageKeysMs: to - from,
      progressSeen,
      // A replays in the ingest worker (no 'whatif' worker): its superseded what-if still ran to the end
      supersededAnswers: answered,
      supersededShown: basis.includes('buffer 333 KB'),
    };
  } finally {
    await page.close();
  }
}

async function main() {
  const cap = generated(['--events', String(EVENTS), '--full-stacks']);
  const trace = cap.files.find((f) => f.endsWith('/trace'))!;
  const bRev = arg('--b', '');
  const distB = bRev ? buildAt(bRev) : thisDist(arg('--dist', ''));
  const distA = AGAINST ? buildAt(AGAINST) : null;
  // each build on a server of its own, at the root (the app's asset paths are absolute)
  const servedA = distA ? await serve({ '/': distA }) : null;
  const servedB = await serve({ '/': distB });
  const browser = await launch();
  const runs: { A: Run[]; B: Run[] } = { A: [], B: [] };
  try {
    for (let i = 0; i < RUNS; i++) {
      for (const side of distA ? (['A', 'B'] as const) : (['B'] as const)) {
        const r = await oneRun(browser, (side === 'A' ? servedA! : servedB).url, trace);
        runs[side].push(r);
        if (r.supersededAnswers !== -1 && (r.supersededAnswers !== 1 || r.supersededShown))
          throw new Error(
            `a superseded what-if was not cancelled: ${r.supersededAnswers} answers from what-if workers, first size shown: ${r.supersededShown}`,
          );
        log(
          `run ${i + 1} ${side}: worst timeline call during the what-if ${r.worst.toFixed(0)} ms (${r.timelineCalls} calls; idle worst ${r.idleWorst.toFixed(0)} ms); what-if shown after ${r.pageMs.toFixed(0)} ms alone, ${r.pageKeysMs.toFixed(0)} ms while zooming; progress seen at step ${r.progressSeen}; superseded: ${r.supersededAnswers} what-if worker answer(s)`,
        );
      }
    }
  } finally {
    await browser.close();
    await servedB.close();
    await servedA?.close();
  }
  const best = (rs: Run[], k: 'idleWorst' | 'worst' | 'pageMs' | 'pageKeysMs') => Math.min(...rs.map((r) => r[k]));
  const rows: Row[] = [];
  const b = best(runs.B, 'worst');
  const a = runs.A.length ? best(runs.A, 'worst') : null;
  rows.push({
    id: 'whatif-timeline-worst-ms',
    what: `worst timeline query delay while the what-if replays ${EVENTS} full-stack events (best of ${RUNS})`,
    value: b,
    unit: 'ms',
    ...(a !== null ? { baseline: { what: `the same at ${AGAINST}`, value: a, unit: 'ms' }, ratio: b / a } : {}),
    note: `idle worst ${best(runs.B, 'idleWorst').toFixed(0)} ms`,
  });
  rows.push({
    id: 'whatif-page-ms',
    what: `from a buffer size change to the what-if table shown, ${EVENTS} events (best of ${RUNS})`,
    value: best(runs.B, 'pageMs'),
    unit: 'ms',
    ...(runs.A.length
      ? { baseline: { what: `the same at ${AGAINST}`, value: best(runs.A, 'pageMs'), unit: 'ms' }, ratio: best(runs.B, 'pageMs') / best(runs.A, 'pageMs') }
      : {}),
  });
  for (const r of rows)
    log(`${r.id}: ${(r.value ?? NaN).toFixed(0)} ${r.unit}${r.baseline ? ` (A ${r.baseline.value.toFixed(0)} ${r.unit}, B/A ${r.ratio!.toFixed(3)})` : ''}`);
  if (JSON_OUT) process.stdout.write(JSON.stringify({ rows }) + '\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
