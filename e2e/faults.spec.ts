import { closeSync, openSync, readFileSync, statSync, truncateSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, test, type Page } from './fixtures.ts';
import { cliSummaries, cliSummary } from './cli.ts';
import { giveRepeatedSample, sampleFiles, SAMPLES, summaryNumbers, summaryOf, waitLoaded } from './explorer-helpers.ts';
import { bigTrace, tmp, TRACE } from './session-helpers.ts';

/**
 * Faults (issue 10): the ingest worker killed or hung during a load, files failing alone, a file
 * cut short on disk while read, progress of a .gz, and cancel-and-drop at once. The page's test
 * hooks (`?test-hooks`: window.__smxTest) end or block the worker as a crash or an endless loop
 * would; the page has to notice by itself.
 */

const STAT = SAMPLES + 'stack_map_stat';
type Hooks = { killIngestWorker(): void; stallIngestWorker(): void; setHangMs(ms: number, indexMs?: number): void; ingestWorkerNumber(): number };
const kill = (page: Page) => page.evaluate(() => (window as unknown as { __smxTest: Hooks }).__smxTest.killIngestWorker());
const workerNumber = (page: Page) => page.evaluate(() => (window as unknown as { __smxTest: Hooks }).__smxTest.ingestWorkerNumber());

/**
 * Waits until the progress bar shows at least `pct` percent of the running load, looking every
 * frame in the page (a poll from here, every second at its slowest, missed a load that went from
 * 30% to done in between), and fails at once, saying so, if the load ended first.
 */
async function reach(page: Page, pct: number) {
  const seen = await page.waitForFunction(
    (pct) => {
      const value = document.querySelector<HTMLProgressElement>('[data-testid=load-progress] progress')?.value ?? -1;
      const status = document.querySelector('[data-testid=load-progress]')?.getAttribute('data-status');
      return value >= pct || status !== 'loading' ? { value, status } : null;
    },
    pct,
    { timeout: 60_000, polling: 'raf' },
  );
  const { value, status } = (await seen.jsonValue()) as { value: number; status: string };
  expect(value, `the load (${status}) ended before ${pct}%`).toBeGreaterThanOrEqual(pct);
}

test.describe.configure({ timeout: 180_000 });

