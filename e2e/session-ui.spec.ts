import { readFileSync } from 'node:fs';
import { expect, test, type Page } from './fixtures.ts';
import { cliSummary } from './cli.ts';
import { nodeExplorer, sampleFiles, sel, urlParam, waitLoaded } from './explorer-helpers.ts';
import { OUT } from './shots.ts';

/*
 * Issue 9, points 8 to 10, on the embedded sample: search as shown, the context menu, zoom to fit
 * and undo, sortable columns and arrow keys, the help, one number format, the sandwich prompt,
 * the generation diff, the layout at 1280x720, export names and folded frames. Expected numbers
 * come from the command line or from a count over the stacks' frames made here, never from the
 * code under test.
 */

const SIZES = [
  [1600, 1000],
  [1280, 720],
] as const;

const explorer = nodeExplorer(sampleFiles);
/** every stack of the sample with its count and frames (leaf first), unfiltered, by occurrences */
const allStacks = explorer.then((ex) =>
  ex.topStacks({ selection: sel(), filter: '', limit: 1e9 }).rows.map((r) => ({ ...r, frames: ex.stackFrames(r.stack) })),
);

async function open(page: Page, query = '') {
  await page.goto('/' + query);
  await waitLoaded(page);
}

/** Screenshots of the state on screen at both sizes, light and dark, scrolled to `region`. */
async function shots(page: Page, name: string, region: string, prepare?: () => Promise<void>) {
  for (const [w, h] of SIZES) {
    for (const scheme of ['light', 'dark'] as const) {
      await page.setViewportSize({ width: w, height: h });
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
      await page.getByRole('region', { name: region }).evaluate((el) => el.scrollIntoView({ block: 'start' }));
      if (prepare) await prepare();
      // the panes redrawn at this size and in this scheme, then one frame painted
      await expect(page.getByTestId('timeline')).toHaveAttribute('data-ready', 'true');
      await expect(page.getByTestId('flamegraph')).toHaveAttribute('data-ready', 'true');
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await page.screenshot({ path: `${OUT}/ui-${name}-${w}x${h}-${scheme}.png` });
    }
  }
  await page.setViewportSize({ width: 1600, height: 1000 });
}

test('search `__kmalloc+0x294` finds it in top stacks and the flame graph, counted as the CLI and the frames say', async ({ page }) => {
  const want = (await allStacks).filter((r) => r.frames.some((f) => f.toLowerCase().includes('__kmalloc+0x294')));
  const wantOcc = want.reduce((n, r) => n + r.count, 0);
  expect(want.length).toBeGreaterThan(3);
  // the command line's top stacks that hold the frame, with its counts
  const cli = cliSummary(sampleFiles).top.filter((t) => t.frames.includes('__kmalloc+0x294'));
  expect(cli.length).toBeGreaterThan(0);

  await open(page);
  await page.getByTestId('stack-filter').fill('__kmalloc+0x294');
  const count = page.getByTestId('top-stacks-count');
  await expect(count).toHaveAttribute('data-matching', String(want.length));
  await expect(count).toHaveAttribute('data-matching-occurrences', String(wantOcc));
  await expect(count).toContainText(`${want.length} matching stacks · ${wantOcc.toLocaleString('en-US')} matching occurrences`);
  await expect(page.getByTestId('top-stack-row')).toHaveCount(want.length);
  const shown = await page.getByTestId('top-stack-row').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-count'))));
  for (const t of cli) expect(shown).toContain(t.count);
  expect(shown).toEqual(want.map((r) => r.count));

  // the flame graph: the same stacks, weighted by occurrences
  await page.getByTestId('flame-search').fill('__kmalloc+0x294');
  const match = page.getByTestId('flame-match');
  await expect(match).toHaveAttribute('data-stacks', String(want.length));
  await expect(match).toHaveAttribute('data-value', String(wantOcc));
  await expect(match).toContainText(`${want.length} stacks · ${wantOcc.toLocaleString('en-US')} occurrences match`);
  // a prefix of the offset matches as shown too: `kmalloc+0x2` is in `__kmalloc+0x294` and its siblings
  await page.getByTestId('stack-filter').fill('kmalloc+0x2');
  const prefix = (await allStacks).filter((r) => r.frames.some((f) => f.toLowerCase().includes('kmalloc+0x2')));
  await expect(count).toHaveAttribute('data-matching', String(prefix.length));
  await page.getByTestId('stack-filter').fill('__kmalloc+0x294');
  await expect(count).toHaveAttribute('data-matching', String(want.length));
  await shots(page, 'search', 'top stacks');
});

