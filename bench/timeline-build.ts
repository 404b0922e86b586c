// Builds of the app for the timeline benchmarks: this tree's, or a revision's (its source from
// git archive into a temp folder beside this tree's node_modules), each into its own dist folder,
// so A and B are served side by side. A revision's build is kept, keyed by its commit.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));

function build(dir: string, out: string) {
  const r = spawnSync('npx', ['vite', 'build', '--outDir', out, '--emptyOutDir'], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vite build in ${dir} failed: ${r.stderr.slice(-1500)}`);
}

/** The app at REV, built into /tmp/dist-timeline-<commit>. */
export function buildAt(rev: string): string {
  const sha = spawnSync('git', ['rev-parse', '--verify', `${rev}^{commit}`], { cwd: repo, encoding: 'utf8' }).stdout.trim();
  if (!sha) throw new Error(`no such revision: ${rev}`);
  const out = `/tmp/dist-timeline-${sha.slice(0, 10)}`;
  if (existsSync(join(out, 'index.html'))) return out;
  const src = `/tmp/src-timeline-${sha.slice(0, 10)}`;
  rmSync(src, { recursive: true, force: true });
  mkdirSync(src, { recursive: true });
  const tar = spawnSync('sh', ['-c', `git archive ${sha} | tar -x -C ${src}`], { cwd: repo, encoding: 'utf8' });
  if (tar.status !== 0) throw new Error(`git archive failed: ${tar.stderr}`);
  symlinkSync(join(repo, 'node_modules'), join(src, 'node_modules'));
  build(src, out);
  return out;
}

/** This tree's build: `given` (or BENCH_DIST) when it holds one, else built into /tmp/dist-bench-timeline. */
export function thisDist(given = ''): string {
  const dir = given || process.env.BENCH_DIST || '';
  if (dir && existsSync(join(dir, 'index.html'))) return dir;
  const out = '/tmp/dist-bench-timeline';
  build(repo, out);
  return out;
}
