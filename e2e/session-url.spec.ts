import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { expect, test, type Page } from './fixtures.ts';
import { cliSummary } from './cli.ts';
import { brushTimeline, urlParam, waitLoaded } from './explorer-helpers.ts';
import { needsRealTraces, realTracePath } from './real-traces.ts';
import { OUT } from './shots.ts';

/*
 * The URL names the selected stack by stack_hash and holds only what fits the capture open
 * (issue 9, point 7). Expected hashes come from Python's integers over the frames the page lists,
 * expected counts from the command line.
 */

const OTHER = realTracePath('perf-tools-kprobe_example.txt');

/** FNV-1a 64 of the frame keys joined by \n, by a second method (Python) */
function pythonHash(frames: string[]): string {
  const py =
    'import sys\nh = 0xcbf29ce484222325\nfor x in sys.stdin.buffer.read():\n    h = ((h ^ x) * 0x100000001b3) & 0xffffffffffffffff\nprint("%016x" % h)';
  return execFileSync('python3', ['-c', py], { input: frames.join('\n'), encoding: 'utf8' }).trim();
}

async function open(page: Page, query = '') {
  await page.goto('/' + query);
  await waitLoaded(page);
}

const frames = (page: Page) => page.getByTestId('stack-frames').locator('li').allTextContents();
const selectedRows = (page: Page) => page.locator('[data-testid=top-stack-row][aria-selected=true]');

/** Clicks a top-stack row; returns its index attribute, the frames listed and the URL's stack. */
async function selectRow(page: Page, nth: number) {
  const row = page.getByTestId('top-stack-row').nth(nth);
  const stack = (await row.getAttribute('data-stack'))!;
  await row.click();
  await expect(page.getByTestId('stack-frames')).toHaveAttribute('data-stack', stack);
  await expect(page.getByTestId('stack-frames').locator('li').first()).toBeVisible();
  await expect.poll(() => urlParam(page, 'stack')).toMatch(/^[0-9a-f]{16}$/);
  return { stack, frames: await frames(page), hash: urlParam(page, 'stack')! };
}

/** The page opens `file` as the capture it reopens on load (what the persisted last capture will be). */
async function reopenAs(page: Page, file: string) {
  const name = basename(file);
  await page.route('**/samples/index.json', (r) => r.fulfill({ contentType: 'application/json', body: JSON.stringify({ files: [name] }) }));
  await page.route(`**/samples/${name}`, (r) => r.fulfill({ contentType: 'text/plain', body: readFileSync(file) }));
}

async function shots(page: Page, name: string) {
  for (const [w, h] of [
    [1600, 1000],
    [1280, 720],
  ]) {
    for (const scheme of ['light', 'dark'] as const) {
      await page.setViewportSize({ width: w, height: h });
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: `${OUT}/url-${name}-${w}x${h}-${scheme}.png` });
    }
  }
}

test('a stack link reopens the same stack after a reload: the URL holds its stack_hash', async ({ page }) => {
  await open(page);
  const picked = await selectRow(page, 2);
  expect(picked.hash).toBe(pythonHash(picked.frames));
  const url = page.url();
  await page.reload();
  await waitLoaded(page);
  await expect(page.getByTestId('stack-frames').locator('li')).toHaveCount(picked.frames.length);
  expect(await frames(page)).toEqual(picked.frames);
  await expect(selectedRows(page)).toHaveCount(1);
  await expect(selectedRows(page)).toHaveAttribute('data-stack', picked.stack);
  await expect(page.getByTestId('url-notice')).toHaveCount(0);
  expect(page.url()).toBe(url);
});

