import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { noticesPlugin } from './scripts/notices.ts';
import { INTEGRATION, TEST_FILES } from './scripts/suites.ts';

// SharedArrayBuffer (the live simulator) needs cross-origin isolation on every server.
const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/**
 * The built app's Content-Security-Policy: only its own scripts, styles, workers and requests;
 * no inline script, no eval (WebAssembly compilation only), no plugin, no framing. The dev server goes without it, since hot reload injects
 * inline code. The same policy is in public/_headers for static hosts; e2e/csp.spec.ts checks it.
 */
export const CSP = [
  "default-src 'self'",
  // DuckDB-WASM (the SQL pane) compiles its WebAssembly: 'wasm-unsafe-eval' allows that and nothing else (no JS eval)
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** dist/THIRD_PARTY_NOTICES.txt: the licences of the packages in the page's and the workers' chunks */
const notices = noticesPlugin();

export default defineConfig({
  plugins: [react(), notices.page],
  server: { headers: isolation, port: 5173 },
  preview: {
    headers: { ...isolation, 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' },
    port: 4173,
    strictPort: true,
  },
  // deps only workers and the SQL pane import: listed so the dev server bundles them at start,
  // instead of finding them on first use and reloading the page (a fresh clone's first Open SQL)
  optimizeDeps: { include: ['apache-arrow'] },
  worker: { format: 'es', plugins: notices.worker },
  test: {
    environment: 'node',
    // every temporary file of the run in one folder, removed at its end (scripts/temp-dir.setup.ts)
    globalSetup: ['scripts/temp-dir.setup.ts'],
    // two files at a time on the 2-core machines this runs on: 207-214 s for the suite against
    // 256-270 s with vitest's default of one (3 of 3 runs passed with two)
    maxWorkers: 2,
    // no test here asserts a time: the limit only ends a hang, and must hold beside another file on 2 busy cores
    testTimeout: 30_000,
    // the run's last line: how many real-trace tests did not run, and why (src/core/testing/real-traces.ts)
    reporters: ['default', './src/core/testing/real-traces-reporter.ts'],
    // by what a test starts (scripts/suites.ts): `unit` runs in the test's own process only,
    // `integration` starts processes, threads or builds
    projects: [
      // unit files share their worker's modules (isolate: false): each file re-importing the core
      // cost 28 of the project's 94 s; 53 s shared (every file passed either way; the few that
      // stub a global or spy on a prototype put it back in afterEach or finally)
      { extends: true, test: { name: 'unit', include: TEST_FILES, exclude: INTEGRATION, isolate: false } },
      // the command line bundled once for the tests that run it as a process (scripts/cli-bundle.setup.ts)
      { extends: true, test: { name: 'integration', include: INTEGRATION, globalSetup: ['scripts/cli-bundle.setup.ts'] } },
    ],
  },
});
