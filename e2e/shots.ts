import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Locator, type Page } from '@playwright/test';

/**
 * Where the e2e tests' screenshots go. `npm run shots` (SHOTS=1) writes them to docs/screenshots/
 * (the README and the docs show them) and runs the tests that only take pictures (tagged
 * `@shots`); `npm test` writes them to a temporary folder, so a run changes nothing tracked,
 * and skips those tests (playwright.config.ts).
 */
export const SHOTS = process.env.SHOTS === '1';
export const OUT = SHOTS ? 'docs/screenshots' : mkdtempSync(join(tmpdir(), 'smx-shots-'));
mkdirSync(OUT, { recursive: true });
/** the tag of a test that only takes screenshots */
export const SHOTS_TAG = { tag: '@shots' };

/** The sizes a state is looked at in: a large screen and a small laptop's. */
export const SHOT_SIZES = [
  [1600, 1000],
  [1280, 720],
] as const;

/**
 * The page as it is, at both sizes, light and dark: `OUT/NAME-WxH-SCHEME.png`. Each size is set
 * twice (a resize redraws the canvases in the theme now on <html>), the page's answers waited for,
 * then scrolled to the top, or to `at`'s top; `check` runs before each picture (what
 * must hold at that size). The page is left in the light scheme at the last size.
 */
export async function shots(page: Page, name: string, opts: { at?: Locator; check?: (width: number, height: number) => Promise<void> } = {}): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
    for (const [w, h] of SHOT_SIZES) {
      await page.setViewportSize({ width: w - 10, height: h });
      await page.setViewportSize({ width: w, height: h });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await expect(page.locator('html')).toHaveAttribute('data-queries', '0');
      if (opts.at) await opts.at.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      else await page.evaluate(() => window.scrollTo(0, 0));
      await opts.check?.(w, h);
      await page.screenshot({ path: `${OUT}/${name}-${w}x${h}-${scheme}.png` });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
}
