import { expect, test, type Page } from './fixtures.ts';
import { OUT, SHOTS } from './shots.ts';

// Every guided scenario in the page: Run sets the pane, one Web Worker per CPU records on the
// SharedArrayBuffer to the end, and the verdict says the effect appeared, with its numbers.

const num = async (page: Page, id: string) => Number(((await page.getByTestId(id).first().textContent()) ?? '').replace(/[^\d]/g, ''));

async function runScenario(page: Page, name: string): Promise<number> {
  await page.goto('/?view=simulator');
  expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
  const item = page.locator(`[data-testid="sim-scenario"][data-scenario="${name}"]`);
  await item.getByTestId('sim-scenario-run').click();
  await expect(item).toHaveAttribute('data-state', /seen|not-seen/, { timeout: 90_000 });
  const verdict = item.getByTestId('sim-verdict');
  await expect(verdict).toHaveAttribute('data-ok', 'true');
  await expect(page.getByTestId('simulator')).toHaveAttribute('data-status', 'stopped');
  return Number(await verdict.getAttribute('data-value'));
}

/**
 * The run ends by playing the first wrong (v7) or detected (v8) id's story, a moment at a time;
 * the stories are the ledger's (as many as it counts), and another one is a click away.
 */
async function expectStory(page: Page, total: number, outcome: 'wrong' | 'detected') {
  const panel = page.getByTestId('sim-stories');
  await expect(panel).toHaveAttribute('data-total', String(total));
  const story = page.getByTestId('sim-story');
  await expect(story).toHaveAttribute('data-step', '4', { timeout: 30_000 });
  await expect(story).toHaveAttribute('data-outcome', outcome);
  await expect(panel).toBeInViewport();
  // v8's first story is a cookie whose slot another stack took: it contrasts with something
  if (outcome === 'detected') await expect(story).not.toHaveAttribute('data-taken-stack', '');
  // both stacks in full, side by side, the frames that differ marked
  const pair = story.getByTestId('sim-story-pair');
  await expect(pair.getByTestId('stack-pair-differs').first()).toBeVisible();
  expect(Number(await pair.getAttribute('data-differing'))).toBeGreaterThan(0);
  await expect(pair.locator('td').last()).toHaveText(/\+0x[0-9a-f]+/);
  // the ledger's counts with it, the same as the ledger panel's
  expect(await num(page, `sim-stories-ledger-${outcome}`)).toBe(await num(page, `sim-ledger-${outcome}`));
  const items = page.getByTestId('sim-story-item');
  expect(await items.count()).toBe(Math.min(total, 200));
  for (const i of [0, 1]) {
    await items.nth(i).click();
    const slot = await items.nth(i).getAttribute('data-slot');
    await expect(story).toHaveAttribute('data-slot', slot!);
    const written = await story.getAttribute('data-written-stack');
    const read = await story.getAttribute('data-read-stack');
    // v7: read as another stack than the one written for; v8: not read as any
    if (outcome === 'wrong') {
      expect(read).not.toBe('');
      expect(read).not.toBe(written);
    } else expect(read).toBe('');
    await expect(story.locator('li[data-moment]')).toHaveCount(4);
  }
  if (SHOTS) await panel.screenshot({ path: `${OUT}/why-${outcome}-id.png` });
}

const CASES: [string, (page: Page, value: number) => Promise<void>][] = [
  [
    'v7-wrong-stack',
    async (page, value) => {
      const wrong = await num(page, 'sim-ledger-wrong');
      expect(wrong).toBeGreaterThan(0);
      expect(value).toBe(wrong);
      expect(await num(page, 'sim-ledger-detected')).toBe(0);
      await expectStory(page, wrong, 'wrong');
    },
  ],
  [
    'v8-detects',
    async (page, value) => {
      expect(await num(page, 'sim-ledger-wrong')).toBe(0);
      const detected = await num(page, 'sim-ledger-detected');
      expect(detected).toBeGreaterThan(0);
      expect(value).toBe(detected);
      await expectStory(page, detected, 'detected');
    },
  ],
  ['v7-duplicates', async (_page, value) => expect(value).toBeGreaterThan(0)],
  ['v8-fallback', async (_page, value) => expect(value).toBeGreaterThan(0)],
  ['pool-exhausted', async (_page, value) => expect(value).toBeGreaterThan(0)],
  [
    'estale',
    async (page, value) => {
      expect(value).toBeGreaterThanOrEqual(1);
      expect(await num(page, 'sim-counter-estale')).toBeGreaterThanOrEqual(1);
      // the guided run logs the host's steps as a free-form one does: the reset and the ESTALE it caused, then the reread
      const log = page.getByTestId('sim-log');
      await expect(log).toHaveAttribute('data-total-estale', String(value));
      await expect(log).toHaveAttribute('data-total-reset-done', /^[1-9]/);
      await expect(log).toHaveAttribute('data-total-dump', /^[1-9]/);
    },
  ],
  [
    'text-splice',
    async (page, value) => {
      expect(value).toBe(2);
      await expect(page.getByTestId('sim-log')).toHaveAttribute('data-total-text-spliced', '1');
    },
  ],
  ['v4-refused', async (_page, value) => expect(value).toBeGreaterThanOrEqual(1)],
  [
    'nmi-nested',
    async (page, value) => {
      expect(value).toBeGreaterThan(0);
      // every nested insert was logged on its CPU, at least as many as met their own stack unpublished
      expect(Number(await page.getByTestId('sim-log').getAttribute('data-total-nested'))).toBeGreaterThanOrEqual(value);
    },
  ],
  ['boot-window', async (_page, value) => expect(value).toBeGreaterThan(0)],
];

