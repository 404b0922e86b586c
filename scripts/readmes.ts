// The folder READMEs and the trees they cover: what folder-readmes.test.ts (each README names
// every file of its folders) and long-files.test.ts (a long file's reason on its README's row)
// both read, so the README that covers a file is decided in one place.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Each README and the folders it covers (relative to its own folder; '' is the folder itself). A
 * file in a covered sub-folder is named by its path from the README's folder (`peers/folded.ts`).
 */
export const READMES: readonly { readme: string; covers: readonly string[] }[] = [
  { readme: 'src/core/README.md', covers: [''] },
  { readme: 'src/core/base/README.md', covers: [''] },
  { readme: 'src/core/formats/README.md', covers: [''] },
  { readme: 'src/core/formats/trace-dat/README.md', covers: [''] },
  { readme: 'src/core/unpack/README.md', covers: [''] },
  { readme: 'src/core/capture/README.md', covers: [''] },
  { readme: 'src/core/query/README.md', covers: [''] },
  { readme: 'src/core/export/README.md', covers: [''] },
  { readme: 'src/core/tables/README.md', covers: [''] },
  { readme: 'src/core/sim/README.md', covers: [''] },
  { readme: 'src/core/whatif/README.md', covers: [''] },
  { readme: 'src/core/testing/README.md', covers: [''] },
  { readme: 'src/state/README.md', covers: [''] },
  { readme: 'src/state/load/README.md', covers: [''] },
  { readme: 'src/state/sim/README.md', covers: [''] },
  { readme: 'src/state/sql/README.md', covers: [''] },
  { readme: 'src/state/view/README.md', covers: [''] },
  { readme: 'src/workers/README.md', covers: [''] },
  { readme: 'src/cli/README.md', covers: [''] },
  {
    readme: 'src/ui/README.md',
    covers: [
      '',
      'app',
      'banner',
      'common',
      'compare',
      'diagnostics',
      'drop',
      'exports',
      'filter',
      'flamegraph',
      'generations',
      'help',
      'idstory',
      'load',
      'menu',
      'simulator',
      'sql',
      'stacks',
      'stats',
      'summary',
      'timeline',
      'whatif',
    ],
  },
  { readme: 'bench/README.md', covers: ['', 'peers'] },
  { readme: 'e2e/README.md', covers: [''] },
  { readme: 'scripts/README.md', covers: [''] },
];

/** Where READMEs are required: every folder under these holding a source file (fixtures aside). */
export const TREES = ['src', 'bench', 'e2e', 'scripts'];

export const isSource = (name: string) => /\.(ts|tsx|mjs)$/.test(name);
export const isTest = (name: string) => /\.test\.tsx?$/.test(name);

/** The source files directly in `dir` that a README must name: every `*.ts`, `*.tsx`, `*.mjs` but tests (with `tests`, those too). */
export function sourcesIn(dir: string, tests = false): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && isSource(e.name) && (tests || !isTest(e.name)))
    .map((e) => e.name)
    .sort();
}

/** The folders under `dir` (itself included) that hold a source file, tests included, fixtures left out. */
export function sourceFolders(dir: string, out: string[] = []): string[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  if (entries.some((e) => e.isFile() && isSource(e.name))) out.push(dir);
  for (const e of entries) if (e.isDirectory() && e.name !== 'fixtures' && e.name !== 'node_modules') sourceFolders(join(dir, e.name), out);
  return out;
}

/** The files a README covers, as it names them (its folder's files, a covered sub-folder's as `sub/file`); tests too with `tests`. */
export function coveredFiles(readmeDir: string, covers: readonly string[], tests = false): string[] {
  return covers.flatMap((sub) => sourcesIn(join(readmeDir, sub), tests).map((f) => (sub ? `${sub}/${f}` : f)));
}
