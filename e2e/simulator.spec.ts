import { mkdirSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { waitLoaded } from './explorer-helpers.ts';

// The live simulator pane: Web Workers on a SharedArrayBuffer (the preview server sends COOP/COEP).

const num = async (page: Page, id: string) => Number(((await page.getByTestId(id).textContent()) ?? '').replace(/[^\d]/g, ''));
const grid = (page: Page) => page.getByTestId('sim-grid');

async function openSimulator(page: Page) {
  await page.goto('/?view=simulator');
  await expect(page.getByTestId('simulator')).toBeVisible();
  expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
}

async function startRun(page: Page, settings: { mode?: string; cpus?: number; speed?: string; window?: string } = {}) {
  await page.getByTestId('sim-mode').selectOption(settings.mode ?? 'v8');
  await page.getByTestId('sim-cpus').fill(String(settings.cpus ?? 4));
  await page.getByTestId('sim-bits').selectOption('10');
  await page.getByTestId('sim-speed').selectOption(settings.speed ?? '2000');
  await page.getByTestId('sim-window').selectOption(settings.window ?? '0');
  await page.getByTestId('sim-start').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'running');
}

test('the simulator runs 4 CPU workers, resets and dumps live, and opens its run in the explorer', async ({ page }) => {
  await openSimulator(page);
  await startRun(page);

  // one Web Worker per simulated CPU, each recording
  await expect.poll(() => page.workers().filter((w) => w.url().includes('sim-cpu')).length).toBe(4);
  await expect(page.getByTestId('sim-lane')).toHaveCount(4);
  for (let cpu = 0; cpu < 4; cpu++) await expect.poll(async () => Number(await page.getByTestId('sim-lane').nth(cpu).getAttribute('data-events'))).toBeGreaterThan(0);

  // counters move
  const a0 = await num(page, 'sim-counter-attempts');
  await expect.poll(() => num(page, 'sim-counter-attempts')).toBeGreaterThan(a0 + 100);
  await expect.poll(async () => Number(await grid(page).getAttribute('data-published'))).toBeGreaterThan(50);
  await expect(grid(page)).toHaveAttribute('data-generation', '1');

  // a dump, then a reset during the run: the grid is cleared into generation 2, and the log says so
  await page.getByTestId('sim-dump').click();
  await expect.poll(() => num(page, 'sim-counter-dumps')).toBe(2); // stack_map_bin + stack_map
  await page.getByTestId('sim-reset').click();
  await expect(grid(page)).toHaveAttribute('data-resets', '1');
  await expect(grid(page)).toHaveAttribute('data-generation', '2');
  await expect(page.getByTestId('sim-generation')).toHaveText('2');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="reset-done"]')).toHaveCount(1);
  await expect(page.getByTestId('sim-log').locator('li[data-kind="reset-flag"]')).toHaveCount(1);
  await expect(page.getByTestId('sim-log').locator('li[data-kind="dump"]')).toHaveCount(1);
  // the live ledger follows the run
  await expect(page.getByTestId('sim-ledger')).toBeVisible();

  // a reset inside a slow binary read fails it with ESTALE (passes are paced by the race window)
  await page.getByTestId('sim-window').selectOption('100000');
  await page.getByTestId('sim-dump').click();
  await page.waitForTimeout(250);
  await page.getByTestId('sim-reset').click();
  await expect.poll(() => num(page, 'sim-counter-estale'), { timeout: 30_000 }).toBeGreaterThan(0);
  await expect(page.getByTestId('sim-log').locator('li[data-kind="estale"]').first()).toBeVisible();
  await expect(page.getByTestId('sim-dump')).toBeEnabled({ timeout: 30_000 });
  await expect(grid(page)).toHaveAttribute('data-resets', '2');
  await page.getByTestId('sim-window').selectOption('0');

  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  await expect(page.getByTestId('sim-report')).toContainText('v8');

  // the ledger of the finished run: every record left in the rings against every dump taken
  const events = await num(page, 'sim-retained-events');
  const ids = await num(page, 'sim-ledger-ids');
  const full = await num(page, 'sim-ledger-full');
  const records = await num(page, 'sim-ledger-records');
  const correct = await num(page, 'sim-ledger-correct');
  const wrong = await num(page, 'sim-ledger-wrong');
  const detected = await num(page, 'sim-ledger-detected');
  const unresolved = await num(page, 'sim-ledger-unresolved');
  expect(events).toBeGreaterThan(0);
  expect(ids + full).toBe(records);
  expect(correct + wrong + detected + unresolved).toBe(ids);
  expect(wrong).toBe(0); // v8 cookies never misresolve
  expect(correct).toBeGreaterThan(0);

  // the explorer reads the exported capture exactly as the ledger did
  await page.getByTestId('sim-open').click();
  await expect(page.getByTestId('simulator')).toHaveCount(0);
  await expect(page).not.toHaveURL(/view=simulator/);
  await waitLoaded(page);
  await expect(page.getByTestId('summary-events')).toHaveText(String(events));
  await expect(page.getByTestId('summary-cookies')).toHaveText(String(ids));
  await expect(page.getByTestId('summary-resolved')).toHaveText(String(correct + wrong));
  await expect(page.getByTestId('summary-unresolved')).toHaveText(String(detected + unresolved));
  await expect(page.getByTestId('summary-full-stacks')).toHaveText(String(full));
  await expect(page.getByTestId('diagnostics')).not.toContainText('not understood');
});

