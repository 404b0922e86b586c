import { expect, test, type Page } from './fixtures.ts';
import { OUT } from './shots.ts';

// Slow motion (issue 36): one reset race watched at human speed. The page's beats are checked
// against the run's ledger, which resolves every record left in the ring buffers against the
// final stack_map by other code (core/sim/ledger.ts), once the run is stopped.

const beats = (page: Page, kind: string) => page.locator(`[data-testid=slow-beat][data-kind=${kind}]`);

async function openSimulator(page: Page) {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.goto('/?view=simulator');
  await expect(page.getByTestId('slow-motion')).toBeVisible();
}

test('v7: a wrong id is marked within 30 s of Run, both stacks shown with the differing frames; pause and step', async ({ page }) => {
  await openSimulator(page);
  await page.getByTestId('slow-v7').click();
  // within 30 s of pressing Run, every time
  await expect(beats(page, 'wrong').first()).toBeVisible({ timeout: 30_000 });
  await expect(beats(page, 'reset')).not.toHaveCount(0);
  await expect(beats(page, 'refused')).toHaveCount(0);
  // the wrong id's two stacks in full, side by side, the frames that differ marked
  const pair = page.getByTestId('slow-stack-pair');
  await expect(pair).toBeVisible();
  expect(Number(await pair.getAttribute('data-differing'))).toBeGreaterThan(0);
  await expect(pair.getByTestId('stack-pair-differs').first()).toBeVisible();
  await expect(pair.locator('td').first()).toContainText(/\+0x[0-9a-f]+\/0x[0-9a-f]+/);
  await page.getByTestId('slow-motion').screenshot({ path: `${OUT}/slow-motion-v7.png` });
  // pause holds the CPUs: no new beat until Step, which adds one event (or the reset that is due)
  await page.getByTestId('slow-pause').click();
  await expect(page.getByTestId('slow-motion')).toHaveAttribute('data-status', 'paused');
  const held = await page.getByTestId('slow-beat').count();
  await page.getByTestId('slow-step').click();
  await expect(page.getByTestId('slow-motion')).toHaveAttribute('data-status', 'paused');
  await expect.poll(() => page.getByTestId('slow-beat').count()).toBeGreaterThan(held);
  await page.getByTestId('slow-pause').click();
  await expect(page.getByTestId('slow-motion')).toHaveAttribute('data-status', 'running');
  // a reader dumps stack_map; stopped, the ledger, by its own reading of the rings and that dump, counts wrong ids too
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-ledger')).not.toHaveAttribute('data-dumps', '0');
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('sim-status')).toHaveText('stopped', { timeout: 30_000 });
  await expect(page.getByTestId('slow-motion')).toHaveAttribute('data-status', 'ended');
  await expect.poll(async () => Number((await page.getByTestId('sim-ledger-wrong').textContent())?.replace(/\D/g, ''))).toBeGreaterThan(0);
});

test('v8: the stale cookie is refused by its generation though its slot was reused; nothing is wrong', async ({ page }) => {
  await openSimulator(page);
  await page.getByTestId('slow-v8').click();
  await expect(beats(page, 'refused').first()).toBeVisible({ timeout: 30_000 });
  await expect(beats(page, 'refilled').first()).toBeVisible();
  await expect(beats(page, 'wrong')).toHaveCount(0);
  await expect(beats(page, 'refused').first()).toContainText(/gen 1>.*refused/);
  await expect(page.getByTestId('slow-pair')).toHaveAttribute('data-kind', 'refused');
  await page.getByTestId('slow-motion').screenshot({ path: `${OUT}/slow-motion-v8.png` });
  await page.getByTestId('sim-dump').click();
  await expect(page.getByTestId('sim-ledger')).not.toHaveAttribute('data-dumps', '0');
  await page.getByTestId('sim-stop').click();
  await expect(page.getByTestId('sim-status')).toHaveText('stopped', { timeout: 30_000 });
  await expect(page.getByTestId('sim-ledger-wrong')).toHaveText('0');
  await expect.poll(async () => Number((await page.getByTestId('sim-ledger-detected').textContent())?.replace(/\D/g, ''))).toBeGreaterThan(0);
});
