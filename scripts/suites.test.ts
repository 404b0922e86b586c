// The unit suite stays in-process: a test file that starts a process, a thread or a build belongs
// in scripts/suites.ts's INTEGRATION list, and every file listed there exists.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { INTEGRATION } from './suites.ts';

const root = new URL('..', import.meta.url);
// what starting something looks like in this project's tests: Node's process and thread modules,
// the simulator's worker-thread runner, Workers, Playwright's Chromium, the trace-cmd helpers of
// core/testing/trace-dat.ts, the awk of core/testing/awk-segments.ts
const STARTS = /\b(?:node:child_process|node:worker_threads|runNode|new Worker|chromium\.launch|traceCmd|reportLines|reportText|awkSegments)\b/;

describe('the split of the tests by what they start', () => {
  // TEST_FILES's folders, walked (Node 20 has no fs.glob)
  const files = ['src', 'bench', 'scripts']
    .flatMap((d) => (readdirSync(new URL(d, root), { recursive: true }) as string[]).filter((f) => f.endsWith('.test.ts')).map((f) => `${d}/${f}`))
    .sort();

  it('finds the test files', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('lists only files that exist', () => {
    expect(INTEGRATION.filter((f) => !existsSync(new URL(f, root)))).toEqual([]);
  });

  it('keeps every file that starts a process or a thread out of the unit suite', () => {
    const starting = files.filter((f) => f !== 'scripts/suites.test.ts' && !INTEGRATION.includes(f) && STARTS.test(readFileSync(new URL(f, root), 'utf8')));
    expect(starting).toEqual([]);
  });
});
