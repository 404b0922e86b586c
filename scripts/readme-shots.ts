// The README walkthrough's screenshots (docs/walkthrough/*.png), from a production build of the
// app, at 1280x720 in the light theme. Run by hand, not by `npm test`:
//
//   npx vite build --outDir /tmp/dist-h5
//   npx tsx scripts/readme-shots.ts --dist /tmp/dist-h5 [--out docs/walkthrough]
//
// Every step waits for the state the README describes (the sample loaded, a generation chosen,
// the scenario's verdict in) and fails loudly if the page does not reach it, so a shot never
// shows a half-drawn pane. The build is served with the isolation headers (bench/browser.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Locator, type Page } from '@playwright/test';
import { launch, serve } from './browser.ts';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const DIST = flag('--dist', 'dist');
const OUT = flag('--out', 'docs/walkthrough');
const MAX_BYTES = 200 * 1024;
/** The README's what-if step, exactly: a capture recorded without the map. */
const WHATIF_GENERATE = ['generate', '--full-stacks', '--events', '10000', '--stacks', '2000'];
const WHATIF_BUFFER_KB = '128';

async function waitLoaded(page: Page) {
  await expect(page.getByTestId('load-progress')).toHaveAttribute('data-status', 'done', { timeout: 30_000 });
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-ready', 'true');
  await expect(page.getByTestId('flamegraph')).toHaveAttribute('data-ready', 'true');
  await expect(page.getByTestId('summary')).toHaveAttribute('data-pending', 'false');
}

const written: string[] = [];
/** Fails when a README picture grows past MAX_BYTES; lists what was written. */
function keep(path: string) {
  const size = statSync(path).size;
  if (size > MAX_BYTES) throw new Error(`${path} is ${size} bytes, over the README's ${MAX_BYTES}`);
  written.push(`${path} (${Math.round(size / 1024)} KB)`);
}

/** The viewport (`target` the page) or one element, with the pointer out of the way. */
async function shot(page: Page, target: Page | Locator, name: string) {
  const path = join(OUT, `${name}.png`);
  await page.mouse.move(0, 0);
  if (target !== page) await (target as Locator).scrollIntoViewIfNeeded();
  await target.screenshot({ path, animations: 'disabled' });
  keep(path);
}

/** A screenshot of the rectangle around `parts` (scrolled into view first), `pad` px around. */
async function shotAround(page: Page, parts: Locator[], name: string, pad = 6) {
  await parts[0].scrollIntoViewIfNeeded();
  const boxes = await Promise.all(parts.map(async (p) => (await p.boundingBox())!));
  const x = Math.max(0, Math.min(...boxes.map((b) => b.x)) - pad);
  const y = Math.max(0, Math.min(...boxes.map((b) => b.y)) - pad);
  const right = Math.max(...boxes.map((b) => b.x + b.width)) + pad;
  const bottom = Math.max(...boxes.map((b) => b.y + b.height)) + pad;
  const path = join(OUT, `${name}.png`);
  await page.mouse.move(0, 0);
  await page.screenshot({ path, clip: { x, y, width: right - x, height: bottom - y }, animations: 'disabled' });
  keep(path);
}

