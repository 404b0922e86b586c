// A CPU profile of the app's ingest worker while the page loads a capture and draws it, in
// headless Chromium: the first paint as the page runs it, its code cold. A Node profile of the
// same queries (a driver calling Explorer in a loop) runs them warm and pointed elsewhere (issue
// 38: a string hash per flame node was the worker's hottest line, not Node's).
//
//   npx tsx bench/worker-profile.ts --capture DIR [--dist DIR] [--out FILE] [--interval US]
//
// --capture: a folder with kallsyms, stack_map_bin, stack_map_stat and trace (those present are
// handed to the file input; bench/generated.ts's cache holds several). --dist: the app's build
// (dist; `npx vite build --minify false --outDir DIR` keeps function names). The profile starts
// once the embedded sample is drawn and stops at the first flame paint of the new capture
// (`smx:flame-painted`); --out (worker.cpuprofile) opens in Chrome's DevTools or speedscope.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { arg } from './args.ts';
import { launch, newPage, serve } from '../scripts/browser.ts';

const capture = arg('--capture', '');
if (!capture) throw new Error('--capture DIR: a folder with the capture to load');
const dist = arg('--dist', 'dist');
const out = arg('--out', 'worker.cpuprofile');
const interval = Number(arg('--interval', '200'));
const files = ['kallsyms', 'stack_map_bin', 'stack_map_stat', 'trace'].map((n) => join(capture, n)).filter((f) => existsSync(f));

const s = await serve({ '/': dist });
const browser = await launch([]);
try {
  const page = await newPage(browser);
  const cdp = await page.context().newCDPSession(page);
  // the workers as targets of the page's session, their messages through it (not flattened)
  const workers: { sessionId: string; url: string }[] = [];
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 1;
  cdp.on('Target.attachedToTarget', (e) => workers.push({ sessionId: e.sessionId, url: e.targetInfo.url }));
  cdp.on('Target.receivedMessageFromTarget', (e) => {
    const m = JSON.parse(e.message) as { id?: number; result?: unknown; error?: { message: string } };
    const p = m.id === undefined ? undefined : pending.get(m.id);
    if (!p) return;
    pending.delete(m.id!);
    if (m.error) p.reject(new Error(m.error.message));
    else p.resolve(m.result);
  });
  const send = (sessionId: string, method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      void cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) });
    });
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });
  await page.goto(s.url + '/');
  const painted = () => page.evaluate(() => performance.getEntriesByName('smx:flame-painted').length);
  await page.waitForFunction(() => performance.getEntriesByName('smx:flame-painted').length > 0, null, { timeout: 120_000 });
  const ingest = workers.find((w) => /ingest/.test(w.url));
  if (!ingest) throw new Error(`no ingest worker among the page's workers: ${workers.map((w) => w.url).join(', ')}`);
  await send(ingest.sessionId, 'Profiler.enable');
  await send(ingest.sessionId, 'Profiler.setSamplingInterval', { interval });
  await send(ingest.sessionId, 'Profiler.start');
  const before = await painted();
  await page.getByTestId('file-input').setInputFiles(files);
  await page.waitForFunction((n) => performance.getEntriesByName('smx:flame-painted').length > n, before, { timeout: 300_000 });
  const { profile } = (await send(ingest.sessionId, 'Profiler.stop')) as { profile: unknown };
  writeFileSync(out, JSON.stringify(profile));
  console.log(`${out}: the ingest worker from the file input to the first flame paint of ${files.length} files from ${capture}`);
} finally {
  await browser.close();
  await s.close();
}