test('an invalid regex shows its error under the field; a nested repeat answers as its plain equivalent and the page goes on', async ({ page }) => {
  await open(page);
  await page.getByTestId('stack-filter').fill('/([/');
  await expect(page.getByTestId('stack-filter-error')).toContainText('Invalid regular expression');
  await expect(page.getByTestId('stack-filter')).toHaveAttribute('aria-invalid', 'true');
  await page.getByTestId('flame-search').fill('/x{2,1}/');
  await expect(page.getByTestId('flame-search-error')).toContainText('Invalid regular expression');
  await shots(page, 'regex-error', 'top stacks');
  const table = page.getByTestId('top-stacks');
  const answered = () => expect(table).toHaveAttribute('aria-busy', 'false');

  // from the URL, before the first answer: a pattern a backtracking engine takes exponential time
  // on (no frame ends in '!') is answered, empty, with no error: search runs on RE2
  await page.goto('/?find=' + encodeURIComponent('/^(\\w+)*!$/'));
  await expect(page.getByTestId('stack-filter')).toHaveValue('/^(\\w+)*!$/');
  await waitLoaded(page);
  await answered();
  await expect(page.getByTestId('stack-filter-error')).toHaveCount(0);
  await expect(page.getByTestId('top-stack-row')).toHaveCount(0);
  // a nested repeat that can be empty finds what the plain text finds (the second method)
  await page.getByTestId('stack-filter').fill('kmalloc');
  await answered();
  await expect(page.getByTestId('top-stack-row').first()).toBeVisible();
  const plain = await table.getAttribute('data-rows');
  await page.getByTestId('stack-filter').fill('/(\\w+)*kmalloc/');
  await answered();
  await expect(page.getByTestId('stack-filter-error')).toHaveCount(0);
  await expect(table).toHaveAttribute('data-rows', plain!);
  // what RE2 cannot run is said, naming the pattern
  await page.getByTestId('stack-filter').fill('/(a)\\1/');
  await expect(page.getByTestId('stack-filter-error')).toContainText('/(a)\\1/');
  await page.getByTestId('generation-select').selectOption('2');
  await expect(page.getByTestId('summary')).toHaveAttribute('data-pending', 'false');
});