async function explorer(page: Page) {
  await page.goto('/');
  await waitLoaded(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, page, '1-sample');

  // the top stack: the first row of the top stacks pane, its path marked in the flame graph
  await page.getByTestId('top-stack-row').first().click();
  await expect(page.getByTestId('flamegraph')).not.toHaveAttribute('data-highlight-nodes', '0');
  await expect(page.getByTestId('stack-frames')).toBeVisible();
  await shot(page, page.locator('.split').first(), '2-top-stack');
  await page.getByTestId('top-stack-row').first().click(); // unselect

  // a generation chosen: every pane now shows only its records
  const select = page.getByTestId('generation-select');
  const gens = await select.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  const numbered = gens.filter((v) => /^\d+$/.test(v));
  if (numbered.length < 3) throw new Error(`the sample should have three generations, the picker offers ${gens.join(', ')}`);
  await select.selectOption(numbered[1]);
  await expect.poll(() => new URL(page.url()).searchParams.get('gen')).toBe(numbered[1]);
  await waitLoaded(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, page, '3-generation');
  const gensPane = page.getByRole('region', { name: 'generations' });
  await gensPane.getByLabel('generation A').selectOption(numbered[0]); // choosing a pair runs the diff
  await gensPane.getByLabel('generation B').selectOption(numbered[2]);
  await expect(page.getByTestId('generation-diff').locator('h3')).toHaveCount(3);
  await shot(page, gensPane, '4-generation-diff');
  await select.selectOption(gens[0]);
  await expect.poll(() => new URL(page.url()).searchParams.get('gen')).toBeNull();
  await waitLoaded(page);
  await shot(page, page.getByRole('region', { name: 'stack map statistics' }), '5-stack-map');

  // SQL: DuckDB opened on demand, an example query over the sample's tables
  const sql = page.getByTestId('sql');
  await page.getByTestId('sql-open').click();
  await expect(sql).toHaveAttribute('data-status', 'ready', { timeout: 180_000 });
  await page.getByTestId('sql-example-unresolved').click();
  await expect(page.getByTestId('sql-count')).toHaveAttribute('data-total', /^[1-9]\d*$/, { timeout: 60_000 });
  await shot(page, sql, '9-sql');
}

async function scenario(page: Page, name: string, file: string) {
  await page.goto('/?view=simulator');
  if (!(await page.evaluate(() => globalThis.crossOriginIsolated))) throw new Error('the page is not cross-origin isolated');
  const item = page.locator(`[data-testid="sim-scenario"][data-scenario="${name}"]`);
  await item.getByTestId('sim-scenario-run').click();
  await expect(item).toHaveAttribute('data-state', /seen|not-seen/, { timeout: 120_000 });
  await expect(item.getByTestId('sim-verdict')).toHaveAttribute('data-ok', 'true');
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped');
  await page.waitForTimeout(1200); // the last reset's flash over the slot table fades
  const cards = page.getByTestId('sim-scenario');
  await shotAround(page, [cards.nth(0), cards.nth(1), cards.nth(2)], `${file}-verdict`);
  await shot(page, page.getByTestId('sim-ledger'), `${file}-ledger`);
}

/** The what-if pane needs full stacks: a capture recorded without the map, made by `cli generate`. */
async function whatIf(page: Page) {
  const dir = mkdtempSync(join(tmpdir(), 'readme-shots-'));
  execFileSync('npm', ['run', '--silent', 'cli', '--', ...WHATIF_GENERATE, '--out', dir], { stdio: 'ignore' });
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles(join(dir, 'trace'));
  const replace = page.getByTestId('replace-files'); // asked only while a capture of the user's is open
  await replace.waitFor({ state: 'visible', timeout: 2000 }).then(
    () => replace.click(),
    () => undefined,
  );
  await expect(page.getByTestId('summary-full-stacks')).toHaveText(/^[1-9]\d*$/, { timeout: 60_000 });
  await waitLoaded(page);
  await page.getByTestId('whatif-buffer-kb').fill(WHATIF_BUFFER_KB);
  await expect(page.getByTestId('whatif-basis')).toContainText(`buffer ${WHATIF_BUFFER_KB} KB`);
  await expect(page.getByTestId('whatif')).not.toContainText('computing');
  // v8 as posted: its one size (bits 14, 16,384 stacks) fits; the proposed bits rows opened beside it
  await expect(page.getByTestId('whatif-recommendation')).toHaveAttribute('data-bits', '14');
  await expect(page.getByTestId('whatif-row')).toHaveCount(10);
  await page.getByTestId('whatif-proposed').locator('summary').click();
  await shot(page, page.getByTestId('whatif'), '8-whatif');
  rmSync(dir, { recursive: true, force: true });
}

const served = await serve({ '/': DIST });
const browser = await launch();
try {
  mkdirSync(OUT, { recursive: true });
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 720 }, colorScheme: 'light', baseURL: served.url });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => process.stderr.write(`[page error] ${e.message}\n`));
  await explorer(page);
  await scenario(page, 'v7-wrong-stack', '6-sim-v7');
  await scenario(page, 'v8-detects', '7-sim-v8');
  await whatIf(page);
  console.log(written.join('\n'));
} finally {
  await browser.close();
  await served.close();
}
