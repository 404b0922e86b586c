import { closeSync, openSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from './fixtures.ts';
import { cliSummary } from './cli.ts';
import { sampleFiles, SAMPLES, summaryNumbers, summaryOf, waitLoaded } from './explorer-helpers.ts';
import { openOverSample, panes, shoot, tmp, TRACE } from './session-helpers.ts';

/**
 * A capture is a set of files the user builds up (issue 9, points 1, 2 and the keeping part of 7):
 * Add or Replace when files arrive over a capture; a cancelled, failed or unreadable load leaves
 * the capture whole; the last capture is kept in the browser and reopened by a reload.
 * Expected numbers come from the command line over the same files.
 */

const BINS = sampleFiles.filter((f) => f.includes('stack_map_bin.'));
const KALLSYMS = SAMPLES + 'kallsyms';

test.describe.configure({ timeout: 180_000 });

test('trace, then its binary dumps and kallsyms with Add: the numbers of all files at once', async ({ page }) => {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await openOverSample(page, [TRACE]);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([TRACE])));
  expect((await summaryNumbers(page)).resolved).toBe(0);

  const dumps = [...BINS, KALLSYMS];
  await page.getByTestId('file-input').setInputFiles(dumps);
  const dialog = page.getByTestId('add-or-replace');
  // the capture has a trace and no dump; these are dumps and symbols: Add is the default
  await expect(dialog).toHaveAttribute('data-suggested', 'add');
  await expect(dialog.getByTestId('add-files')).toBeFocused();
  await expect(dialog.getByTestId('add-files')).toHaveAttribute('data-default', 'true');
  await shoot(page, 'add-dialog');
  await page.keyboard.press('Enter');
  await expect(dialog).toBeHidden();
  const progress = page.getByTestId('load-progress');
  await expect(progress).toContainText('5 files: trace, stack_map_bin.gen1');
  await waitLoaded(page);

  const all = cliSummary([TRACE, ...dumps]);
  expect(all.resolved).toBeGreaterThan(3000);
  expect(await summaryNumbers(page)).toEqual(summaryOf(all));
  await expect(page.getByTestId('summary-generations')).toHaveText(all.generations.join(', '));
  const counts = await page.getByTestId('top-stack-row').evaluateAll((els) => els.slice(0, 10).map((e) => Number(e.getAttribute('data-count'))));
  expect(counts).toEqual(all.top.map((t) => t.count));
  // the worker read only the added files: the trace was not sent again
  const added = dumps.reduce((n, f) => n + statSync(f).size, 0);
  await expect(progress).toHaveAttribute('data-bytes-total', String(added));

  // a trace over a capture that has one: Replace is the default, and Replace opens it alone
  await page.getByTestId('file-input').setInputFiles([TRACE]);
  await expect(dialog).toHaveAttribute('data-suggested', 'replace');
  await expect(dialog.getByTestId('replace-files')).toBeFocused();
  await dialog.getByTestId('replace-files').click();
  await expect(progress).toContainText('1 file: trace');
  await waitLoaded(page);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([TRACE])));
  // Esc drops the files: nothing loads
  await page.getByTestId('file-input').setInputFiles([KALLSYMS]);
  await expect(dialog).toHaveAttribute('data-suggested', 'add');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(progress).toContainText('1 file: trace');
});

test("files dragged over a capture of the user's: two drop targets, Add and Replace", async ({ page }) => {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await openOverSample(page, [TRACE]);
  const drag = async (names: string[]) =>
    page.evaluate(async (names) => {
      const dt = new DataTransfer();
      for (const n of names) dt.items.add(new File([await (await fetch('/samples/' + n)).blob()], n));
      (window as unknown as { dt: DataTransfer }).dt = dt;
      document.body.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true }));
    }, names);
  const dropOn = (testid: string) =>
    page.evaluate((testid) => {
      const dt = (window as unknown as { dt: DataTransfer }).dt;
      const el = document.querySelector(`[data-testid=${testid}]`)!;
      el.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      el.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, testid);

  await drag(['stack_map_bin.gen1', 'stack_map_bin.gen2', 'stack_map_bin.gen3', 'kallsyms']);
  await expect(page.getByTestId('add-files')).toBeVisible();
  await expect(page.getByTestId('replace-files')).toBeVisible();
  await shoot(page, 'drop-targets');
  await dropOn('add-files');
  await expect(page.getByTestId('add-files')).toBeHidden();
  await expect(page.getByTestId('load-progress')).toContainText('5 files');
  await waitLoaded(page);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([TRACE, ...BINS, KALLSYMS])));

  await drag(['stack_map.gen3']);
  await dropOn('replace-files');
  await expect(page.getByTestId('load-progress')).toContainText('1 file: stack_map.gen3');
  await waitLoaded(page);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([SAMPLES + 'stack_map.gen3'])));
});

