// Headless Chromium for benchmarks: a static server with the app's isolation headers over any
// folder (the built app, or a peer tool's build), and Debian's Chromium launched by Playwright
// with the flags this machine needs. Used by the browser rows of `npm run bench`.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

export interface Served {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `roots` (URL prefix -> folder) on 127.0.0.1 with cross-origin isolation, so
 * SharedArrayBuffer works and a peer tool sees the same conditions as the app. `extra` maps
 * exact URL paths to files outside the roots (a benchmark's input). No directory listing, no
 * path outside a root.
 */
export async function serve(roots: Record<string, string>, extra: Record<string, string> = {}): Promise<Served> {
  const prefixes = Object.entries(roots)
    .map(([p, dir]) => [p.endsWith('/') ? p : p + '/', resolve(dir)] as const)
    .sort((a, b) => b[0].length - a[0].length);
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    let file: string | undefined = extra[path];
    if (!file) {
      for (const [prefix, dir] of prefixes) {
        if (!(path + '/').startsWith(prefix) && !path.startsWith(prefix)) continue;
        let rel = path.slice(prefix.length - 1);
        if (rel === '' || rel.endsWith('/')) rel += 'index.html';
        const f = normalize(join(dir, rel));
        if (f === dir || f.startsWith(dir + sep)) file = f;
        break;
      }
    }
    if (!file || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Content-Length': statSync(file).size,
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Cache-Control': 'no-store',
    });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

function chromiumPath(): string | undefined {
  for (const c of [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (c && existsSync(c)) return c;
  }
  return undefined; // Playwright's own browser, where one is installed
}

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Launches headless Chromium; `extraArgs` e.g. ['--enable-precise-memory-info']. */
export function launch(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS, ...extraArgs] });
}

/** A fresh page at `viewport` (default 1600x1000), its console errors echoed to stderr. */
export async function newPage(browser: Browser, viewport = { width: 1600, height: 1000 }): Promise<Page> {
  const ctx = await browser.newContext({ viewport });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => process.stderr.write(`[page error] ${e.message}\n`));
  return page;
}

/** Waits until the page has loaded a capture of `events` events and drawn its timeline. */
export function captureShown(page: Page, events: number, timeoutMs: number): Promise<unknown> {
  return page.waitForFunction(
    (events) => {
      const p = document.querySelector('[data-testid="load-progress"]');
      const t = document.querySelector('[data-testid="timeline"]');
      const s = document.querySelector('[data-testid="summary-events"]');
      return (
        p?.getAttribute('data-status') === 'done' && t?.getAttribute('data-ready') === 'true' && (s?.textContent ?? '').replace(/\D/g, '') === String(events)
      );
    },
    events,
    { timeout: timeoutMs, polling: 100 },
  );
}
