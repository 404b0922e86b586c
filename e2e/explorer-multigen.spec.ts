import { expect, test } from './fixtures.ts';
import { writeCapture } from './capture.ts';
import { cliSummary } from './cli.ts';
import {
  brushedRange,
  brushTimeline,
  canvasInk,
  expectSummary,
  nodeExplorer,
  sel,
  summaryNumbers,
  summaryOf,
  urlParam,
  waitLoaded,
} from './explorer-helpers.ts';

// a second capture, unlike the sample: five generations, three CPUs, another seed
const files = writeCapture({ seed: 4242, cpus: 3, events: 2500, resets: 4, bits: 14, tail: 25 });
const explorer = nodeExplorer(files);

test.beforeEach(async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles(files);
  await expect(page.getByTestId('load-progress')).toContainText(`${files.length} files`);
  await expect(page.getByTestId('summary-generations')).toHaveText('1, 2, 3, 4, 5');
  await waitLoaded(page);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-lanes', '3');
});

test('the multi-generation capture: every pane draws, the numbers are the command line’s', async ({ page }) => {
  const cli = cliSummary(files);
  const shown = await summaryNumbers(page);
  expect({ events: shown.events, cookies: shown.cookies, resolved: shown.resolved, unique: shown.uniqueStacks }).toEqual({
    events: cli.events,
    cookies: cli.cookies,
    resolved: cli.resolved,
    unique: cli.uniqueStacks,
  });
  expect((await canvasInk(page.getByTestId('timeline').locator('canvas'))).inked).toBeGreaterThan(1000);
  expect((await canvasInk(page.getByTestId('flamegraph').locator('canvas').first())).inked).toBeGreaterThan(3000);
  await expect(page.getByTestId('generation-row')).toHaveCount(5);
  await expect(page.getByTestId('generation-select').locator('option')).toHaveCount(6);
  const ex = await explorer;
  await expect(page.getByTestId('top-stack-row').first()).toHaveAttribute(
    'data-count',
    String(ex.topStacks({ selection: sel(), filter: '', limit: 1 }).rows[0].count),
  );
});

test('each generation of the multi-generation capture shows its own counts', async ({ page }) => {
  const ex = await explorer;
  const seen = new Set<number>();
  for (const g of [1, 2, 3, 4, 5]) {
    await page.getByTestId('generation-select').selectOption(String(g));
    const want = ex.selectionSummary(sel({ generation: g }));
    await expectSummary(page, want);
    seen.add(want.events);
    // the top stacks follow
    const top = ex.topStacks({ selection: sel({ generation: g }), filter: '', limit: 200 });
    await expect(page.getByTestId('top-stacks-count')).toHaveAttribute('data-total', String(top.total));
  }
  // the generations are not all alike: the filter did something
  expect(seen.size).toBeGreaterThan(1);
  await expect.poll(() => urlParam(page, 'gen')).toBe('5');
});

test('the generation diff lists stacks only in A, only in B and count changes', async ({ page }) => {
  await page.getByTestId('diff-run').click();
  const ex = await explorer;
  const d = ex.generationDiff(4, 5);
  const diff = page.getByTestId('generation-diff');
  await expect(diff.locator('h3').nth(0)).toContainText(String(d.onlyA.length));
  await expect(diff.locator('h3').nth(1)).toContainText(String(d.onlyB.length));
  await expect(diff.locator('h3').nth(2)).toContainText(String(d.changed.length));
  await expect.poll(() => urlParam(page, 'diff')).toBe('4,5');
});

test('a brushed range on the multi-generation capture filters the top stacks and the folded export', async ({ page }) => {
  await brushTimeline(page, 0.1, 0.4);
  const range = await brushedRange(page);
  const ex = await explorer;
  const want = ex.topStacks({ selection: sel({ range }), filter: '', limit: 200 });
  await expect(page.getByTestId('top-stacks-count')).toHaveAttribute('data-total', String(want.total));
  await expect(page.getByTestId('top-stack-row').first()).toHaveAttribute('data-stack', String(want.rows[0].stack));
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-folded').click()]);
  const { readFileSync } = await import('node:fs');
  const text = readFileSync((await d.path())!, 'utf8');
  const sum = text
    .trim()
    .split('\n')
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  expect(sum).toBe(want.total);
});

test('which code path allocates most on CPU 2 between two resets: a few clicks', async ({ page }) => {
  await page.getByTestId('cpu-2').click();
  await page.getByTestId('generation-select').selectOption('3');
  await page.getByTestId('stack-filter').fill('alloc');
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-lanes', '1');
  const ex = await explorer;
  const selection = sel({ cpus: [2], generation: 3 });
  const want = ex.topStacks({ selection, filter: 'alloc', limit: 200 });
  expect(want.rows.length).toBeGreaterThan(0);
  await expect(page.getByTestId('top-stack-row')).toHaveCount(want.rows.length);
  await expect(page.getByTestId('top-stack-row').first()).toHaveAttribute('data-stack', String(want.rows[0].stack));
  const s = ex.selectionSummary(selection);
  await expect.poll(() => summaryNumbers(page)).toEqual(summaryOf(s));
  await expect.poll(() => urlParam(page, 'cpus')).toBe('2');
  // the answer's frames, one click away
  await page.getByTestId('top-stack-row').first().click();
  await expect(page.getByTestId('stack-frames').locator('li')).toHaveCount(ex.stackFrames(want.rows[0].stack).length);
});
