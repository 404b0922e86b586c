import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { expect, test, type Page } from './fixtures.ts';
import type { Summary } from '../src/core/capture/summary.ts';
import type { SelectionSummary } from '../src/core/query/api.ts';
import { cliSummaryJson } from './cli.ts';
import { SAMPLES, sampleFiles, waitLoaded } from './explorer-helpers.ts';
import { needsRealTraces, realTracePath } from './real-traces.ts';
import { OUT } from './shots.ts';

// Issue 9, points 4 and 6: segments of unrelated traces on one timeline, and derived figures
// that say what they assumed (or that they are unknown). Expected numbers come from the command
// line over the same files.

const TPOINT = realTracePath('perf-tools-tpoint_example.txt');
const TRACE = SAMPLES + 'trace';

type CliSegment = Summary['segments'][number] & { counts?: SelectionSummary };
/** `summary --json [--segments]` over the files */
function cli(files: string[], segments = false): Summary & { segments: CliSegment[] } {
  return cliSummaryJson(files, segments ? ['--segments'] : []);
}

/**
 * Opens files as a new capture: through the file input; if the page asks whether to add them to
 * the open capture or open them as a new one, a new one. Done when the summary shows `events`.
 */
async function openFiles(page: Page, files: { name: string; buffer: Buffer }[], events: number) {
  await page.getByTestId('file-input').setInputFiles(files.map((f) => ({ ...f, mimeType: 'text/plain' })));
  await expect
    .poll(async () => {
      const replace = page.getByTestId('replace-files');
      if (await replace.isVisible().catch(() => false)) await replace.click();
      if ((await page.getByTestId('load-progress').getAttribute('data-status')) !== 'done') return null;
      return page.getByTestId('summary-events').textContent();
    })
    .toBe(String(events));
  await waitLoaded(page);
}
const fromDisk = (paths: string[]) => paths.map((p) => ({ name: basename(p), buffer: readFileSync(p) }));

const SIZES = [
  { w: 1600, h: 1000 },
  { w: 1280, h: 720 },
] as const;

/**
 * Screenshots of a region at both sizes, light and dark: docs/screenshots/segments-<name>-<w>-<scheme>.png.
 * The checks are the same in either scheme, so each test runs them once and shoots both (the panes
 * redraw in the scheme put on <html>); it ends light, at 1600x1000.
 */
async function shots(page: Page, name: string, region: string) {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
    for (const { w, h } of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      await expect(page.getByTestId('timeline')).toHaveAttribute('data-ready', 'true');
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await page.mouse.move(0, 0);
      const target = page.getByRole('region', { name: region });
      await target.scrollIntoViewIfNeeded();
      await target.screenshot({ path: `${OUT}/segments-${name}-${w}-${scheme}.png` });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1600, height: 1000 });
}

test.beforeEach(async ({ page }) => {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto('/');
  await waitLoaded(page);
});

test('the sample trace and tpoint: each file its own segments on one timeline, as the command line counts them', async ({ page }) => {
  needsRealTraces();
  const files = [TRACE, TPOINT];
  const want = cli(files, true);
  // two files: the sample's one capture, and the four runs tpoint's prose quotes, days later
  expect(want.segments.map((s) => s.file)).toEqual(['trace', ...Array(4).fill(basename(TPOINT))]);
  await openFiles(page, fromDisk(files), want.events);
  const segs = page.getByTestId('timeline-segment');
  await expect(segs).toHaveCount(want.segments.length);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-segments', String(want.segments.length));
  for (const [i, s] of want.segments.entries()) {
    const el = segs.nth(i);
    await expect(el).toHaveAttribute('data-file', s.file);
    await expect(el).toHaveAttribute('data-first', String(s.firstTs));
    await expect(el).toHaveAttribute('data-last', String(s.lastTs));
    await expect(el).toHaveAttribute('data-events', String(s.events));
    await expect(el).toHaveAttribute('data-visible', 'true');
  }
  // side by side: each label starts right of the one before, and none is squeezed out
  const boxes = await Promise.all(want.segments.map((_, i) => segs.nth(i).boundingBox()));
  for (let i = 1; i < boxes.length; i++) expect(boxes[i]!.x).toBeGreaterThan(boxes[i - 1]!.x + boxes[i - 1]!.width);
  for (const b of boxes) expect(b!.width).toBeGreaterThan(30);
  // the segments warning says what the timeline does
  await expect(page.getByTestId('warnings').locator('[data-id="segments"]')).toContainText(`${want.segments.length} unrelated time ranges`);
  await shots(page, 'timeline', 'timeline');

  // a click on a segment zooms to it and selects it: the summary counts it alone, as --segments does
  const pick = want.segments.findIndex((s) => s.events === Math.max(...want.segments.slice(1).map((x) => x.events)));
  await segs.nth(pick).click();
  await expect(page.getByTestId('summary')).toHaveAttribute('data-scope', 'selection');
  await expect(page.getByTestId('summary')).toHaveAttribute('data-pending', 'false');
  const counts = want.segments[pick].counts!;
  await expect(page.getByTestId('summary-events')).toHaveText(String(counts.events));
  await expect(page.getByTestId('summary-full-stacks')).toHaveText(String(counts.fullStacks));
  // zoomed into it: the others are out of the window
  for (const [i] of want.segments.entries()) await expect(segs.nth(i)).toHaveAttribute('data-visible', i === pick ? 'true' : 'false');
  await shots(page, 'timeline-zoomed', 'timeline');

  // zoom and pan keep working: S zooms out step by step until the neighbours come back, Zoom out shows all
  await page.getByTestId('range-chip').getByRole('button', { name: 'clear range' }).click();
  const windowText = () => page.getByTestId('timeline-window').textContent();
  const before = await windowText();
  await page.keyboard.press('KeyS');
  await expect.poll(windowText).not.toBe(before);
  const zoomedOut = await windowText();
  await page.keyboard.press('KeyA');
  await expect.poll(windowText).not.toBe(zoomedOut);
  await page.getByRole('button', { name: 'Zoom out' }).click();
  for (const [i] of want.segments.entries()) await expect(segs.nth(i)).toHaveAttribute('data-visible', 'true');
});

