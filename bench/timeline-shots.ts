// The timeline drawn from the level-of-detail summaries against the exact drawing: the same capture,
// the same view, in two builds of the app (A: a revision that counts every event one by one, B:
// this tree or --b REV), at 1600x1000 and 1280x720, light and dark, zoomed out and zoomed in. Saves
// a PNG of the timeline pane for each and compares the two canvases pixel by pixel.
//
//   npx tsx bench/timeline-shots.ts --against REV [--b REV | --dist DIR] [--events N | --capture DIR] [--out DIR]
//
// Prints, per view, how many canvas pixels differ between A and B and by how much at most; exits
// 1 when any differ. Zoomed in is W pressed 12 times from the whole capture (1.4% of it in view).
import { arg } from './args.ts';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from '@playwright/test';
import { launch, serve } from '../scripts/browser.ts';
import { generated } from './generated.ts';
import { buildAt, thisDist } from './timeline-build.ts';

const EVENTS = Number(arg('--events', '1000000'));
const OUT = arg('--out', '/tmp/timeline-shots');
const AGAINST = arg('--against', '');
if (!AGAINST) throw new Error('--against REV: the build whose exact drawing B is compared with');

interface Shot {
  pixels: string;
  width: number;
  height: number;
  window: string;
}

async function shoot(
  browser: Browser,
  url: string,
  files: string[],
  viewport: { width: number; height: number },
  scheme: 'light' | 'dark',
  zoomIn: boolean,
  png: string,
): Promise<Shot> {
  const ctx = await browser.newContext({ viewport, colorScheme: scheme });
  const page = await ctx.newPage();
  try {
    await page.goto(url + '/');
    await page.waitForFunction(() => document.querySelector('[data-testid="load-progress"]')?.getAttribute('data-status') === 'done', null, {
      timeout: 60_000,
    });
    await page.getByTestId('file-input').setInputFiles(files);
    await page.waitForFunction(
      (events) =>
        document.querySelector('[data-testid="load-progress"]')?.getAttribute('data-status') === 'done' &&
        document.querySelector('[data-testid="timeline"]')?.getAttribute('data-ready') === 'true' &&
        (document.querySelector('[data-testid="summary-events"]')?.textContent ?? '').replace(/\D/g, '') === String(events),
      EVENTS,
      { timeout: 10 * 60_000, polling: 100 },
    );
    await page.mouse.move(2, 2);
    if (zoomIn) for (let i = 0; i < 12; i++) await page.keyboard.press('KeyW');
    // the answer for the last view, drawn (A waits for the input to stop before it asks)
    await page.waitForTimeout(2500);
    await page.getByRole('region', { name: 'timeline' }).screenshot({ path: png });
    const window = (await page.getByTestId('timeline-window').textContent()) ?? '';
    const got = await page
      .getByTestId('timeline')
      .locator('canvas')
      .evaluate((el) => {
        const c = el as HTMLCanvasElement;
        const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let s = '';
        for (let i = 0; i < d.length; i += 8192) s += String.fromCharCode(...d.subarray(i, i + 8192));
        return { pixels: btoa(s), width: c.width, height: c.height };
      });
    return { ...got, window };
  } finally {
    await ctx.close();
  }
}

function compare(a: Shot, b: Shot): { differ: number; maxDelta: number } {
  if (a.width !== b.width || a.height !== b.height) return { differ: Infinity, maxDelta: 255 };
  const x = Buffer.from(a.pixels, 'base64');
  const y = Buffer.from(b.pixels, 'base64');
  let differ = 0;
  let maxDelta = 0;
  for (let i = 0; i < x.length; i += 4) {
    let d = 0;
    for (let k = 0; k < 4; k++) d = Math.max(d, Math.abs(x[i + k] - y[i + k]));
    if (d > 0) differ++;
    if (d > maxDelta) maxDelta = d;
  }
  return { differ, maxDelta };
}

async function main() {
  const cap = arg('--capture', '');
  const files = cap ? ['trace', 'stack_map_bin', 'stack_map_stat', 'kallsyms'].map((n) => join(cap, n)) : generated(['--events', String(EVENTS)]).files;
  const bRev = arg('--b', '');
  const dists = { A: buildAt(AGAINST), B: bRev ? buildAt(bRev) : thisDist(arg('--dist', '')) };
  mkdirSync(OUT, { recursive: true });
  const served = { A: await serve({ '/': dists.A }), B: await serve({ '/': dists.B }) };
  const browser = await launch();
  let bad = 0;
  try {
    for (const viewport of [
      { width: 1600, height: 1000 },
      { width: 1280, height: 720 },
    ]) {
      for (const scheme of ['light', 'dark'] as const) {
        for (const zoomIn of [false, true]) {
          const name = `timeline-${zoomIn ? 'in' : 'out'}-${viewport.width}x${viewport.height}-${scheme}`;
          const a = await shoot(browser, served.A.url, files, viewport, scheme, zoomIn, join(OUT, `${name}-A.png`));
          const b = await shoot(browser, served.B.url, files, viewport, scheme, zoomIn, join(OUT, `${name}-B.png`));
          const c = compare(a, b);
          if (c.differ > 0 || a.window !== b.window) bad++;
          console.log(
            `${name}: ${a.width}x${a.height} canvas, ${c.differ} pixels differ (max channel delta ${c.maxDelta}); window A "${a.window}" B "${b.window}"`,
          );
        }
      }
    }
  } finally {
    await browser.close();
    await served.A.close();
    await served.B.close();
  }
  console.log(`PNGs in ${OUT}`);
  process.exitCode = bad ? 1 : 0;
}

await main();
