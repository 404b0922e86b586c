import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node';
import { realTracesSummary } from './real-traces-dir.ts';

// The last line of a vitest run: how many real-trace tests (realIt / realDescribe in
// real-traces.ts) did not run, and why. A reporter runs in the main process and sees every
// file's results, so the count is right with any number of workers. Listed after 'default'
// in the config's reporters, its line comes after vitest's own summary.

/** Whether a test, or a suite around it, was declared a real-trace one. */
function isRealTrace(t: TestCase): boolean {
  if (t.meta().realTraces) return true;
  for (let p: TestSuite | TestModule = t.parent; p.type === 'suite'; p = p.parent) if (p.meta().realTraces) return true;
  return false;
}

export default class RealTracesReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const counts = { skipped: 0, failed: 0, ran: 0 };
    for (const m of modules)
      for (const t of m.children.allTests()) {
        if (!isRealTrace(t)) continue;
        const state = t.result().state;
        if (state === 'skipped') counts.skipped++;
        else {
          counts.ran++;
          if (state === 'failed') counts.failed++;
        }
      }
    const line = realTracesSummary(counts);
    if (line) process.stdout.write(`\n${line}\n`);
  }
}
