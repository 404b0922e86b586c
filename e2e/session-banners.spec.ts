import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { expect, test, type Page } from './fixtures.ts';
import { fmtInt } from '../src/ui/common/format.ts';
import { cli as runCli, cliSummary } from './cli.ts';
import { sampleFiles, waitLoaded } from './explorer-helpers.ts';
import { needsRealTraces, realTracePath } from './real-traces.ts';
import { shots as shotsAt } from './shots.ts';

// The banners at the top of the explorer (DESIGN 5.2 `banner`): one per missing or unusable part,
// naming its files, in words; numbers checked against the command line for the same files.

const sampleWithout = (...drop: string[]) => sampleFiles.filter((f) => !drop.includes(basename(f)));

/** Opens files as a new capture (answering "replace" if the page asks) and waits until `ready`. */
async function openFiles(page: Page, paths: string[], ready: () => Promise<boolean>) {
  await page.getByTestId('file-input').setInputFiles(paths);
  const replace = page.getByTestId('replace-files');
  await expect.poll(async () => (await replace.isVisible()) || (await ready()), { timeout: 30_000 }).toBe(true);
  if (await replace.isVisible()) {
    await replace.click();
    await expect.poll(ready, { timeout: 30_000 }).toBe(true);
  }
}

/** ready once the page shows exactly these files as the capture */
const showsFiles = (page: Page, paths: string[]) => async () => {
  if ((await page.getByTestId('load-progress').getAttribute('data-status')) !== 'done') return false;
  const rows = await page.getByTestId('file-row').locator('td:first-child').allTextContents();
  return rows.length === paths.length && paths.every((p) => rows.includes(basename(p)));
};

async function start(page: Page) {
  await page.goto('/');
  await waitLoaded(page);
  // the whole sample lacks nothing
  await expect(page.getByTestId('banner')).toHaveCount(0);
}

/** distinct `<stack trace>` blocks of a trace file, read line by line here rather than by the app's reader */
function distinctFullStacks(path: string): number {
  const seen = new Set<string>();
  let frames: string[] | null = null;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.includes('<stack trace>')) frames = [];
    else if (frames && line.trimStart().startsWith('=>')) frames.push(line.trim());
    else if (frames) {
      seen.add(frames.join('\n'));
      frames = null;
    }
  }
  if (frames) seen.add(frames.join('\n'));
  return seen.size;
}

const banner = (page: Page, id: string) => page.locator(`[data-testid=banner][data-banner=${id}]`);

