// The test files that start something beyond the test's own process: other processes (the CLI,
// peer tools such as trace-cmd, python3, perl, awk, a shell), worker threads, a build or npm pack.
// `npm run test:integration` runs them; `npm run test:unit` runs every other test file, in-process
// only. scripts/suites.test.ts fails when a file outside this list starts a process or a thread.
export const INTEGRATION = [
  'bench/smoke.test.ts',
  'scripts/build-cli.test.ts',
  'scripts/capture.test.ts',
  'src/cli/export.integration.test.ts',
  'src/cli/export.test.ts',
  'src/cli/export-folder.test.ts',
  'src/cli/filter.test.ts',
  'src/cli/generate.test.ts',
  'src/cli/interrupt.test.ts',
  'src/cli/main.test.ts',
  'src/cli/simulate-trace-dat.test.ts',
  'src/cli/simulate.test.ts',
  'src/cli/sql.test.ts',
  'src/cli/terminal-escapes.test.ts',
  'src/cli/trace-parts.test.ts',
  'src/cli/weigh-args.test.ts',
  'src/core/capture/dumps.integration.test.ts',
  'src/core/capture/segments.test.ts',
  'src/core/export/stackcollapse.test.ts',
  'src/core/formats/perf-script.test.ts',
  'src/core/formats/trace-text.test.ts',
  'src/core/formats/trace-dat/losses.test.ts',
  'src/core/formats/trace-dat/trace-dat.test.ts',
  'src/core/formats/trace-dat/v7.test.ts',
  'src/core/formats/trace-dat/write.test.ts',
  'src/core/query/stack-hash.test.ts',
  'src/core/sim/export.test.ts',
  'src/core/sim/faithful.test.ts',
  'src/core/sim/insert-race.test.ts',
  'src/core/sim/replay.test.ts',
  'src/core/sim/provenance.test.ts',
  'src/core/sim/retention.test.ts',
  'src/core/sim/run-node.test.ts',
  'src/core/sim/scenarios.test.ts',
  'src/core/unpack/unpack-hostile.test.ts',
];

/** Where the test files are. */
export const TEST_FILES = ['src/**/*.test.ts', 'bench/**/*.test.ts', 'scripts/**/*.test.ts'];
