import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import { readFileSync } from 'node:fs';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { Explorer } from '../src/core/query/explorer.ts';
import { loadFiles } from '../src/core/capture/load.ts';
import type { Selection, SelectionSummary } from '../src/core/query/api.ts';

export const SAMPLES = 'public/samples/';
export const sampleFiles = (JSON.parse(readFileSync(SAMPLES + 'index.json', 'utf8')) as { files: string[] }).files.map((f) => SAMPLES + f);

/** The same query engine the page's worker runs, over the same files, in Node. */
export async function nodeExplorer(paths: string[]): Promise<Explorer> {
  const files = await Promise.all(paths.map(async (p) => ({ name: basename(p), blob: await openAsBlob(p) })));
  return new Explorer(await loadFiles(files));
}

export const sel = (patch: Partial<Selection> = {}): Selection => ({ range: null, generation: null, cpus: null, ...patch });

export async function waitLoaded(page: Page) {
  await expect(page.getByTestId('load-progress')).toHaveAttribute('data-status', 'done');
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-ready', 'true');
  await expect(page.getByTestId('flamegraph')).toHaveAttribute('data-ready', 'true');
  // every pane has its answer (state/view/queries.ts): nothing above a button moves it after this
  await expect(page.locator('html')).toHaveAttribute('data-queries', '0');
}

/** The summary cells as numbers, once they show the selection (not "…"). */
export async function summaryNumbers(page: Page) {
  await expect(page.getByTestId('summary')).toHaveAttribute('data-pending', 'false');
  const read = async (id: string) => {
    const text = (await page.getByTestId(id).textContent()) ?? '';
    expect(text).toMatch(/^\d+$/);
    return Number(text);
  };
  return {
    events: await read('summary-events'),
    cookies: await read('summary-cookies'),
    resolved: await read('summary-resolved'),
    unresolved: await read('summary-unresolved'),
    fullStacks: await read('summary-full-stacks'),
    uniqueStacks: await read('summary-unique-stacks'),
  };
}

/** Distinct colours and non-background pixels of a canvas: proof it drew something. */
/** Waits until the summary cells show `want`'s numbers (a SelectionSummary). */
export async function expectSummary(page: Page, want: SelectionSummary) {
  const { events, cookies, resolved, unresolved, fullStacks, uniqueStacks } = want;
  await expect.poll(() => summaryNumbers(page)).toEqual({ events, cookies, resolved, unresolved, fullStacks, uniqueStacks });
}

export async function canvasInk(canvas: Locator): Promise<{ colors: number; inked: number }> {
  return canvas.evaluate((el) => {
    const c = el as HTMLCanvasElement;
    const ctx = c.getContext('2d')!;
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    const bg = `${data[0]},${data[1]},${data[2]}`;
    const colors = new Set<string>();
    let inked = 0;
    for (let i = 0; i < data.length; i += 4) {
      const k = `${data[i]},${data[i + 1]},${data[i + 2]}`;
      if (k !== bg) inked++;
      if (colors.size < 1000) colors.add(k);
    }
    return { colors: colors.size, inked };
  });
}

/** Drags across the timeline's lanes from one fraction of the plot's width to another. */
export async function brushTimeline(page: Page, from: number, to: number) {
  const canvas = page.getByTestId('timeline').locator('canvas');
  await canvas.scrollIntoViewIfNeeded();
  const box = (await canvas.boundingBox())!;
  const LABEL_W = 96;
  const y = box.y + box.height - 20;
  const x = (f: number) => box.x + LABEL_W + f * (box.width - LABEL_W);
  await page.mouse.move(x(from), y);
  await page.mouse.down();
  await page.mouse.move((x(from) + x(to)) / 2, y, { steps: 4 });
  await page.mouse.move(x(to), y, { steps: 4 });
  await page.mouse.up();
}

/**
 * The brushed range as the page holds it (the range chip's data-range: the store's numbers; the
 * URL is written at most every 150 ms, so right after a brush it can still hold an earlier one).
 */
export async function brushedRange(page: Page): Promise<[number, number]> {
  const chip = page.getByTestId('range-chip');
  await expect(chip).toHaveAttribute('data-range', /,/);
  return (await chip.getAttribute('data-range'))!.split(',').map(Number) as [number, number];
}

/** The view's query string parameter, as the page wrote it. */
export const urlParam = (page: Page, key: string) => new URL(page.url()).searchParams.get(key);

/** The numbers summaryNumbers reads, from any summary (the CLI's, a selection's): what the page must show. */
export const summaryOf = (s: { events: number; cookies: number; resolved: number; unresolved: number; fullStacks: number; uniqueStacks: number }) => ({
  events: s.events,
  cookies: s.cookies,
  resolved: s.resolved,
  unresolved: s.unresolved,
  fullStacks: s.fullStacks,
  uniqueStacks: s.uniqueStacks,
});

/** FNV-1a 64 over UTF-8, with BigInt: stack_hash (DESIGN 3) by an implementation apart from the app's. */
export function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(text)) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

/**
 * Opens the SQL pane and waits for DuckDB to be ready. The button is at the foot of the page: a
 * click can land where it was as the page settles after scrolling it into view (a fresh clone's
 * CI once saw the pane stay closed for 60 s); if the pane is still closed 10 s later the click is
 * made again, and the test says so in an annotation rather than passing in silence.
 */
export async function openSql(page: Page) {
  const status = page.getByTestId('sql-status');
  await page.getByTestId('sql-open').click();
  for (let again = 0; ; again++) {
    try {
      await expect(status).not.toHaveAttribute('data-status', 'closed', { timeout: 10_000 });
      break;
    } catch (e) {
      if (again === 2) throw e;
      test.info().annotations.push({ type: 'lost click', description: 'Open SQL clicked again: the pane was still closed 10 s after the click' });
      await page.getByTestId('sql-open').click();
    }
  }
  await expect(status).toHaveAttribute('data-status', 'ready', { timeout: 60_000 });
}

/**
 * The sample's trace repeated `copies` times as one File made in the page (its parts are the one
 * fetched Blob: nothing is copied, so gigabytes cost nothing), given to the file input or dropped
 * on a drop target (`add-files`, `replace-files`) or anywhere (`body`, over the sample).
 */
export function giveRepeatedSample(page: Page, copies: number, name: string, to: 'file-input' | 'add-files' | 'replace-files' | 'body'): Promise<void> {
  return page.evaluate(
    async ({ copies, name, to }) => {
      const body = await (await fetch('/samples/trace')).blob();
      const dt = new DataTransfer();
      dt.items.add(
        new File(
          Array.from({ length: copies }, () => body),
          name,
        ),
      );
      if (to === 'file-input') {
        const input = document.querySelector<HTMLInputElement>('[data-testid=file-input]')!;
        input.files = dt.files;
        input.dispatchEvent(new Event('change', { bubbles: true }));
        return;
      }
      document.body.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true }));
      let el: Element | null = document.body;
      if (to !== 'body') while (!(el = document.querySelector(`[data-testid=${to}]`))) await new Promise(requestAnimationFrame);
      el.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    { copies, name, to },
  );
}
