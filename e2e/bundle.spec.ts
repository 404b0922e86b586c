import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { expect, test } from './fixtures.ts';
import { bundle, writeCapture } from './capture.ts';
import { cliSummary } from './cli.ts';

// a second capture, unlike the sample: more generations, a different seed and CPU count
const files = writeCapture({ seed: 4242, cpus: 3, events: 2500, resets: 4, bits: 14, tail: 25 });
const tarGz = bundle(files);

test('a dropped .tar.gz bundle of a multi-generation capture shows the command line numbers', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('load-progress')).toHaveAttribute('data-status', 'done');
  const dataTransfer = await page.evaluateHandle(
    ({ bytes, name }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(bytes)], name, { type: 'application/gzip' }));
      return dt;
    },
    { bytes: [...readFileSync(tarGz)], name: basename(tarGz) },
  );
  await page.getByTestId('drop-zone').dispatchEvent('drop', { dataTransfer });
  await expect(page.getByTestId('load-progress')).toContainText('capture.tar.gz');
  await expect(page.getByTestId('load-progress')).toHaveAttribute('data-status', 'done');

  const cli = cliSummary([tarGz]);
  expect(cli.generations).toEqual([1, 2, 3, 4, 5]);
  // the bundle reads as its files do
  const plain = cliSummary(files);
  for (const k of ['events', 'cookies', 'resolved', 'unresolved', 'uniqueStacks'] as const) expect(cli[k]).toBe(plain[k]);
  const shown = async (id: string) => Number(await page.getByTestId(id).textContent());
  expect({
    events: await shown('summary-events'),
    cookies: await shown('summary-cookies'),
    resolved: await shown('summary-resolved'),
    unresolved: await shown('summary-unresolved'),
    uniqueStacks: await shown('summary-unique-stacks'),
  }).toEqual({ events: cli.events, cookies: cli.cookies, resolved: cli.resolved, unresolved: cli.unresolved, uniqueStacks: cli.uniqueStacks });
  await expect(page.getByTestId('summary-generations')).toHaveText('1, 2, 3, 4, 5');
  // every file inside is listed with its bundle path
  await expect(page.getByTestId('file-row')).toHaveCount(files.length);
  await expect(page.getByTestId('file-row').first()).toContainText('capture.tar.gz/');
});
