import { readFileSync } from 'node:fs';
import { expect, test } from './fixtures.ts';
import { sampleFiles, urlParam, waitLoaded, fnv1a64 } from './explorer-helpers.ts';
import { cli } from './cli.ts';
import { shots } from './shots.ts';

/**
 * Weights by a field of the events in the page (DESIGN 5.5): `?weight=field:NAME` gives each
 * top-stack-row `data-count` and `data-weight` equal to the command line's `top --json --weight
 * field:NAME` rows for the same files, matched by stack_hash (computed here from the CLI's frames).
 */
interface TopJson {
  total: number;
  totalWeight: number;
  rows: { count: number; weight: number; share: number; frames: string[] }[];
}

test('weight=field:bytes_alloc: every top stack row has the command line’s count and summed bytes', async ({ page }) => {
  const cliTop = JSON.parse(cli(['top', '--json', '--quiet', '--weight', 'field:bytes_alloc', '--limit', '100000', ...sampleFiles])) as TopJson;
  const want = new Map(cliTop.rows.map((r) => [fnv1a64(r.frames.join('\n')), r]));
  expect(cliTop.totalWeight).toBeGreaterThan(0);
  await page.goto('/?weight=field:bytes_alloc');
  await waitLoaded(page);
  const rows = page.getByTestId('top-stack-row');
  await expect(rows.first()).toHaveAttribute('data-weight', /^[1-9]\d*$/);
  const got = await rows.evaluateAll((els) =>
    els.map((e) => ({
      hash: e.getAttribute('data-stack-hash')!,
      count: Number(e.getAttribute('data-count')),
      weight: Number(e.getAttribute('data-weight')),
      share: Number(e.getAttribute('data-share')),
    })),
  );
  expect(got.length).toBeGreaterThan(10);
  for (const g of got) {
    const w = want.get(g.hash);
    expect(w, g.hash).toBeDefined();
    expect([g.count, g.weight]).toEqual([w!.count, w!.weight]);
    // the share is of the weight, as top --json's (a row of 0 bytes has none)
    expect(g.share, g.hash).toBeCloseTo(w!.share, 9);
  }
  // the weight column is there, named after the field, and sorts
  await expect(page.getByTestId('sort-weight')).toContainText('bytes_alloc');
  await page.getByTestId('sort-weight').click();
  await expect(page.getByTestId('top-stacks')).toHaveAttribute('data-sort', 'weight:desc');
  await expect(page.getByTestId('top-stacks')).toHaveAttribute('aria-busy', 'false');
  const sorted = await rows.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-weight'))));
  expect(sorted).toEqual([...sorted].sort((a, b) => b - a));
  expect(sorted[0]).toBe(Math.max(...cliTop.rows.map((r) => r.weight)));
  // the records without a bytes_alloc (sched_wakeup's), said as the command line counts them
  const unweighed = (JSON.parse(cli(['top', '--json', '--quiet', '--weight', 'field:bytes_alloc', ...sampleFiles])) as { unweighed: number }).unweighed;
  expect(unweighed).toBeGreaterThan(0);
  await expect(page.getByTestId('flame-unweighed')).toHaveAttribute('data-records', String(unweighed));
});

test('the weight menu offers the events’ numeric fields; choosing one weighs the flame graph by it', async ({ page }) => {
  await page.goto('/');
  await waitLoaded(page);
  const select = page.getByTestId('flame-weight');
  await select.focus();
  await expect(select.locator('option[value="field:bytes_alloc"]')).toHaveCount(1);
  await expect(select.locator('option[value="field:bytes_req"]')).toHaveCount(1);
  await select.selectOption('field:bytes_alloc');
  await expect.poll(() => urlParam(page, 'weight')).toBe('field:bytes_alloc');
  await expect(page.getByTestId('flamegraph')).toHaveAttribute('data-ready', 'true');
  await expect(page.locator('html')).toHaveAttribute('data-queries', '0');
  const cliTop = JSON.parse(cli(['top', '--json', '--quiet', '--weight', 'field:bytes_alloc', '--limit', '1', ...sampleFiles])) as TopJson;
  // the flame graph's root holds every byte allocated (its title reads the root's value)
  await expect(page.getByTestId('flame-main')).toHaveAttribute('data-total', String(cliTop.totalWeight));
  const pane = page.getByRole('region', { name: 'flame graph' });
  await shots(page, 'field-weight', { at: pane });

  // grouped by task from the menu: a root frame per task that allocated, the bytes still all there
  const byTask = JSON.parse(cli(['top', '--json', '--quiet', '--group', 'task', '--weight', 'field:bytes_alloc', '--limit', '100000', ...sampleFiles])) as {
    rows: { group: string; weight: number }[];
  };
  await page.getByTestId('flame-group').selectOption('task');
  await expect.poll(() => urlParam(page, 'group')).toBe('task');
  const main = page.getByTestId('flame-main');
  await expect(main).toHaveAttribute('data-total', String(cliTop.totalWeight));
  // the ungrouped tree has the same total and root children of its own: wait for the grouped one's
  // (a fresh clone's run read the root's frames, the answer from before the pick)
  const rootTasks = async () =>
    ((await main.getAttribute('data-root-children')) ?? '')
      .split('\n')
      .map((l) => l.slice(0, l.lastIndexOf('=')))
      .sort();
  await expect.poll(rootTasks).toEqual([...new Set(byTask.rows.filter((r) => r.weight > 0).map((r) => r.group))].sort());
  await shots(page, 'field-group-task', { at: pane });
});

