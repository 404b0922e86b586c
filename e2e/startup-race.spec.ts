import { expect, test, type Page, type Route } from './fixtures.ts';
import { cliSummary } from './cli.ts';
import { summaryNumbers, summaryOf, waitLoaded } from './explorer-helpers.ts';
import { needsRealTraces, realTracePath } from './real-traces.ts';

/**
 * Start-up is a load like any other (issue 18, points 1 and 2): the sample's fetch and the kept
 * capture's reopen run under their own request id from the first byte asked, so files picked
 * meanwhile supersede them and Cancel stops them. The test holds the sample's (or the ingest
 * worker's) requests with a route until it lets them go, so each pick lands inside the start-up
 * load, whatever the machine's load. Expected numbers come from the command line over the
 * same files.
 */

const TPOINT = realTracePath('perf-tools-tpoint_example.txt');
const KPROBE = realTracePath('perf-tools-kprobe_example.txt');
// every test here picks one of them
needsRealTraces();
const base = (p: string) => p.slice(p.lastIndexOf('/') + 1);

/** A gate on requests matching `url`: each waits until `open()`; `seen` settles on the first one held. */
async function holdRequests(page: Page, url: string | RegExp) {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let seen!: () => void;
  const first = new Promise<void>((r) => (seen = r));
  let held = 0;
  const settled: Promise<void>[] = [];
  await page.route(url, (route: Route) => {
    held++;
    seen();
    // an aborted request (the load that asked for it was superseded) cannot be fulfilled: that is the point
    settled.push(gate.then(() => route.continue().catch(() => {})));
  });
  return {
    first,
    open: () => open(),
    /** every held request answered or found aborted */
    done: async () => {
      open();
      await Promise.all(settled);
    },
    held: () => held,
  };
}

/** Waits until the page shows exactly the user's `file`, read whole, with the command line's numbers. */
async function expectUsersFile(page: Page, file: string) {
  const progress = page.getByTestId('load-progress');
  await expect(progress).toHaveAttribute('data-status', 'done');
  await expect(progress).toContainText(`1 file: ${base(file)}`);
  await waitLoaded(page);
  expect(await summaryNumbers(page)).toEqual(summaryOf(cliSummary([file])));
}

test.describe.configure({ timeout: 180_000 });

test('files picked while the sample is still being fetched replace it: 10 of 10, whichever request is held', async ({ browser }) => {
  // which of the sample's requests the route holds, and whether it is let go before the user's file is read or after
  const holds = ['index.json', 'trace', 'kallsyms', 'stack_map_bin.gen2', 'stack_map_stat'];
  for (let i = 0; i < 10; i++) {
    const held = holds[i % holds.length];
    const early = i < 5;
    // a fresh origin store each time: the pick before is kept, and would be reopened instead of the sample
    const context = await browser.newContext();
    const page = await context.newPage();
    const gate = await holdRequests(page, new RegExp(`/samples/${held.replace('.', '\\.')}$`));
    await page.goto('/');
    await gate.first;
    await expect(page.getByTestId('load-progress')).toHaveAttribute('data-status', 'loading');
    const file = i % 2 ? TPOINT : KPROBE;
    await page.getByTestId('file-input').setInputFiles(file);
    if (early) gate.open();
    // the sample's load was dropped: its fetch was aborted (or its answer came and was thrown away)
    await expect(page.getByTestId('load-progress')).toHaveAttribute('data-dropped', '1');
    await expectUsersFile(page, file);
    await gate.done();
    // every request of the sample has been answered or aborted: nothing of it is left to arrive
    await expectUsersFile(page, file);
    await expect(page.getByTestId('load-progress')).toHaveAttribute('data-dropped', '1');
    await context.close();
  }
});

test('Cancel while the sample is being fetched stops it: the sample never opens', async ({ page }) => {
  const gate = await holdRequests(page, /\/samples\/trace$/);
  await page.goto('/');
  await gate.first;
  const progress = page.getByTestId('load-progress');
  await expect(progress).toHaveAttribute('data-status', 'loading');
  await page.getByTestId('load-cancel').click();
  await expect(progress).toHaveAttribute('data-status', 'cancelled');
  await gate.done();
  await expect(progress).toHaveAttribute('data-dropped', '1');
  await expect(progress).toHaveAttribute('data-status', 'cancelled');
  await expect(progress).toContainText('Load cancelled');
  await expect(page.getByTestId('summary-events')).toHaveCount(0);
  // and the page still opens what is dropped on it afterwards
  await page.getByTestId('file-input').setInputFiles(TPOINT);
  await expectUsersFile(page, TPOINT);
});

/** Over the sample, opens `file` and waits until the page has kept it: the kept capture a test starts from. */
async function keepOne(page: Page, file: string) {
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles(file);
  await expectUsersFile(page, file);
  await expect(page.getByTestId('keep-state')).toHaveAttribute('data-state', 'kept');
}

