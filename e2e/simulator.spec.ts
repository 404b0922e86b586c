import { mkdirSync } from 'node:fs';
import { expect, test, type Page } from './fixtures.ts';
import { waitLoaded } from './explorer-helpers.ts';
import { OUT, SHOTS_TAG } from './shots.ts';

// The live simulator pane: Web Workers on a SharedArrayBuffer (the preview server sends COOP/COEP).

const num = async (page: Page, id: string) => Number(((await page.getByTestId(id).textContent()) ?? '').replace(/[^\d]/g, ''));
const grid = (page: Page) => page.getByTestId('sim-grid');
/** Waits until the CPUs have counted `n` more in the counter `id` (attempts, off, ...): the run moved on. */
async function advance(page: Page, id: string, n: number) {
  const from = await num(page, id);
  await expect.poll(() => num(page, id), { timeout: 30_000 }).toBeGreaterThan(from + n);
}

async function openSimulator(page: Page) {
  await page.goto('/?view=simulator');
  await expect(page.getByTestId('simulator')).toBeVisible();
  expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
}

/** Moves the mouse over a slot of the grid (its centre), from the grid's layout attributes. */
async function hoverSlot(page: Page, slot: number) {
  const g = grid(page);
  await g.scrollIntoViewIfNeeded();
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

/** Starts a run. v8 runs as posted (bits 14, text stack_map only) unless `v8: 'bin'` asks for the proposed binary export and bits 10. */
async function startRun(page: Page, settings: { mode?: string; cpus?: number; speed?: string; window?: string; v8?: 'posted' | 'bin' } = {}) {
  const mode = settings.mode ?? 'v8';
  await page.getByTestId('sim-mode').selectOption(mode);
  if (mode === 'v8') await page.getByTestId('sim-v8').selectOption(settings.v8 ?? 'posted');
  await page.getByTestId('sim-cpus').fill(String(settings.cpus ?? 4));
  if (mode !== 'v8' || settings.v8 === 'bin') await page.getByTestId('sim-bits').selectOption('10');
  await page.getByTestId('sim-speed').selectOption(settings.speed ?? '2000');
  await page.getByTestId('sim-window').selectOption(settings.window ?? '0');
  await page.getByTestId('sim-start').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'running');
}

