import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, newPage, serve } from '/work/main/scripts/browser.ts';
const capture = process.argv[2];
const dist = process.argv[3];
const out = process.argv[4];
const files = ['kallsyms', 'stack_map_bin', 'stack_map_stat', 'trace'].map((n) => join(capture, n)).filter((f) => existsSync(f));
const s = await serve({ '/': dist });
const browser = await launch([]);
try {
  const page = await newPage(browser);
  const cdp = await page.context().newCDPSession(page);
  await page.goto(s.url + (process.argv[5] ?? '/'));
  await page.waitForFunction(() => performance.getEntriesByName('smx:flame-painted').length > 0, null, { timeout: 120_000 });
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  const before = await page.evaluate(() => performance.getEntriesByName('smx:flame-painted').length);
  await page.evaluate(() => document.querySelector('[data-testid=file-input]')!.addEventListener('change', () => performance.mark('smx:change'), { once: true }));
  await cdp.send('Profiler.start');
  await page.getByTestId('file-input').setInputFiles(files);
  await page.waitForFunction((n) => performance.getEntriesByName('smx:flame-painted').length > n, before, { timeout: 300_000 });
  const { profile } = await cdp.send('Profiler.stop');
  const t = await page.evaluate(() => ({ change: performance.getEntriesByName('smx:change')[0]?.startTime, painted: performance.getEntriesByName('smx:flame-painted').at(-1)!.startTime, marks: performance.getEntries().filter((e) => e.entryType === 'mark' || e.entryType === 'measure').slice(-30).map((e) => `${e.name}@${e.startTime.toFixed(0)}`) }));
  console.log('change->paint', (t.painted - t.change).toFixed(0), 'ms', t.marks.join(' '));
  writeFileSync(out, JSON.stringify(profile));
} finally {
  await browser.close();
  await s.close();
}
