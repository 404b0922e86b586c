import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { expect, test, type Page } from './fixtures.ts';
import { sampleFiles, summaryNumbers, urlParam, waitLoaded, fnv1a64 } from './explorer-helpers.ts';
import { cli, CLI } from './cli.ts';
import { shots } from './shots.ts';
import { fmtBytes, fmtInt, fmtPct } from '../src/ui/common/format.ts';
import type { Summary } from '../src/core/capture/summary.ts';

/**
 * The event filter in the page (issue 35, DESIGN 5.5): trace-cmd's -F syntax typed with completion,
 * applied to every pane, its error at its column, undone by Back, and the same from the URL. The
 * expected numbers are the command line's for the same files and filter.
 */
const F = 'kmem_cache_alloc: bytes_alloc > 512';

async function applied(page: Page, text: string) {
  await expect(page.getByTestId('event-filter-status')).toHaveAttribute('data-applied', text);
  await waitLoaded(page);
}

test('?filter=F&weight=field:bytes_alloc: every top stack row is top --json --filter F --weight field:bytes_alloc’s, and the summary summary --json --filter F’s', async ({
  page,
}) => {
  const top = JSON.parse(cli(['top', '--json', '--quiet', '--filter', F, '--weight', 'field:bytes_alloc', '--limit', '100000', ...sampleFiles])) as {
    total: number;
    totalWeight: number;
    rows: { count: number; weight: number; frames: string[] }[];
  };
  const want = new Map(top.rows.map((r) => [fnv1a64(r.frames.join('\n')), r]));
  const summary = JSON.parse(cli(['summary', '--json', '--filter', F, ...sampleFiles])) as { events: number; cookies: number; resolved: number };
  await page.goto(`/?filter=${encodeURIComponent(F)}&weight=field:bytes_alloc`);
  await applied(page, F);
  const got = await page.getByTestId('top-stack-row').evaluateAll((els) =>
    els.map((e) => ({
      hash: e.getAttribute('data-stack-hash')!,
      count: Number(e.getAttribute('data-count')),
      weight: Number(e.getAttribute('data-weight')),
    })),
  );
  expect(got.length).toBe(Math.min(200, top.rows.length));
  for (const g of got) expect([g.count, g.weight], g.hash).toEqual([want.get(g.hash)?.count, want.get(g.hash)?.weight]);
  const shown = await summaryNumbers(page);
  expect([shown.events, shown.cookies, shown.resolved]).toEqual([summary.events, summary.cookies, summary.resolved]);
  // the flame graph's root holds the filtered events' bytes, and the folded export is the command line's, line for line
  await expect(page.getByTestId('flame-main')).toHaveAttribute('data-total', String(top.totalWeight));
  expect(await foldedExport(page)).toEqual(folded(['--filter', F, '--weight', 'field:bytes_alloc']));
});

/** The command line's `export --format folded` lines, sorted. */
const folded = (args: string[]) =>
  cli(['export', '--format', 'folded', '--quiet', ...args, ...sampleFiles])
    .trim()
    .split('\n')
    .sort();

/** The page's folded export (the exports pane's button), its lines sorted. */
async function foldedExport(page: Page): Promise<string[]> {
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-folded').click()]);
  // named for the filtered events, not the whole capture (stackmap-all)
  expect(d.suggestedFilename()).toMatch(/^stackmap-filtered[-.]/);
  return readFileSync((await d.path())!, 'utf8')
    .trim()
    .split('\n')
    .sort();
}

test('?filter=F: the flame graph’s root, the folded export, the generations and the stat pane’s trace side are the command line’s with --filter F', async ({
  page,
}) => {
  const top = JSON.parse(cli(['top', '--json', '--quiet', '--filter', F, '--limit', '1', ...sampleFiles])) as { total: number; totalWeight: number };
  const want = JSON.parse(cli(['summary', '--json', '--filter', F, ...sampleFiles])) as Summary;
  const whole = JSON.parse(cli(['summary', '--json', ...sampleFiles])) as Summary;
  const wantFolded = folded(['--filter', F]);
  // the filter leaves some stacks out: none of what follows is the whole capture's
  expect(wantFolded).not.toEqual(folded([]));
  expect(want.derived.dedupRate).not.toBe(whole.derived.dedupRate);
  await page.goto(`/?filter=${encodeURIComponent(F)}`);
  await applied(page, F);
  // the flame graph counts the filtered events' stack records
  expect(top.totalWeight).toBe(top.total);
  await expect(page.getByTestId('flame-main')).toHaveAttribute('data-total', String(top.total));
  expect(await foldedExport(page)).toEqual(wantFolded);

  // a generations row per generation of the filtered capture: its records (the records table's, a
  // full stack in the generation in force), coverage and dump slots
  const records = new Map(
    (
      JSON.parse(cli(['sql', '--json', '--filter', F, 'SELECT generation, count(*)::INTEGER FROM records GROUP BY 1 ORDER BY 1', ...sampleFiles])) as {
        rows: [number, number][];
      }
    ).rows,
  );
  const rows = await page
    .getByTestId('generation-row')
    .evaluateAll((els) => els.map((e) => [e.getAttribute('data-generation'), ...[...e.querySelectorAll('td')].slice(2).map((td) => td.textContent)]));
  expect(rows).toEqual(
    want.derived.generations.map((g) => [
      String(g.generation),
      fmtInt(records.get(g.generation as number)!),
      `${g.dumpFormats.map((k) => k.replace('stack_map_', '')).join(' + ')} · ${fmtInt(g.dumpSlots)} slots`,
      fmtPct(g.coverage),
    ]),
  );

  // the stat pane's trace side: the filtered capture's dedup rate, stack bytes and retention gain
  const rb = want.derived.ringBuffer;
  const pane = page.getByTestId('stat-dashboard');
  await expect(pane).toContainText('What the trace shows (filtered capture)');
  await expect(pane.getByTestId('stat-dedup')).toHaveText(fmtPct(want.derived.dedupRate));
  await expect(pane.getByTestId('stat-dedup-basis')).toHaveText(
    `1 − ${fmtInt(rb.records.distinctSlots)} distinct (generation, slot) / ${fmtInt(rb.records.v8Cookies + rb.records.v7Ids)} cookies`,
  );
  await expect(pane.getByTestId('stat-with')).toHaveText(fmtBytes(rb.bytesWithMap));
  await expect(pane.getByTestId('stat-gain')).toHaveText(`${rb.gain!.toFixed(1)}×`);
});