test('the ingest worker killed during a load: a message naming the load, the capture kept and answering, the next load works', async ({ page }) => {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.goto('/?test-hooks');
  await waitLoaded(page);
  const files = [TRACE, ...sampleFiles.filter((f) => f.includes('stack_map_bin.')), SAMPLES + 'kallsyms'];
  await page.getByTestId('file-input').setInputFiles(files);
  await expect(page.getByTestId('load-progress')).toContainText('5 files: trace');
  await waitLoaded(page);
  const before = await summaryNumbers(page);
  expect(before).toEqual(summaryOf(cliSummary(files)));
  const rowsBefore = await page
    .getByTestId('top-stack-row')
    .evaluateAll((els) => els.map((e) => `${e.getAttribute('data-stack-hash')}:${e.getAttribute('data-count')}`)); // by stack_hash: a new worker may number stacks in another order
  expect(await workerNumber(page)).toBe(1);

  await giveRepeatedSample(page, 160, 'trace-150mb', 'replace-files');
  const progress = page.getByTestId('load-progress');
  await expect(progress).toHaveAttribute('data-status', 'loading');
  await reach(page, 5);
  await kill(page);

  const fault = page.getByTestId('worker-fault');
  await expect(fault).toBeVisible();
  await expect(fault).toHaveAttribute('data-fault', 'died');
  await expect(fault).toContainText('The ingest worker stopped (it crashed, ran out of memory or was ended) while reading trace-150mb.');
  await expect(fault).toHaveAttribute('data-reopen', 'reopened');
  await expect(fault).toContainText('the capture shown (5 files) reopened in it');
  await expect(progress).toHaveAttribute('data-status', 'error');
  await expect(progress).toContainText('Load failed (trace-150mb): the ingest worker stopped');
  await expect(progress).toContainText('The capture shown is unchanged');
  expect(await workerNumber(page)).toBe(2);

  // the panes still answer, now from the new worker: the whole capture, then a generation of it
  expect(await summaryNumbers(page)).toEqual(before);
  await page.getByTestId('generation-select').selectOption('2');
  await expect(page.getByTestId('summary')).toHaveAttribute('data-scope', 'selection');
  const g2 = (await summaryNumbers(page)).events;
  expect(g2).toBeGreaterThan(0);
  expect(g2).toBeLessThan(before.events);
  await page.getByTestId('generation-select').selectOption('all');
  expect(await summaryNumbers(page)).toEqual(before);
  // the summary answers first; the top stacks pane follows with its own query (a fresh-clone run
  // read it while it still showed generation 2), so its rows are polled until they settle
  await expect
    .poll(() => page.getByTestId('top-stack-row').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-stack-hash')}:${e.getAttribute('data-count')}`))) // by stack_hash: a new worker may number stacks in another order
    .toEqual(rowsBefore);

  // killed while idle: the same, no load named
  await kill(page);
  await expect(fault).toContainText(
    /^The ingest worker stopped \(it crashed, ran out of memory or was ended\)\. A new one was started and the capture shown \(5 files\) reopened in it\./,
  );
  expect(await workerNumber(page)).toBe(3);
  await page.getByTestId('generation-select').selectOption('2');
  expect((await summaryNumbers(page)).events).toBe(g2);
  await page.getByTestId('generation-select').selectOption('all');

  // an Add to the reopened capture continues it; then a Replace opens on its own
  await page.getByTestId('file-input').setInputFiles([STAT]);
  await page.getByTestId('add-files').click();
  await expect(progress).toContainText('6 files');
  await waitLoaded(page);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([...files, STAT])));
  await expect(fault).toHaveCount(0);
  await page.getByTestId('file-input').setInputFiles([TRACE]);
  await page.getByTestId('replace-files').click();
  await expect(progress).toContainText('1 file: trace');
  await waitLoaded(page);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([TRACE])));
});

test('a worker that stops answering during a load is taken for hung, replaced, and the next load works', async ({ page }) => {
  await page.goto('/?test-hooks');
  await waitLoaded(page);
  const sample = await summaryNumbers(page);
  await page.evaluate(() => (window as unknown as { __smxTest: Hooks }).__smxTest.setHangMs(1500));
  // over the sample a drop opens at once
  await giveRepeatedSample(page, 160, 'trace-150mb', 'body');
  await reach(page, 3);
  await page.evaluate(() => (window as unknown as { __smxTest: Hooks }).__smxTest.stallIngestWorker());
  const fault = page.getByTestId('worker-fault');
  await expect(fault).toHaveAttribute('data-fault', 'hung');
  await expect(fault).toContainText('The ingest worker stopped answering (no progress for 1.5 s) while reading trace-150mb.');
  await expect(fault).toHaveAttribute('data-reopen', 'reopened');
  await expect(page.getByTestId('load-progress')).toHaveAttribute('data-status', 'error');
  expect(await summaryNumbers(page)).toEqual(sample);
  await page.getByTestId('file-input').setInputFiles([TRACE]);
  await waitLoaded(page);
  await expect(page.getByTestId('load-progress')).toContainText('1 file: trace');
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([TRACE])));
});