/** The page at both sizes, light and dark, scrolled to the top where the banners are: nothing in a banner cut (no horizontal overflow at that width). */
const shots = (page: Page, state: string) =>
  shotsAt(page, `banner-${state}`, {
    check: async (w) => {
      for (const b of await page.getByTestId('banner').all()) {
        expect(await b.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
        const box = (await b.boundingBox())!;
        expect(box.x + box.width).toBeLessThanOrEqual(w);
      }
    },
  });

test('no stack records at all (catapult atrace): set options/stacktrace and options/stackmap', async ({ page }) => {
  needsRealTraces();
  await start(page);
  const file = realTracePath('catapult-atrace_data.txt');
  await openFiles(page, [file], showsFiles(page, [file]));
  const b = banner(page, 'no-stacks');
  await expect(b).toHaveCount(1);
  await expect(page.getByTestId('banner')).toHaveCount(1);
  await expect(b).toHaveAttribute('data-files', 'catapult-atrace_data.txt');
  const cli = cliSummary([file]);
  expect(cli.cookies + cli.fullStacks).toBe(0);
  await expect(b).toContainText(`catapult-atrace_data.txt has ${fmtInt(cli.events)} events but no kernel stack records`);
  await expect(b).toContainText('echo 1 > /sys/kernel/tracing/options/stacktrace');
  await expect(b).toContainText('echo 1 > /sys/kernel/tracing/options/stackmap');
  await shots(page, 'no-stacks');
});

test('the sample trace alone: cookies and no dump, which files to copy before each reset', async ({ page }) => {
  await start(page);
  const trace = sampleFiles.filter((f) => basename(f) === 'trace');
  await openFiles(page, trace, showsFiles(page, trace));
  const b = banner(page, 'no-dump');
  await expect(page.getByTestId('banner')).toHaveCount(1);
  await expect(b).toHaveAttribute('data-files', 'trace');
  const cli = cliSummary(trace);
  expect(cli.resolved).toBe(0);
  await expect(page.getByTestId('summary-cookies')).toHaveText(String(cli.cookies));
  await expect(b).toContainText(`trace holds ${fmtInt(cli.cookies)} stack ids`);
  await expect(b).toContainText(`generations ${cli.generations.slice(0, -1).join(', ')} and ${cli.generations.at(-1)}`);
  // v8 as posted exports the text stack_map only (the cover letter: the binary export "will follow as a separate series")
  await expect(b).toContainText('Copy /sys/kernel/tracing/stack_map before each reset');
  await expect(b).toContainText('stack_map_bin is the proposed follow-up series');
  await shots(page, 'no-dump');
});

test('the sample without kallsyms: hex frames, fallbacks that no longer merge, copy /proc/kallsyms as root', async ({ page }) => {
  await start(page);
  const files = sampleWithout('kallsyms');
  await openFiles(page, files, showsFiles(page, files));
  const b = banner(page, 'no-kallsyms');
  await expect(page.getByTestId('banner')).toHaveCount(1);
  const bins = files.map((f) => basename(f)).filter((f) => f.startsWith('stack_map_bin'));
  await expect(b).toHaveAttribute('data-files', bins.join('\n'));
  const cli = cliSummary(files);
  const whole = cliSummary(sampleFiles);
  // the full stacks name their functions and the binary dumps do not: more distinct stacks
  expect(cli.uniqueStacks).toBeGreaterThan(whole.uniqueStacks);
  // with no text dump either, exactly the distinct full stacks of the trace are counted twice (393 -> 401 on the sample)
  expect(cliSummary(sampleWithout('kallsyms', 'stack_map.gen3')).uniqueStacks).toBe(
    whole.uniqueStacks + distinctFullStacks(sampleFiles.find((f) => basename(f) === 'trace')!),
  );
  await expect(page.getByTestId('summary-unique-stacks')).toHaveText(String(cli.uniqueStacks));
  await expect(b).toContainText('hold raw kernel addresses and no kallsyms is loaded');
  await expect(b).toContainText('the stacks of generations 1 and 2 show as hex addresses');
  await expect(b).toContainText(`the trace’s ${fmtInt(cli.fullStacks)} full stacks (fallbacks)`);
  await expect(b).toContainText('sudo cat /proc/kallsyms > kallsyms');
  await shots(page, 'no-kallsyms');
  // dismissed, it stays away for this capture
  await b.getByTestId('banner-dismiss').click();
  await expect(page.getByTestId('banner')).toHaveCount(0);
});

/** A load of only an unreadable file keeps the sample, and the banner says what the file is. */
async function rejectedLoad(page: Page, file: string, id: string) {
  await start(page);
  const sample = cliSummary(sampleFiles);
  const b = banner(page, id);
  await openFiles(page, [file], async () => (await b.count()) === 1 && (await page.getByTestId('load-progress').getAttribute('data-status')) !== 'loading');
  await expect(b).toHaveAttribute('data-files', basename(file));
  await expect(b).toHaveAttribute('data-rejected', 'true');
  await expect(b).toContainText('the capture shown is still the one opened before');
  await expect(page.getByTestId('summary-events')).toHaveText(String(sample.events));
  await expect(page.getByTestId('summary-unique-stacks')).toHaveText(String(sample.uniqueStacks));
  // the rejected file's banner is the only one: the sample lacks nothing
  await expect(page.getByTestId('banner')).toHaveCount(1);
  return b;
}

test('random bytes: say what this app reads, and keep the capture', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'banner-noise-'));
  const file = join(dir, 'noise.bin');
  writeFileSync(file, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)));
  try {
    const b = await rejectedLoad(page, file, 'unrecognized');
    await expect(b).toContainText('noise.bin');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a trace-cmd trace.dat is read (issue 12.2): its events as the command line counts them, and no kernel stacks in it', async ({ page }) => {
  needsRealTraces();
  await start(page);
  const file = realTracePath('trappy-trace.dat');
  await openFiles(page, [file], showsFiles(page, [file]));
  const b = banner(page, 'no-stacks');
  await expect(b).toHaveCount(1);
  await expect(page.getByTestId('banner')).toHaveCount(1);
  const cli = cliSummary([file]);
  expect(cli.events).toBeGreaterThan(0);
  await expect(b).toContainText(`trappy-trace.dat has ${fmtInt(cli.events)} events but no kernel stack records`);
  await shots(page, 'trace-dat');
});

