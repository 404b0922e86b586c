import { closeSync, mkdtempSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from './fixtures.ts';
import type { Summary } from '../src/core/capture/summary.ts';
import { cliSummary, cliSummaryJson } from './cli.ts';
import { canvasInk, sampleFiles, SAMPLES, summaryNumbers, summaryOf, waitLoaded } from './explorer-helpers.ts';
import { OUT } from './shots.ts';

/**
 * A capture is a set of files the user builds up (issue 9, points 1, 2 and the keeping part of 7):
 * Add or Replace when files arrive over a capture; a cancelled, failed or unreadable load leaves
 * the capture whole; the last capture is kept in the browser and reopened by a reload.
 * Expected numbers come from the command line over the same files.
 */

const TRACE = SAMPLES + 'trace';
const BINS = sampleFiles.filter((f) => f.includes('stack_map_bin.'));
const KALLSYMS = SAMPLES + 'kallsyms';

/** The command line's numbers for a generation of these files (`summary --generation G`). */
function cliGeneration(files: string[], g: number) {
  return cliSummaryJson<{ selection: Summary }>(files, ['--generation', String(g)]).selection;
}

const tmp = mkdtempSync(join(tmpdir(), 'smx-session-'));
/** The sample trace repeated to about `mb` MB, on disk (setInputFiles hands Chromium the path). */
function bigTrace(mb: number): string {
  const body = readFileSync(TRACE);
  const path = join(tmp, `trace-${mb}mb`);
  const fd = openSync(path, 'w');
  for (let n = 0; n < mb * 1e6; n += body.length) writeSync(fd, body);
  closeSync(fd);
  return path;
}

async function shoot(page: Page, state: string) {
  for (const [width, height] of [
    [1600, 1000],
    [1280, 720],
  ]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.setViewportSize({ width, height });
      await page.emulateMedia({ colorScheme });
      await page.screenshot({ path: `${OUT}/session-${state}-${width}x${height}-${colorScheme}.png` });
    }
  }
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Opens files through the picker over the sample (no question there) and waits for them. */
async function openOverSample(page: Page, files: string[]) {
  await page.goto('/');
  await waitLoaded(page);
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
  await page.getByTestId('file-input').setInputFiles(files);
  await expect(page.getByTestId('load-progress')).toContainText(`${files.length} file${files.length === 1 ? '' : 's'}:`);
  await waitLoaded(page);
}

/** What every pane shows, to compare before a load and after its cancel. */
async function panes(page: Page) {
  await expect(page.getByTestId('load-progress')).not.toHaveAttribute('data-status', 'loading');
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-ready', 'true');
  await expect(page.getByTestId('flamegraph')).toHaveAttribute('data-ready', 'true');
  const rows = page.getByTestId('top-stack-row');
  await expect(rows.first()).toBeVisible();
  return {
    summary: await summaryNumbers(page),
    rows: await rows.evaluateAll((els) => els.map((e) => `${e.getAttribute('data-stack')}:${e.getAttribute('data-count')}`)),
    timelineInked: (await canvasInk(page.getByTestId('timeline').locator('canvas').first())).inked > 1000,
    flameInked: (await canvasInk(page.getByTestId('flamegraph').locator('canvas').first())).inked > 1000,
    exports: await page.locator('[data-testid^=export-]').count(),
    generations: await page.getByTestId('generation-select').locator('option').count(),
    status: await page.getByTestId('load-progress').getAttribute('data-status'),
  };
}

/** Clicks Cancel from inside the page the moment the progress bar reaches `at` percent; returns the percent it showed. */
function cancelAt(page: Page, at: number): Promise<number> {
  return page.evaluate(
    (at) =>
      new Promise<number>((resolve, reject) => {
        const started = performance.now();
        const tick = () => {
          const bar = document.querySelector<HTMLProgressElement>('[data-testid=load-progress] progress');
          if (bar && bar.value >= at) {
            document.querySelector<HTMLButtonElement>('[data-testid=load-cancel]')!.click();
            resolve(bar.value);
          } else if (performance.now() - started > 60_000) reject(new Error('the load never reached ' + at + '%'));
          else requestAnimationFrame(tick);
        };
        tick();
      }),
    at,
  );
}

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

test('cancel at 8% (Replace) and at 87% (Add) of a 150 MB load: every pane comes back whole', async ({ page }) => {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await openOverSample(page, sampleFiles);
  const before = await panes(page);
  expect(before.summary).toEqual(summaryOf(cliSummary(sampleFiles)));
  expect(before).toMatchObject({ timelineInked: true, flameInked: true });
  expect(before.exports).toBeGreaterThanOrEqual(4);
  const progress = page.getByTestId('load-progress');

  // 8%: a new capture, from the picker
  const big = bigTrace(150);
  await page.getByTestId('file-input').setInputFiles(big);
  await expect(page.getByTestId('add-or-replace')).toHaveAttribute('data-suggested', 'replace');
  const early = cancelAt(page, 8);
  await page.getByTestId('replace-files').click();
  expect(await early).toBeLessThan(50);
  await expect(progress).toHaveAttribute('data-status', 'cancelled');
  await expect(progress).toHaveAttribute('data-mode', 'replace');
  await expect(progress).toContainText('The capture shown is unchanged');
  expect(await panes(page)).toEqual({ ...before, status: 'cancelled' });

  // 87%: the same bytes added to the capture, dropped on "Add to this capture"
  await page.evaluate(async (mb) => {
    const body = await (await fetch('/samples/trace')).blob();
    const dt = new DataTransfer();
    dt.items.add(
      new File(
        Array.from({ length: Math.ceil((mb * 1e6) / body.size) }, () => body),
        'trace-150mb',
      ),
    );
    document.body.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true }));
    let el: Element | null = null;
    while (!(el = document.querySelector('[data-testid=add-files]'))) await new Promise(requestAnimationFrame);
    el.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, 150);
  const late = await cancelAt(page, 87);
  expect(late).toBeGreaterThanOrEqual(87);
  expect(late).toBeLessThan(100);
  await expect(progress).toHaveAttribute('data-status', 'cancelled');
  await expect(progress).toHaveAttribute('data-mode', 'add');
  await expect(progress).toContainText(/Load cancelled at (8[7-9]|9\d)% \(trace-150mb\)/);
  expect(await panes(page)).toEqual({ ...before, status: 'cancelled' });

  // choosing a generation afterwards gives the selection's numbers, not "…"
  await page.getByTestId('generation-select').selectOption('2');
  await expect(page.getByTestId('summary')).toHaveAttribute('data-scope', 'selection');
  await expect.poll(() => summaryNumbers(page)).toEqual(summaryOf(cliGeneration(sampleFiles, 2)));
  await page.getByTestId('generation-select').selectOption('all');
  expect(await summaryNumbers(page)).toEqual(before.summary);
  // and the exports still answer
  const download = page.waitForEvent('download');
  await page.getByTestId('export-folded').click();
  expect((await download).suggestedFilename()).not.toBe('');
});

