import { test as base, type BrowserContext } from '@playwright/test';

export { expect } from '@playwright/test';
export type { Locator, Page, Route } from '@playwright/test';

/**
 * The specs' `test`: one browser context per Playwright worker, a new page in it per test.
 * Playwright's default, a fresh context per test, starts with an empty HTTP cache every time.
 * Sharing the context saved about a tenth (explorer.spec 52.7 s against 57.9 s, one run each);
 * a new page still costs most of a cold start (about 1.8 s to the sample's flame graph, the
 * app's own start-up), so this is not where the suite's time goes.
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