test('v4 resets with tracing off and clears the ring buffers; the view switch keeps the pane in the URL', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('view-simulator').click();
  await expect(page).toHaveURL(/view=simulator/);
  await startRun(page, { mode: 'v4', cpus: 2 });
  await expect.poll(() => num(page, 'sim-counter-attempts')).toBeGreaterThan(100);
  await page.getByTestId('sim-reset').click();
  await expect(grid(page)).toHaveAttribute('data-resets', '1');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="v4-pause"]')).toHaveCount(1);
  await expect(page.getByTestId('sim-counter-bypasses')).toHaveText('0'); // v4: no insert ever meets the flag
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  await page.getByTestId('view-explorer').click();
  await expect(page).not.toHaveURL(/view=simulator/);
  await page.getByTestId('view-simulator').click();
  // the finished run is still there
  await expect(page.getByTestId('sim-report')).toContainText('v4');
});

test('replaying the loaded sample records its stacks; the run opens in the explorer with the same busiest stack', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  const sampleTop = await page.getByTestId('top-stack-row').first().locator('td').nth(4).textContent();
  await page.getByTestId('view-simulator').click();
  await page.getByTestId('sim-workload').selectOption('replay');
  await startRun(page, { mode: 'v7', cpus: 4 });
  await expect.poll(() => num(page, 'sim-counter-attempts')).toBeGreaterThan(3000);
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  await page.getByTestId('sim-open').click();
  await waitLoaded(page);
  // the run's stacks are the sample's: the busiest leaf is the same, and nothing went unread
  await expect(page.getByTestId('top-stack-row').first().locator('td').nth(4)).toHaveText(sampleTop!);
  await expect(page.getByTestId('diagnostics')).toContainText('Every line and byte was understood');
});

const OUT = 'docs/screenshots';
mkdirSync(OUT, { recursive: true });

for (const scheme of ['light', 'dark'] as const) {
  test(`simulator screenshot, ${scheme}`, async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 1100 });
    await page.emulateMedia({ colorScheme: scheme });
    await openSimulator(page);
    await startRun(page, { speed: '2000', window: '0' });
    await expect.poll(async () => Number(await grid(page).getAttribute('data-published'))).toBeGreaterThan(300);
    await page.getByTestId('sim-dump').click();
    await expect.poll(() => num(page, 'sim-counter-dumps')).toBe(2);
    await page.getByTestId('sim-reset').click();
    await expect(grid(page)).toHaveAttribute('data-resets', '1');
    // slower, with a race window: claimed-but-unpublished slots and lost races show
    await page.getByTestId('sim-window').selectOption('20000');
    await page.getByTestId('sim-speed').selectOption('200');
    await page.waitForTimeout(2500);
    await expect(page.getByTestId('sim-ledger')).toBeVisible();
    await page.mouse.move(0, 0);
    await page.screenshot({ path: `${OUT}/simulator-${scheme}.png` });
    await page.getByTestId('sim-stop').click();
    await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  });
}