test('the simulator runs 4 CPU workers, resets and dumps live, and opens its run in the explorer', async ({ page }) => {
  await openSimulator(page);
  // the proposed binary export (stack_map_bin v2) and bits 10: a dump is two files, and a reset inside a binary read is ESTALE
  await startRun(page, { v8: 'bin' });

  // one Web Worker per simulated CPU, each recording
  await expect.poll(() => page.workers().filter((w) => w.url().includes('sim-cpu')).length).toBe(4);
  await expect(page.getByTestId('sim-lane')).toHaveCount(4);
  for (let cpu = 0; cpu < 4; cpu++)
    await expect.poll(async () => Number(await page.getByTestId('sim-lane').nth(cpu).getAttribute('data-events'))).toBeGreaterThan(0);

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
  // the flag's row can scroll past the rows kept on a busy machine; the log's totals are exact
  await expect(page.getByTestId('sim-log')).toHaveAttribute('data-total-reset-flag', '1');
  await expect(page.getByTestId('sim-log')).toHaveAttribute('data-total-reset-done', '1');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="dump"]')).toHaveCount(1);
  // the live ledger follows the run
  await expect(page.getByTestId('sim-ledger')).toBeVisible();

  // a reset inside a slow binary read fails it with ESTALE (passes are paced by the race window)
  await page.getByTestId('sim-window').selectOption('100000');
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-readers', '1');
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
  if ((await page.getByTestId('sim-report').getAttribute('data-ns-measured')) === '0')
    await expect(page.getByTestId('sim-report-timing')).toContainText('not measured');
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
  const resets = await num(page, 'sim-counter-resets');

  // the explorer reads the exported capture exactly as the ledger did
  await page.getByTestId('sim-open').click();
  await expect(page.getByTestId('simulator')).toHaveCount(0);
  await expect(page).not.toHaveURL(/view=simulator/);
  await waitLoaded(page);
  // the CPUs' events and one trace_marker line per reset CPU 0's ring still holds: at most one per reset done
  await expect(page.getByTestId('summary-events')).not.toHaveText('');
  const shown = Number(await page.getByTestId('summary-events').textContent());
  expect(resets).toBeGreaterThan(0);
  expect(shown).toBeGreaterThanOrEqual(events);
  expect(shown).toBeLessThanOrEqual(events + resets);
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
  // before a reset, stack_map_stat's successes are the run's
  await expect(page.getByTestId('sim-stat-says')).toContainText('v4 zeroes successes and drops at each reset');
  await expect(page.getByTestId('sim-free')).toBeDisabled(); // only v8 frees the map
  await page.getByTestId('sim-reset').click();
  await expect(grid(page)).toHaveAttribute('data-resets', '1');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="v4-pause"]')).toHaveCount(1);
  await expect(page.getByTestId('sim-counter-bypasses')).toHaveText('0'); // v4: no insert ever meets the flag
  // v4 zeroed stack_map_stat's successes at the reset: fewer than the run's
  await expect(page.getByTestId('sim-stat-says')).toContainText('since reset 1');
  const statSuccesses = Number(await page.getByTestId('sim-stat').getAttribute('data-successes'));
  expect(statSuccesses).toBeLessThan(await num(page, 'sim-counter-successes'));
  await expect(page.getByTestId('sim-stat-text')).toContainText('successes:');
  // v4 honours options/stackmap too: off, and no success is counted any more
  await page.getByTestId('sim-option').click();
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-option', 'off');
  await expect(page.getByTestId('sim-free')).toBeDisabled();
  // every CPU has seen the option off once each has counted refusals; from then on no success
  await expect.poll(() => num(page, 'sim-counter-off')).toBeGreaterThan(0);
  await advance(page, 'sim-counter-off', 100);
  const s0 = await num(page, 'sim-counter-successes');
  await advance(page, 'sim-counter-off', 100);
  expect(await num(page, 'sim-counter-successes')).toBe(s0);
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
  await expect(page.getByTestId('sim-stat-says')).toContainText('v7 counts successes and drops since boot, while entries counts since the last reset');
  // only v8 discards stacks taken while RCU is not watching
  await expect(page.getByTestId('sim-counter-rcu')).toHaveText('—');
  await expect(page.getByTestId('sim-rcu')).toBeDisabled();
  await expect(page.getByTestId('sim-rcu-note')).toHaveText('only v8 discards them');

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

  // a real dump, then the table after the reset: "since reset 1" (once the new table holds a stack)
  await expect(page.getByTestId('sim-dump')).toBeEnabled({ timeout: 30_000 });
  await expect.poll(async () => Number(await grid(page).getAttribute('data-published')), { timeout: 30_000 }).toBeGreaterThan(0);
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
  // what was not taken is said, with what the key takes (issue 18: nothing dropped silently)
  await expect(page.getByTestId('simulator').getByRole('alert')).toContainText('Not taken from the address (the defaults stand): sim.cpus=abc (takes 1..');
  await expect(page.getByTestId('simulator').getByRole('alert')).toContainText('sim.speed=7 (takes 2, 5, 20, 200, 2000, 20000, 0)');
  // the CPU limit says why
  const max = await page.evaluate(() => Math.max(4, navigator.hardwareConcurrency || 4));
  await expect(page.getByTestId('sim-cpus').locator('..')).toHaveAttribute(
    'title',
    new RegExp(`^up to ${max}: one Web Worker per simulated CPU; more than the machine's cores`),
  );
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
  await expect(page).toHaveURL(/sim\.bits=12/); // kept for v4, v7 and the binary variant
  const url = page.url();
  await page.goto(url);
  await expect(page.getByTestId('sim-ring')).toHaveValue('64');
  await expect(page.getByTestId('sim-cpus')).toHaveValue(String(max));
  // v8 as posted has no bits: 14, fixed; the binary variant uses the setting
  await expect(page.getByTestId('sim-bits')).toHaveValue('14');
  await expect(page.getByTestId('sim-bits')).toBeDisabled();
  await page.getByTestId('sim-v8').selectOption('bin');
  await expect(page.getByTestId('sim-bits')).toHaveValue('12');
  await expect(page).toHaveURL(/sim\.v8=bin/);
  // the workload's new settings: depth up to 80, the share taken with RCU not watching, the change after each reset
  await page.getByTestId('sim-depth-max').fill('80');
  await page.getByTestId('sim-rcu').selectOption('0.05');
  await page.getByTestId('sim-phase').selectOption('0.25');
  await expect(page).toHaveURL(/sim\.depth=8-80/);
  await expect(page).toHaveURL(/sim\.rcu=0\.05/);
  await expect(page).toHaveURL(/sim\.phase=0\.25/);
  await page.goto(page.url());
  await expect(page.getByTestId('sim-depth-max')).toHaveValue('80');
  await expect(page.getByTestId('sim-rcu')).toHaveValue('0.05');
  await expect(page.getByTestId('sim-phase')).toHaveValue('0.25');
  await page.getByTestId('sim-depth-max').fill('20');
  await page.getByTestId('sim-rcu').selectOption('0.001'); // the default: left out
  await page.getByTestId('sim-phase').selectOption('0');
  await expect(page).not.toHaveURL(/sim\.(rcu|phase|depth)=/);

  // the ring size is what the run uses, and fixed while it runs
  await page.getByTestId('sim-cpus').fill('2');
  await page.getByTestId('sim-start').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'running');
  await expect(page.getByTestId('sim-ring')).toBeDisabled();
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  await expect(page.getByTestId('sim-ring')).toBeEnabled();
});

