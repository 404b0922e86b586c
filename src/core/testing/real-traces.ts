import { beforeEach, describe, it, type TestFunction } from 'vitest';
import { realTracesMark, realTracesMissingError, type RealTracesMark } from './real-traces-dir.ts';

// Tests that read the real traces in ../shared/real-traces/ (real-traces-dir.ts): declared with
// realIt / realDescribe, they run when the folder is there, are skipped when it is not, and
// fail when it is not and REQUIRE_REAL_TRACES=1 (CI). Each carries meta.realTraces, which
// real-traces-reporter.ts counts in the main process, so the count holds however many
// workers ran the files.
//
// A realDescribe body is still run to collect its tests when the folder is absent (vitest
// marks them skipped): read traces in tests or hooks, never in the body itself. Under
// REQUIRE_REAL_TRACES=1 a beforeAll that reads one fails the suite with the same message
// before beforeEach can fail each test; vitest then skips its tests, and the reporter counts
// them among those that failed or did not run.

export { REAL_TRACES_DIR, REAL_TRACES_SHOWN, hasRealTraces, realTrace, realTracePath, requireRealTraces } from './real-traces-dir.ts';

declare module 'vitest' {
  interface TaskMeta {
    /** set on real-trace tests and suites: what this checkout made of them */
    realTraces?: RealTracesMark;
  }
}

const meta = { realTraces: realTracesMark };

type ItFn = (name: string, fn: TestFunction, timeout?: number) => void;
type DescribeFn = (name: string, fn: () => void) => void;

// `other`: a second reason to skip (trace-cmd not installed, say), which skips whatever the folder
function declareIt(other: boolean): ItFn {
  return (name, fn, timeout) => {
    if (other) it.skip(name, { meta, timeout }, fn);
    else if (realTracesMark === 'required')
      it(name, { meta, timeout }, () => {
        throw realTracesMissingError();
      });
    else it.skipIf(realTracesMark === 'absent')(name, { meta, timeout }, fn);
  };
}

function declareDescribe(other: boolean): DescribeFn {
  return (name, fn) =>
    describe.skipIf(other || realTracesMark === 'absent')(name, { meta }, () => {
      if (realTracesMark === 'required')
        beforeEach(() => {
          throw realTracesMissingError();
        });
      fn();
    });
}

/** A test that reads real traces (timeout as vitest's `it` takes it); `.skipIf(c)` adds a reason to skip. */
export const realIt: ItFn & { skipIf: (condition: unknown) => ItFn } = Object.assign(declareIt(false), { skipIf: (c: unknown) => declareIt(!!c) });

/** A suite whose every test reads real traces; `.skipIf(c)` adds a reason to skip. */
export const realDescribe: DescribeFn & { skipIf: (condition: unknown) => DescribeFn } = Object.assign(declareDescribe(false), {
  skipIf: (c: unknown) => declareDescribe(!!c),
});
