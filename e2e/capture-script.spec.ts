import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from './fixtures.ts';
import { makeFake } from '../scripts/capture-fake-tracefs.ts';
import { waitLoaded } from './explorer-helpers.ts';

// scripts/capture.sh run under dash against the fake tracefs (three generations: two resets),
// its bundle dropped in the app as one file: the generation picker offers every generation the
// fake served.

const SCRIPT = new URL('../scripts/capture.sh', import.meta.url).pathname;

async function capture(): Promise<{ bundle: string; generations: number[] }> {
  const fake = makeFake({ resets: 2 });
  const bundle = join(mkdtempSync(join(tmpdir(), 'smx-e2e-cap-')), 'stackmap-capture.tar.gz');
  try {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn('dash', [SCRIPT, '-o', bundle, '-e', 'kmem:kmalloc', '-r', '2', '-i', '1', '-d', '1'], {
        env: { ...process.env, TRACEFS: fake.dir, KALLSYMS: '/nonexistent' },
        stdio: 'inherit',
      });
      child.on('close', resolve);
    });
    expect(code).toBe(0);
    expect(fake.served()).toBe(3);
    return { bundle, generations: fake.capture.dumps.map((d) => d.generation) };
  } finally {
    fake.stop();
  }
}

test('a bundle from capture.sh opens in one drop with every generation', async ({ page }) => {
  const { bundle, generations } = await capture();
  expect(generations).toEqual([1, 2, 3]);
  await page.goto('/');
  await waitLoaded(page);
  await page.getByTestId('file-input').setInputFiles(bundle);
  await expect(page.getByTestId('summary-generations')).toHaveText(generations.join(', '));
  await waitLoaded(page);
  const options = await page
    .getByTestId('generation-select')
    .locator('option')
    .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  for (const g of generations) expect(options).toContain(String(g));
  for (const g of generations) {
    await page.getByTestId('generation-select').selectOption(String(g));
    await expect(page.getByTestId('generation-select')).toHaveValue(String(g));
  }
  // capture.txt is read, every line used, with what the script recorded (the fake's 1408 KB and 2 CPUs)
  const info = page.locator('[data-testid="file-row"][data-kind="capture_txt"]');
  await expect(info).toHaveCount(1);
  await expect(info.locator('td').nth(0)).toHaveText(/capture\.txt$/);
  await expect(info.locator('td').nth(3)).toHaveText('0');
  const facts = page.getByTestId('file-capture-facts');
  await expect(facts).toHaveAttribute('data-buffer-kb', '1408');
  await expect(facts).toContainText('buffer 1408 KiB per CPU (buffer_size_kb); 2 CPUs; stack map on, 3 dumps, 2 resets');
  await expect(facts).toContainText('set tracing_on = 0 (was 1)');
  await expect(page.getByTestId('diagnostic').filter({ hasText: 'capture.txt' })).toHaveCount(0);
});
