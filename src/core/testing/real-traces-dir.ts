import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Where the real traces published by others are (../shared/real-traces/, SOURCES.md there),
// and whether this checkout has them. No test runner is imported here: vitest's helper
// (real-traces.ts), the Playwright helper (e2e/real-traces.ts), both reporters and the fuzz
// script (through fuzz-seeds.ts) all read the same answer from this file.

/** The repository root: three folders up from src/core/testing, whatever the cwd. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const override = process.env.REAL_TRACES_DIR;

/**
 * The folder, absolute. REAL_TRACES_DIR (relative paths from the repo root) replaces it, so a
 * run can act as a clone without the folder (an empty directory) while others use the real one.
 */
export const REAL_TRACES_DIR = join(
  override ? (isAbsolute(override) ? override : resolve(REPO_ROOT, override)) : resolve(REPO_ROOT, '../shared/real-traces'),
  '/',
);

/** The folder as messages name it: as SOURCES.md's readers know it, or the override as given. */
export const REAL_TRACES_SHOWN = override ? `${REAL_TRACES_DIR} (REAL_TRACES_DIR)` : '../shared/real-traces/';

/**
 * Present when its SOURCES.md is: the file that says what the folder holds. An empty or
 * half-made directory counts as absent, so one empty temp dir simulates a clone without it.
 */
export const hasRealTraces = existsSync(join(REAL_TRACES_DIR, 'SOURCES.md'));

/** CI sets REQUIRE_REAL_TRACES=1: then a real-trace test fails, rather than skips, without the folder. */
export const requireRealTraces = process.env.REQUIRE_REAL_TRACES === '1';

/** What a real-trace test is, given this checkout: it runs, it is skipped, or it fails. */
export type RealTracesMark = 'present' | 'absent' | 'required';
export const realTracesMark: RealTracesMark = hasRealTraces ? 'present' : requireRealTraces ? 'required' : 'absent';

/** The reason a real-trace test does not run; the Playwright reporter matches it exactly. */
export const REAL_TRACES_SKIP_REASON = `real traces: ${REAL_TRACES_SHOWN} is absent (set REQUIRE_REAL_TRACES=1 to make that a failure)`;

/** The failure of a real-trace test under REQUIRE_REAL_TRACES=1 without the folder. */
export function realTracesMissingError(): Error {
  return new Error(
    `real traces: ${REAL_TRACES_SHOWN} is absent (no SOURCES.md in ${REAL_TRACES_DIR}) and REQUIRE_REAL_TRACES=1 ` +
      'makes that a failure: put the folder beside the checkout (see its SOURCES.md), or unset REQUIRE_REAL_TRACES to skip these tests',
  );
}

/** The path of one real trace. It does not check the file: a path passed only to a usage error needs no file. */
export function realTracePath(name: string): string {
  return join(REAL_TRACES_DIR, name);
}

/** The bytes of one real trace; without the folder, an error that says so, not ENOENT. */
export function realTrace(name: string): Uint8Array {
  if (!hasRealTraces) throw realTracesMissingError();
  return new Uint8Array(readFileSync(realTracePath(name)));
}

/**
 * The closing line of a run, from the real-trace tests' outcomes (ran: passed or failed); null
 * when none of the run's tests reads them. Under REQUIRE_REAL_TRACES=1 a suite whose beforeAll
 * read a trace fails as a suite and vitest skips its tests: those count among the failed.
 */
export function realTracesSummary(counts: { skipped: number; failed: number; ran: number }): string | null {
  const tests = (n: number) => `${n} test${n === 1 ? '' : 's'}`;
  if (counts.ran + counts.skipped === 0) return null;
  if (realTracesMark === 'present') return `real traces: ${tests(counts.ran)} read ${REAL_TRACES_SHOWN}`;
  if (realTracesMark === 'required')
    return `real traces: ${tests(counts.failed + counts.skipped)} failed or did not run: ${REAL_TRACES_SHOWN} is absent and REQUIRE_REAL_TRACES=1`;
  return `real traces: ${tests(counts.skipped)} did not run: ${REAL_TRACES_SHOWN} is absent (set REQUIRE_REAL_TRACES=1 to make that a failure)`;
}
