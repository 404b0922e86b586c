import { closeSync, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page } from './fixtures.ts';
import type { Summary } from '../src/core/capture/summary.ts';
import { cliSummaryJson } from './cli.ts';
import { canvasInk, SAMPLES, summaryNumbers, waitLoaded } from './explorer-helpers.ts';
import { OUT } from './shots.ts';

/** What the session specs (session-add, load-cancel, faults) share: a capture opened over the sample, every pane read, pictures. */

export const TRACE = SAMPLES + 'trace';

/** The command line's numbers for a generation of these files (`summary --generation G`). */
export function cliGeneration(files: string[], g: number) {
  return cliSummaryJson<{ selection: Summary }>(files, ['--generation', String(g)]).selection;
}

export const tmp = mkdtempSync(join(tmpdir(), 'smx-session-'));
/** The sample trace repeated to about `mb` MB, on disk (setInputFiles hands Chromium the path). */
export function bigTrace(mb: number, name = `trace-${mb}mb`): string {
  const body = readFileSync(TRACE);
  const path = join(tmp, name);
  const fd = openSync(path, 'w');
  for (let n = 0; n < mb * 1e6; n += body.length) writeSync(fd, body);
  closeSync(fd);
  return path;
}

/** The page in `state` at 1600x1000 and 1280x720, light and dark: `OUT/session-STATE-WxH-SCHEME.png` (during a load too, which shots() waits out). */
export async function shoot(page: Page, state: string) {
  for (const [width, height] of [
    [1600, 1000],
    [1280, 720],
  ]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.setViewportSize({ width, height });
      await page.emulateMedia({ colorScheme });
      await page.screenshot({ path: `${OUT}/session-${state}-${width}x${height}-${colorScheme}.png` });
    }
  }
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Opens files through the picker over the sample (no question there) and waits for them; `url` is the page's (`/?test-hooks` in the hooks project). */
export async function openOverSample(page: Page, files: string[], url = '/') {
  await page.goto(url);
  await waitLoaded(page);
  await expect(page.getByTestId('load-progress')).toContainText('Sample capture');
  await page.getByTestId('file-input').setInputFiles(files);
  await expect(page.getByTestId('load-progress')).toContainText(`${files.length} file${files.length === 1 ? '' : 's'}:`);
  await waitLoaded(page);
}

/** What every pane shows, to compare before a load and after its cancel. */
export async function panes(page: Page) {
  await expect(page.getByTestId('load-progress')).not.toHaveAttribute('data-status', 'loading');
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-ready', 'true');
  await expect(page.getByTestId('flamegraph')).toHaveAttribute('data-ready', 'true');
  const rows = page.getByTestId('top-stack-row');
  await expect(rows.first()).toBeVisible();
  return {
    summary: await summaryNumbers(page),
    rows: await rows.evaluateAll((els) => els.map((e) => `${e.getAttribute('data-stack')}:${e.getAttribute('data-count')}`)),
    timelineInked: (await canvasInk(page.getByTestId('timeline').locator('canvas').first())).inked > 1000,
    flameInked: (await canvasInk(page.getByTestId('flamegraph').locator('canvas').first())).inked > 1000,
    exports: await page.locator('[data-testid^=export-]').count(),
    generations: await page.getByTestId('generation-select').locator('option').count(),
    status: await page.getByTestId('load-progress').getAttribute('data-status'),
  };
}
