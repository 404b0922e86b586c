import { expect, test } from './fixtures.ts';
import { openSql, waitLoaded } from './explorer-helpers.ts';

// Issue 18.10: a cell of millions of characters in the SQL pane. It is shown cut (its first
// characters and its length), the whole value is one click away (copied), and the page keeps
// answering: the next query runs and shows its result.

const CHARS = 10_000_000;

test('a 10M-character cell is shown cut, copies whole, and the page stays responsive', async ({ page, context, baseURL }) => {
  test.setTimeout(120_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.goto('/');
  await waitLoaded(page);
  await openSql(page);
  const editor = page.getByTestId('sql-editor');
  await editor.fill(`SELECT 1 AS n, repeat('x', ${CHARS}) || 'END' AS big, 'short' AS s`);
  await editor.press('Control+Enter');
  await expect(page.getByTestId('sql-count')).toHaveAttribute('data-total', '1', { timeout: 60_000 });
  const cut = page.getByTestId('sql-cut');
  await expect(cut).toHaveCount(1);
  // its length, counted by the query: CHARS x's and END
  await expect(cut).toHaveAttribute('data-chars', String(CHARS + 3));
  // the page holds the first characters only, in the cell's text and in no attribute
  const held = await page.getByTestId('sql-results').evaluate((t) => ({ text: t.textContent?.length ?? 0, html: t.outerHTML.length }));
  expect(held.text).toBeLessThan(1000);
  expect(held.html).toBeLessThan(10_000);
  await expect(cut).toContainText(`${(CHARS + 3).toLocaleString('en-US')} chars`);
  // the short cells are whole, as before
  await expect(page.locator('[data-testid=sql-row] td').nth(2)).toHaveAttribute('data-value', 'short');
  // the whole value, copied: its length and its end read back from the clipboard
  await cut.getByTestId('sql-cut-copy').click();
  await expect(page.getByTestId('toast')).toContainText('Copied');
  const copied = await page.evaluate(() => navigator.clipboard.readText().then((t) => ({ length: t.length, end: t.slice(-4) })));
  expect(copied).toEqual({ length: CHARS + 3, end: 'xEND' });
  // responsive: the next query runs and its result replaces the big one
  await editor.fill('SELECT 6 * 7 AS answer');
  await editor.press('Control+Enter');
  await expect(page.locator('[data-testid=sql-row] td').first()).toHaveAttribute('data-value', '42');
  await expect(page.getByTestId('sql-cut')).toHaveCount(0);
});