test('cancel and drop at once, ten times in a row: the page always shows the last drop', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles([TRACE, STAT]);
  await waitLoaded(page);
  // ten small traces told apart by their event counts: the sample trace cut after n lines
  const lines = readFileSync(TRACE, 'utf8').split('\n');
  const paths = Array.from({ length: 10 }, (_, i) => {
    const path = join(tmp, `small-${i}`);
    writeFileSync(path, lines.slice(0, Math.round((lines.length * (i + 1)) / 11)).join('\n') + '\n');
    return path;
  });
  const counts = await cliSummaries(paths.map((p) => [p]));
  const small = paths.map((path, i) => ({ name: `small-${i}`, text: readFileSync(path, 'utf8'), events: counts[i].events }));
  expect(new Set(small.map((s) => s.events)).size).toBe(10);
  const progress = page.getByTestId('load-progress');
  for (const [i, s] of small.entries()) {
    // 200 copies of the sample trace (one blob of references, ~550 MB to read): each drop lands
    // while the load is 1-40% through, however fast the ingest has become
    await giveRepeatedSample(page, 200, `big-${i}`, 'replace-files');
    await expect(progress).toHaveAttribute('data-status', 'loading');
    await reach(page, 1 + ((i * 7) % 40));
    // at once, in one task: Cancel (or not: a newer drop supersedes the load anyway), then the drop
    await page.evaluate(
      async ({ name, text, cancel }) => {
        const dt = new DataTransfer();
        dt.items.add(new File([text], name));
        document.body.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true }));
        let el: Element | null = null;
        while (!(el = document.querySelector('[data-testid=replace-files]'))) await new Promise(requestAnimationFrame);
        if (cancel) document.querySelector<HTMLButtonElement>('[data-testid=load-cancel]')!.click();
        el.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      },
      { name: s.name, text: s.text, cancel: i % 3 !== 2 },
    );
    await expect(progress).toContainText(`1 file: ${s.name}`);
    await waitLoaded(page);
    expect((await summaryNumbers(page)).events, s.name).toBe(s.events);
  }
  // and nothing older comes back later: each of the ten big loads, replaced, has had its answer dropped
  await expect(progress).toHaveAttribute('data-dropped', String(small.length), { timeout: 30_000 });
  await expect(progress).toContainText('1 file: small-9');
  expect((await summaryNumbers(page)).events).toBe(small[9].events);
});

test('a file cut short on disk while it is read: a diagnostic naming it, and the other file loads', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  const big = bigTrace(150, 'shrinking-trace');
  const size = statSync(big).size;
  await page.getByTestId('file-input').setInputFiles([big, STAT]);
  await reach(page, 10);
  truncateSync(big, 1_000_000);
  await waitLoaded(page);
  // Chromium ends the read early (or fails it with NotReadableError, as when the file is rewritten): either is said
  const diags = page.getByTestId('diagnostic').filter({ hasText: 'shrinking-trace' });
  const said = new RegExp(
    `changed while being read: \\d+ bytes were read where it had ${size} when the load started \\(cut short\\)|could not be read past byte \\d+ of ${size} \\(NotReadableError`,
  );
  await expect(diags.filter({ hasText: said })).toHaveCount(1);
  // the trace's first part and the stat file are there
  expect((await summaryNumbers(page)).events).toBeGreaterThan(4000);
  await expect(page.getByTestId('stat-dashboard')).toContainText('16,384');
  expect(statSync(big).size).toBe(1_000_000);

  // rewritten in place (the same size, a later mtime) while read: Chromium's stream reads on, and the
  // check at the end (one more byte read against the file's snapshot) fails with NotReadableError
  const again = bigTrace(150, 'rewritten-trace');
  // written an hour ago, as a file one opens usually is: the rewrite is sure to move its mtime
  utimesSync(again, new Date(Date.now() - 3600e3), new Date(Date.now() - 3600e3));
  await page.getByTestId('file-input').setInputFiles([again, STAT]);
  await page.getByTestId('replace-files').click();
  await reach(page, 10);
  const fd = openSync(again, 'r+');
  writeSync(fd, Buffer.from('# rewritten\n'), 0, 12, 0);
  closeSync(fd);
  await waitLoaded(page);
  await expect(page.getByTestId('load-progress')).toContainText('2 files: rewritten-trace, stack_map_stat');
  const rewritten = page.getByTestId('diagnostic').filter({ hasText: 'rewritten-trace' });
  const rewriteSaid = new RegExp(
    `changed while being read \\(its last byte can no longer be read as it was\\)|could not be read past byte \\d+ of ${size} \\(NotReadableError: .*\\): it was changed`,
  );
  await expect(rewritten.filter({ hasText: rewriteSaid })).toHaveCount(1);
  await expect(page.getByTestId('stat-dashboard')).toContainText('16,384');
});