/** The kept files' bytes replaced by bytes of the same length that no reader takes (the manifest still matches). */
function spoilKept(page: Page): Promise<void> {
  return page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('stackmap-capture');
    for await (const name of dir.keys()) {
      if (name === 'manifest.json') continue;
      const f = await (await dir.getFileHandle(name)).getFile();
      const w = await (await dir.getFileHandle(name)).createWritable();
      await w.write(new Uint8Array(f.size).fill(0xa5));
      await w.close();
    }
  });
}

/** The origin's kept capture: the names its manifest lists (empty when nothing is kept). */
function keptNames(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    try {
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('stackmap-capture');
      const text = await (await (await dir.getFileHandle('manifest.json')).getFile()).text();
      return (JSON.parse(text) as { files: { name: string }[] }).files.map((f) => f.name);
    } catch {
      return [];
    }
  });
}

test('files picked while a kept capture is reopening replace it, with no failure said and nothing forgotten: 10 of 10', async ({ page }) => {
  await keepOne(page, KPROBE);
  let kept = KPROBE;
  for (let i = 0; i < 10; i++) {
    // the ingest worker's script is held: the reopen cannot finish before the pick, however fast the machine
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    const gate = await holdRequests(page, /\/assets\/ingest\.worker-[^/]*\.js$/);
    await page.goto('/');
    const progress = page.getByTestId('load-progress');
    await expect(progress).toHaveAttribute('data-status', 'loading');
    const pick = kept === KPROBE ? TPOINT : KPROBE;
    if (i % 2) await gate.first;
    await page.getByTestId('file-input').setInputFiles(pick);
    gate.open();
    await expect(progress).toHaveAttribute('data-dropped', '1');
    await expectUsersFile(page, pick);
    await gate.done();
    await expect(page.getByTestId('load-notice')).toHaveCount(0);
    // the pick is the capture kept now (the store was written, not emptied)
    await expect(page.getByTestId('keep-state')).toHaveAttribute('data-state', 'kept');
    await expect.poll(() => keptNames(page)).toEqual([base(pick)]);
    kept = pick;
  }
  // and a reload reopens the last pick, untouched
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await page.reload();
  await expectUsersFile(page, kept);
});

test('Cancel while a kept capture is reopening leaves it kept: the next visit reopens it', async ({ page }) => {
  await keepOne(page, TPOINT);
  const gate = await holdRequests(page, /\/assets\/ingest\.worker-[^/]*\.js$/);
  await page.goto('/');
  const progress = page.getByTestId('load-progress');
  await expect(progress).toHaveAttribute('data-status', 'loading');
  await page.getByTestId('load-cancel').click();
  await expect(progress).toHaveAttribute('data-status', 'cancelled');
  await gate.done();
  await expect(progress).toHaveAttribute('data-dropped', '1');
  await expect(page.getByTestId('load-notice')).toHaveCount(0);
  expect(await keptNames(page)).toEqual([base(TPOINT)]);
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await page.reload();
  await expectUsersFile(page, TPOINT);
});

test('a kept capture that cannot be read is kept until the user says: Keep it, then Forget it', async ({ page }) => {
  await keepOne(page, TPOINT);
  await spoilKept(page);
  await page.reload();
  const notice = page.getByTestId('load-notice');
  await expect(notice).toHaveAttribute('data-choice', 'true');
  await expect(notice).toContainText('could not be opened (nothing in');
  await expect(notice).toContainText('the sample opened instead');
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
  await waitLoaded(page);
  // the sample's load did not forget it
  expect(await keptNames(page)).toEqual([base(TPOINT)]);
  await page.getByTestId('kept-keep').click();
  await expect(notice).toHaveCount(0);
  expect(await keptNames(page)).toEqual([base(TPOINT)]);
  // asked again on the next visit; this time forgotten, on the user's word
  await page.reload();
  await expect(notice).toHaveAttribute('data-choice', 'true');
  await page.getByTestId('kept-forget').click();
  await expect(notice).toHaveCount(0);
  await expect.poll(() => keptNames(page)).toEqual([]);
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
});

test('files picked while the notice about an unreadable kept capture shows: the notice goes with what it asked about, the pick is kept', async ({ page }) => {
  await keepOne(page, TPOINT);
  await spoilKept(page);
  await page.reload();
  const notice = page.getByTestId('load-notice');
  await expect(notice).toHaveAttribute('data-choice', 'true');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles(KPROBE);
  await expectUsersFile(page, KPROBE);
  // the store now holds the pick: the question about what it held before is gone with it
  await expect(page.getByTestId('keep-state')).toHaveAttribute('data-state', 'kept');
  await expect(notice).toHaveCount(0);
  await expect.poll(() => keptNames(page)).toEqual([base(KPROBE)]);
  await page.reload();
  await expectUsersFile(page, KPROBE);
});