test('v8 as posted is the default: 16,384 stacks, bits fixed, and Dump reads only the text stack_map', async ({ page }) => {
  await openSimulator(page);
  await expect(page.getByTestId('sim-v8')).toHaveValue('posted');
  await expect(page.getByTestId('sim-bits')).toHaveValue('14');
  await expect(page.getByTestId('sim-bits')).toBeDisabled();
  await expect(page).not.toHaveURL(/sim\.v8/);
  await page.getByTestId('sim-cpus').fill('2');
  await page.getByTestId('sim-start').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'running');
  await expect(page.getByTestId('sim-counter-entries')).toContainText('/ 16,384');
  await expect(grid(page)).toHaveAttribute('data-slots', '32768');
  await expect(page.getByTestId('sim-stat-text')).toContainText('capacity: 16384');
  await expect(page.getByTestId('sim-stat-says')).toContainText('v8 counts successes and fallbacks since boot');
  await expect.poll(() => num(page, 'sim-counter-attempts')).toBeGreaterThan(200);
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-counter-dumps')).toHaveText('1'); // stack_map only
  await expect(page.getByTestId('sim-log').locator('li[data-kind="dump"]')).toHaveCount(0); // no stack_map_bin read
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  await expect(page.getByTestId('sim-report')).toContainText('2 dumps');
  // the follow-up is the labelled variant
  await expect(page.getByTestId('sim-v8').locator('option[value="bin"]')).toHaveText('+ proposed binary v2 and bits');
});

test('options/stackmap off: every stack in full and uncounted, successes stop; on again they resume', async ({ page }) => {
  await openSimulator(page);
  await startRun(page, { cpus: 2 });
  await expect.poll(() => num(page, 'sim-counter-successes')).toBeGreaterThan(200);
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-option', 'on');
  await expect(page.getByTestId('sim-free')).toBeDisabled(); // free needs the option off
  await expect.poll(() => num(page, 'sim-ledger-full')).toBeGreaterThanOrEqual(0);
  const full0 = await num(page, 'sim-ledger-full');
  await page.getByTestId('sim-option').click();
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-option', 'off');
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-allocated', '1'); // kept, so the buffer still resolves
  await expect(page.getByTestId('sim-option-off')).toBeVisible();
  await expect(page.getByTestId('sim-log').locator('li[data-kind="option-off"]')).toHaveCount(1);
  // once the CPUs have counted refusals, the option is seen off: nothing more is attempted or recorded
  await advance(page, 'sim-counter-off', 100);
  const s1 = await num(page, 'sim-counter-successes');
  const a1 = await num(page, 'sim-counter-attempts');
  await advance(page, 'sim-counter-off', 100);
  expect(await num(page, 'sim-counter-successes')).toBe(s1);
  expect(await num(page, 'sim-counter-attempts')).toBe(a1);
  // the ledger's full stacks grow, and the lanes show the records as full ones
  await expect.poll(() => num(page, 'sim-ledger-full'), { timeout: 20_000 }).toBeGreaterThan(full0 + 100);
  await expect(page.getByTestId('sim-lane').first().locator('[data-full="off"]').first()).toBeVisible();
  await expect(page.getByTestId('sim-free')).toBeEnabled();
  await page.getByTestId('sim-option').click();
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-option', 'on');
  await expect.poll(() => num(page, 'sim-counter-successes')).toBeGreaterThan(s1 + 100);
  await expect(page.getByTestId('sim-log').locator('li[data-kind="option-on"]').first()).toContainText('stacks go through the map again');
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
});

