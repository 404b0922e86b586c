import { readFileSync } from 'node:fs';
import { expect, test, type Page } from './fixtures.ts';
import { cliSummary } from './cli.ts';
import { giveRepeatedSample } from './explorer-helpers.ts';

const SAMPLES = 'public/samples/';
const sampleFiles = (JSON.parse(readFileSync(SAMPLES + 'index.json', 'utf8')) as { files: string[] }).files.map((f) => SAMPLES + f);

async function numbers(page: Page) {
  const read = async (id: string) => Number(await page.getByTestId(id).textContent());
  return {
    events: await read('summary-events'),
    cookies: await read('summary-cookies'),
    resolved: await read('summary-resolved'),
    unresolved: await read('summary-unresolved'),
    uniqueStacks: await read('summary-unique-stacks'),
  };
}

async function waitLoaded(page: Page) {
  await expect(page.getByTestId('load-progress')).toHaveAttribute('data-status', 'done');
}

test('the start page shows the sample, with the numbers the command line prints', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  const cli = cliSummary(sampleFiles);
  expect(cli.events).toBeGreaterThan(1000);
  expect(await numbers(page)).toEqual({
    events: cli.events,
    cookies: cli.cookies,
    resolved: cli.resolved,
    unresolved: cli.unresolved,
    uniqueStacks: cli.uniqueStacks,
  });
  await expect(page.getByTestId('summary-generations')).toHaveText(cli.generations.join(', '));
});

test('the preview build is cross-origin isolated', async ({ page }) => {
  const response = await page.goto('/');
  expect(response?.headers()['cross-origin-opener-policy']).toBe('same-origin');
  expect(response?.headers()['cross-origin-embedder-policy']).toBe('require-corp');
  expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
  expect(await page.evaluate(() => typeof SharedArrayBuffer)).toBe('function');
  await expect(page.getByTestId('isolation')).toHaveText('isolated');
});

test('files set through the file input are parsed in the worker and their numbers shown', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  const files = [SAMPLES + 'trace', SAMPLES + 'stack_map_bin.gen1', SAMPLES + 'stack_map_bin.gen2'];
  await page.getByTestId('file-input').setInputFiles(files);
  await expect(page.getByTestId('load-progress')).toContainText('3 files');
  await waitLoaded(page);
  const cli = cliSummary(files);
  const shown = await numbers(page);
  expect(shown).toEqual({
    events: cli.events,
    cookies: cli.cookies,
    resolved: cli.resolved,
    unresolved: cli.unresolved,
    uniqueStacks: cli.uniqueStacks,
  });
  // generation 3 has no dump here: its cookies cannot resolve
  expect(shown.unresolved).toBeGreaterThan(0);
});

test('a malformed file shows a diagnostic and leaves the page working', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  const bad = Buffer.concat([Buffer.from([0x42, 0x4d, 0x53, 0x46, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]), Buffer.alloc(40, 7)]);
  await page.getByTestId('file-input').setInputFiles([
    { name: 'stack_map_bin', mimeType: 'application/octet-stream', buffer: bad },
    { name: 'noise', mimeType: 'application/octet-stream', buffer: Buffer.from([0, 1, 2, 3, 250, 251, 0, 9]) },
  ]);
  await waitLoaded(page);
  const diags = page.getByTestId('diagnostic');
  await expect(diags.filter({ hasText: 'stack_map_bin' }).first()).toBeVisible();
  await expect(diags.filter({ hasText: 'not a known format' })).toHaveCount(1);
  // still working: the sample opens again
  await page.getByRole('button', { name: 'Open sample' }).click();
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
  await waitLoaded(page);
  expect((await numbers(page)).events).toBe(cliSummary(sampleFiles).events);
});

test('a large load shows percent and MB/s while it reads, and Cancel stops it', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  const before = await numbers(page);
  // about 1.8 GB, the sample's trace repeated in the page's own File (nothing copied) and given to
  // the picker, so the worker is still reading when Cancel is pressed, however fast both cores read
  await giveRepeatedSample(page, 2000, 'trace-big', 'file-input');
  const progress = page.getByTestId('load-progress');
  await expect(progress).toHaveAttribute('data-status', 'loading');
  await expect(progress).toContainText(/\d+% · [\d.]+ MB of [\d.]+ GB · [\d.]+ MB\/s/);
  await progress.getByRole('button', { name: 'Cancel' }).click();
  await expect(progress).toHaveAttribute('data-status', 'cancelled');
  // the capture shown before stays, and the page still works
  expect(await numbers(page)).toEqual(before);
  await page.getByRole('button', { name: 'Open sample' }).click();
  await expect(progress).toContainText('Sample capture');
  await waitLoaded(page);
});
