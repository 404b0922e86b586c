import { existsSync } from 'node:fs';
import { defineConfig } from '@playwright/test';
import { chromium } from '@playwright/test';

/**
 * A system Chromium: CHROMIUM_PATH if set, else Debian's chromium-headless-shell (the build
 * Playwright itself runs headless tests in: the suite took 0.70-0.76x the full browser's time,
 * explorer.spec 17.3 s and 18.0 s against 24.7 s and 23.7 s, alternating), else Debian's
 * /usr/bin/chromium, else Playwright's own browser if one is installed. With none, stop and say
 * how to get one.
 */
function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium-headless-shell', '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  for (const c of candidates) if (c && existsSync(c)) return c;
  let own: string | undefined;
  try {
    own = chromium.executablePath();
  } catch {
    own = undefined;
  }
  if (own && existsSync(own)) return undefined; // Playwright's own browser
  throw new Error(
    'No Chromium found for the end-to-end tests. Install one with `apt-get install chromium-headless-shell` ' +
      '(Debian, as root), or `npx playwright install chromium` where downloads work, ' +
      'or set CHROMIUM_PATH to a Chromium binary.',
  );
}

// PW_PORT and PW_DIST let several runs share a machine (each its own port and build folder)
const PORT = Number(process.env.PW_PORT ?? 4173);
const DIST = process.env.PW_DIST ?? 'dist';
// the dev server (`npm start`'s Vite, React StrictMode on) for the `dev` project
const DEV_PORT = Number(process.env.PW_DEV_PORT ?? PORT + 1001);
/** The specs the dev project runs: the README's walk as a person takes it after `npm start`. */
const DEV_SPECS = /readme-walk\.spec\.ts$/;
/**
 * The specs that need the test hooks (`?test-hooks`: a worker ended or blocked on purpose, every
 * trace past 64 KiB split): they run against the same app built with them (`VITE_TEST_HOOKS=1
 * vite build --outDir dist-hooks`, package.json test:e2e), since the production build has none.
 */
const HOOK_SPECS = /(faults|split-trace|load-cancel)\.spec\.ts$/;
const HOOKS_PORT = Number(process.env.PW_HOOKS_PORT ?? PORT + 2002);

export default defineConfig({
  testDir: 'e2e',
  timeout: 60_000,
  expect: { timeout: 15_000 },
  // two spec files at a time, one per core (each worker its own browser context and storage; a
  // spec's own tests stay in order): the whole suite in 4.7 min against about 6.5 on one, so that
  // `npm test` stays under 10 minutes on this 2-core machine
  fullyParallel: false,
  workers: Number(process.env.PW_WORKERS ?? 2),
  retries: 0,
  // the specs' temporary files in one folder of the run, removed at its end (as vitest's: scripts/temp-dir.setup.ts)
  globalSetup: './scripts/temp-dir.setup.ts',
  reporter: [['list'], ['./e2e/real-traces-reporter.ts']],
  // tests that only take screenshots run under `npm run shots` (SHOTS=1; e2e/shots.ts)
  grepInvert: process.env.SHOTS === '1' ? undefined : /@shots/,
  outputDir: process.env.PW_DIST ? `test-results-${PORT}` : 'test-results',
  projects: [
    // the production bundle (vite preview): every spec but those needing the test hooks
    { name: 'build', testIgnore: HOOK_SPECS, use: { baseURL: `http://127.0.0.1:${PORT}` } },
    // the same bundle built with the test hooks: the specs that need them
    { name: 'hooks', testMatch: HOOK_SPECS, use: { baseURL: `http://127.0.0.1:${HOOKS_PORT}` } },
    // the README's first command, `npm start`: the walk again, against the dev server
    { name: 'dev', testMatch: DEV_SPECS, use: { baseURL: `http://127.0.0.1:${DEV_PORT}` } },
  ],
  use: {
    browserName: 'chromium',
    launchOptions: {
      executablePath: chromiumPath(),
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
  webServer: [
    {
      command: `npx vite preview --host 127.0.0.1 --port ${PORT} --strictPort --outDir ${DIST}`,
      url: `http://127.0.0.1:${PORT}`,
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      command: `npx vite preview --host 127.0.0.1 --port ${HOOKS_PORT} --strictPort --outDir ${DIST}-hooks`,
      url: `http://127.0.0.1:${HOOKS_PORT}`,
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      command: `npx vite --host 127.0.0.1 --port ${DEV_PORT} --strictPort`,
      url: `http://127.0.0.1:${DEV_PORT}`,
      reuseExistingServer: false,
      timeout: 60_000,
    },
  ],
});