test('free with the option off waits for an open stack_map reader; a later Dump reads "stackmap not initialized"; on again allocates a new map', async ({
  page,
}) => {
  test.setTimeout(90_000);
  await openSimulator(page);
  await startRun(page, { cpus: 2 });
  // enough stacks that a text read takes several passes (64 records each)
  await expect.poll(async () => Number(await grid(page).getAttribute('data-published'))).toBeGreaterThan(150);
  await page.getByTestId('sim-option').click();
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-option', 'off');
  const gen0 = Number(await grid(page).getAttribute('data-generation'));
  // a slow reader: each pass of the text read waits the race window (1 s)
  await page.getByTestId('sim-window').selectOption('1000000');
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-readers', '1');
  await page.getByTestId('sim-free').click();
  await expect(page.getByTestId('sim-freeing')).toContainText('waiting for 1 stack_map file to close');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="free-wait"]')).toContainText('waiting for 1 stack_map file opened on the map to close');
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-allocated', '1'); // not yet: the reader is still reading
  // the reader that started before free read the complete map; then the map is released
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-allocated', '0', { timeout: 30_000 });
  await expect(page.getByTestId('sim-log').locator('li[data-kind="free"]')).toHaveCount(1);
  await expect(page.getByTestId('sim-dump')).toBeEnabled({ timeout: 30_000 });
  await expect(page.getByTestId('sim-counter-dumps')).toHaveText('1');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="text-spliced"]')).toHaveCount(0);
  await expect(page.getByTestId('sim-grid-freed')).toBeVisible();
  await expect(page.getByTestId('sim-stat-text')).toHaveText('stackmap not initialized');
  await expect(page.getByTestId('sim-free')).toBeDisabled();
  await page.getByTestId('sim-window').selectOption('0');
  // a later Dump: stackmap not initialized, nothing kept
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-log').locator('li[data-kind="uninitialized"]')).toContainText('stackmap not initialized');
  await expect(page.getByTestId('sim-counter-dumps')).toHaveText('1');
  // on again: a new map, whose generation continues
  await page.getByTestId('sim-option').click();
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-allocated', '1');
  await expect(page.getByTestId('sim-log').locator('li[data-kind="option-on"]').first()).toContainText(`a new map is allocated, generation ${gen0 + 1}`);
  await expect(grid(page)).toHaveAttribute('data-generation', String(gen0 + 1));
  await expect.poll(async () => Number(await grid(page).getAttribute('data-published'))).toBeGreaterThan(10);
  await expect(page.getByTestId('sim-grid-freed')).toHaveCount(0);
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  expect(await num(page, 'sim-ledger-wrong')).toBe(0);
});

test('v8 discards stacks taken while RCU is not watching; stacks deeper than 64 frames are recorded in full, uncounted', async ({ page }) => {
  await openSimulator(page);
  await page.getByTestId('sim-depth-max').fill('80');
  await page.getByTestId('sim-depth-min').fill('40');
  await page.getByTestId('sim-rcu').selectOption('0.01');
  await startRun(page, { cpus: 2 });
  await expect.poll(() => num(page, 'sim-counter-rcu')).toBeGreaterThan(0);
  await expect.poll(() => num(page, 'sim-counter-deep')).toBeGreaterThan(0);
  // a deep stack is a full record in the lanes, and never in the map: every published element holds at most 64 frames
  await expect(page.getByTestId('sim-lanes').locator('[data-full="deep"]').first()).toBeVisible();
  const tip = await hoverFirstPublished(page);
  expect(Number(await tip.getAttribute('data-depth'))).toBeLessThanOrEqual(64);
  await page.mouse.move(0, 0);
  // neither counts as an attempt: attempts + deeper + discarded = events
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  expect(await num(page, 'sim-counter-off')).toBe(0);
  expect(await num(page, 'sim-ledger-full')).toBeGreaterThan(0);
});