test('a .gz: progress follows its decompressed bytes and says inflating', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  const raw = readFileSync(bigTrace(48, 'trace-48mb'));
  const path = join(tmp, 'trace-48mb.gz');
  writeFileSync(path, gzipSync(raw, { level: 1 }));
  const compressed = statSync(path).size;
  const seen = page.evaluate(
    () =>
      new Promise<{ value: number; text: string; phase: string | null }[]>((resolve) => {
        const out: { value: number; text: string; phase: string | null }[] = [];
        const tick = () => {
          const p = document.querySelector('[data-testid=load-progress]')!;
          if (p.getAttribute('data-status') === 'loading') {
            const bar = p.querySelector('progress');
            out.push({ value: bar?.value ?? -1, text: p.querySelector('.load-line span')?.textContent ?? '', phase: p.getAttribute('data-phase') });
          } else if (out.length > 0) return resolve(out);
          requestAnimationFrame(tick);
        };
        tick();
      }),
  );
  await page.getByTestId('file-input').setInputFiles([path]);
  const samples = await seen;
  await waitLoaded(page);
  const inflating = samples.filter((s) => s.phase === 'inflating');
  expect(inflating.length).toBeGreaterThan(5);
  const mb = (raw.length / 1e6).toFixed(2);
  for (const s of inflating) {
    const m = s.text.match(/^Opening a new capture · (\d+)% · inflating trace-48mb\.gz: ([\d.]+) (MB|kB|B) of ([\d.]+) MB · [\d.]+ MB\/s$/);
    expect(m, s.text).not.toBeNull();
    expect(m![4]).toBe(mb);
    // the bar is the decompressed share, not the compressed bytes read (which run far ahead)
    if (m![3] === 'MB') expect(Math.abs(s.value - ((100 * Number(m![2])) / raw.length) * 1e6)).toBeLessThan(2);
  }
  expect(inflating.some((s) => s.value > 10 && s.value < 90)).toBe(true);
  expect(samples.some((s) => s.phase === 'indexing')).toBe(true);
  expect(compressed).toBeLessThan(raw.length / 5);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([path])));
});

test('a truncated binary dump keeps its whole records and says where it was cut, as the command line does', async ({ page }) => {
  // stack_map_bin.gen2 cut in the middle of a record; the trace and the other dumps whole
  const bin = readFileSync(SAMPLES + 'stack_map_bin.gen2');
  const cut = join(tmp, 'stack_map_bin.gen2');
  writeFileSync(cut, bin.subarray(0, Math.floor(bin.length * 0.55)));
  const files = [TRACE, SAMPLES + 'stack_map_bin.gen1', cut, SAMPLES + 'stack_map_bin.gen3', SAMPLES + 'kallsyms', STAT];
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles(files);
  const replace = page.getByTestId('replace-files');
  if (await replace.isVisible().catch(() => false)) await replace.click();
  await expect(page.getByTestId('diagnostics')).toContainText('truncated record', { timeout: 30_000 });
  const cli = cliSummary(files);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cli));
  // the good records still resolve: more than the trace's generation-2 cookies minus all of them
  const full = cliSummary([TRACE, SAMPLES + 'stack_map_bin.gen1', SAMPLES + 'stack_map_bin.gen2', SAMPLES + 'stack_map_bin.gen3', SAMPLES + 'kallsyms', STAT]);
  expect(cli.resolved).toBeLessThan(full.resolved);
  expect(cli.resolved).toBeGreaterThan(0);
  expect(cli.diagnostics.some((d) => d.file.endsWith('stack_map_bin.gen2') && /truncated record/.test(d.message))).toBe(true);
});