// perf script output is read (issue 12.4): e2e/perf-script.spec.ts loads it and checks it against the command line

test('several problems at once: one banner each, dismissed one by one', async ({ page }) => {
  needsRealTraces();
  await start(page);
  // trappy-trace.dat is read with the rest: its events join the capture, no banner of its own
  const files = [...sampleWithout('kallsyms', 'stack_map_bin.gen2'), realTracePath('trappy-trace.dat')];
  await openFiles(page, files, showsFiles(page, files));
  const all = page.getByTestId('banner');
  await expect(all).toHaveCount(2);
  // read with the rest, they are part of the capture, not a rejected load
  for (const b of await all.all()) await expect(b).toHaveAttribute('data-rejected', 'false');
  expect(await all.evaluateAll((els) => els.map((e) => e.getAttribute('data-banner')))).toEqual(['generation-without-dump', 'no-kallsyms']);
  const cli = cliSummary(files);
  const gen2 = cli.derived.generations.find((g) => g.generation === 2)!;
  await expect(banner(page, 'generation-without-dump')).toContainText(`generation 2 (${fmtInt(gen2.cookies)} ids)`);
  await shots(page, 'several');
  await banner(page, 'no-kallsyms').getByTestId('banner-dismiss').click();
  await expect(all).toHaveCount(1);
  await expect(banner(page, 'no-kallsyms')).toHaveCount(0);
});

// a v7 capture with a binary and a text dump of the same map, from the simulator's command line
let v7dir = '';
let ledger = { correct: 0, wrong: 0, unresolved: 0, detected: 0 };
test.beforeAll(() => {
  v7dir = mkdtempSync(join(tmpdir(), 'banner-v7-'));
  const out = runCli(['simulate', '--mode', 'v7', '--out', v7dir, '--dumps', 'end', '--json']);
  ledger = (JSON.parse(out) as { ledger: typeof ledger }).ledger;
});
test.afterAll(() => rmSync(v7dir, { recursive: true, force: true }));

test('v7 ids against a binary and a text dump, without kallsyms: unverified, not ambiguous', async ({ page }) => {
  await start(page);
  const files = ['trace', 'stack_map_bin.1', 'stack_map.2', 'stack_map_stat'].map((f) => join(v7dir, f));
  for (const f of files) expect(readFileSync(f).length).toBeGreaterThan(0);
  await openFiles(page, files, showsFiles(page, files));
  const cli = cliSummary(files);
  expect(cli.status.ambiguous).toBe(0);
  // each id the dump resolves by its slot is unverified, or contradicted where its event's own
  // call_site= names a function the stack lacks (none of the ledger's right ones is)
  expect(cli.status.unverified + cli.status.contradicted).toBe(ledger.correct + ledger.wrong);
  expect(cli.status.contradicted).toBeGreaterThan(0);
  expect(cli.status.contradicted).toBeLessThanOrEqual(ledger.wrong);
  expect(cli.resolved).toBe(ledger.correct + ledger.wrong - cli.status.contradicted);
  expect(cli.diagnostics).toEqual([]);
  await expect(page.getByTestId('summary-resolved')).toHaveText(String(cli.resolved));
  await expect(page.getByTestId('summary-unresolved')).toHaveText(String(cli.unresolved));
  await expect(page.getByTestId('summary-unique-stacks')).toHaveText(String(cli.uniqueStacks));
  // with kallsyms the same stacks: the binary dump's raw readings are the text dump's stacks
  expect(cliSummary([...files, join(v7dir, 'kallsyms')]).uniqueStacks).toBe(cli.uniqueStacks);
  const warnings = page.getByTestId('warnings');
  await expect(warnings.locator('[data-id=ambiguous-ids]')).toHaveCount(0);
  await expect(warnings.locator('[data-id=v7-reset-risk]')).toContainText(
    `${fmtInt(cli.status.unverified)} v7 stack ids were matched against a dump without a generation`,
  );
  // the text dump names every frame; what the top says is that some ids outnumber their slots'
  // ref_count (v7-evidence.ts): written before one of the run's resets, as many as the CLI counts
  expect(cli.staleIds!.excess).toBeGreaterThan(0);
  // and the trace's reset markers (the export writes one per reset, as capture.sh does) show the ids before the last one
  expect(cli.beforeReset!.ids).toBeGreaterThan(0);
  // both readings of ids written before a reset, said in one banner
  await expect(page.getByTestId('banner')).toHaveCount(1);
  await expect(banner(page, 'before-reset')).toContainText(`${fmtInt(cli.beforeReset!.ids)} of its ${fmtInt(cli.beforeReset!.of)} ids`);
  await expect(banner(page, 'before-reset')).toContainText(`at least ${fmtInt(cli.staleIds!.excess)} of them were written before a reset`);
});

