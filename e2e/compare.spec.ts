import { mkdtempSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { expect, test, type Page } from './fixtures.ts';
import { cli } from './cli.ts';
import { sampleFiles, waitLoaded } from './explorer-helpers.ts';
import { OUT } from './shots.ts';

// Compare with a baseline (issue 37). The baseline is the sample with its trace cut to its first
// 60% of lines (the same stacks, other counts). The expected rows come from the command line's
// folded export of each side, joined here: stack text -> [before, after].

const dir = mkdtempSync(join(tmpdir(), 'smx-baseline-'));
const baselineFiles = sampleFiles.map((f) => {
  const to = join(dir, basename(f));
  if (basename(f) === 'trace') {
    const lines = readFileSync(f, 'utf8').split('\n');
    writeFileSync(to, lines.slice(0, Math.floor(lines.length * 0.6)).join('\n') + '\n');
  } else copyFileSync(f, to);
  return to;
});

/** a folded export as stack text -> count */
const folded = (args: string[]) =>
  new Map(
    cli(['export', '--format', 'folded', ...args])
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))] as [string, number]),
  );
const before = folded(baselineFiles);
const after = folded(sampleFiles);
const keys = new Set([...before.keys(), ...after.keys()]);
const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

const rows = (page: Page) =>
  page.getByTestId('top-stack-row').evaluateAll((trs) =>
    trs.map((tr) => {
      const d = (tr as HTMLElement).dataset;
      return { frames: d.frames!, before: Number(d.before), after: Number(d.after), delta: Number(d.delta) };
    }),
  );

async function openBaseline(page: Page) {
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('compare-input').setInputFiles(baselineFiles);
  await expect(page.getByTestId('compare-bar')).toHaveAttribute('data-status', 'loaded');
  await expect(page.getByTestId('flame-compare')).toHaveAttribute('data-differential', 'true');
}

test('Compare with…: before, after and the change per stack, as the two folded exports joined; sortable; normalised as difffolded -n', async ({ page }) => {
  await openBaseline(page);
  // both captures' totals
  const events = (files: string[]) => String((JSON.parse(cli(['summary', '--json', ...files])) as { events: number }).events);
  await expect(page.getByTestId('compare-after-events')).toHaveAttribute('data-value', events(sampleFiles));
  await expect(page.getByTestId('compare-before-events')).toHaveAttribute('data-value', events(baselineFiles));
  // every stack of either side, the largest change first
  await expect(page.getByTestId('top-stacks')).toHaveAttribute('data-rows', String(keys.size));
  await expect(page.getByTestId('top-stacks')).toHaveAttribute('aria-busy', 'false');
  let got = await rows(page);
  expect(got.length).toBe(Math.min(200, keys.size));
  for (const r of got) {
    expect([r.before, r.after], r.frames).toEqual([before.get(r.frames) ?? 0, after.get(r.frames) ?? 0]);
    expect(r.delta).toBe(r.after - r.before);
  }
  for (let i = 1; i < got.length; i++) expect(Math.abs(got[i - 1].delta)).toBeGreaterThanOrEqual(Math.abs(got[i].delta));
  // sorted by after, on a click
  await page.getByTestId('compare-sort-after').click();
  got = await rows(page);
  for (let i = 1; i < got.length; i++) expect(got[i - 1].after).toBeGreaterThanOrEqual(got[i].after);
  await page.getByTestId('compare-sort-delta').click();
  got = await rows(page);
  // normalised: before scaled to after's total with difffolded's integer truncation
  await page.getByTestId('compare-normalize').check();
  await expect(page).toHaveURL(/[?&]cmpnorm=1/);
  const [tb, ta] = [sum(before), sum(after)];
  await expect.poll(async () => (await rows(page))[0]?.before).not.toBe(got[0].before);
  for (const r of await rows(page)) expect(r.before, r.frames).toBe(Math.trunc(((before.get(r.frames) ?? 0) * ta) / tb));
  // the differential flame graph: normalised, some paths grew and some shrank
  const note = page.getByTestId('flame-compare');
  await expect.poll(async () => Number(await note.getAttribute('data-grew'))).toBeGreaterThan(0);
  expect(Number(await note.getAttribute('data-shrank'))).toBeGreaterThan(0);
  // the folded diff export: difffolded.pl -n's lines, STACK BEFORE AFTER, for every stack of either side
  const [fd] = await Promise.all([page.waitForEvent('download'), page.getByTestId('compare-export-folded').click()]);
  const lines = readFileSync((await fd.path())!, 'utf8')
    .trim()
    .split('\n');
  expect(lines.length).toBe(keys.size);
  for (const l of lines) {
    const [a, b] = [Number(l.slice(l.lastIndexOf(' ') + 1)), l.slice(0, l.lastIndexOf(' '))];
    const stack = b.slice(0, b.lastIndexOf(' '));
    expect([Number(b.slice(b.lastIndexOf(' ') + 1)), a], stack).toEqual([Math.trunc(((before.get(stack) ?? 0) * ta) / tb), after.get(stack) ?? 0]);
  }
  // the SVG as shown: the differential's reds and blues
  const [sd] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-svg').click()]);
  const fills = [...readFileSync((await sd.path())!, 'utf8').matchAll(/fill="rgb\((\d+),(\d+),(\d+)\)"/g)].map((m) => m.slice(1).map(Number));
  expect(fills.some(([r, g, b]) => r === 255 && g < 225 && b === g)).toBe(true);
  expect(fills.some(([r, g, b]) => b === 255 && r < 225 && g === r)).toBe(true);
  // a stack only one side has is marked
  const shown = await rows(page);
  const oneSided = shown.filter((r) => !before.has(r.frames) || !after.has(r.frames)).length;
  expect(oneSided).toBeGreaterThan(0);
  expect(await page.getByTestId('compare-side-only').count()).toBe(oneSided);
  for (const theme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await page.screenshot({ path: `${OUT}/compare-${theme}.png` });
  }
});

