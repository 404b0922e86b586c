import { expect, test } from './fixtures.ts';
import { urlParam, waitLoaded } from './explorer-helpers.ts';

// The flame canvas draws only when what it shows changes: its paint count (data-paint-count,
// set after each paint) stays put through a timeline zoom and pan, and moves for a hover.
test('the flame canvas does not redraw for a timeline zoom or pan, and does for a hover', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  const flame = page.getByTestId('flame-main');
  await expect.poll(async () => Number(await flame.getAttribute('data-paint-count'))).toBeGreaterThan(0);
  expect(Number(await flame.getAttribute('data-painted-nodes'))).toBeGreaterThan(10);
  // settled: no paint pending
  let before = '';
  await expect
    .poll(
      async () => {
        const now = (await flame.getAttribute('data-paint-count')) ?? '';
        const same = now === before;
        before = now;
        return same;
      },
      { intervals: [300] },
    )
    .toBe(true);

  const canvas = page.getByTestId('timeline').locator('canvas');
  const box = (await canvas.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -200);
  await expect.poll(() => urlParam(page, 'window')).not.toBeNull();
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  const zoomed = await urlParam(page, 'window');
  await page.keyboard.press('KeyD');
  await expect.poll(() => urlParam(page, 'window')).not.toBe(zoomed);
  const panned = await urlParam(page, 'window');
  await page.keyboard.press('KeyA');
  await expect.poll(() => urlParam(page, 'window')).not.toBe(panned);
  // the pans are drawn: two animation frames later any repaint they caused has happened
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  expect(await flame.getAttribute('data-paint-count')).toBe(before);

  // a hover is the canvas's own input: it redraws
  const fbox = (await flame.locator('canvas').boundingBox())!;
  await page.mouse.move(fbox.x + 20, fbox.y + 18 + 9);
  await expect(page.getByTestId('flame-tooltip')).toBeVisible();
  await expect.poll(async () => Number(await flame.getAttribute('data-paint-count'))).toBeGreaterThan(Number(before));
});
