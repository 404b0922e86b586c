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

/** Moves the mouse over a slot of the grid (its centre), from the grid's layout attributes. */
async function hoverSlot(page: Page, slot: number) {
  const g = grid(page);
  const cols = Number(await g.getAttribute('data-cols'));
  const cell = Number(await g.getAttribute('data-cell-px'));
  const box = (await g.locator('canvas').boundingBox())!;
  await page.mouse.move(box.x + ((slot % cols) + 0.5) * cell, box.y + (Math.floor(slot / cols) + 0.5) * cell);
}

async function hoverFirstPublished(page: Page) {
  await expect.poll(async () => Number(await grid(page).getAttribute('data-first-published'))).toBeGreaterThanOrEqual(0);
  const slot = Number(await grid(page).getAttribute('data-first-published'));
  await hoverSlot(page, slot);
  const tip = page.getByTestId('sim-slot-tip');
  await expect(tip).toBeVisible();
  await expect(tip).toHaveAttribute('data-slot', String(slot));
  return tip;
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
  await expect(grid(page)).toHaveAttribute('data-fill-hue', '0');
  await expect(grid(page)).toHaveAttribute('data-flashes', '0');

  // before any dump the ledger says so, rather than "unresolved" or "detected" 100%
  await expect(page.getByTestId('sim-ledger-nodump')).toContainText('no dump yet');
  await expect(page.getByTestId('sim-ledger-unresolved')).toHaveCount(0);
  await expect(page.getByTestId('sim-ledger-detected')).toHaveCount(0);

  // hovering a published slot shows its stack, symbolized, with ref_count and the generation that filled it
  const tip = await hoverFirstPublished(page);
  await expect(tip).toHaveAttribute('data-state', 'published');
  const depth = Number(await tip.getAttribute('data-depth'));
  expect(depth).toBeGreaterThanOrEqual(8);
  await expect(tip.getByTestId('sim-slot-frame')).toHaveCount(Math.min(depth, 24));
  await expect(tip.getByTestId('sim-slot-frame').first()).toHaveText(/^[a-z_][\w.]*\+0x[0-9a-f]+\/0x[0-9a-f]+/);
  expect(Number(await tip.getAttribute('data-ref-count'))).toBeGreaterThanOrEqual(1);
  await expect(tip.getByTestId('sim-slot-filled')).toHaveText(/filled in generation 1/);
  await page.mouse.move(0, 0);
  await expect(tip).toHaveCount(0);

  // a dump, then a reset during the run: the grid is cleared into generation 2, and the log says so
  await page.getByTestId('sim-dump').click();
  await expect.poll(() => num(page, 'sim-counter-dumps')).toBe(2); // stack_map_bin + stack_map
  await page.getByTestId('sim-reset').click();
  await expect(grid(page)).toHaveAttribute('data-resets', '1');
  await expect(grid(page)).toHaveAttribute('data-generation', '2');
  await expect(page.getByTestId('sim-generation')).toHaveText('2');
  // the reset shows in the grid even if the same stacks land in the same slots: a flash, and the next generation's hue
  await expect(grid(page)).toHaveAttribute('data-flashes', '1');
  await expect(grid(page)).toHaveAttribute('data-fill-hue', '1');
  await expect(grid(page)).toHaveAttribute('data-fill-generation', '2');
  await expect(page.getByTestId('sim-ledger-nodump')).toHaveCount(0);
  await expect(page.getByTestId('sim-ledger-unresolved')).toBeVisible();
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
  await expect(grid(page)).toHaveAttribute('data-flashes', '2');
  await expect(grid(page)).toHaveAttribute('data-fill-hue', '2');
  await page.getByTestId('sim-window').selectOption('0');

  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  await expect(page.getByTestId('sim-report')).toContainText('v8');
  await expect(page.getByTestId('sim-report')).toContainText('3 generations');
  // ns per insert only when it was measured: never "0 ns"
  await expect(page.getByTestId('sim-report-timing')).not.toHaveText(/^0 ns/);
  if ((await page.getByTestId('sim-report').getAttribute('data-ns-measured')) === '0') await expect(page.getByTestId('sim-report-timing')).toContainText('not measured');
  else await expect(page.getByTestId('sim-report-timing')).toHaveText(/^[\d.]+ (ns|µs|ms) per insert/);

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

test('v7 speaks of resets, never generations; a dump during a reset is logged, not kept', async ({ page }) => {
  await openSimulator(page);
  await startRun(page, { mode: 'v7', cpus: 2 });
  await expect.poll(() => num(page, 'sim-counter-attempts')).toBeGreaterThan(200);
  await expect(page.getByTestId('sim-generation')).toHaveCount(0);
  await expect(page.getByTestId('sim-resets')).toHaveText('0');
  await expect(page.getByTestId('sim-ledger-nodump')).toContainText('no dump yet');

  // a long race window holds the reset (flag, drain, clear: a second each); a dump clicked meanwhile reads the cleared map
  await page.getByTestId('sim-window').selectOption('1000000');
  await page.getByTestId('sim-reset').click();
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-log').locator('li[data-kind="dump-during-reset"]')).toHaveCount(1, { timeout: 30_000 });
  // the binary read opens once the reset is done, on the cleared table (new inserts take the 1 s window to publish): empty,
  // so not kept; the text read after it may already see the first stacks of the new table, and then it is a real dump
  const dropped = page.getByTestId('sim-log').locator('li[data-kind="dump-during-reset"]');
  await expect(dropped).toContainText('came back empty');
  await expect(dropped).toContainText('not kept');
  await expect(dropped).toContainText('stack_map_bin.N');
  await expect(page.getByTestId('sim-dump')).toBeEnabled({ timeout: 30_000 });
  const both = (await dropped.innerText()).includes('stack_map.N');
  await expect(page.getByTestId('sim-counter-dumps')).toHaveText(both ? '0' : '1');
  if (both) await expect(page.getByTestId('sim-ledger-nodump')).toContainText('no dump yet');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="dump"]').first()).toContainText('0 records (since reset 1)');
  await expect(grid(page)).toHaveAttribute('data-resets', '1');
  await expect(grid(page)).toHaveAttribute('data-flashes', '1');
  await page.getByTestId('sim-window').selectOption('0');

  // a real dump, then the table after the reset: "since reset 1"
  await expect(page.getByTestId('sim-dump')).toBeEnabled({ timeout: 30_000 });
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-counter-dumps')).toHaveText(both ? '2' : '3');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="dump"]').first()).not.toContainText(' 0 records');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="dump"]').first()).toContainText('since reset 1');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="reset-done"]').first()).toContainText('reset 1 done');
  const tip = await hoverFirstPublished(page);
  await expect(tip.getByTestId('sim-slot-filled')).toHaveText(/filled since reset 1/);
  await expect(page.getByTestId('sim-grid-published').locator('..')).toContainText('since reset 1');
  // nowhere in the pane does v7 speak of a generation
  expect(await page.getByTestId('simulator').innerText()).not.toMatch(/generation/i);
  await page.mouse.move(0, 0);

  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  // the run keeps the live dump and the two at stop, not the empty ones
  await expect(page.getByTestId('sim-report')).toContainText('1 reset ·');
  await expect(page.getByTestId('sim-report')).toContainText(both ? '4 dumps' : '5 dumps');
  expect(await page.getByTestId('simulator').innerText()).not.toMatch(/generation/i);
});