for (const [name, check] of CASES) {
  const opens = name === 'v7-wrong-stack' ? '; the run opens in the explorer with the wrong ids counted as resolved' : '';
  test(`scenario ${name}: its effect appears, with numbers${opens}`, async ({ page }) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width: 1600, height: 1000 });
    const value = await runScenario(page, name);
    await check(page, value);
    if (SHOTS) {
      // the picture (npm run shots): the last reset's flash over the slot table fades (the grid
      // says when), then one frame paints it. Not waited for in npm test: after a v7-duplicates
      // run the flash has been seen to stay up past 15 s (1 full run in 3), a fault of the grid's
      // own still to find, not of the scenario this test checks
      await expect(page.getByTestId('sim-grid')).toHaveAttribute('data-flashing', '0');
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await page.screenshot({ path: `${OUT}/scenario-${name}.png`, fullPage: true });
    }
    if (name === 'v7-wrong-stack') await opensWithWrongAsResolved(page);
  });
}

/** The v7-then-v8 pair's run (v7-wrong-stack, just run) opens in the explorer with the wrong ids counted as resolved. */
async function opensWithWrongAsResolved(page: Page) {
  const correct = await num(page, 'sim-ledger-correct');
  const wrong = await num(page, 'sim-ledger-wrong');
  // the simulator's first two stories, as it tells them from what it knows: "id SLOT · CPU C · T s"
  const simItems = await page.getByTestId('sim-story-item').evaluateAll((els) => els.slice(0, 2).map((e) => e.textContent ?? ''));
  await page.getByTestId('sim-open').click();
  // the wrong ids whose event's own call_site= contradicts the stack they resolve to are not counted as resolved
  await expect(page.getByTestId('summary-events')).not.toHaveText('4000', { timeout: 30_000 });
  await expect(page.getByTestId('load-progress')).toHaveAttribute('data-status', 'done');
  const contradicted = Number(await page.getByTestId('summary-contradicted').textContent());
  expect(contradicted).toBeGreaterThan(0);
  expect(contradicted).toBeLessThanOrEqual(wrong);
  await expect(page.getByTestId('summary-resolved')).toHaveText(String(correct + wrong - contradicted), { timeout: 30_000 });
  // its ledger.json went with it: the explorer says how many of those unverified ids are wrong, the ledger's count
  const truth = page.locator('[data-testid="banner"][data-banner="sim-truth"]');
  await expect(truth).toContainText(wrong.toLocaleString('en-US'));
  await expect(truth).toContainText('resolve to another stack');
  // the trace's reset markers show the ids from before the last reset
  const before = page.locator('[data-testid="banner"][data-banner="before-reset"]');
  await expect(before).toBeVisible();
  // a v7 trace has no generations: the timeline draws its resets at the markers, as many as the banner counts
  const marks = Number(/marks ([\d,]+) resets?/.exec((await before.textContent()) ?? '')![1].replace(/,/g, ''));
  expect(marks).toBeGreaterThan(0);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-resets', String(marks));
  // and each wrong id's story, told from the files and the ledger, is the simulator's: the same id,
  // CPU and time, in the same order, as many as the ledger counts
  const panel = page.getByTestId('explorer-id-story');
  await expect(panel).toHaveAttribute('data-total', String(wrong));
  for (const [i, item] of simItems.entries()) {
    if (i > 0) await page.getByTestId('explorer-id-story-next').click();
    await expect(page.getByTestId('explorer-id-story-pos')).toHaveText(`${i + 1} of ${wrong.toLocaleString('en-US')}`);
    const [, slot, cpu, ts, leaf] = /^id (\d+) · CPU (\d+) · ([\d.]+) s · (\S+)$/.exec(item.trim())!;
    const story = page.getByTestId('explorer-story');
    await expect(story).toHaveAttribute('data-slot', slot);
    await expect(story).toHaveAttribute('data-outcome', 'wrong');
    await expect(story.locator('li[data-moment="written"]')).toContainText(`CPU ${cpu}: <stack_id ${slot}> written for`);
    expect(Number(await story.getAttribute('data-written-ts'))).toBeCloseTo(Number(ts), 3);
    // the reset the trace marks falls between the write and the slot's next stack
    const [w, r, t] = await Promise.all(['data-written-ts', 'data-reset-ts', 'data-taken-ts'].map(async (a) => Number(await story.getAttribute(a))));
    expect(w < r && r < t).toBe(true);
    // the stack it was written for, in full from ledger.json, beside what the explorer reads it as: the
    // simulator's frames (sym+0xoff/0xsize) as the explorer names them (sym+0xoff), the leaf the simulator listed
    const frames = (id: string, col: number) =>
      page
        .getByTestId(id)
        .first()
        .locator(`tbody tr td:nth-child(${col})`)
        .evaluateAll((tds) => tds.map((td) => td.textContent ?? '').filter((x) => x !== ''));
    const explorerWritten = await frames('explorer-story-pair', 1);
    expect(explorerWritten.length).toBeGreaterThan(0);
    expect(explorerWritten[0].split('+')[0]).toBe(leaf);
    expect(await page.getByTestId('explorer-story-pair').getByTestId('stack-pair-differs').count()).toBeGreaterThan(0);
  }
  // Show on the timeline: the window spans the write to the slot's next stack, and the stack it reads as is selected
  const story = page.getByTestId('explorer-story');
  const [w, t] = await Promise.all(['data-written-ts', 'data-taken-ts'].map(async (a) => Number(await story.getAttribute(a))));
  await page.getByTestId('explorer-story-zoom').click();
  await expect(page).toHaveURL(/[?&]window=/);
  const win = new URL(page.url()).searchParams.get('window')!.split(',').map(Number);
  expect(win[0]).toBeLessThan(w);
  expect(win[1]).toBeGreaterThan(t);
  await expect(page).toHaveURL(/[?&]stack=[0-9a-f]{16}/);
  // and the one record the story is about is pinned on its CPU's lane
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-pin-ts', String(w));
  const cpu = /CPU (\d+):/.exec((await story.locator('li[data-moment="written"]').textContent()) ?? '')![1];
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-pin-cpu', cpu);
  if (SHOTS) await page.getByTestId('explorer-id-story').screenshot({ path: `${OUT}/explorer-id-story.png` });
}

