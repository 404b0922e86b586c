// The integration tests' command line: bundled once per run (build:cli's bundle, into a folder of
// its own beside dist-cli/, so `@duckdb/node-api` and ../package.json resolve as they do for
// dist-cli/), and given to the tests as
// `inject('cliBundle')` (src/cli/test-io.ts spawnCli). A process of the bundle starts in ~0.2 s,
// one of tsx on the sources in ~0.6 s, and the command line's tests start a few hundred.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildCliInto } from './build-cli.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** the bundled command line's entry (stackmap-explorer.mjs) */
    cliBundle: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = join(new URL('../', import.meta.url).pathname, `dist-cli-test-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await buildCliInto(dir);
  project.provide('cliBundle', join(dir, 'stackmap-explorer.mjs'));
  return () => rmSync(dir, { recursive: true, force: true });
}
