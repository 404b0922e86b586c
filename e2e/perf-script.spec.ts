import { basename } from 'node:path';
import { expect, test } from './fixtures.ts';
import { cliSummary } from './cli.ts';
import { waitLoaded } from './explorer-helpers.ts';
import { needsRealTraces, realTracePath } from './real-traces.ts';

// `perf script` output (issue 12.4) loads as a capture: its samples are the events, their
// callchains full stacks in the stack table; the page's figures equal the command line's.

const FILE = realTracePath('flamegraph-perf-dd-stacks-01.txt');
needsRealTraces();

test('perf script output: the summary and the top stack are those of `cli summary --json`', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles([FILE]);
  const replace = page.getByTestId('replace-files');
  const ready = async () => {
    if ((await page.getByTestId('load-progress').getAttribute('data-status')) !== 'done') return false;
    const rows = await page.getByTestId('file-row').locator('td:first-child').allTextContents();
    return rows.length === 1 && rows[0] === basename(FILE);
  };
  await expect.poll(async () => (await replace.isVisible()) || (await ready()), { timeout: 30_000 }).toBe(true);
  if (await replace.isVisible()) await replace.click();
  await expect.poll(ready, { timeout: 30_000 }).toBe(true);

  const cli = cliSummary([FILE]);
  expect(cli.events).toBeGreaterThan(0);
  expect(cli.fullStacks).toBe(cli.events);
  const shown = async (id: string) => Number(await page.getByTestId(id).textContent());
  expect({ events: await shown('summary-events'), uniqueStacks: await shown('summary-unique-stacks') }).toEqual({
    events: cli.events,
    uniqueStacks: cli.uniqueStacks,
  });
  // perf script carries full stacks: no banner says something is missing
  await expect(page.getByTestId('banner')).toHaveCount(0);

  const top = page.getByTestId('top-stack-row').first();
  await expect(top).toHaveAttribute('data-count', String(cli.top[0].count));
  const cells = top.locator('td');
  await expect(cells.nth(4)).toHaveText(cli.top[0].frames[0]);
  await expect(cells.nth(5)).toHaveText(String(cli.top[0].frames.length));
  await expect(page.getByTestId('top-stack-row')).toHaveCount(cli.uniqueStacks);
});