test('the sample trace without dumps: retention gain and bytes without the map are unknown, and why', async ({ page }) => {
  const want = cli([TRACE]);
  const rb = want.derived.ringBuffer;
  // in JSON, unknown is null; the reason names the cookies without a stack
  expect([rb.basis, rb.gain, rb.bytesWithoutMap]).toEqual(['unknown', null, null]);
  expect(rb.why).toContain(`${want.cookies.toLocaleString('en-US')} cookies have no stack: their depth is unknown`);
  await openFiles(page, fromDisk([TRACE]), want.events);
  const pane = page.getByTestId('stat-dashboard');
  await expect(pane.getByTestId('stat-gain')).toHaveText('unknown');
  await expect(pane.getByTestId('stat-without')).toHaveText('unknown');
  await expect(pane.getByTestId('stat-gain-why')).toHaveText(`Unknown: ${rb.why}`);
  await expect(pane.getByTestId('stat-gain-why')).toHaveAttribute('data-basis', 'unknown');
  // the bounds, and the dedup rate's basis: the counts the command line has
  await expect(pane).toContainText(`between ${rb.bounds!.gain[0].toFixed(1)}× and ${rb.bounds!.gain[1].toFixed(1)}× (the events kept)`);
  await expect(pane.getByTestId('stat-bounds')).toContainText(
    `the stack bytes alone between ${rb.bounds!.stackBytesRatio[0].toFixed(1)}× and ${rb.bounds!.stackBytesRatio[1].toFixed(1)}×`,
  );
  await expect(pane.getByTestId('stat-dedup-basis')).toHaveText(
    `1 − ${rb.records.distinctSlots.toLocaleString('en-US')} distinct (generation, slot) / ${want.cookies.toLocaleString('en-US')} cookies`,
  );
  await shots(page, 'stat-unknown', 'stack map statistics');
});

test('the whole sample: the gain is estimated from the resolved cookies and full stacks, and says so', async ({ page }) => {
  const want = cli(sampleFiles);
  const rb = want.derived.ringBuffer;
  // 6 cookies inserted after the last dump: the rest tell their depth
  expect(rb.basis).toBe('estimated');
  expect(rb.why).toContain(`the mean of the ${want.resolved.toLocaleString('en-US')} cookies with a stack and ${want.fullStacks} full stacks`);
  const pane = page.getByTestId('stat-dashboard');
  await expect(pane.getByTestId('stat-gain')).toHaveText(`${rb.gain!.toFixed(1)}×`);
  await expect(pane.getByTestId('stat-gain-why')).toHaveText(`Estimated: ${rb.why}`);
  // the gain is the events kept (the cookie ABI mail's retention), not the stack bytes: the summary's
  // event count, each event 56 B (assumed), beside the stack bytes with and without the map
  const ev = want.events * 56;
  expect(rb.gain!).toBeCloseTo((ev + rb.bytesWithoutMap!) / (ev + rb.bytesWithMap), 9);
  expect(rb.stackBytesRatio!).toBeCloseTo(rb.bytesWithoutMap! / rb.bytesWithMap, 9);
  await expect(pane.getByTestId('stat-gain')).not.toHaveText(`${rb.stackBytesRatio!.toFixed(1)}×`);
  await expect(pane.getByTestId('stat-stack-ratio')).toHaveText(`${rb.stackBytesRatio!.toFixed(1)}×`);
  await expect(pane.getByTestId('stat-gain-basis')).toContainText(
    `over ${want.events.toLocaleString('en-US')} events; each event's own record taken as 56 B (assumed`,
  );
  // the v7 document's own figures beside the trace's, in the document's words (its Performance section)
  const doc = pane.getByTestId('stat-v7-doc');
  await expect(doc).toContainText("The v7 document's own figures");
  await expect(doc.getByTestId('stat-v7-doc-row')).toHaveText([
    `stack records~3000${(want.cookies + want.fullStacks).toLocaleString('en-US')}`,
    /^dedup rate84-98% \(depends on workload diversity\)\d+\.\d%, (within|below|above) the document's range$/,
    `ring buffer savings~80% for stack data${(100 * (1 - rb.bytesWithMap / rb.bytesWithoutMap!)).toFixed(1)}% of the stack records' bytes`,
  ]);
  await expect(doc.getByTestId('stat-v7-doc-model').nth(1)).toHaveText(new RegExp(`^${(100 * want.derived.dedupRate).toFixed(1)}%`));
  await shots(page, 'stat-sample', 'stack map statistics');
});

test('the same trace loaded twice: one segment, and a warning that it is probably the same capture', async ({ page }) => {
  const text = readFileSync(TRACE);
  const want = cli([TRACE, TRACE]);
  await openFiles(
    page,
    [
      { name: 'trace', buffer: text },
      { name: 'trace-again', buffer: text },
    ],
    want.events,
  );
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-segments', '1');
  await expect(page.getByTestId('timeline-segment')).toHaveCount(0);
  const warning = page.getByTestId('warnings').locator('[data-id="overlapping-traces"]');
  await expect(warning).toContainText('trace-again overlaps trace in time on CPUs 0, 1, 2, 3');
  await expect(page.getByTestId('diagnostics')).toContainText('probably the same capture loaded twice');
  await shots(page, 'overlap-warning', 'stack map statistics');
});