test('a load nothing in which can be read leaves the capture: notes, random bytes', async ({ page }) => {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await openOverSample(page, sampleFiles);
  const before = await panes(page);
  const progress = page.getByTestId('load-progress');
  const cases: { files: Parameters<Page['setInputFiles']>[1]; mode: string; says: RegExp }[] = [
    {
      files: [{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('what I ran on the board\nand when: 9:14 to 9:20\n'.repeat(40)) }],
      mode: 'add-files',
      says: /notes\.txt \(not a format this page reads\)/,
    },
    {
      files: [
        { name: 'noise.bin', mimeType: 'application/octet-stream', buffer: Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919 + 13) % 256)) },
      ],
      mode: 'replace-files',
      says: /noise\.bin \(not a format this page reads\)/,
    },
  ];
  for (const [i, c] of cases.entries()) {
    await page.getByTestId('file-input').setInputFiles(c.files);
    await page.getByTestId(c.mode).click();
    await expect(progress).toHaveAttribute('data-status', 'rejected');
    await expect(page.getByTestId('load-rejected')).toHaveText(c.says);
    await expect(progress).toContainText('The capture shown is unchanged');
    expect(await panes(page)).toEqual({ ...before, status: 'rejected' });
    if (i === 0) await shoot(page, 'rejected');
  }
  // the next load that reads something clears it
  await page.getByTestId('file-input').setInputFiles([TRACE]);
  await page.getByTestId('replace-files').click();
  await waitLoaded(page);
  await expect(page.getByTestId('load-rejected')).toHaveCount(0);
  // over the sample too: it stays
  await page.getByRole('button', { name: 'Open sample' }).click();
  await expect(progress).toContainText('Sample capture');
  await waitLoaded(page);
  await page
    .getByTestId('file-input')
    .setInputFiles([{ name: 'noise.bin', mimeType: 'application/octet-stream', buffer: Buffer.from([0, 1, 2, 250, 9, 0, 7]) }]);
  await expect(progress).toHaveAttribute('data-status', 'rejected');
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary(sampleFiles)));
});

test('a reload reopens the capture kept in the browser; an Add is kept too; Forget returns to the sample', async ({ page }) => {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await openOverSample(page, [TRACE, ...BINS]);
  const keep = page.getByTestId('keep-state');
  await expect(keep).toHaveAttribute('data-state', 'kept');
  await expect(keep).toHaveAttribute('data-backend', 'opfs');
  await shoot(page, 'kept');
  await page.reload();
  await waitLoaded(page);
  const progress = page.getByTestId('load-progress');
  await expect(progress).toContainText('4 files: trace, stack_map_bin.gen1, stack_map_bin.gen2, stack_map_bin.gen3');
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([TRACE, ...BINS])));
  await expect(keep).toHaveAttribute('data-state', 'kept');

  // add kallsyms to the reopened capture: the kept set grows, and a reload shows all five
  await page.getByTestId('file-input').setInputFiles([KALLSYMS]);
  await page.getByTestId('add-files').click();
  await expect(progress).toContainText('5 files');
  await waitLoaded(page);
  await expect(keep).toHaveAttribute('data-state', 'kept');
  await page.reload();
  await waitLoaded(page);
  await expect(progress).toContainText('5 files: trace, stack_map_bin.gen1, stack_map_bin.gen2, stack_map_bin.gen3, kallsyms');
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([TRACE, ...BINS, KALLSYMS])));

  await page.getByTestId('forget-capture').click();
  await expect(progress).toContainText('Sample capture');
  await waitLoaded(page);
  await expect(keep).toHaveCount(0);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary(sampleFiles)));
  await page.reload();
  await waitLoaded(page);
  await expect(progress).toContainText('Sample capture');
  // nothing of it is left in the origin's storage
  expect(
    await page.evaluate(async () => {
      const root = await navigator.storage.getDirectory();
      const names: string[] = [];
      for await (const n of root.keys()) names.push(n);
      return names;
    }),
  ).toEqual([]);
});

