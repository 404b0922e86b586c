// Generated inputs for the browser benchmarks, cached in /tmp keyed by their arguments and by
// the generator's own source, so a second `npm run bench` does not write the same gigabyte again
// and a changed generator never hands out a stale capture.
//
//   const cap = generated(['--stacks', '100000', '--depth', '4-64', '--events', '400000']);
//   cap.dir, cap.files (trace, stack_map_bin, stack_map_stat, kallsyms), cap.report (generate's JSON)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
export const CACHE_ROOT = process.env.BENCH_CACHE ?? '/tmp/stackmap-bench-cache';

/** generate's --json report (the fields the benchmarks read) */
export interface GenerateReport {
  events: number;
  stacks: number;
  stacksInTrace: number;
  bits: number;
  files: { name: string; bytes: number }[];
  [k: string]: unknown;
}

export interface Generated {
  dir: string;
  /** absolute paths of the files written, in generate's order */
  files: string[];
  report: GenerateReport;
  /** true when this call wrote it (false: taken from the cache) */
  fresh: boolean;
}

/** The generator's source files: a change to any of them makes a new key. */
function generatorHash(): string {
  const h = createHash('sha1');
  const dirs: [string, RegExp][] = [
    ['src/cli', /^generate.*\.ts$/],
    ['src/core/formats', /-write\.ts$/],
    ['src/core/sim', /^(kernel-symbols|random|jhash)\.ts$/],
  ];
  for (const [d, re] of dirs) {
    for (const f of readdirSync(join(repo, d))
      .filter((n) => re.test(n) && !n.endsWith('.test.ts'))
      .sort()) {
      h.update(f).update(readFileSync(join(repo, d, f)));
    }
  }
  return h.digest('hex').slice(0, 12);
}

/** A capture made by `cli generate ARGS` (never `--out`/`--json`: those are added), cached. */
export function generated(args: string[]): Generated {
  if (args.some((a) => a === '--out' || a === '--json')) throw new Error('generated(): --out and --json are added by the cache');
  const key = createHash('sha1').update(JSON.stringify(args)).update(generatorHash()).digest('hex').slice(0, 16);
  const dir = join(CACHE_ROOT, `gen-${key}`);
  const done = join(dir, 'report.json');
  let fresh = false;
  if (!existsSync(done)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'src/cli/main.ts'), 'generate', '--out', dir, '--json', ...args], {
      cwd: repo,
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    if (r.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`generate ${args.join(' ')} exited ${r.status}: ${(r.stderr || r.stdout).slice(-2000)}`);
    }
    // the report is written last, so a run killed halfway leaves no key that looks complete
    writeFileSync(join(dir, 'args.json'), JSON.stringify(args) + '\n');
    writeFileSync(done, r.stdout);
    fresh = true;
  }
  const report = JSON.parse(readFileSync(done, 'utf8')) as GenerateReport;
  const files = report.files.map((f) => join(dir, f.name));
  for (const f of files) if (!existsSync(f)) throw new Error(`cached capture ${dir} lost ${f}: delete the folder`);
  return { dir, files, report, fresh };
}