test('group=task&weight=field:bytes_alloc: a root frame per task holding its bytes, as top --json --group task sums them', async ({ page }) => {
  const cliTop = JSON.parse(
    cli(['top', '--json', '--quiet', '--group', 'task', '--weight', 'field:bytes_alloc', '--limit', '100000', ...sampleFiles]),
  ) as TopJson & { rows: { group: string }[] };
  const perTask = new Map<string, number>();
  for (const r of cliTop.rows) perTask.set(r.group, (perTask.get(r.group) ?? 0) + r.weight);
  await page.goto('/?group=task&weight=field:bytes_alloc');
  await waitLoaded(page);
  await expect(page.getByTestId('flame-group')).toHaveValue('task');
  const main = page.getByTestId('flame-main');
  await expect(main).toHaveAttribute('data-total', String(cliTop.totalWeight));
  const shown = async () =>
    new Map(
      ((await main.getAttribute('data-root-children')) ?? '')
        .split('\n')
        .map((l) => [l.slice(0, l.lastIndexOf('=')), Number(l.slice(l.lastIndexOf('=') + 1))] as const),
    );
  const want = new Map([...perTask].filter(([, v]) => v > 0));
  // polled as above: an answer drawn before the grouped one has the same total
  await expect.poll(shown).toEqual(want);
  // Back to no groups: the group select is part of the URL's view
  await page.getByTestId('flame-group').selectOption('');
  await expect.poll(() => urlParam(page, 'group')).toBeNull();
});

test('the folded export follows the weight and the groups: the command line’s export --weight field:bytes_alloc --group task, line for line', async ({
  page,
}) => {
  const want = cli(['export', '--format', 'folded', '--quiet', '--weight', 'field:bytes_alloc', '--group', 'task', ...sampleFiles])
    .trim()
    .split('\n')
    .sort();
  expect(want.length).toBeGreaterThan(10);
  await page.goto('/?group=task&weight=field:bytes_alloc');
  await waitLoaded(page);
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-folded').click()]);
  expect(d.suggestedFilename()).toBe('stackmap-all-bytes_alloc.folded');
  const got = readFileSync((await d.path())!, 'utf8')
    .trim()
    .split('\n')
    .sort();
  expect(got).toEqual(want);
});

test('group=task: top stacks has a row per task and stack, each the command line’s top --json --group task row', async ({ page }) => {
  const cliTop = JSON.parse(cli(['top', '--json', '--quiet', '--group', 'task', '--weight', 'field:bytes_alloc', '--limit', '100000', ...sampleFiles])) as {
    rows: { group: string; count: number; weight: number; share: number; frames: string[] }[];
  };
  const want = new Map(cliTop.rows.map((r) => [`${r.group}|${fnv1a64(r.frames.join('\n'))}`, r]));
  await page.goto('/?group=task&weight=field:bytes_alloc');
  await waitLoaded(page);
  const rows = page.getByTestId('top-stack-row');
  await expect(rows.first()).toHaveAttribute('data-group', /./);
  const got = await rows.evaluateAll((els) =>
    els.map((e) => ({
      key: `${e.getAttribute('data-group')}|${e.getAttribute('data-stack-hash')}`,
      count: Number(e.getAttribute('data-count')),
      weight: Number(e.getAttribute('data-weight')),
      share: Number(e.getAttribute('data-share')),
    })),
  );
  expect(got.length).toBe(Math.min(200, want.size));
  for (const g of got) {
    expect([g.count, g.weight], g.key).toEqual([want.get(g.key)?.count, want.get(g.key)?.weight]);
    expect(g.share, g.key).toBeCloseTo(want.get(g.key)!.share, 9);
  }
  await expect(page.getByTestId('sort-group')).toContainText('task');
  // a group's rows keep no ref_count or depth (a stack's, not the group's): the leaf frame has the room
  await expect(page.getByTestId('sort-ref_count')).toHaveCount(0);
  const leaf = await page.locator('[data-testid=top-stacks] col.c-leaf').evaluate((c) => c.getBoundingClientRect().width);
  expect(leaf).toBeGreaterThan(120);
});
