import { expect, test } from './fixtures.ts';
import { openSql, waitLoaded } from './explorer-helpers.ts';

// The built app under its Content-Security-Policy: an injected inline script does not run,
// eval throws, no request leaves the origin, and the app itself trips no violation.

test('the CSP blocks inline script and eval, and the app runs under it without a violation', async ({ page }) => {
  const violations: string[] = [];
  const foreign: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  page.on('request', (r) => {
    if (!r.url().startsWith('http://127.0.0.1:') && !r.url().startsWith('blob:') && !r.url().startsWith('data:')) foreign.push(r.url());
  });
  const res = await page.goto('/');
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
  await waitLoaded(page);
  // the app's own pages: explorer panes, the simulator's workers
  await page.getByTestId('view-simulator').click();
  await expect(page.getByTestId('simulator')).toBeVisible();
  await page.getByTestId('view-explorer').click();
  await waitLoaded(page);
  expect(violations).toEqual([]);

  const injected = await page.evaluate(async () => {
    const w = window as unknown as { __pwned?: number };
    // the browser reports each refusal (securitypolicyviolation): wait for both, the script's and the handler's
    const refused = new Promise<void>((resolve) => {
      let n = 0;
      document.addEventListener('securitypolicyviolation', () => ++n === 2 && resolve());
    });
    const s = document.createElement('script');
    s.textContent = 'window.__pwned = 1';
    document.body.append(s);
    const img = document.createElement('img');
    img.setAttribute('onerror', 'window.__pwned = 2');
    img.src = 'data:,x';
    document.body.append(img);
    await refused;
    let evalResult = 'ran';
    try {
      // eslint-disable-next-line no-eval
      (0, eval)('1 + 1');
    } catch (e) {
      evalResult = (e as Error).name;
    }
    let fnResult = 'ran';
    try {
      new Function('return 1')();
    } catch (e) {
      fnResult = (e as Error).name;
    }
    return { pwned: w.__pwned ?? null, evalResult, fnResult };
  });
  expect(injected).toEqual({ pwned: null, evalResult: 'EvalError', fnResult: 'EvalError' });
  expect(violations.length).toBeGreaterThan(0); // the browser said why it refused
  expect(foreign).toEqual([]);
});

test('the first page load fetches no DuckDB file; the SQL pane then loads it from the origin, with no violation', async ({ page }) => {
  const violations: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  page.on('request', (r) => requests.push(r.url()));
  const origin = (u: string) => u.startsWith('http://127.0.0.1:') || u.startsWith('blob:') || u.startsWith('data:');
  await page.goto('/');
  await waitLoaded(page);
  expect(requests.filter((u) => /duckdb/i.test(u))).toEqual([]);
  await openSql(page);
  await page.getByTestId('sql-example-top-stacks').click();
  await expect(page.getByTestId('sql-count')).toBeVisible();
  // a query that would fetch an extension is refused by DuckDB itself, before any request
  await page.getByTestId('sql-editor').fill('INSTALL icu; LOAD icu');
  await page.getByTestId('sql-run').click();
  await expect(page.getByTestId('sql-error')).toContainText('disabled');
  // the bundle came from the app's own server
  expect(requests.some((u) => /duckdb-(eh|mvp)-[^/]*\.wasm$/.test(u) && origin(u))).toBe(true);
  expect(requests.filter((u) => !origin(u))).toEqual([]);
  expect(violations).toEqual([]);
});