test('context menu: copy frame and copy stack put the text on the clipboard; right-click, long-press and the keyboard open it', async ({
  page,
  context,
  baseURL,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await open(page);
  const ex = await explorer;
  const row = page.getByTestId('top-stack-row').nth(1);
  const stack = Number(await row.getAttribute('data-stack'));
  const frames = ex.stackFrames(stack);
  await row.click();
  const frame = page.getByTestId('stack-frame').nth(2).getByRole('button');
  await expect(frame).toHaveText(frames[2]);
  await frame.click({ button: 'right' });
  const menu = page.getByTestId('context-menu');
  await expect(menu).toBeVisible();
  await expect(menu.getByRole('menuitem')).toHaveCount(6);
  // a size change closes the menu (a menu does not outlive a resize), in the frame after it:
  // let that frame run before asking whether the menu is still open
  const reopen = async () => {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    if (!(await menu.isVisible())) await frame.click({ button: 'right' });
    await expect(menu).toBeVisible();
  };
  await shots(page, 'context-menu', 'top stacks', reopen);
  await reopen();
  await menu.getByTestId('menu-copy-frame').click();
  await expect(menu).toHaveCount(0);
  await expect(page.getByTestId('toast')).toHaveText('Copied frame');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(frames[2]);

  // long-press on a row: its menu, and the row is not toggled by the click that ends the press
  const box = (await row.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  // held until the long-press opens the menu
  await expect(menu).toBeVisible();
  await page.mouse.up();
  await expect(row).toHaveAttribute('aria-selected', 'true');
  await expect(menu.getByTestId('menu-copy-stack')).toBeEnabled();
  await menu.getByTestId('menu-copy-stack').click();
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(frames.join('\n'));

  // the keyboard: the table has the focus after the click; Shift+F10 opens the selected row's menu, Esc closes it (and undoes nothing)
  await page.getByTestId('top-stacks').focus();
  await page.keyboard.press('Shift+F10');
  await expect(menu).toBeVisible();
  await expect(menu.getByTestId('menu-copy-frame')).toBeFocused();
  await expect(menu.getByTestId('menu-copy-stack')).toBeEnabled();
  await page.keyboard.press('ArrowDown');
  await expect(menu.getByTestId('menu-copy-stack')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(menu).toHaveCount(0);
  await expect(row).toHaveAttribute('aria-selected', 'true');

  // a flame graph node: copy its function
  const canvas = page.getByTestId('flame-main').locator('canvas');
  await canvas.click({ button: 'right', position: { x: 30, y: 18 + 9 } });
  await expect(menu).toBeVisible();
  const name = (await menu.locator('.context-title').textContent())!;
  expect(name.length).toBeGreaterThan(2);
  // the sample's ftrace stacks are drawn by call site: the node is a frame, its function that without the offset
  const fn = name.replace(/\+0x[0-9a-f]+$/, '');
  await menu.getByTestId('menu-copy-function').click();
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(fn);
  // its frames are the sym+0xoff frames of the stacks with that function at that place
  await canvas.click({ button: 'right', position: { x: 30, y: 18 + 9 } });
  await menu.getByTestId('menu-copy-frame').click();
  const copied = (await page.evaluate(() => navigator.clipboard.readText())).split('\n');
  for (const f of copied) expect(f.replace(/\+0x[0-9a-f]+$/, '')).toBe(fn);

  // focus on this function: the sandwich on it
  await row.click({ button: 'right' });
  await menu.getByTestId('menu-focus-function').click();
  await expect(page.getByTestId('flamegraph')).toHaveAttribute('data-mode', 'sandwich');
  await expect(page.getByTestId('sandwich-focus')).toHaveValue(frames[0].replace(/\+0x[0-9a-f]+$/, ''));

  // filter to this stack: one row, and the flame search counts one stack
  await row.click({ button: 'right' });
  await expect(menu.getByTestId('menu-filter-stack')).toBeEnabled();
  await menu.getByTestId('menu-filter-stack').click();
  await expect(page.getByTestId('stack-filter')).toHaveValue(/^stack:[0-9a-f]{16}$/);
  await expect(page.getByTestId('top-stack-row')).toHaveCount(1);
  await expect(page.getByTestId('top-stack-row')).toHaveAttribute('data-stack', String(stack));
  await expect(page.getByTestId('flame-match')).toHaveAttribute('data-stacks', '1');

  // show in timeline: a stack seen once; the window closes in on its one occurrence
  const once = (await allStacks).find((r) => r.count === 1)!;
  const [t] = ex.stackOccurrences(once.stack, sel());
  await page.getByTestId('stack-filter').fill(`stack:${once.stackHash}`);
  await expect(page.getByTestId('top-stack-row')).toHaveAttribute('data-stack', String(once.stack));
  await page.getByTestId('top-stack-row').click({ button: 'right' });
  await menu.getByTestId('menu-show-in-timeline').click();
  await expect(page.getByTestId('toast')).toHaveText('1 occurrence on the timeline');
  await expect.poll(() => urlParam(page, 'window')).not.toBeNull();
  const w = urlParam(page, 'window')!.split(',').map(Number);
  const o = ex.overview();
  expect(w[0]).toBeLessThanOrEqual(t);
  expect(w[1]).toBeGreaterThanOrEqual(t);
  expect(w[1] - w[0]).toBeLessThan((o.t1 - o.t0) / 100);
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-highlight-events', '1');
});

test('columns sort on a click (aria-sort), arrow keys move the selected row, f zooms to fit and Esc undoes', async ({ page }) => {
  await open(page);
  const rows = await allStacks;
  const shown = () => page.getByTestId('top-stack-row').evaluateAll((r) => r.map((x) => Number(x.getAttribute('data-stack'))));
  const depthHeader = page.locator('th', { has: page.getByTestId('sort-depth') });
  await expect(depthHeader).toHaveAttribute('aria-sort', 'none');
  await page.getByTestId('sort-depth').click();
  await expect(depthHeader).toHaveAttribute('aria-sort', 'descending');
  // every stack sorted by depth here (ties: busiest first, then first seen), the first 200 shown
  const byDepth = [...rows].map((r, i) => ({ ...r, i })).sort((a, b) => b.depth - a.depth || b.count - a.count || a.i - b.i);
  await expect.poll(shown).toEqual(byDepth.slice(0, 200).map((r) => r.stack));
  await page.getByTestId('sort-depth').click();
  await expect(depthHeader).toHaveAttribute('aria-sort', 'ascending');
  const asc = [...rows].map((r, i) => ({ ...r, i })).sort((a, b) => a.depth - b.depth || b.count - a.count || a.i - b.i);
  await expect.poll(shown).toEqual(asc.slice(0, 200).map((r) => r.stack));
  await page.getByTestId('sort-leaf').click();
  await expect(page.locator('th', { has: page.getByTestId('sort-leaf') })).toHaveAttribute('aria-sort', 'ascending');
  const byLeaf = [...rows].map((r, i) => ({ ...r, i })).sort((a, b) => (a.leaf < b.leaf ? -1 : a.leaf > b.leaf ? 1 : b.count - a.count || a.i - b.i));
  await expect.poll(shown).toEqual(byLeaf.slice(0, 200).map((r) => r.stack));
  const leaves = await page.getByTestId('top-stack-row').evaluateAll((r) => r.map((x) => x.children[4].textContent ?? ''));
  expect(leaves).toEqual(byLeaf.slice(0, 200).map((r) => r.leaf));
  await page.getByTestId('sort-count').click();
  await expect.poll(shown).toEqual(rows.slice(0, 200).map((r) => r.stack));

  // generations: by records, descending
  const ex = await explorer;
  const gens = ex.overview().generations;
  await page.getByTestId('gen-sort-records').click();
  await expect(page.locator('th', { has: page.getByTestId('gen-sort-records') })).toHaveAttribute('aria-sort', 'descending');
  const genOrder = [...gens]
    .map((g, i) => ({ g, i }))
    .sort((a, b) => b.g.records - a.g.records || a.i - b.i)
    .map((x) => String(x.g.generation));
  await expect.poll(() => page.getByTestId('generation-row').evaluateAll((r) => r.map((x) => x.getAttribute('data-generation')))).toEqual(genOrder);

  // arrows: the row below, the row above; the URL follows
  const first = page.getByTestId('top-stack-row').nth(0);
  await first.click();
  await expect(first).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('top-stack-row').nth(1)).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('top-stack-row').nth(2)).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowUp');
  const second = page.getByTestId('top-stack-row').nth(1);
  await expect(second).toHaveAttribute('aria-selected', 'true');
  const stack = Number(await second.getAttribute('data-stack'));
  await expect(page.getByTestId('stack-frames')).toHaveAttribute('data-stack', String(stack));
  // generations table: arrows choose the generation
  await page.getByTestId('generations-table').focus();
  await page.keyboard.press('Home');
  await expect(page.getByTestId('generation-select')).toHaveValue(genOrder[0]);
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('generation-select')).toHaveValue(genOrder[1]);

  // f: the timeline fits the selected stack's occurrences in the generation chosen
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  const times = ex.stackOccurrences(stack, sel({ generation: Number(genOrder[1]) }));
  await page.keyboard.press('f');
  await expect.poll(() => urlParam(page, 'window')).not.toBeNull();
  const w = urlParam(page, 'window')!.split(',').map(Number);
  expect(w[0]).toBeLessThanOrEqual(times[0]);
  expect(w[1]).toBeGreaterThanOrEqual(times[times.length - 1]);
  // Esc, step by step: the zoom, then the generation, then the stack
  await page.keyboard.press('Escape');
  await expect.poll(() => urlParam(page, 'window')).toBeNull();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('generation-select')).toHaveValue(genOrder[0]);
  await page.keyboard.press('Escape');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('generation-select')).toHaveValue('all');
  // the stack selected by the arrows, then the one before it, then none
  for (let i = 0; i < 4; i++) await page.keyboard.press('Escape');
  await expect(page.getByTestId('stack-frames')).toHaveCount(0);
  // double-click a generation row: its span
  await page.getByTestId('generation-row').first().dblclick();
  await expect.poll(() => urlParam(page, 'window')).not.toBeNull();
});

