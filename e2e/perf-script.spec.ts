import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { cliSummary } from './cli.ts';
import { waitLoaded } from './explorer-helpers.ts';
import { needsRealTraces, realTracePath } from './real-traces.ts';

// `perf script` output (issue 12.4) loads as a capture: its samples are the events, their
// callchains full stacks in the stack table; the page's figures equal the command line's.

const FILE = realTracePath('flamegraph-perf-dd-stacks-01.txt');
needsRealTraces();

/** FlameGraph's own stackcollapse-perf.pl, the second method for what perf's samples fold to */
const stackcollapse = (file: string) =>
  execFileSync('perl', [join(import.meta.dirname, '../../shared/peer-tools/stackcollapse-perf.pl'), file], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });

async function openPerf(page: Page, file = FILE) {
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles([file]);
  const replace = page.getByTestId('replace-files');
  const ready = async () => {
    if ((await page.getByTestId('load-progress').getAttribute('data-status')) !== 'done') return false;
    const rows = await page.getByTestId('file-row').locator('td:first-child').allTextContents();
    return rows.length === 1 && rows[0] === basename(file);
  };
  await expect.poll(async () => (await replace.isVisible()) || (await ready()), { timeout: 30_000 }).toBe(true);
  if (await replace.isVisible()) await replace.click();
  await expect.poll(ready, { timeout: 30_000 }).toBe(true);
}

async function download(page: Page, testId: string): Promise<string> {
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()]);
  return readFileSync((await d.path())!, 'utf8');
}

test('perf script output: the summary and the top stack are those of `cli summary --json`', async ({ page }) => {
  await openPerf(page);
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
  // by function (perf's default): one row per function path, as stackcollapse-perf.pl folds them
  // (the file with a blank line added, so the script counts its last sample too; one process)
  const dir = mkdtempSync(join(tmpdir(), 'perf-e2e-'));
  writeFileSync(join(dir, 'perf.txt'), readFileSync(FILE, 'utf8') + '\n\n');
  const paths = stackcollapse(join(dir, 'perf.txt')).trim().split('\n');
  await expect(page.getByTestId('top-stack-row')).toHaveCount(paths.length);
});

// Java with perf-map-agent's unfolded names and sampled offsets: vfs_read+0x10 and vfs_read+0x14 are one function
const JAVA = realTracePath('inferno-perf-java-inline.txt');

test('perf script output: frames by function or call site, period weights, and the stackcollapse-perf.pl export', async ({ page }) => {
  await openPerf(page, JAVA);
  // top stacks by function: fewer rows than call-site stacks, as many as the script folds (its last sample counted)
  const dir = mkdtempSync(join(tmpdir(), 'perf-e2e-'));
  writeFileSync(join(dir, 'perf.txt'), readFileSync(JAVA, 'utf8') + '\n\n');
  const paths = stackcollapse(join(dir, 'perf.txt')).trim().split('\n');
  expect(paths.length).toBeLessThan(cliSummary([JAVA]).uniqueStacks);
  await expect(page.getByTestId('top-stack-row')).toHaveCount(paths.length);
  // the flame graph as SVG holds the frames as drawn: functions, then call sites `sym+0xoff`
  const flame = page.getByTestId('flamegraph');
  await expect(flame).toHaveAttribute('data-ready', 'true');
  expect(await download(page, 'export-svg')).not.toMatch(/\+0x[0-9a-f]+/);
  await page.getByTestId('flame-frames').selectOption('site');
  await expect(page).toHaveURL(/frames=site/);
  await expect(flame).toHaveAttribute('data-ready', 'true');
  await expect.poll(async () => /\+0x[0-9a-f]+/.test(await download(page, 'export-svg'))).toBe(true);

  // weights: perf's period, summed as the file prints it (`SECONDS: PERIOD EVENT:`), counted here by a regex
  const periods = [...readFileSync(JAVA, 'utf8').matchAll(/^\S.*? \d+\.\d+:\s+(\d+) \S+:/gm)].reduce((n, m) => n + Number(m[1]), 0);
  expect(periods).toBeGreaterThan(0);
  await page.getByTestId('flame-weight').selectOption('period');
  await expect(page).toHaveURL(/weight=period/);
  const folded = await download(page, 'export-folded');
  expect(
    folded
      .trim()
      .split('\n')
      .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0),
  ).toBe(periods);

  // the stackcollapse-perf.pl form is the script's own output on the same file, byte for byte
  expect(await download(page, 'export-stackcollapse')).toBe(stackcollapse(JAVA));
});
