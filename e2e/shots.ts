import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the e2e tests' screenshots go. `npm run shots` (SHOTS=1) writes them to docs/screenshots/
 * (the README and the docs show them) and runs the tests that only take pictures (tagged
 * `@shots`); `npm test` writes them to a temporary folder, so a run changes nothing tracked,
 * and skips those tests (playwright.config.ts).
 */
export const SHOTS = process.env.SHOTS === '1';
export const OUT = SHOTS ? 'docs/screenshots' : mkdtempSync(join(tmpdir(), 'smx-shots-'));
mkdirSync(OUT, { recursive: true });
/** the tag of a test that only takes screenshots */
export const SHOTS_TAG = { tag: '@shots' };