test('a damaged store opens the sample and says so', async ({ page }) => {
  await openOverSample(page, [TRACE]);
  await expect(page.getByTestId('keep-state')).toHaveAttribute('data-state', 'kept');
  // cut the kept trace short, as a crash or a cleaner might
  await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('stackmap-capture');
    for await (const name of dir.keys()) {
      if (name === 'manifest.json') continue;
      const w = await (await dir.getFileHandle(name)).createWritable();
      await w.write('# tracer: nop\n');
      await w.close();
    }
  });
  await page.reload();
  await waitLoaded(page);
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
  await expect(page.getByTestId('load-notice')).toContainText('is damaged (trace is 14 bytes where 925,448 were kept)');
  await shoot(page, 'store-damaged');
  // a manifest that is not JSON
  await page.getByTestId('file-input').setInputFiles([TRACE]);
  await expect(page.getByTestId('keep-state')).toHaveAttribute('data-state', 'kept');
  await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('stackmap-capture');
    const w = await (await dir.getFileHandle('manifest.json')).createWritable();
    await w.write('{"format": "stackmap-explorer capture", "vers');
    await w.close();
  });
  await page.reload();
  await waitLoaded(page);
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
  await expect(page.getByTestId('load-notice')).toContainText('its list of files is not JSON');
  // a kept file gone (the manifest still lists it)
  await page.getByTestId('file-input').setInputFiles([TRACE, KALLSYMS]);
  await expect(page.getByTestId('keep-state')).toHaveAttribute('data-state', 'kept');
  await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('stackmap-capture');
    const names: string[] = [];
    for await (const name of dir.keys()) if (name !== 'manifest.json') names.push(name);
    await dir.removeEntry(names.sort()[1]);
  });
  await page.reload();
  await waitLoaded(page);
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
  await expect(page.getByTestId('load-notice')).toContainText('kallsyms is missing from it');
});

test('without OPFS the capture is kept in IndexedDB', async ({ page }) => {
  await page.addInitScript(() => {
    // as in a browser without the origin private file system
    Object.defineProperty(StorageManager.prototype, 'getDirectory', { value: undefined });
  });
  await openOverSample(page, [TRACE, KALLSYMS]);
  const keep = page.getByTestId('keep-state');
  await expect(keep).toHaveAttribute('data-state', 'kept');
  await expect(keep).toHaveAttribute('data-backend', 'indexeddb');
  await page.reload();
  await waitLoaded(page);
  await expect(page.getByTestId('load-progress')).toContainText('2 files: trace, kallsyms');
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([TRACE, KALLSYMS])));
  await page.getByTestId('forget-capture').click();
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
  await page.reload();
  await waitLoaded(page);
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
});

test('a capture over 512 MB is not kept, and says so', async ({ page }) => {
  // a trace and 520 MB of zeros (a sparse file: no disk written): the zeros are read as "not a known format"
  const zeros = join(tmp, 'zeros.bin');
  writeFileSync(zeros, '');
  const fd = openSync(zeros, 'r+');
  writeSync(fd, Buffer.from([0]), 0, 1, 520e6 - 1);
  closeSync(fd);
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles([TRACE, zeros]);
  await waitLoaded(page);
  const keep = page.getByTestId('keep-state');
  await expect(keep).toHaveAttribute('data-state', 'not-kept', { timeout: 60_000 });
  await expect(keep).toHaveAttribute('title', /521 MB is more than the 512 MB this page keeps/);
  await page.reload();
  await waitLoaded(page);
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
});