test('the help lists every key of every pane; numbers are grouped everywhere; the favicon is served', async ({ page, request }) => {
  await open(page, '?diff=2,3');
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('Shift+Slash');
  const help = page.getByTestId('keyboard-help');
  await expect(help).toBeVisible();
  await expect(help.getByTestId('help-pane')).toHaveCount(6);
  for (const pane of ['Anywhere', 'Timeline', 'Top stacks', 'Flame graph', 'Generations', 'Menus'])
    await expect(help.locator(`[data-pane='${pane}'] dt`).first()).toBeVisible();
  const kbds = await help.locator('kbd').allTextContents();
  for (const k of [
    'W / S',
    'A / D',
    '/',
    'f',
    'Esc',
    '?',
    'wheel',
    '↑ / ↓, Home / End',
    'double-click a row, Enter',
    'click a column header',
    'ContextMenu key, Shift+F10',
    'right-click, long-press',
  ])
    expect(kbds).toContain(k);
  await shots(page, 'help', 'top stacks', async () => {
    if (!(await help.isVisible())) {
      await page.locator('body').click({ position: { x: 5, y: 5 } });
      await page.keyboard.press('Shift+Slash');
    }
  });
  await page.keyboard.press('Escape');

  // no integer of four or more digits without its separators in the panes' text
  await page.getByTestId('top-stack-row').first().click();
  await expect(page.getByTestId('generation-diff').getByTestId('diff-col')).toHaveCount(3);
  for (const region of ['top stacks', 'flame graph', 'generations', 'timeline']) {
    const text = await page.getByRole('region', { name: region }).innerText();
    expect(text.match(/(?<![\w.,:+-])\d{4,}(?![\w.,:])/g), region).toBeNull();
  }
  // the summary cells show the plain integer as their text, the separators drawn by CSS
  const events = page.getByTestId('summary-events');
  await expect(events).toHaveText(String((await explorer).selectionSummary(sel()).events));
  expect(await events.locator('.digit-group').count()).toBeGreaterThan(0);
  expect(await events.evaluate((el) => getComputedStyle(el.querySelector('.digit-group')!, '::before').content)).toBe('","');

  await expect(page.locator('link[rel=icon]')).toHaveAttribute('href', /favicon\.svg$/);
  const icon = await request.get('/favicon.svg');
  expect(icon.status()).toBe(200);
  expect(await icon.text()).toContain('<svg');
});

