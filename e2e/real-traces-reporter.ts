import type { Reporter, TestCase, TestResult } from '@playwright/test/reporter';
import { realTracesMissingError, realTracesSummary, REAL_TRACES_SKIP_REASON } from '../src/core/testing/real-traces-dir.ts';

// The last line of a Playwright run: how many specs that read real traces (needsRealTraces in
// e2e/real-traces.ts) did not run, and why. Skipped ones carry REAL_TRACES_SKIP_REASON as their
// skip annotation; under REQUIRE_REAL_TRACES=1 the failed ones carry its error. Listed after
// 'list' in the config's reporters, its line comes after Playwright's own summary.

const MISSING = realTracesMissingError().message;

export default class RealTracesReporter implements Reporter {
  /** the last result of each test (a retry replaces the attempt before it) */
  private readonly outcome = new Map<string, 'skipped' | 'failed'>();

  onTestEnd(test: TestCase, result: TestResult): void {
    const skip = [...test.annotations, ...result.annotations].some((a) => a.type === 'skip' && a.description === REAL_TRACES_SKIP_REASON);
    if (result.status === 'skipped' && skip) this.outcome.set(test.id, 'skipped');
    else if (result.errors.some((e) => e.message?.includes(MISSING))) this.outcome.set(test.id, 'failed');
    else this.outcome.delete(test.id);
  }

  onEnd(): void {
    const all = [...this.outcome.values()];
    const skipped = all.filter((o) => o === 'skipped').length;
    const failed = all.length - skipped;
    // specs that ran on the folder carry no mark: nothing to say then
    const line = realTracesSummary({ skipped, failed, ran: failed });
    if (line) process.stdout.write(`\n${line}\n`);
  }

  printsToStdio(): boolean {
    return true;
  }
}