test('1280x720, the v7 capture kept and reopened: the header on one row, each banner one line until opened, the summary and timeline above the fold (issue 34, 7)', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  await start(page);
  const files = ['trace', 'stack_map_bin.1', 'stack_map.2', 'stack_map_stat'].map((f) => join(v7dir, f));
  await openFiles(page, files, showsFiles(page, files));
  // the next visit reopens the kept capture (its Forget button then in the header too)
  await expect(page.getByTestId('keep-state')).toHaveAttribute('data-state', 'kept', { timeout: 30_000 });
  await page.reload();
  await expect.poll(showsFiles(page, files), { timeout: 30_000 }).toBe(true);
  await waitLoaded(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  // before: the header wrapped to two rows (69 px) and three banners took 217 px
  const header = page.locator('header.header');
  const rows = await header.evaluate((h) => {
    const boxes = [...h.children].map((c) => c.getBoundingClientRect()).filter((r) => r.width > 0);
    return {
      height: h.getBoundingClientRect().height,
      centres: boxes.map((r) => Math.round(r.top + r.height / 2)),
      right: Math.max(
        ...[...h.querySelectorAll('*')]
          .map((e) => e.getBoundingClientRect())
          .filter((r) => r.width > 0)
          .map((r) => r.right),
      ),
    };
  });
  expect(rows.right, 'every item of the header within the page').toBeLessThanOrEqual(1280);
  expect(Math.max(...rows.centres) - Math.min(...rows.centres), 'the header’s items on one row').toBeLessThanOrEqual(4);
  expect(rows.height).toBeLessThan(50);
  const banners = page.getByTestId('banner');
  expect(await banners.count()).toBeGreaterThan(0);
  const lineOf = (b: typeof banners) => b.locator('.banner-text').evaluate((p) => parseFloat(getComputedStyle(p).lineHeight));
  for (const b of await banners.all()) {
    const line = await lineOf(b);
    const folded = (await b.locator('.banner-text').boundingBox())!.height;
    expect(folded, 'a banner folded to one line').toBeLessThanOrEqual(line + 1);
    await b.getByTestId('banner-more').click();
    await expect(b.getByTestId('banner-more')).toHaveAttribute('aria-expanded', 'true');
    expect((await b.locator('.banner-text').boundingBox())!.height, 'opened, its whole text').toBeGreaterThan(folded);
    await b.getByTestId('banner-more').click();
    await expect(b.getByTestId('banner-more')).toHaveAttribute('aria-expanded', 'false');
  }
  // what the capture says is on the first screen: the summary and the timeline's top
  for (const id of ['summary', 'timeline']) {
    const box = (await page.getByTestId(id).boundingBox())!;
    expect(box.y, `${id} starts above the fold`).toBeLessThan(720 - 60);
  }
  await shots(page, 'v7-kept');
});