test('a reload with another capture drops the stale stack and generation, with a notice', async ({ page }) => {
  needsRealTraces();
  await open(page);
  await page.getByTestId('generation-select').selectOption('2');
  const picked = await selectRow(page, 0);
  const oldUrl = page.url();
  await expect.poll(() => urlParam(page, 'gen')).toBe('2');

  // another capture through the file input, then the old link
  await page.getByTestId('file-input').setInputFiles(OTHER);
  const other = cliSummary([OTHER]);
  await expect(page.getByTestId('summary-events')).toHaveText(String(other.events));
  await waitLoaded(page);
  await reopenAs(page, OTHER);
  await page.goto(oldUrl);
  await waitLoaded(page);
  await expect(page.getByTestId('summary-events')).toHaveText(String(other.events));

  const notice = page.getByTestId('url-notice');
  await expect(notice).toBeVisible();
  await expect(notice).toHaveText(`the link's stack ${picked.hash} and generation 2 are not in this capture; dropped×`);
  await expect(page.getByTestId('stack-frames')).toHaveCount(0);
  await expect(selectedRows(page)).toHaveCount(0);
  await expect(page.getByTestId('flamegraph')).toHaveAttribute('data-highlight-nodes', '0');
  await expect(page.getByTestId('generation-select')).toHaveValue('all');
  await expect.poll(() => urlParam(page, 'stack')).toBeNull();
  await expect.poll(() => urlParam(page, 'gen')).toBeNull();
  // the other capture's own stack: the CLI's one top stack, all of its occurrences
  await expect(page.getByTestId('top-stack-row')).toHaveCount(other.top.length);
  await expect(page.getByTestId('top-stack-row').first()).toHaveAttribute('data-count', String(other.top[0].count));
  await shots(page, 'notice-stale-stack');
  await notice.getByRole('button', { name: 'dismiss' }).click();
  await expect(notice).toHaveCount(0);
});

test('an old numeric ?stack= link selects nothing and says why', async ({ page }) => {
  await open(page, '?stack=40&gen=3');
  await expect(page.getByTestId('url-notice')).toHaveText("the link's stack 40 is an internal index of some other capture, not a stack_hash; dropped×");
  await expect(page.getByTestId('stack-frames')).toHaveCount(0);
  await expect(selectedRows(page)).toHaveCount(0);
  await expect.poll(() => urlParam(page, 'stack')).toBeNull();
  // what fits stays
  await expect(page.getByTestId('generation-select')).toHaveValue('3');
  await shots(page, 'notice-old-link');
});

test('Back undoes a stack selection, a range and a generation change, not every pan', async ({ page }) => {
  await open(page);
  const start = page.url();
  await page.getByTestId('generation-select').selectOption('2');
  await expect.poll(() => urlParam(page, 'gen')).toBe('2');
  const picked = await selectRow(page, 1);
  // pans replace the entry they are in
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('KeyW');
  await expect.poll(() => urlParam(page, 'window')).not.toBeNull();
  for (const key of ['KeyD', 'KeyA', 'KeyD', 'KeyA']) {
    const w = urlParam(page, 'window');
    await page.keyboard.press(key);
    await expect.poll(() => urlParam(page, 'window')).not.toBe(w);
  }
  const depth = await page.evaluate(() => history.length);
  await brushTimeline(page, 0.3, 0.6);
  await expect(page.getByTestId('range-chip')).toBeVisible();
  expect(await page.evaluate(() => history.length)).toBe(depth + 1);

  await page.goBack();
  await expect(page.getByTestId('range-chip')).toHaveCount(0);
  expect(await frames(page)).toEqual(picked.frames);
  await page.goBack();
  await expect(page.getByTestId('stack-frames')).toHaveCount(0);
  await expect(selectedRows(page)).toHaveCount(0);
  await expect(page.getByTestId('flamegraph')).toHaveAttribute('data-highlight-nodes', '0');
  await expect.poll(() => urlParam(page, 'stack')).toBeNull();
  await expect(page.getByTestId('generation-select')).toHaveValue('2');
  await page.goBack();
  await expect(page.getByTestId('generation-select')).toHaveValue('all');
  expect(page.url()).toBe(start);

  // and Forward redoes them, the same stack again
  await page.goForward();
  await expect(page.getByTestId('generation-select')).toHaveValue('2');
  await page.goForward();
  await expect(page.getByTestId('stack-frames').locator('li')).toHaveCount(picked.frames.length);
  expect(await frames(page)).toEqual(picked.frames);
  await expect.poll(() => urlParam(page, 'stack')).toBe(picked.hash);
  await expect(page.getByTestId('url-notice')).toHaveCount(0);
});

test('Back into a view of the previous capture drops its stack with the notice', async ({ page }) => {
  needsRealTraces();
  await open(page);
  const first = await selectRow(page, 0);
  await selectRow(page, 3);
  await page.getByTestId('file-input').setInputFiles(OTHER);
  await expect(page.getByTestId('summary-events')).toHaveText(String(cliSummary([OTHER]).events));
  await waitLoaded(page);
  // the new capture replaced the entry it opened in; the one before still names the sample's stack
  await page.goBack();
  await expect(page.getByTestId('url-notice')).toHaveText(`the link's stack ${first.hash} is not in this capture; dropped×`);
  await expect(page.getByTestId('stack-frames')).toHaveCount(0);
  await expect.poll(() => urlParam(page, 'stack')).toBeNull();
});