test('the baseline is kept: a reload compares again, and the URL opened in a new page too', async ({ page, context }) => {
  await openBaseline(page);
  await expect(page).toHaveURL(/[?&]compare=/);
  const first = await rows(page);
  // kept in the browser (written after it was read): then a reload finds it
  await expect(page.getByTestId('compare-bar')).toHaveAttribute('data-kept', 'true');
  await page.reload();
  await waitLoaded(page);
  await expect(page.getByTestId('compare-bar')).toHaveAttribute('data-status', 'loaded');
  await expect(page.getByTestId('top-stacks')).toHaveAttribute('data-rows', String(keys.size));
  expect(await rows(page)).toEqual(first);
  const other = await context.newPage();
  await other.goto(page.url());
  await waitLoaded(other);
  await expect(other.getByTestId('compare-bar')).toHaveAttribute('data-status', 'loaded');
  await expect(other.getByTestId('top-stacks')).toHaveAttribute('data-rows', String(keys.size));
  expect(await rows(other)).toEqual(first);
  await other.close();
  // Stop comparing: the panes are the capture's own again, and the URL forgets the baseline
  await page.getByTestId('compare-close').click();
  await expect(page.getByTestId('compare-bar')).toHaveCount(0);
  await expect(page).not.toHaveURL(/[?&]compare=/);
  await expect(page.getByTestId('top-stacks')).not.toHaveAttribute('data-comparing', 'true');
});

test('two generations of one capture in the same differential view: as top --generation counts each, joined', async ({ page }) => {
  // each generation's stacks as `top --json` counts them, keyed as folded lines (root first)
  const gen = (g: number) => {
    const m = new Map<string, number>();
    for (const r of (
      JSON.parse(cli(['top', '--generation', String(g), '--limit', '100000', '--json', ...sampleFiles])) as { rows: { count: number; frames: string[] }[] }
    ).rows) {
      const k = r.frames.slice().reverse().join(';');
      m.set(k, (m.get(k) ?? 0) + r.count);
    }
    return m;
  };
  const [g1, g3] = [gen(1), gen(3)];
  const all = new Set([...g1.keys(), ...g3.keys()]);
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.goto('/');
  await waitLoaded(page);
  // from the generation diff's own button
  await page.getByTestId('diff-differential').click();
  await expect(page).toHaveURL(/[?&]compare=gen%3A2%2C3/);
  // and from a link
  await page.goto('/?compare=gen:1,3');
  await waitLoaded(page);
  await expect(page.getByTestId('compare-bar')).toHaveAttribute('data-baseline', 'gen:1,3');
  await expect(page.getByTestId('top-stacks')).toHaveAttribute('data-rows', String(all.size));
  await expect(page.getByTestId('top-stacks')).toHaveAttribute('aria-busy', 'false');
  for (const r of await rows(page)) expect([r.before, r.after], r.frames).toEqual([g1.get(r.frames) ?? 0, g3.get(r.frames) ?? 0]);
  await expect(page.getByTestId('flame-compare')).toHaveAttribute('data-differential', 'true');
});
