import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { vi } from 'vitest';

/** Test support: what a command writes to stdout and stderr, captured (vi.restoreAllMocks() ends it). */
export function captureOutput(): { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
  return { out, err };
}

const TSX = new URL('../../node_modules/.bin/tsx', import.meta.url).pathname;
const MAIN = new URL('./main.ts', import.meta.url).pathname;

/** Test support: the command line as its own process (tsx on main.ts): exit code, stdout, stderr. */
export const spawnCli = (...args: string[]): Promise<{ code: number; out: string; err: string }> =>
  promisify(execFile)(TSX, [MAIN, ...args], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 }).then(
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