test('sandwich without a function asks for one and offers the busiest', async ({ page }) => {
  await open(page);
  // the leaves the most stacks end in, counted over the frames here (the sample's ftrace stacks are drawn by call site)
  const self = new Map<string, number>();
  for (const r of await allStacks) {
    const fn = r.frames[0];
    self.set(fn, (self.get(fn) ?? 0) + r.count);
  }
  const busiest = [...self].sort((a, b) => b[1] - a[1])[0];
  await page.getByRole('button', { name: 'Sandwich' }).click();
  const prompt = page.getByTestId('sandwich-prompt');
  await expect(prompt).toContainText('Pick a function for the sandwich');
  await expect(page.getByTestId('flamegraph')).not.toContainText('No resolved stacks');
  const first = page.getByTestId('sandwich-suggestion').first();
  await expect(first).toHaveAttribute('data-name', busiest[0]);
  await expect(prompt.locator('li').first()).toContainText(`self ${busiest[1].toLocaleString('en-US')}`);
  await shots(page, 'sandwich-prompt', 'flame graph');
  // a name that is not there: those that contain it
  await page.getByTestId('sandwich-focus').fill('kmall');
  await expect(prompt).toContainText('No function named kmall');
  const names = () => page.getByTestId('sandwich-suggestion').evaluateAll((b) => b.map((x) => x.getAttribute('data-name') ?? ''));
  await expect.poll(async () => (await names()).every((n) => n.toLowerCase().includes('kmall'))).toBe(true);
  expect((await names()).length).toBeGreaterThan(1);
  await page.getByTestId('sandwich-focus').fill('');
  await expect(first).toHaveAttribute('data-name', busiest[0]);
  await first.click();
  await expect(page.getByTestId('flamegraph').locator('canvas')).toHaveCount(2);
  await expect(page.getByTestId('sandwich-focus')).toHaveValue(busiest[0]);
});