test('the settings live in the URL: read at load (invalid values ignored), written on change', async ({ page }) => {
  await page.goto('/?view=simulator&sim.mode=v7&sim.bits=12&sim.ring=1024&sim.speed=7&sim.cpus=abc&sim.window=20000&gen=2');
  await expect(page.getByTestId('simulator')).toBeVisible();
  await expect(page.getByTestId('sim-mode')).toHaveValue('v7');
  await expect(page.getByTestId('sim-bits')).toHaveValue('12');
  await expect(page.getByTestId('sim-ring')).toHaveValue('1024');
  await expect(page.getByTestId('sim-window')).toHaveValue('20000');
  await expect(page.getByTestId('sim-speed')).toHaveValue('2000'); // 7 is no choice: ignored
  await expect(page.getByTestId('sim-cpus')).toHaveValue('4');
  // the CPU limit says why
  const max = await page.evaluate(() => Math.max(4, navigator.hardwareConcurrency || 4));
  await expect(page.getByTestId('sim-cpus').locator('..')).toHaveAttribute('title', new RegExp(`^up to ${max}: one Web Worker per simulated CPU; more than the machine's cores`));
  await page.getByTestId('sim-cpus').fill(String(max + 5));
  await expect(page.getByTestId('sim-cpus')).toHaveValue(String(max));
  await expect(page.getByTestId('sim-cpus-note')).toContainText(`up to ${max}: one Web Worker per simulated CPU`);

  await page.getByTestId('sim-ring').selectOption('64');
  await expect(page).toHaveURL(/sim\.ring=64/);
  await page.getByTestId('sim-mode').selectOption('v8'); // the default: left out
  await expect(page).not.toHaveURL(/sim\.mode/);
  await expect(page).not.toHaveURL(/sim\.speed/);
  await expect(page).toHaveURL(/view=simulator/);
  await expect(page).toHaveURL(/[?&]gen=2/); // the explorer's keys stay
  const url = page.url();
  await page.goto(url);
  await expect(page.getByTestId('sim-ring')).toHaveValue('64');
  await expect(page.getByTestId('sim-cpus')).toHaveValue(String(max));
  await expect(page.getByTestId('sim-bits')).toHaveValue('12');

  // the ring size is what the run uses, and fixed while it runs
  await page.getByTestId('sim-cpus').fill('2');
  await page.getByTestId('sim-start').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'running');
  await expect(page.getByTestId('sim-ring')).toBeDisabled();
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  await expect(page.getByTestId('sim-ring')).toBeEnabled();
});

