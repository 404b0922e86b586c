import { expect, test, type Page } from './fixtures.ts';
import { openSql, waitLoaded } from './explorer-helpers.ts';
import { needsRealTraces, realTracePath } from './real-traces.ts';
import { sampleFiles } from './explorer-helpers.ts';
import { cli } from './cli.ts';

// The SQL pane on the sample, one page load for every check: DuckDB-WASM opens on demand, the
// top-stacks example counts what the top stacks pane counts, DuckDB's errors are shown, a
// runaway query is cancelled, and a stack_hash selects its stack in the other panes.

test.describe.configure({ mode: 'serial' });

let page: Page;

test.beforeAll(async ({ browser }) => {
  page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto('/');
  await waitLoaded(page);
});

test.afterAll(async () => {
  await page.close();
});

/** the result table's cells, as the page holds them (data-value: null for NULL) */
const resultRows = () =>
  page.getByTestId('sql-row').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td as HTMLElement).dataset.value ?? null)));

async function runQuery(sql: string, { wait = true } = {}) {
  const editor = page.getByTestId('sql-editor');
  const body = page.getByTestId('sql-body');
  await editor.fill(sql);
  await expect(editor).toHaveValue(sql);
  await editor.press('Control+Enter');
  if (!wait) return;
  // the result (or error) shown is this query's: the previous one's may have as many rows
  await expect(body).toHaveAttribute('data-ran', sql.trim());
  await expect(body).toHaveAttribute('data-running', 'false');
}

/** the top stacks pane's rows: stack_hash and count */
const paneRows = () =>
  page
    .getByTestId('top-stack-row')
    .evaluateAll((trs) => trs.map((tr) => [(tr as HTMLElement).dataset.stackHash ?? '', Number((tr as HTMLElement).dataset.count)] as [string, number]));

async function expectTopStacksMatch() {
  await expect(page.getByTestId('sql-running')).toHaveCount(0);
  await expect(page.getByTestId('sql-count')).toBeVisible();
  const header = await page.getByTestId('sql-results').locator('th').allTextContents();
  expect(header.slice(0, 2)).toEqual(['stack_hash', 'occurrences']);
  const sql = (await resultRows()).map((r) => [r[0] ?? '', Number(r[1])] as [string, number]);
  const pane = await paneRows();
  expect(pane.length).toBeGreaterThan(0);
  const k = Math.min(pane.length, sql.length);
  expect(k).toBeGreaterThan(0);
  // the same counts, busiest first (ties may order differently)...
  expect(sql.slice(0, k).map((r) => r[1])).toEqual(pane.slice(0, k).map((r) => r[1]));
  // ...and each stack both list the same count
  const bySql = new Map(sql);
  let shared = 0;
  for (const [hash, count] of pane) {
    if (!bySql.has(hash)) continue;
    shared++;
    expect(bySql.get(hash), hash).toBe(count);
  }
  expect(shared).toBeGreaterThan(0);
}

test('opens on demand, and the top-stacks example counts what the top stacks pane counts', async () => {
  await expect(page.getByTestId('sql-status')).toHaveAttribute('data-status', 'closed');
  await expect(page.getByTestId('sql-editor')).toHaveCount(0);
  await openSql(page);
  // every table of the list, with its rows
  const tables = await page.getByTestId('sql-table').evaluateAll((ds) => ds.map((d) => (d as HTMLElement).dataset.table));
  expect(tables).toEqual(expect.arrayContaining(['events', 'records', 'stacks', 'frames', 'dumps', 'stat', 'files', 'diagnostics', 'captures']));
  // the captures table's one row: the sample's files by name, as many as the files table has at its top level
  await expect(page.locator('[data-table=captures] [data-testid=sql-table-rows]')).toHaveText('1');
  const events = Number((await page.getByTestId('summary-events').textContent()) ?? '');
  await expect(page.locator('[data-table=events] [data-testid=sql-table-rows]')).toHaveText(events.toLocaleString('en-US'));
  await page.getByTestId('sql-example-top-stacks').click();
  await expectTopStacksMatch();
});

test('follows the selection: a generation chosen in the panes, the example runs again and still matches', async () => {
  const options = await page
    .getByTestId('generation-select')
    .locator('option')
    .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  const gen = options.find((v) => /^\d+$/.test(v));
  expect(gen, 'the sample has three generations').toBeDefined(); // a missing one fails, it does not skip
  const before = await page.getByTestId('sql-count').getAttribute('data-total');
  await page.getByTestId('generation-select').selectOption(gen!);
  await expect(page.getByTestId('sql-selection')).toContainText(`generation ${gen}`);
  await expect(page.getByTestId('top-stacks-count')).toBeVisible();
  await expect
    .poll(async () => JSON.stringify(await resultRows()) !== '[]' && (await page.getByTestId('sql-count').getAttribute('data-total')) !== null)
    .toBe(true);
  await expect
    .poll(async () => {
      const pane = await paneRows();
      const sql = await resultRows();
      return pane.length > 0 && sql.length > 0 && Number(sql[0][1]) === pane[0][1];
    })
    .toBe(true);
  await expectTopStacksMatch();
  expect(before).not.toBeNull();
  await page.getByTestId('generation-select').selectOption('all');
});

