// The folder READMEs against the folders they describe (issue 19): each names every source file of
// its folder in backticks, every file its table names exists, and it stays a short table (the
// reasoning lives in docs/architecture.md). A file added, moved or deleted without its README
// fails here, so a README cannot drift from its folder.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { coveredFiles, isSource, READMES, sourceFolders, sourcesIn, TREES } from './readmes.ts';

const ROOT = new URL('../', import.meta.url).pathname;

/** Every backticked name in `text`. */
const backticked = (text: string): Set<string> => new Set([...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]));

/** The file names a README's table rows give in backticks (a glob such as `*.test.ts` is not a file). */
const tableFiles = (text: string): string[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .flatMap((l) => [...l.matchAll(/`([^`\s*]+\.(?:ts|tsx|mjs))`/g)].map((m) => m[1]));

/** What is wrong with one README: files of its folders it does not name, and table names that are no file. */
function problems(readmeDir: string, text: string, files: readonly string[], exists: (path: string) => boolean): { unnamed: string[]; phantom: string[] } {
  const named = backticked(text);
  return {
    unnamed: files.filter((f) => !named.has(f)),
    phantom: tableFiles(text).filter((f) => !exists(join(readmeDir, f))),
  };
}

describe('folder READMEs', () => {
  it.each(READMES.map((r) => [r.readme, r] as const))('%s names every file of its folder, and only files that exist', (_, r) => {
    const dir = join(ROOT, dirname(r.readme));
    const text = readFileSync(join(ROOT, r.readme), 'utf8');
    expect(problems(dir, text, coveredFiles(dir, r.covers), existsSync)).toEqual({ unnamed: [], phantom: [] });
  });

  it.each(READMES.map((r) => [r.readme, r] as const))('%s is 3 to 40 lines, with a table of files (and its layer, under src/)', (name) => {
    const text = readFileSync(join(ROOT, name), 'utf8');
    const lines = text.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.length).toBeLessThanOrEqual(40);
    expect(lines.some((l) => /^\| -+ \| -+ \|$/.test(l))).toBe(true);
    if (name.startsWith('src/')) expect(lines.filter((l) => l.startsWith('May import: '))).toHaveLength(1);
  });

  it('covers every folder that holds source files, each by one README', () => {
    const covered = READMES.flatMap((r) => r.covers.map((sub) => join(dirname(r.readme), sub)));
    const folders = TREES.flatMap((t) => sourceFolders(join(ROOT, t))).map((d) => relative(ROOT, d));
    // a second count of the same tree: the folders `find`-style walking through statSync gives
    const walk = (d: string): string[] => [
      d,
      ...readdirSync(join(ROOT, d))
        .filter((n) => n !== 'fixtures' && statSync(join(ROOT, d, n)).isDirectory())
        .flatMap((n) => walk(join(d, n))),
    ];
    const withSources = TREES.flatMap(walk).filter((d) => readdirSync(join(ROOT, d)).some(isSource));
    expect(folders.sort()).toEqual(withSources.sort());
    // src/ itself holds only src/layers.test.ts, and src/core only folders
    expect(folders.filter((d) => !covered.includes(d))).toEqual(['src']);
    expect(sourcesIn(join(ROOT, 'src'))).toEqual([]);
    expect(new Set(covered).size).toBe(covered.length);
  });

  it('comments and READMEs name only files that exist (by name anywhere in the tree, or an output the build writes)', () => {
    const names = new Set(TREES.flatMap((t) => allFiles(join(ROOT, t))).map((f) => f.split('/').pop()!));
    const stale: string[] = [];
    for (const t of TREES)
      for (const f of allFiles(join(ROOT, t)).filter((p) => /\.(ts|tsx|mjs|md)$/.test(p)))
        for (const n of namedInComments(readFileSync(f, 'utf8'), f.endsWith('.md')))
          if (!names.has(n) && !BUILT.has(n)) stale.push(`${relative(ROOT, f)}: ${n}`);
    expect(stale).toEqual([]);
    // can fail: a comment naming a file that went, and a property access that is no file name
    expect(namedInComments('// parsed by trace-dat-v6.ts and fly.ts\nconst t = rec.ts;\n * see gone.tsx', false)).toEqual([
      'trace-dat-v6.ts',
      'fly.ts',
      'gone.tsx',
    ]);
  });

  it('the tool folders import one way: bench may use scripts, scripts never bench (nor e2e)', () => {
    const back = allFiles(join(ROOT, 'scripts'))
      .filter((f) => /\.(ts|mjs)$/.test(f))
      .filter((f) => /from '\.\.\/(bench|e2e)\//.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(back).toEqual([]);
  });

  it('can fail: a file left out and a table row naming no file are both caught', () => {
    const text = '# x\n\n| file | what |\n| --- | --- |\n| `a.ts` | here |\n| `gone.ts` | deleted |\n| `*.test.ts` | tests |\n';
    const exists = (p: string) => ['/d/a.ts', '/d/b.tsx'].includes(p);
    expect(problems('/d', text, ['a.ts', 'b.tsx'], exists)).toEqual({ unnamed: ['b.tsx'], phantom: ['gone.ts'] });
    expect(tableFiles('| `peers/folded.ts` and `x.mjs`, not `npx tsx bench/X.ts --json` |')).toEqual(['peers/folded.ts', 'x.mjs']);
  });
});

/** Files the build writes (dist-cli), which comments may name though the tree does not hold them. */
const BUILT = new Set(['sim-worker.mjs', 'trace-part-worker.mjs', 'stackmap-explorer.mjs']);

/** Every file under a folder (node_modules and build outputs left out). */
function allFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('dist') || e.name.startsWith('test-results')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) allFiles(p, out);
    else out.push(p);
  }
  return out;
}

/**
 * The file names (ending .ts, .tsx or .mjs) a text's comments name (a README: all of it): not a
 * glob's tail (after `*.`), a path counted by its last part, and code lines (a property access) not read.
 */
function namedInComments(text: string, all: boolean): string[] {
  const body = all
    ? text
    : text
        .split('\n')
        .filter((l) => /^\s*(\/\/|\*|\/\*)/.test(l))
        .join('\n');
  return [...body.matchAll(/(?<![\w.*-])([A-Za-z][A-Za-z0-9_-]{2,}\.(?:ts|tsx|mjs))\b/g)].map((m) => m[1]);
}
