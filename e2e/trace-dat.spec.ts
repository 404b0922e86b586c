import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { expect, test } from './fixtures.ts';
import { cli, cliSummary } from './cli.ts';
import { summaryNumbers, summaryOf, waitLoaded } from './explorer-helpers.ts';
import { needsRealTraces, realTracePath } from './real-traces.ts';

// A trace.dat version 7 (trace-cmd 3.x's default, zstd-compressed sections) loads like version 6:
// trace-cmd converts the real v6 file, the page reads it whole, and its event count is the
// number of event lines `trace-cmd report` prints for the same file. And a simulated run written
// as trace.dat (the stack map's stack_id entries) with its dumps shows the CLI's summary.

const REAL = realTracePath('trappy-trace.dat');
const hasZstd = (() => {
  const r = spawnSync('trace-cmd', ['list', '-c'], { encoding: 'utf8' });
  return r.error === undefined && r.status === 0 && r.stdout.includes('zstd');
})();

test("trace.dat version 7 (zstd): the Files pane says every byte used, the panes count report's events", async ({ page }) => {
  needsRealTraces();
  test.skip(!hasZstd, 'trace-cmd with zstd is not installed (CI installs it)');
  const dir = mkdtempSync(join(tmpdir(), 'e2e-dat-v7-'));
  try {
    const file = join(dir, 'trappy-v7.dat');
    execFileSync('trace-cmd', ['convert', '-i', REAL, '-o', file, '--file-version', '7', '--compression', 'zstd'], { stdio: 'ignore' });
    const report = execFileSync('trace-cmd', ['report', '-i', file], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const events = report.split('\n').filter((l) => /^\s*.+?-\d+\s+\[\d+\]\s+\d+\.\d+:\s+[\w-]+:/.test(l)).length;
    expect(events).toBeGreaterThan(0);

    await page.goto('/');
    await waitLoaded(page);
    await page.getByTestId('file-input').setInputFiles([file]);
    const replace = page.getByTestId('replace-files');
    const row = page.getByTestId('file-row');
    const ready = async () =>
      (await page.getByTestId('load-progress').getAttribute('data-status')) === 'done' &&
      (await row.count()) === 1 &&
      (await row.locator('td').first().textContent()) === basename(file);
    await expect.poll(async () => (await replace.isVisible()) || (await ready()), { timeout: 30_000 }).toBe(true);
    if (await replace.isVisible()) await replace.click();
    await expect.poll(ready, { timeout: 30_000 }).toBe(true);

    await expect(row).toHaveAttribute('data-kind', 'trace_cmd_dat');
    const cells = row.locator('td');
    const n = (await cells.nth(2).textContent())!.match(/^([\d,]+) of ([\d,]+) bytes$/)!;
    expect(n[1]).toBe(n[2]);
    await expect(cells.nth(3)).toHaveText('0');
    await expect(page.getByTestId('summary-events')).toHaveText(String(events));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const mode of ['v7', 'v8'] as const) {
  test(`simulate --format trace-dat (${mode}): the trace.dat and its dumps show the CLI's summary`, async ({ page }) => {
    const dir = mkdtempSync(join(tmpdir(), `e2e-simdat-${mode}-`));
    try {
      // one CPU resetting the map itself: several generations; stacks deeper than 64 frames as full stacks
      cli([
        'simulate',
        '--mode',
        mode,
        ...(mode === 'v8' ? ['--v8-bin'] : []),
        '--bits',
        '10',
        '--stacks',
        '60',
        '--depth',
        '4-70',
        '--cpus',
        '1',
        '--events',
        '1200',
        '--resets',
        '0',
        '--cpu-resets-every',
        '500',
        '--format',
        'trace-dat',
        '--out',
        dir,
      ]);
      const files = readdirSync(dir)
        .sort()
        .map((f) => join(dir, f));
      expect(files.map((f) => basename(f))).toContain('trace.dat');
      const want = summaryOf(cliSummary(files));
      expect(want.cookies).toBeGreaterThan(0);
      expect(want.fullStacks).toBeGreaterThan(0);
      expect(want.resolved).toBeGreaterThan(0);

      await page.goto('/');
      await waitLoaded(page);
      await page.getByTestId('file-input').setInputFiles(files);
      const replace = page.getByTestId('replace-files');
      const ready = async () =>
        (await page.getByTestId('load-progress').getAttribute('data-status')) === 'done' && (await page.getByTestId('file-row').count()) === files.length;
      await expect.poll(async () => (await replace.isVisible()) || (await ready()), { timeout: 30_000 }).toBe(true);
      if (await replace.isVisible()) await replace.click();
      await expect.poll(ready, { timeout: 30_000 }).toBe(true);
      await expect(page.getByTestId('file-row').filter({ hasText: 'trace.dat' })).toHaveAttribute('data-kind', 'trace_cmd_dat');
      await expect.poll(() => summaryNumbers(page), { timeout: 30_000 }).toEqual(want);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
