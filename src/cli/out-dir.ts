import { existsSync, lstatSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (e) {
      // another process (a second export started at once) made it in between: as good; a file or
      // a dangling symlink there (existsSync follows links) is not, and is said with its name
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (!statSync(d, { throwIfNoEntry: false })?.isDirectory())
        throw Object.assign(new Error(`${d} is in the way of a folder: ${lstatSync(d).isSymbolicLink() ? 'a symbolic link to nothing' : 'not a folder'}`), {
          code: 'ENOTDIR',
          syscall: 'mkdir',
          path: d,
        });
    }
  }
}

/** Makes the output folder and checks it can be written before a long run; the error's message, or null. */
export function prepareOutDir(dir: string): string | null {
  try {
    makeDir(dir);
    // a probe of this process's own: exports started together into one folder each probe theirs
    const probe = join(dir, `.stackmap-write-test-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe);
    return null;
  } catch (e) {
    return `cannot write to ${dir}: ${(e as Error).message}`;
  }
}