test('after each reset, change the stacks: v7 ids from before a reset resolve to other stacks', async ({ page }) => {
  await openSimulator(page);
  await page.getByTestId('sim-mode').selectOption('v7');
  await page.getByTestId('sim-phase').selectOption('1');
  await startRun(page, { mode: 'v7', cpus: 2, speed: '200' });
  await expect(page.getByTestId('sim-phase-now')).toHaveText('1');
  await expect.poll(() => num(page, 'sim-counter-attempts')).toBeGreaterThan(300);
  await page.getByTestId('sim-reset').click();
  await expect(grid(page)).toHaveAttribute('data-resets', '1');
  await expect(page.getByTestId('sim-phase-now')).toHaveText('2');
  // the new phase's stacks fill the emptied map
  await advance(page, 'sim-counter-successes', 200);
  // only a dump after the reset: the ids written before it name slots that now hold the new phase's stacks
  await page.getByTestId('sim-dump').click();
  await expect.poll(() => num(page, 'sim-counter-dumps')).toBe(2);
  await expect.poll(() => num(page, 'sim-ledger-wrong'), { timeout: 20_000 }).toBeGreaterThan(0);
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  // the run's stories, under its ledger: as many as the ledger counts wrong, and the Reset's time in them
  const wrong = await num(page, 'sim-ledger-wrong');
  await expect(page.getByTestId('sim-stories')).toHaveAttribute('data-total', String(wrong));
  const story = page.getByTestId('sim-story');
  await expect(story).toHaveAttribute('data-step', '4', { timeout: 30_000 });
  await expect(story.locator('li[data-moment="reset"]')).toContainText(/^\d+\.\d{6} s: echo 0 > stack_map empties the map/);
  expect(await story.getAttribute('data-read-stack')).not.toBe(await story.getAttribute('data-written-stack'));
  // a click on another story's slot in the grid shows that one
  const items = page.getByTestId('sim-story-item');
  if ((await items.count()) > 1) {
    const slot = Number(await items.nth(1).getAttribute('data-slot'));
    const g = grid(page);
    const cols = Number(await g.getAttribute('data-cols'));
    const px = Number(await g.getAttribute('data-cell-px'));
    await g.locator('canvas').click({ position: { x: (slot % cols) * px + px / 2, y: Math.floor(slot / cols) * px + px / 2 } });
    await expect(story).toHaveAttribute('data-slot', String(slot));
  }
});

// one run, shot light then dark (the grid and lanes redraw in the scheme put on <html>)
for (const [w, h] of [
  [1280, 720],
  [1600, 1000],
] as const)
  test(`the slot table's legend is under its drawing area, clear of its last row (${w}x${h})`, async ({ page }) => {
    await page.setViewportSize({ width: w, height: h });
    await openSimulator(page);
    await startRun(page);
    await expect.poll(async () => Number(await grid(page).getAttribute('data-published'))).toBeGreaterThan(0);
    await page.getByTestId('sim-stop').click();
    await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped');
    const g = grid(page);
    // the drawing area: every row of cells, the last one partly empty when the slots do not fill it
    const cols = Number(await g.getAttribute('data-cols'));
    const cell = Number(await g.getAttribute('data-cell-px'));
    const slots = Number(await g.getAttribute('data-slots'));
    const canvas = (await g.locator('canvas').boundingBox())!;
    expect(canvas.height).toBeCloseTo(Math.ceil(slots / cols) * cell, 0);
    const legend = (await page.locator('section.sim-grid .sim-legend').boundingBox())!;
    expect(legend.y).toBeGreaterThanOrEqual(canvas.y + canvas.height + 4);
    // and nothing of the legend is drawn over the grid's box
    const box = (await g.boundingBox())!;
    expect(legend.y).toBeGreaterThanOrEqual(box.y + box.height);
  });

test('simulator screenshot, light and dark', SHOTS_TAG, async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 1100 });
  await page.emulateMedia({ colorScheme: 'light' });
  await openSimulator(page);
  await startRun(page, { speed: '2000', window: '0' }); // v8 as posted, the default
  await expect.poll(async () => Number(await grid(page).getAttribute('data-published'))).toBeGreaterThan(300);
  await page.getByTestId('sim-dump').click();
  await expect.poll(() => num(page, 'sim-counter-dumps')).toBe(1);
  await page.getByTestId('sim-reset').click();
  await expect(grid(page)).toHaveAttribute('data-resets', '1');
  // slower, with a race window: claimed-but-unpublished slots and lost races show
  await page.getByTestId('sim-window').selectOption('20000');
  await page.getByTestId('sim-speed').selectOption('200');
  await advance(page, 'sim-counter-attempts', 200);
  await expect(page.getByTestId('sim-ledger')).toBeVisible();
  await page.mouse.move(0, 0);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.screenshot({ path: `${OUT}/simulator-${scheme}.png` });
  }
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
});