test('v8 as posted: 16,384 stacks and only the text stack_map', async ({ page }) => {
  await openSimulator(page);
  await page.getByTestId('sim-v8').selectOption('posted');
  await expect(page.getByTestId('sim-bits')).toHaveValue('14');
  await expect(page.getByTestId('sim-bits')).toBeDisabled();
  await expect(page).toHaveURL(/sim\.v8=posted/);
  await page.getByTestId('sim-cpus').fill('2');
  await page.getByTestId('sim-start').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'running');
  await expect(page.getByTestId('sim-counter-entries')).toContainText('/ 16,384');
  await expect.poll(() => num(page, 'sim-counter-attempts')).toBeGreaterThan(200);
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-counter-dumps')).toHaveText('1'); // stack_map only
  await expect(page.getByTestId('sim-log').locator('li[data-kind="dump"]')).toHaveCount(0);
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  await expect(page.getByTestId('sim-report')).toContainText('2 dumps');
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

// SIM_SHOTS=DIR: the pane in each state, at two sizes and both themes, for a look (not part of the suite)
const SHOTS = process.env.SIM_SHOTS;
test.describe('pane screenshots', () => {
  test.skip(!SHOTS, 'set SIM_SHOTS=DIR to take them');
  for (const [w, h] of [
    [1600, 1000],
    [1280, 720],
  ] as const)
    for (const scheme of ['light', 'dark'] as const)
      test(`pane states ${w}x${h} ${scheme}`, async ({ page }) => {
        test.setTimeout(120_000);
        mkdirSync(SHOTS!, { recursive: true });
        const shot = (state: string) => page.screenshot({ path: `${SHOTS}/${w}x${h}-${scheme}-${state}.png` });
        await page.setViewportSize({ width: w, height: h });
        await page.emulateMedia({ colorScheme: scheme });
        await openSimulator(page);
        await shot('idle');
        await startRun(page, { mode: scheme === 'light' ? 'v8' : 'v7', speed: '200', window: '20000' });
        await expect.poll(async () => Number(await grid(page).getAttribute('data-published'))).toBeGreaterThan(100);
        await page.waitForTimeout(1500);
        await shot('running-nodump');
        await page.getByTestId('sim-dump').click();
        await expect.poll(() => num(page, 'sim-counter-dumps')).toBe(2);
        await page.getByTestId('sim-reset').click();
        await expect(page.getByTestId('sim-grid-flash')).toBeVisible();
        await shot('reset-flash');
        await page.waitForTimeout(2000);
        await shot('running');
        await hoverFirstPublished(page);
        await shot('hover');
        // a slot near the bottom right: the card opens up and to the left
        await hoverSlot(page, 2 ** 11 - 1); // bits 10: 2048 slots
        await expect(page.getByTestId('sim-slot-tip')).toBeVisible();
        await shot('hover-corner');
        await page.mouse.move(0, 0);
        await page.getByTestId('sim-window').selectOption('0');
        await page.getByTestId('sim-stop').click();
        await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
        await shot('stopped');
        await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
        await shot('stopped-bottom');
      });
});
