// What the bench scripts share: reading their flags, a copy of src/core (or src) as of a revision
// for their A/B runs (`--against REV`), and the command line bundled from a src as build:cli does.
import { execFileSync } from 'node:child_process';
import { cliBuildOptions } from '../scripts/build-cli.ts';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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

/**
 * `src` of `repo` as of `rev` (or of a folder holding a `src/`), extracted to a fresh temp folder
 * (returned: a root for `bundleCli`) with a package.json `{"type":"module"}` and the repo's
 * node_modules. The caller removes the folder.
 */
export function srcAt(repo: string, rev: string, prefix: string): string {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const tar = existsSync(join(rev, 'src'))
    ? execFileSync('tar', ['-c', '-C', rev, 'src'], { maxBuffer: 1 << 30 })
    : execFileSync('git', ['-C', repo, 'archive', rev, 'src'], { maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', tmp], { input: tar });
  writeFileSync(join(tmp, 'package.json'), '{"type":"module"}\n');
  symlinkSync(join(repo, 'node_modules'), join(tmp, 'node_modules'));
  return tmp;
}

/** Bundles src/cli/main.ts of `root` to `out` as build:cli does (without touching dist-cli/). */
export async function bundleCli(root: string, out: string): Promise<string> {
  const { build } = await import('esbuild');
  rmSync(out, { recursive: true, force: true });
  await build({
    // with the large trace's second thread where the tree has one (as build:cli)
    ...cliBuildOptions(root, out, {
      'stackmap-explorer': 'src/cli/main.ts',
      ...(existsSync(join(root, 'src/cli/trace-part-worker.ts')) ? { 'trace-part-worker': 'src/cli/trace-part-worker.ts' } : {}),
    }),
    logLevel: 'error',
  });
  return join(out, 'stackmap-explorer.mjs');
}
