import { execFileSync } from 'node:child_process';
import { expect, test } from './fixtures.ts';
import { sampleFiles, summaryNumbers, waitLoaded } from './explorer-helpers.ts';
import { cli, CLI } from './cli.ts';
import { shots } from './shots.ts';

/**
 * Several event filters in the page (issue 35: "several filters are ORed, as several -F are"), a
 * row each, a `filter=` each in the URL, and completion of each event's own fields (text ones
 * too) for every term. The expected numbers are the command line's with one --filter per row.
 */
const A = 'kmem_cache_alloc: bytes_alloc > 512 && gfp_flags =~ "ZERO"';
const B = 'sched_wakeup: comm =~ "^system" || prio < 100';

test('two filters ORed: completion of text fields after &&, a row each, the command line’s counts, its column for a bad row, Back and a new page', async ({
  page,
  context,
}) => {
  await page.goto('/');
  await waitLoaded(page);
  const all = (await summaryNumbers(page)).events;
  const first = page.getByTestId('event-filter');
  await first.click();
  // after && the event's own fields, the text ones too (gfp_flags), not another event's (comm)
  await first.fill('kmem_cache_alloc: bytes_alloc > 512 && gf');
  await expect(page.locator('#event-filter-complete option[value="kmem_cache_alloc: bytes_alloc > 512 && gfp_flags"]')).toHaveAttribute('label', 'text');
  await first.fill('kmem_cache_alloc: bytes_alloc > 512 && co');
  await expect(page.locator('#event-filter-complete option[value="kmem_cache_alloc: bytes_alloc > 512 && common_pid"]')).toHaveCount(1);
  await expect(page.locator('#event-filter-complete option[value="kmem_cache_alloc: bytes_alloc > 512 && comm"]')).toHaveCount(0);
  await first.fill(A);
  await shots(page, 'filter-completion');

  // a second row, focused when added, completed with its own event's fields
  await page.getByTestId('event-filter-add').click();
  const second = page.getByTestId('event-filter-line');
  await expect(second).toBeFocused();
  await second.fill('sched_wakeup: co');
  await expect(page.locator('#event-filter-1-complete option[value="sched_wakeup: comm"]')).toHaveAttribute('label', 'text');
  await second.fill(B);
  await second.press('Enter');

  const want = JSON.parse(cli(['summary', '--json', '--filter', A, '--filter', B, ...sampleFiles])) as { events: number; cookies: number; resolved: number };
  const onlyA = (JSON.parse(cli(['summary', '--json', '--filter', A, ...sampleFiles])) as { events: number }).events;
  const onlyB = (JSON.parse(cli(['summary', '--json', '--filter', B, ...sampleFiles])) as { events: number }).events;
  // ORed: each filter's events, the two sets disjoint here (different events)
  expect(want.events).toBe(onlyA + onlyB);
  expect(onlyA * onlyB).toBeGreaterThan(0);
  await expect(page.getByTestId('event-filter-status')).toHaveAttribute('data-applied', `${A}\n${B}`);
  await waitLoaded(page);
  const shown = await summaryNumbers(page);
  expect([shown.events, shown.cookies, shown.resolved]).toEqual([want.events, want.cookies, want.resolved]);
  await expect(page.getByTestId('event-filter-status')).toHaveText(`${want.events.toLocaleString('en-US')} of ${all.toLocaleString('en-US')} events`);
  await expect.poll(() => new URL(page.url()).searchParams.getAll('filter')).toEqual([A, B]);
  await shots(page, 'filter-two-rows');

  // a bad second row: the command line's column, under that row; the panes keep the two filters' answer
  const bad = 'sched_wakeup: prio <> 100';
  let stderr = '';
  try {
    execFileSync(CLI[0], [...CLI[1], 'summary', '--json', '--filter', A, '--filter', bad, ...sampleFiles], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    stderr = (e as { stderr: string }).stderr;
  }
  const column = /column (\d+)/.exec(stderr)![1];
  await second.fill(bad);
  await second.press('Enter');
  const error = page.locator('[data-testid=event-filter-row][data-line="1"] [data-testid=event-filter-error]');
  await expect(error).toHaveAttribute('data-column', column);
  await expect(page.locator('[data-testid=event-filter-row][data-line="0"] [data-testid=event-filter-error]')).toHaveCount(0);
  expect((await summaryNumbers(page)).events).toBe(want.events);
  await shots(page, 'filter-bad-row');

  // Back: the two good filters again; a new page from their URL shows the same rows and counts
  await page.goBack();
  await expect(page.getByTestId('event-filter-status')).toHaveAttribute('data-applied', `${A}\n${B}`);
  await expect(second).toHaveValue(B);
  const url = page.url();
  const other = await context.newPage();
  await other.goto(url);
  await expect(other.getByTestId('event-filter-status')).toHaveAttribute('data-applied', `${A}\n${B}`);
  await waitLoaded(other);
  await expect(other.getByTestId('event-filter')).toHaveValue(A);
  await expect(other.getByTestId('event-filter-line')).toHaveValue(B);
  expect((await summaryNumbers(other)).events).toBe(want.events);

  // removing the second row and applying: only the first filter's events
  await other.locator('[data-testid=event-filter-row][data-line="1"] [data-testid=event-filter-remove]').click();
  await other.getByTestId('event-filter').press('Enter');
  await expect(other.getByTestId('event-filter-status')).toHaveAttribute('data-applied', A);
  await waitLoaded(other);
  expect((await summaryNumbers(other)).events).toBe(onlyA);
  await other.close();
});
