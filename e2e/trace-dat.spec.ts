import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { expect, test } from './fixtures.ts';
import { waitLoaded } from './explorer-helpers.ts';
import { needsRealTraces, realTracePath } from './real-traces.ts';

// A trace.dat version 7 (trace-cmd 3.x's default, zstd-compressed sections) loads like version 6:
// trace-cmd converts the real v6 file, the page reads it whole, and its event count is the
// number of event lines `trace-cmd report` prints for the same file.

const REAL = realTracePath('trappy-trace.dat');
const hasZstd = (() => {
  const r = spawnSync('trace-cmd', ['list', '-c'], { encoding: 'utf8' });
  return r.error === undefined && r.status === 0 && r.stdout.includes('zstd');
})();

needsRealTraces();
test.skip(!hasZstd, 'trace-cmd with zstd is not installed (CI installs it)');

test('trace.dat version 7 (zstd): the Files pane says every byte used, the panes count report\'s events', async ({ page }) => {
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
    const ready = async () => (await page.getByTestId('load-progress').getAttribute('data-status')) === 'done' && (await row.count()) === 1 && (await row.locator('td').first().textContent()) === basename(file);
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
