import { closeSync, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from './fixtures.ts';
import { cliSummary } from './cli.ts';
import { sampleFiles, SAMPLES, summaryNumbers, summaryOf, waitLoaded } from './explorer-helpers.ts';

/**
 * A trace read on two threads in the page (core/capture/split-trace.ts): with the test hooks the
 * ingest worker hands the second half of every trace past 64 KiB to a nested worker. The numbers
 * must be the command line's, which reads these files on one thread.
 */

const tmp = mkdtempSync(join(tmpdir(), 'smx-split-'));

test('the sample and a larger trace, read on two threads, show the numbers the command line prints', async ({ page }) => {
  const workers: string[] = [];
  page.on('worker', (w) => workers.push(w.url()));
  await page.goto('/?test-hooks');
  await waitLoaded(page);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary(sampleFiles)));
  expect(workers.filter((u) => u.includes('trace-part')).length).toBe(1);

  // the sample trace 6 times over (about 5.5 MB), with the dumps
  const big = join(tmp, 'trace');
  const body = readFileSync(SAMPLES + 'trace');
  const fd = openSync(big, 'w');
  for (let k = 0; k < 6; k++) writeSync(fd, body);
  closeSync(fd);
  const files = [big, ...sampleFiles.filter((f) => !f.endsWith('/trace'))];
  await page.getByTestId('file-input').setInputFiles(files);
  await expect(page.getByTestId('load-progress')).toContainText(`${files.length} files`);
  await waitLoaded(page);
  const cli = cliSummary(files);
  expect(cli.events).toBe(6 * cliSummary(sampleFiles).events);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cli));
  expect(workers.filter((u) => u.includes('trace-part')).length).toBe(2);
});