test("at 1280x720 a guided run ends with its verdict, its story and the ledger's counts in view", async ({ page }) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1280, height: 720 });
  await runScenario(page, 'v7-wrong-stack');
  const item = page.locator('[data-testid="sim-scenario"][data-scenario="v7-wrong-stack"]');
  await expect(item.getByTestId('sim-verdict')).toBeInViewport();
  await expect(page.getByTestId('sim-story')).toHaveAttribute('data-step', '4', { timeout: 30_000 });
  await expect(page.getByTestId('sim-stories-ledger')).toBeInViewport();
  // the ledger itself, its bar and counts, the ledger panel's numbers
  for (const k of ['correct', 'wrong', 'detected', 'unresolved']) {
    await expect(page.getByTestId(`sim-stories-ledger-${k}`)).toBeInViewport();
    expect(await num(page, `sim-stories-ledger-${k}`)).toBe(await num(page, `sim-ledger-${k}`));
  }
  await expect(page.getByTestId('sim-story').locator('li[data-moment="written"]')).toBeInViewport();
  await expect(page.getByTestId('sim-story').locator('li[data-moment="read"]')).toBeInViewport();
  // one layout for every card (issue 34, 8): the card with the story and those without share the same column, width and inner columns
  const cards = await page.getByTestId('sim-scenario').evaluateAll((els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      const run = e.querySelector('[data-testid="sim-scenario-run"]')!.getBoundingClientRect();
      const watch = e.querySelector('.sim-scenario-watch')!.getBoundingClientRect();
      return [Math.round(r.left), Math.round(r.width), Math.round(run.left), Math.round(watch.left), Math.round(watch.width)].join(',');
    }),
  );
  expect(cards.length).toBeGreaterThan(5);
  expect(new Set(cards).size).toBe(1);
});
