import { test as base, type BrowserContext } from '@playwright/test';

export { expect } from '@playwright/test';
export type { Locator, Page, Route } from '@playwright/test';

/**
 * The specs' `test`: one browser context per Playwright worker, a new page in it per test.
 * Playwright's default, a fresh context per test, starts the app cold every time (no HTTP or
 * code cache): 2.2 s from navigation to the sample's flame graph against 0.75 s in a context
 * that has loaded it once, measured here; over a hundred tests, most of them opening the page
 * more than once, that was minutes of the suite.
 *
 * What a shared context would carry from one test to the next is cleared after each: every page
 * closed, then the origin's storage (OPFS, where a capture is kept; IndexedDB; local storage;
 * cookies) through the DevTools protocol, and granted permissions. A test that needs a context
 * of its own (startup-race.spec.ts) makes one with `browser.newContext()`.
 */
let shared: BrowserContext | null = null;

export const test = base.extend({
  context: async ({ browser, baseURL, viewport }, use) => {
    shared ??= await browser.newContext({ baseURL, viewport });
    await use(shared);
  },
  page: async ({ context, baseURL }, use) => {
    const page = await context.newPage();
    await use(page);
    await clearContext(context, baseURL!);
  },
});

/** Closes the context's pages and forgets everything the app stored for the origin. */
async function clearContext(context: BrowserContext, baseURL: string): Promise<void> {
  const origin = new URL(baseURL).origin;
  const blank = await context.newPage();
  const cdp = await context.newCDPSession(blank);
  await cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' });
  await cdp.detach();
  await context.clearCookies();
  await context.clearPermissions();
  for (const p of context.pages()) await p.close();
}
