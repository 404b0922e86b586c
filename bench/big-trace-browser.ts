// A 1 GB trace in Chromium (issue 11, the big-trace row): `cli generate --mb 1024` (v8 cookies,
// its dumps and kallsyms; cached in /tmp by bench/generated.ts) handed to the app's file input in
// headless Chromium. Timed from the input's change event to the summary showing every event of
// the trace (the count generate reported); MB/s over the trace's bytes; the renderer's peak
// resident memory (VmHWM of the renderer processes, found by CDP SystemInfo.getProcessInfo; the
// ingest worker runs in the same process); and the tab must survive: no crash, still answering,
// the numbers right. Baseline, same browser, same files, before the app: a page that streams the
// files and counts '\n' (bench/peers/newline.html), best of 2.
//
//   npx tsx bench/big-trace-browser.ts [--mb 1024] [--json] [--smoke]
import type { Browser, Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, newPage, serve } from '../scripts/browser.ts';
import type { Row } from './contract.ts';
import { generated } from './generated.ts';
import { appDist } from './peers.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const argv = process.argv.slice(2);
const arg = (n: string, d: string) => (argv.indexOf(n) >= 0 ? argv[argv.indexOf(n) + 1] : d);
const SMOKE = argv.includes('--smoke');
const JSON_OUT = argv.includes('--json');
const MB = Number(arg('--mb', SMOKE ? '8' : '1024'));
const CAP_S = Number(arg('--cap', '300'));
const log = (s: string) => (JSON_OUT ? process.stderr : process.stdout).write(s + '\n');

