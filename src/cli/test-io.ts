import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inject, vi } from 'vitest';

/** Test support: what a command writes to stdout and stderr, captured (vi.restoreAllMocks() ends it). */
export function captureOutput(): { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
  return { out, err };
}

/**
 * Test support: the command line as a process's argv (node and the bundle the integration
 * project's setup built, scripts/cli-bundle.setup.ts), for a test that starts it its own way.
 */
export function cliArgv(...args: string[]): [string, string[]] {
  const bundle = inject('cliBundle');
  if (!bundle) throw new Error('no bundled command line: a test that runs it is an integration test (scripts/suites.ts INTEGRATION)');
  return [process.execPath, [bundle, ...args]];
}

/** Test support: the command line as its own process: exit code, stdout, stderr. */
export const spawnCli = (...args: string[]): Promise<{ code: number; out: string; err: string }> =>
  promisify(execFile)(...cliArgv(...args), { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 }).then(
    (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
  );

/** Test support: a command's function run in this process, its output captured. */
export async function runCommand(cmd: (a: string[]) => Promise<number>, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureOutput();
  const code = await cmd(args);
  vi.restoreAllMocks();
  return { code, out: io.out.join(''), err: io.err.join('') };
}