test('the generation diff tells rows apart by their first differing frame and expands; 1280x720 keeps every column in view', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  await open(page, '?diff=2,3');
  const ex = await explorer;
  const diff = ex.generationDiff(2, 3);
  const col = page.getByTestId('diff-col').first();
  await expect(col).toHaveAttribute('data-rows', String(diff.onlyA.length));
  await expect(col.getByTestId('diff-row')).toHaveCount(8);
  await col.getByTestId('diff-more').click();
  await expect(col.getByTestId('diff-row')).toHaveCount(diff.onlyA.length);
  await expect(col.getByTestId('diff-more')).toHaveText('show fewer');
  // rows that share a leaf carry a second line, and it is a frame of their stack where the others differ
  const labels = await col.getByTestId('diff-row').evaluateAll((rows) =>
    rows.map((r) => ({
      stack: Number(r.getAttribute('data-stack')),
      leaf: r.querySelector('.diff-label .mono')!.textContent!,
      apart: r.querySelector('[data-testid=diff-apart]')?.textContent ?? null,
    })),
  );
  const leafCount = new Map<string, number>();
  const every = [...diff.onlyA, ...diff.onlyB, ...diff.changed];
  for (const r of every) leafCount.set(r.leaf, (leafCount.get(r.leaf) ?? 0) + 1);
  const shared = labels.filter((l) => (leafCount.get(l.leaf) ?? 0) > 1);
  expect(shared.length).toBeGreaterThan(3);
  // checked in plain code, one expect at the end (thousands of expects flood the runner)
  const wrong: string[] = [];
  let checked = 0;
  for (const l of shared) {
    const frames = ex.stackFrames(l.stack);
    const m = l.apart === null ? null : /(?:called from|(\d+) frames up:) (\S+)$/.exec(l.apart);
    if (l.apart === null) wrong.push(`${l.stack}: no second line`);
    if (!m) continue; // a stack that is the leaf end of a deeper one says so instead
    const at = m[1] ? Number(m[1]) : 1;
    if (frames[at] !== m[2]) wrong.push(`${l.stack}: frame ${at} is ${frames[at]}, not ${m[2]}`);
    // no other row of the diff has the same frames from the leaf through that one
    const prefix = frames.slice(0, at + 1).join('\n');
    for (const o of every)
      if (
        o.stack !== l.stack &&
        ex
          .stackFrames(o.stack)
          .slice(0, at + 1)
          .join('\n') === prefix
      )
        wrong.push(`${l.stack}: ${o.stack} shares it`);
    checked++;
  }
  expect(wrong).toEqual([]);
  expect(checked).toBeGreaterThan(3);
  await shots(page, 'diff-expanded', 'generations', async () => {
    if ((await col.getByTestId('diff-more').textContent()) !== 'show fewer') await col.getByTestId('diff-more').click();
  });

  // at 1280x720: no sideways scroll in top stacks and generations; the counts of the diff are inside their column
  await page.setViewportSize({ width: 1280, height: 720 });
  for (const id of ['top-stacks', 'generations-table']) {
    const fits = await page.getByTestId(id).evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
    expect(fits, id).toBe(true);
  }
  for (const [table, header] of [
    ['top-stacks', 'sort-saved'],
    ['generations-table', 'gen-sort-coverage'],
  ]) {
    const t = (await page.getByTestId(table).boundingBox())!;
    const h = (await page.getByTestId(header).boundingBox())!;
    expect(h.x + h.width, header).toBeLessThanOrEqual(t.x + t.width + 0.5);
  }
  const cut = await page.getByTestId('diff-col').evaluateAll((cols) =>
    cols.flatMap((c) => {
      const r = c.getBoundingClientRect();
      return [...c.querySelectorAll('.diff-count')]
        .filter((n) => n.getBoundingClientRect().right > r.right + 0.5 || (n as HTMLElement).scrollWidth > (n as HTMLElement).clientWidth + 1)
        .map((n) => n.textContent);
    }),
  );
  expect(cut).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
});

test('exports are named by their selection; the folded export keeps sym+0xoff frames, counted as the stacks say', async ({ page }) => {
  await open(page);
  await page.getByTestId('generation-select').selectOption('2');
  const download = async (kind: string) => {
    const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId(`export-${kind}`).click()]);
    return { name: d.suggestedFilename(), text: readFileSync((await d.path())!, 'utf8') };
  };
  await expect(page.getByTestId('summary')).toHaveAttribute('data-pending', 'false');
  const folded = await download('folded');
  expect(folded.name).toBe('stackmap-gen2.folded');
  // the same lines, made here from every stack of the selection and its frames
  const ex = await explorer;
  const selection = sel({ generation: 2 });
  const want = ex
    .topStacks({ selection, filter: '', limit: 1e9 })
    .rows.map((r) => `${[...ex.stackFrames(r.stack)].reverse().join(';')} ${r.count}`)
    .sort();
  const lines = folded.text.trim().split('\n');
  expect([...lines].sort()).toEqual(want);
  for (const l of lines) for (const f of l.slice(0, l.lastIndexOf(' ')).split(';')) expect(f).toMatch(/^[\w.]+\+0x[0-9a-f]+$|^0x[0-9a-f]+$|^\[.+\]$/);
  // a brushed range is in the name
  await page.goto('/?gen=2&range=5123.3,5123.5&cpus=0,1');
  await waitLoaded(page);
  expect((await download('speedscope')).name).toBe('stackmap-gen2-5123.3s-5123.5s-cpu0,1.speedscope.json');
});
