import { expect, test, type Page } from './fixtures.ts';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canvasInk, expectSummary, nodeExplorer, sampleFiles, sel, urlParam, waitLoaded } from './explorer-helpers.ts';
import { cliAsync } from './cli.ts';

/**
 * The README's walk as a person takes it, run by both projects: `build` (vite preview of the
 * production bundle) and `dev` (`npm start`'s Vite dev server, React StrictMode on, which mounts
 * every component twice). The first screen once went blank under the dev server only, so this
 * spec is the one the dev project runs. Expected numbers come from the query engine run in Node.
 */

const explorer = nodeExplorer(sampleFiles);

/** The timeline canvas's pixels, hashed (FNV-1a 32 of its data URL): a redraw in other colours changes it. */
const timelinePixels = (page: Page) =>
  page
    .getByTestId('timeline')
    .locator('canvas')
    .evaluate((c) => {
      const s = (c as HTMLCanvasElement).toDataURL();
      let h = 0x811c9dc5;
      for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
      return h;
    });

test('the first screen: the sample drawn on every lane, a redraw on a theme change', async ({ page }) => {
  await page.goto('/?theme=light');
  await waitLoaded(page);
  const ex = await explorer;
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-lanes', String(ex.overview().cpus.length));
  const ink = await canvasInk(page.getByTestId('timeline').locator('canvas'));
  expect(ink.inked).toBeGreaterThan(2000);
  await expectSummary(page, ex.selectionSummary(sel()));
  const light = await timelinePixels(page);
  await page.getByTestId('theme-switch').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect.poll(() => timelinePixels(page)).not.toBe(light);
});

test('a selection: a generation picked fills every pane with its counts, a top stack marks the timeline', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  const ex = await explorer;
  await page.getByTestId('generation-select').selectOption('2');
  await expectSummary(page, ex.selectionSummary(sel({ generation: 2 })));
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-ready', 'true');
  // the summary can show generation 2 before the table does: wait for the table's own answer
  // (the Node query engine's first row), not the count of a row from before the pick
  const want = ex.topStacks({ selection: sel({ generation: 2 }), filter: '', limit: 1 }).rows[0];
  const row = page.getByTestId('top-stack-row').first();
  await expect(row).toHaveAttribute('data-count', String(want.count));
  await row.click();
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-highlight-events', String(want.count));
  // the table scrolled: its header stays on top of the rows passing under it (a share bar once painted over it)
  const table = page.getByTestId('top-stacks');
  await table.evaluate((el) => (el.scrollTop = 200));
  await expect.poll(() => table.evaluate((el) => el.scrollTop)).toBeGreaterThan(100);
  for (const name of ['count', 'share', 'leaf frame']) {
    const th = table.locator('thead th', { hasText: name }).first();
    const box = (await th.boundingBox())!;
    const onTop = await page.evaluate(
      ([x, y]) => document.elementFromPoint(x, y)?.closest('th')?.textContent ?? null,
      [box.x + box.width / 2, box.y + box.height / 2],
    );
    expect(onTop).toContain(name);
  }
});

test('Back and Forward between the explorer and the simulator, the view kept on each side', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('generation-select').selectOption('1');
  await expect.poll(() => urlParam(page, 'gen')).toBe('1');

  await page.getByTestId('view-simulator').click();
  await expect(page.getByTestId('simulator')).toBeVisible();
  await expect.poll(() => urlParam(page, 'view')).toBe('simulator');

  // Back: the explorer again, its generation still chosen
  await page.goBack();
  await expect(page.getByTestId('simulator')).toHaveCount(0);
  await expect(page.getByTestId('timeline')).toBeVisible();
  expect(urlParam(page, 'view')).toBeNull();
  expect(urlParam(page, 'gen')).toBe('1');
  await expect(page.getByTestId('generation-select')).toHaveValue('1');
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-ready', 'true');

  // Forward: the simulator
  await page.goForward();
  await expect(page.getByTestId('simulator')).toBeVisible();
  expect(urlParam(page, 'view')).toBe('simulator');

  // Explorer by its button, then Back: the simulator, and the generation untouched
  await page.getByTestId('view-explorer').click();
  await expect(page.getByTestId('timeline')).toBeVisible();
  await page.goBack();
  await expect(page.getByTestId('simulator')).toBeVisible();
  expect(urlParam(page, 'gen')).toBe('1');

  // Back twice more: the explorer with gen=1, then before the generation was chosen
  await page.goBack();
  await expect(page.getByTestId('generation-select')).toHaveValue('1');
  await page.goBack();
  await expect(page.getByTestId('generation-select')).toHaveValue('all');
  expect(urlParam(page, 'gen')).toBeNull();
});

test("files opened over the sample: the timeline draws their span, not the sample's", async ({ page }) => {
  test.setTimeout(120_000);
  // a simulated v7 run (its own span, about 100 s of uptime, the sample's is 5123 s; 4 CPUs as the sample, so no new lane count re-renders the pane), written by the command line
  const dir = mkdtempSync(join(tmpdir(), 'smx-walk-'));
  await cliAsync(['simulate', '--mode', 'v7', '--cpus', '4', '--events', '4000', '--resets', '2', '--out', dir]);
  const files = readdirSync(dir).map((f) => join(dir, f));
  const want = (await nodeExplorer(files)).overview();
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles(files);
  await expect(page.getByTestId('summary-events')).toHaveText(String((await nodeExplorer(files)).selectionSummary(sel()).events));
  await waitLoaded(page);
  // the whole of the new capture drawn: its span (a draw across the sample's span left the plot blank)
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-drawn', `${want.t0},${want.t1}`);
  // and its resets, from the trace's markers (a v7 run has no generations)
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-resets', String(want.resets.length));
  expect(want.resets.length).toBe(2);
});

test('the simulator: Start runs one worker per CPU, a reset clears the grid into generation 2, Stop ends the run', async ({ page }) => {
  await page.goto('/?view=simulator');
  await expect(page.getByTestId('simulator')).toBeVisible();
  await page.getByTestId('sim-cpus').fill('2');
  await page.getByTestId('sim-start').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'running');
  // one Web Worker per simulated CPU (StrictMode's double mount starts no second set), each recording
  await expect.poll(() => page.workers().filter((w) => w.url().includes('sim-cpu')).length).toBe(2);
  await expect(page.getByTestId('sim-lane')).toHaveCount(2);
  for (let cpu = 0; cpu < 2; cpu++)
    await expect.poll(async () => Number(await page.getByTestId('sim-lane').nth(cpu).getAttribute('data-events'))).toBeGreaterThan(0);
  await expect.poll(async () => Number(await page.getByTestId('sim-grid').getAttribute('data-published'))).toBeGreaterThan(10);
  await page.getByTestId('sim-reset').click();
  await expect(page.getByTestId('sim-grid')).toHaveAttribute('data-generation', '2');
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).not.toHaveAttribute('data-status', 'running');
});
