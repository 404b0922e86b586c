import { expect, test } from './fixtures.ts';
import { writeCapture } from './capture.ts';
import { brushTimeline, waitLoaded } from './explorer-helpers.ts';
import { OUT, SHOTS_TAG } from './shots.ts';

// every pane, light and dark, into docs/screenshots/ under `npm run shots` (the README shows them)

for (const scheme of ['light', 'dark'] as const) {
  test(`screenshots of every pane, ${scheme}`, SHOTS_TAG, async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 1000 });
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto('/');
    await waitLoaded(page);
    await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
    // a selected stack shows in every pane; a diff fills the generations pane
    await page.getByTestId('top-stack-row').nth(1).click();
    await expect(page.getByTestId('flamegraph')).not.toHaveAttribute('data-highlight-nodes', '0');
    await page.getByTestId('diff-run').click();
    await expect(page.getByTestId('generation-diff').locator('h3')).toHaveCount(3);
    await page.mouse.move(0, 0);
    const shot = (name: string, target: { screenshot(o: { path: string }): Promise<unknown> }) => target.screenshot({ path: `${OUT}/${name}-${scheme}.png` });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${OUT}/app-${scheme}.png`, fullPage: true });
    await shot('timeline', page.getByRole('region', { name: 'timeline' }));
    await shot('top-stacks', page.getByRole('region', { name: 'top stacks' }));
    await shot('flamegraph', page.getByRole('region', { name: 'flame graph' }));
    await shot('generations', page.getByRole('region', { name: 'generations' }));
    await shot('stat-dashboard', page.getByRole('region', { name: 'stack map statistics' }));

    // hover: the timeline's tooltip
    const canvas = page.getByTestId('timeline').locator('canvas');
    await canvas.scrollIntoViewIfNeeded();
    const box = (await canvas.boundingBox())!;
    for (let x = box.x + box.width * 0.3; x < box.x + box.width - 20; x += 5) {
      await page.mouse.move(x, box.y + 34 + 11);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))); // the move is drawn
      if (await page.getByTestId('timeline-tooltip').count()) break;
    }
    await expect(page.getByTestId('timeline-tooltip')).toBeVisible();
    await shot('timeline-hover', page.getByRole('region', { name: 'timeline' }));

    // sandwich on the busiest leaf, and the keyboard help
    await page.getByRole('button', { name: 'Sandwich' }).click();
    await page.getByTestId('sandwich-focus').fill('__kmalloc');
    await expect(page.getByTestId('flamegraph').locator('canvas')).toHaveCount(2);
    await shot('flamegraph-sandwich', page.getByRole('region', { name: 'flame graph' }));
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('Shift+Slash');
    await expect(page.getByTestId('keyboard-help')).toBeVisible();
    await shot('help', page.getByTestId('keyboard-help'));
    await page.keyboard.press('Escape');

    // per-task lanes, zoomed into a brushed range
    await page.getByTestId('lanes-select').selectOption('task');
    await brushTimeline(page, 0.4, 0.5);
    await page.getByTestId('range-chip').getByRole('button', { name: 'zoom' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('window')).not.toBeNull();
    await expect(page.getByTestId('timeline')).not.toHaveAttribute('data-lanes', '4');
    await page.mouse.move(0, 0);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))); // the hover is gone
    await shot('timeline-tasks', page.getByRole('region', { name: 'timeline' }));
  });
}

// the five-generation capture of explorer-multigen.spec.ts: resets, bands, a generation chosen
const multigen = writeCapture({ seed: 4242, cpus: 3, events: 2500, resets: 4, bits: 14, tail: 25 });
for (const scheme of ['light', 'dark'] as const) {
  test(`screenshots of a five-generation capture, ${scheme}`, SHOTS_TAG, async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 1000 });
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto('/');
    await waitLoaded(page);
    await page.getByTestId('file-input').setInputFiles(multigen);
    await expect(page.getByTestId('summary-generations')).toHaveText('1, 2, 3, 4, 5');
    await waitLoaded(page);
    await page.getByTestId('generation-select').selectOption('3');
    await expect(page.getByTestId('summary')).toHaveAttribute('data-pending', 'false');
    await page.mouse.move(0, 0);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))); // the hover is gone
    const shot = (name: string) => page.getByRole('region', { name }).screenshot({ path: `${OUT}/multigen-${name.replaceAll(' ', '-')}-${scheme}.png` });
    await shot('timeline');
    await shot('generations');
    await shot('stack map statistics');
  });
}