// SIM_SHOTS=DIR: the pane in each state, at two sizes and both themes, for a look. Not part of
// the suite: the tests exist only when SIM_SHOTS names a folder.
const SHOTS = process.env.SIM_SHOTS;

/** A screenshot test per size and theme: the page set up and the simulator open, `shot(state)` to take one. */
function shotTests(name: string, body: (page: Page, shot: (state: string) => Promise<unknown>, scheme: 'light' | 'dark') => Promise<void>) {
  if (!SHOTS) return;
  for (const [w, h] of [
    [1600, 1000],
    [1280, 720],
  ] as const)
    for (const scheme of ['light', 'dark'] as const)
      test(`${name} ${w}x${h} ${scheme}`, async ({ page }) => {
        test.setTimeout(120_000);
        mkdirSync(SHOTS, { recursive: true });
        await page.setViewportSize({ width: w, height: h });
        await page.emulateMedia({ colorScheme: scheme });
        await openSimulator(page);
        await body(page, (state) => page.screenshot({ path: `${SHOTS}/${w}x${h}-${scheme}-${state}.png` }), scheme);
      });
}

shotTests('pane states', async (page, shot, scheme) => {
  await shot('idle');
  await startRun(page, { mode: scheme === 'light' ? 'v8' : 'v7', speed: '200', window: '20000', v8: 'bin' });
  await expect.poll(async () => Number(await grid(page).getAttribute('data-published'))).toBeGreaterThan(100);
  await advance(page, 'sim-counter-attempts', 300);
  await shot('running-nodump');
  await page.getByTestId('sim-dump').click();
  await expect.poll(() => num(page, 'sim-counter-dumps')).toBe(2);
  await page.getByTestId('sim-reset').click();
  await expect(page.getByTestId('sim-grid-flash')).toBeVisible();
  await shot('reset-flash');
  await advance(page, 'sim-counter-attempts', 300);
  await shot('running');
  await hoverFirstPublished(page);
  await shot('hover');
  // a slot near the bottom right: the card opens up and to the left
  await hoverSlot(page, Number(await grid(page).getAttribute('data-slots')) - 1);
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

// v8's lifecycle and the new counters
shotTests('lifecycle states', async (page, shot) => {
  await page.getByTestId('sim-depth-max').fill('80');
  await page.getByTestId('sim-rcu').selectOption('0.01');
  await shot('v8-settings');
  await startRun(page, { cpus: 2, speed: '2000' });
  await expect.poll(() => num(page, 'sim-counter-deep')).toBeGreaterThan(0);
  await expect.poll(async () => Number(await grid(page).getAttribute('data-published'))).toBeGreaterThan(150);
  await advance(page, 'sim-counter-attempts', 200);
  await shot('v8-running');
  await page.getByTestId('sim-option').click();
  await advance(page, 'sim-counter-off', 200);
  await shot('v8-option-off');
  await page.getByTestId('sim-window').selectOption('1000000');
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-readers', '1');
  await page.getByTestId('sim-free').click();
  await expect(page.getByTestId('sim-freeing')).toBeVisible();
  await shot('v8-free-wait');
  await expect(page.getByTestId('sim-lifecycle')).toHaveAttribute('data-allocated', '0', { timeout: 30_000 });
  await page.getByTestId('sim-window').selectOption('0');
  await expect(page.getByTestId('sim-dump')).toBeEnabled({ timeout: 30_000 });
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-log').locator('li[data-kind="uninitialized"]')).toBeVisible();
  await shot('v8-freed');
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await shot('v8-freed-bottom');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.getByTestId('sim-option').click();
  await advance(page, 'sim-counter-attempts', 200);
  await shot('v8-on-again');
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
  // v4's stack_map_stat after a reset
  await page.getByTestId('sim-depth-max').fill('20');
  await startRun(page, { mode: 'v4', cpus: 2, speed: '2000' });
  await expect.poll(() => num(page, 'sim-counter-attempts')).toBeGreaterThan(500);
  await page.getByTestId('sim-reset').click();
  await expect(grid(page)).toHaveAttribute('data-resets', '1');
  await advance(page, 'sim-counter-attempts', 200);
  await shot('v4-stat');
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped', { timeout: 30_000 });
});