/** Peak resident memory (VmHWM, MB) of each renderer process of the browser. */
async function rendererPeaks(browser: Browser): Promise<{ pid: number; peakMb: number }[]> {
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; id: number }[] };
    const out: { pid: number; peakMb: number }[] = [];
    for (const p of processInfo.filter((x) => x.type === 'renderer')) {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p.id}/status`, 'utf8'));
        if (m) out.push({ pid: p.id, peakMb: Math.round(Number(m[1]) / 1024) });
      } catch {
        // gone already (a spare renderer)
      }
    }
    return out;
  } finally {
    await cdp.detach();
  }
}

async function baseline(browser: Browser, url: string, files: string[]): Promise<{ ms: number; newlines: number }> {
  const page = await newPage(browser);
  try {
    await page.goto(url + '/peers/newline.html');
    await page.locator('#file').setInputFiles(files);
    const h = await page.waitForFunction(
      () => {
        const r = (window as any).__read;
        return r.error ? { error: r.error } : r.ms ? r : null;
      },
      null,
      { timeout: CAP_S * 1000, polling: 100 },
    );
    const r = (await h.jsonValue()) as { ms: number; newlines: number; error?: string };
    if (r.error) throw new Error(`the newline page failed: ${r.error}`);
    return r;
  } finally {
    await page.context().close();
  }
}

const digits = (page: Page, id: string) =>
  page
    .getByTestId(id)
    .first()
    .textContent()
    .then((t) => Number((t ?? '').replace(/[^0-9]/g, '')));

async function main(): Promise<void> {
  const cap = generated(['--mb', String(MB), '--seed', '1']);
  const traceBytes = cap.report.files.find((f) => f.name === 'trace')!.bytes;
  const totalBytes = cap.report.files.reduce((a, f) => a + f.bytes, 0);
  log(`capture: ${(traceBytes / 2 ** 20).toFixed(0)} MiB trace, ${cap.report.events.toLocaleString('en-US')} events, ${cap.report.stacks} stacks (${cap.dir})`);
  const served = await serve({ '/': appDist('big-trace'), '/peers/': join(here, 'peers') });
  const browser = await launch();
  try {
    const base: { ms: number; newlines: number }[] = [];
    for (let i = 0; i < 2; i++) base.push(await baseline(browser, served.url, cap.files));
    const baseMs = Math.min(...base.map((b) => b.ms));
    log(`baseline (stream the files, count newlines): ${baseMs.toFixed(0)} ms, ${base[0].newlines} newlines`);
    // a fresh browser for the app, so the peak memory is the app's alone
    await browser.close();
    const app = await launch();
    let crashed = false;
    try {
      const page = await newPage(app);
      page.on('crash', () => (crashed = true));
      await page.addInitScript(
        `window.__t0 = 0; document.addEventListener('change', (e) => { if (e.target && e.target.type === 'file') window.__t0 = performance.now(); }, true);`,
      );
      await page.goto(served.url + '/');
      await page.getByTestId('summary-events').first().waitFor({ timeout: 60_000 });
      await page.waitForFunction(() => document.querySelector('[data-testid=load-progress]')?.getAttribute('data-status') !== 'loading', null, {
        timeout: 60_000,
      });
      await page.getByTestId('file-input').setInputFiles(cap.files);
      const events = cap.report.events;
      const h = await page
        .waitForFunction(
          (n) => {
            const w = window as any;
            const el = document.querySelector('[data-testid=summary-events]');
            const shown = el ? Number((el.textContent ?? '').replace(/[^0-9]/g, '')) : -1;
            const busy = document.querySelector('[data-testid=load-progress]')?.getAttribute('data-status') === 'loading';
            return w.__t0 && shown === n && !busy ? performance.now() - w.__t0 : null;
          },
          events,
          { timeout: CAP_S * 1000, polling: 'raf' },
        )
        .catch((e: Error) => e);
      const peaks = await rendererPeaks(app).catch(() => []);
      const peakMb = peaks.length ? Math.max(...peaks.map((p) => p.peakMb)) : null;
      if (h instanceof Error || crashed) {
        const why = crashed ? 'the tab crashed' : `not loaded in ${CAP_S} s`;
        const row: Row = {
          id: 'big-trace-1gb',
          what: `${MB} MiB trace in Chromium`,
          value: CAP_S * 1000,
          unit: 'ms',
          goal: 'loads, tab survives',
          met: false,
          note: why,
        };
        if (JSON_OUT) console.log(JSON.stringify({ rows: [row] }));
        process.exitCode = 1;
        return;
      }
      const ms = (await h.jsonValue()) as number;
      // still answering, and the numbers are the capture's
      const alive = (await page.evaluate(() => 1).catch(() => 0)) === 1;
      const cookies = await digits(page, 'summary-cookies');
      const resolved = await digits(page, 'summary-resolved');
      const right = cookies === cap.report.cookies && resolved === events;
      const mbps = traceBytes / 2 ** 20 / (ms / 1000);
      log(
        `app: ${ms.toFixed(0)} ms, ${mbps.toFixed(0)} MiB/s, renderer peak ${peakMb} MB, alive ${alive}, cookies ${cookies}/${cap.report.cookies}, resolved ${resolved}/${events}`,
      );
      if (!right) throw new Error(`the page shows cookies ${cookies} (want ${cap.report.cookies}), resolved ${resolved} (want ${events})`);
      const baseMbps = Math.round((totalBytes / 2 ** 20 / (baseMs / 1000)) * 10) / 10;
      const label = SMOKE ? `${MB}mb` : '1gb';
      const what = `${(traceBytes / 2 ** 20).toFixed(0)} MiB trace (${events.toLocaleString('en-US')} events, v8 cookies) + its dumps and kallsyms, file input to every event in the summary`;
      const b = { what: 'the same files streamed and their newlines counted, same browser', value: Math.round(baseMs), unit: 'ms' };
      const rows: Row[] = [
        {
          id: `big-trace-${label}`,
          what,
          value: Math.round(ms),
          unit: 'ms',
          baseline: b,
          ratio: Math.round((ms / baseMs) * 100) / 100,
          goal: 'loads, tab survives',
          ...(SMOKE ? {} : { met: alive && !crashed }),
        },
        {
          id: `big-trace-${label}-throughput`,
          what: "the trace's MiB per second of that load",
          value: Math.round(mbps * 10) / 10,
          unit: 'MiB/s',
          baseline: { what: "every file's MiB per second through that newline page", value: baseMbps, unit: 'MiB/s' },
          ratio: Math.round((mbps / baseMbps) * 100) / 100,
        },
        ...(peakMb === null
          ? []
          : [
              {
                id: `big-trace-${label}-renderer-peak`,
                what: 'renderer peak resident memory (VmHWM, page and ingest worker)',
                value: peakMb,
                unit: 'MB',
                note: `the trace is ${(traceBytes / 1e6).toFixed(0)} MB`,
              },
            ]),
      ];
      if (JSON_OUT) console.log(JSON.stringify({ rows }));
    } finally {
      await app.close();
    }
  } finally {
    await browser.close().catch(() => {});
    await served.close();
  }
}

await main();
