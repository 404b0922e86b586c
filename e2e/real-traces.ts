import { test } from '@playwright/test';
import { realTracesMark, realTracesMissingError, REAL_TRACES_SKIP_REASON } from '../src/core/testing/real-traces-dir.ts';

// Playwright's side of src/core/testing/real-traces.ts: the same folder (../shared/real-traces/,
// or REAL_TRACES_DIR) and the same rule. Without the folder a spec that reads it is skipped with
// REAL_TRACES_SKIP_REASON, which e2e/real-traces-reporter.ts counts; with REQUIRE_REAL_TRACES=1
// it fails instead, naming what is missing.

export { hasRealTraces, realTracePath, REAL_TRACES_DIR } from '../src/core/testing/real-traces-dir.ts';

/** Whether a test is running: test.info() answers only inside one (or its hooks and fixtures). */
function inTest(): boolean {
  try {
    test.info();
    return true;
  } catch {
    return false;
  }
}

/**
 * The tests here read real traces. Call it first thing in a test body (that test), or at the
 * top of a file or a test.describe body (every test there; a beforeAll there that reads the
 * traces would run before the failure under REQUIRE_REAL_TRACES=1, so keep reads in tests).
 */
export function needsRealTraces(): void {
  if (realTracesMark === 'present') return;
  if (realTracesMark === 'absent') test.skip(true, REAL_TRACES_SKIP_REASON);
  else if (inTest()) throw realTracesMissingError();
  else
    test.beforeEach(() => {
      throw realTracesMissingError();
    });
}