test('while a load runs the capture stays on screen, dimmed, the progress on top', async ({ page }) => {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await openOverSample(page, sampleFiles);
  const before = await summaryNumbers(page);
  // about 1.8 GB, built in the page from one blob (nothing is copied), so the load outlasts the screenshots
  await page.evaluate(async () => {
    const body = await (await fetch('/samples/trace')).blob();
    const dt = new DataTransfer();
    dt.items.add(
      new File(
        Array.from({ length: 2000 }, () => body),
        'trace-1.8gb',
      ),
    );
    document.body.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true }));
    let el: Element | null = null;
    while (!(el = document.querySelector('[data-testid=replace-files]'))) await new Promise(requestAnimationFrame);
    el.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  const progress = page.getByTestId('load-progress');
  await expect(progress).toHaveAttribute('data-status', 'loading');
  await expect(progress).toHaveAttribute('data-over-capture', 'true');
  await expect(page.getByTestId('drop-zone')).toHaveAttribute('data-loading', 'true');
  await expect(progress).toContainText(/Opening a new capture · \d+% · [\d.]+ MB of [\d.]+ GB/);
  // the panes are the old capture's, still answering
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-ready', 'true');
  expect(await summaryNumbers(page)).toEqual(before);
  await shoot(page, 'loading');
  await page.getByTestId('load-cancel').click();
  await expect(progress).toHaveAttribute('data-status', 'cancelled');
  await expect(page.getByTestId('drop-zone')).not.toHaveAttribute('data-loading', 'true');
  await shoot(page, 'cancelled');
  expect(await summaryNumbers(page)).toEqual(before);
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