test('a query asked for while another runs runs after it (Ctrl+Enter is not dropped)', async () => {
  // a fresh clone's CI once saw 'SELEC 1' never run: Ctrl+Enter came while the selection's
  // re-run of the query before was running, and the store dropped it without a word
  await runQuery('SELECT count(*) AS n FROM range(200000000) a, range(3) b', { wait: false });
  await expect(page.getByTestId('sql-body')).toHaveAttribute('data-running', 'true');
  await runQuery('SELECT 42 AS answer');
  expect(await resultRows()).toEqual([['42']]);
});

test("a bad query shows DuckDB's own message", async () => {
  await runQuery('SELEC 1');
  await expect(page.getByTestId('sql-error')).toContainText('syntax error at or near "SELEC"');
  await runQuery('SELECT * FROM no_such_table');
  await expect(page.getByTestId('sql-error')).toContainText('no_such_table does not exist');
  // nothing leaves the page: DuckDB refuses to fetch an extension
  await runQuery('LOAD icu');
  await expect(page.getByTestId('sql-error')).toContainText('disabled');
});

test('a runaway query is cancelled, and the pane then runs the next one', async () => {
  await runQuery('SELECT count(*) FROM range(10000000000000) a', { wait: false });
  await expect(page.getByTestId('sql-running')).toBeVisible();
  await expect(page.getByTestId('sql-cancel')).toBeEnabled();
  await page.getByTestId('sql-cancel').click();
  await expect(page.getByTestId('sql-error')).toHaveText('Cancelled.');
  await expect(page.getByTestId('sql-running')).toHaveCount(0);
  await runQuery('SELECT 6 * 7 AS answer, count(*) AS events FROM events');
  await expect(page.getByTestId('sql-count')).toHaveAttribute('data-total', '1');
  const [row] = await resultRows();
  expect(row[0]).toBe('42');
  expect(Number(row[1])).toBe(Number(await page.getByTestId('summary-events').textContent()));
});

test('payload and args hold what the events say: bytes_alloc summed as the command line’s sql sums it', async () => {
  const q = "SELECT count(*) AS n, sum(int_value) AS bytes FROM args WHERE key = 'bytes_alloc'";
  const want = cli(['sql', '--format', 'csv', q, ...sampleFiles])
    .trim()
    .split('\n')[1]
    .split(',');
  expect(Number(want[1])).toBeGreaterThan(0);
  await runQuery(q);
  await expect(page.getByTestId('sql-count')).toHaveAttribute('data-total', '1');
  expect(await resultRows()).toEqual([want]);
  // a DECIMAL keeps its point (arrow hands over its unscaled digits)
  await runQuery('SELECT 12.34::DECIMAL(6,2) AS d, -0.05::DECIMAL(4,2) AS e, 10000000000000000000000::HUGEINT AS h');
  await expect(page.getByTestId('sql-count')).toHaveAttribute('data-total', '1');
  expect(await resultRows()).toEqual([['12.34', '-0.05', '10000000000000000000000']]);
  await runQuery('SELECT count(*) FROM events WHERE payload IS NULL');
  await expect(page.getByTestId('sql-count')).toHaveAttribute('data-total', '1');
  expect(await resultRows()).toEqual([['0']]);
});

test('a click on a stack_hash selects that stack in the other panes', async () => {
  await page.getByTestId('sql-example-top-stacks').click();
  await expectTopStacksMatch();
  // the second busiest, so it is not what was selected before
  const hash = (await resultRows())[1][0]!;
  await page.getByTestId('sql-stack-hash').nth(1).click();
  await expect(page.locator(`[data-testid=top-stack-row][data-stack-hash="${hash}"]`)).toHaveAttribute('aria-selected', 'true');
  await expect.poll(() => new URL(page.url()).searchParams.get('stack')).toBe(hash);
  await expect(page.getByTestId('sql-row').nth(1)).toHaveClass(/selected/);
});

test('another capture opened: its tables replace the old ones', async () => {
  needsRealTraces();
  const before = await page.getByTestId('sql-count').getAttribute('data-total');
  await page.getByTestId('file-input').setInputFiles(realTracePath('perf-tools-tpoint_example.txt'));
  await expect(page.getByTestId('load-progress')).toHaveAttribute('data-status', 'done');
  await expect.poll(async () => (await page.getByTestId('summary-events').textContent()) ?? '').not.toBe('4000');
  const events = Number(await page.getByTestId('summary-events').textContent());
  await expect(page.getByTestId('sql-status')).toHaveAttribute('data-status', 'ready');
  await expect(page.locator('[data-table=events] [data-testid=sql-table-rows]')).toHaveText(events.toLocaleString('en-US'));
  await runQuery('SELECT count(*) AS events, count(DISTINCT capture_id) AS captures FROM events');
  await expect.poll(async () => (await resultRows())[0]).toEqual([String(events), '1']);
  expect(before).not.toBeNull();
});
