// What the bench scripts share: reading their flags, and a copy of src/core as of a revision for
// their A/B runs (`--against REV`).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const argv = process.argv.slice(2);

/** Whether `--name` was given. */
export const flag = (name: string): boolean => argv.includes(name);

/** The value after `--name`, or `def`. */
export function arg(name: string, def: string): string {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : def;
}

/**
 * `src/core` of `repo` as of `rev`, extracted to a fresh temp folder (returned; its `src/core`
 * holds the code) with a package.json `{"type":"module"}` and the repo's node_modules, so tsx
 * loads it as the tree's own core is loaded. The caller removes the folder.
 */
export function coreAt(repo: string, rev: string, prefix: string): string {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(tmp, 'src'), { recursive: true });
  const tar = execFileSync('git', ['-C', repo, 'archive', rev, 'src/core'], { maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', tmp], { input: tar });
  writeFileSync(join(tmp, 'package.json'), '{"type":"module"}\n');
  symlinkSync(join(repo, 'node_modules'), join(tmp, 'node_modules'));
  return tmp;
}