test('typed with completion, a malformed filter’s column, Back and the URL in a new page', async ({ page, context }) => {
  await page.goto('/');
  await waitLoaded(page);
  const all = (await summaryNumbers(page)).events;
  const input = page.getByTestId('event-filter');
  await input.click();
  // completion: the capture's event names, then after `EVENT:` its numeric fields
  await input.fill('kmem');
  await expect(page.locator('#event-filter-complete option[value="kmem_cache_alloc"]')).toHaveCount(1);
  await input.fill('kmem_cache_alloc: bytes_');
  await expect(page.locator('#event-filter-complete option[value="kmem_cache_alloc: bytes_alloc"]')).toHaveCount(1);
  await shots(page, 'event-filter-completion', { check: () => expect(input).toBeFocused() });

  // a malformed filter: the command line's column, and the panes keep what they showed
  const bad = 'kmem_cache_alloc: bytes_alloc >> 512';
  let stderr = '';
  try {
    execFileSync(CLI[0], [...CLI[1], 'summary', '--json', '--filter', bad, ...sampleFiles], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    stderr = (e as { stderr: string }).stderr;
  }
  const column = /column (\d+)/.exec(stderr)![1];
  await input.fill(bad);
  await input.press('Enter');
  await expect(page.getByTestId('event-filter-error')).toHaveAttribute('data-column', column);
  await expect(page.getByTestId('event-filter-error')).toContainText(`column ${column}`);
  expect((await summaryNumbers(page)).events).toBe(all);
  // the error whole at each width: nothing of it cut at the page's right edge
  await shots(page, 'event-filter-error', {
    check: async (w) => {
      const error = page.getByTestId('event-filter-error');
      expect(await error.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
      const box = (await error.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(w);
    },
  });

  // a good one: every pane answers for it
  const want = (JSON.parse(cli(['summary', '--json', '--filter', F, ...sampleFiles])) as { events: number }).events;
  await input.fill(F);
  await input.press('Enter');
  await applied(page, F);
  await expect(page.getByTestId('event-filter-error')).toHaveCount(0);
  expect((await summaryNumbers(page)).events).toBe(want);
  await expect(page.getByTestId('event-filter-status')).toHaveText(`${want.toLocaleString('en-US')} of ${all.toLocaleString('en-US')} events`);
  await expect.poll(() => urlParam(page, 'filter')).toBe(F);
  // the timeline keeps the events the filter left out, dimmed behind the ones it kept: those in the
  // span it draws (the filtered events'), counted here from the trace's lines
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-drawn', /,/);
  const [t0, t1] = ((await page.getByTestId('timeline').getAttribute('data-drawn')) ?? '').split(',').map(Number);
  let inSpan = 0;
  for (const line of readFileSync('public/samples/trace', 'utf8').split('\n')) {
    const m = /^\s*.+?-\d+\s+\[\d+\]\s+\S+\s+(\d+\.\d+): (.*)$/.exec(line);
    if (!m || m[2].startsWith('<stack_id') || m[2] === '<stack trace>') continue;
    if (Number(m[1]) >= t0 && Number(m[1]) <= t1) inSpan++;
  }
  expect(inSpan).toBeLessThanOrEqual(all);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-rest-events', String(inSpan - want));

  // the URL in a new page: the same
  const other = await context.newPage();
  await other.goto(page.url());
  await applied(other, F);
  expect((await summaryNumbers(other)).events).toBe(want);
  await shots(other, 'event-filter-reopened');

  // Back: the filter before (the malformed one never applied), then none
  await page.goBack();
  await expect.poll(() => urlParam(page, 'filter')).toBe(bad);
  await page.goBack();
  await applied(page, '');
  expect((await summaryNumbers(page)).events).toBe(all);
});
