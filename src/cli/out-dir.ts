import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * `mkdir -p`, one level at a time: Node 20's recursive mkdirSync loops forever on a path under
 * /proc (ENOENT from a directory that exists), so the CLI would hang instead of failing.
 */
export function makeDir(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d); d = dirname(d)) {
    if (dirname(d) === d) break;
    missing.unshift(d);
  }
  for (const d of missing) mkdirSync(d);
}

/** Makes the output folder and checks it can be written before a long run; the error's message, or null. */
export function prepareOutDir(dir: string): string | null {
  try {
    makeDir(dir);
    writeFileSync(join(dir, '.stackmap-write-test'), '');
    rmSync(join(dir, '.stackmap-write-test'));
    return null;
  } catch (e) {
    return `cannot write to ${dir}: ${(e as Error).message}`;
  }
}
