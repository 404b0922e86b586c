// No source file over 400 lines without a reason (issue 39, "the hard files split"): a file that
// long is either split along its seams or says in its folder README why it is one file.
//
// How a README gives the reason: on one of its table rows, the file's name in backticks followed
// at once by ` (long: REASON)`, REASON one line without a `)`:
//
//   | `perf-script.ts` (long: one format's reader; its grammar is one state machine) | `perf script` samples ... |
//   | `*.test.ts` | tests of the file of the same name; `trace-text.test.ts` (long: ...) ... |
//
// The file's README is the nearest README.md from its folder up (src/ui/README.md for
// src/ui/simulator/SimulatorPane.tsx), and the name is the file's path from that README's folder
// (`simulator/SimulatorPane.tsx`), as folder-readmes.test.ts has the READMEs name their files.
// Lines are counted as `wc -l` counts them (newlines). Tests and e2e specs count as well.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../', import.meta.url).pathname;
const TREES = ['src', 'bench', 'e2e', 'scripts'];
const LIMIT = 400;

const isSource = (name: string) => /\.(ts|tsx|mjs)$/.test(name);

/** Every source file under `dir` (fixtures and node_modules left out), as paths from the repo. */
function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'fixtures' || e.name.startsWith('dist') || e.name.startsWith('test-results')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, out);
    else if (isSource(e.name)) out.push(p);
  }
  return out;
}

/** `wc -l`: the newlines in the text. */
const lineCount = (text: string): number => text.split('\n').length - 1;

/** The README nearest to `file` (its folder, then up; `readText` null: none there), its text, and the file's path from its folder. */
function readmeOf(file: string, readText: (path: string) => string | null): { readme: string; text: string; name: string } | null {
  for (let dir = dirname(file); dir !== '.' && dir !== ''; dir = dirname(dir)) {
    const readme = join(dir, 'README.md');
    const text = readText(readme);
    if (text !== null) return { readme, text, name: relative(dir, file) };
  }
  return null;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The reason a README's table rows give for `name` (`` `name` (long: REASON) ``), or null. */
function longReason(readme: string, name: string): string | null {
  const re = new RegExp('`' + escape(name) + '` \\(long: ([^)\\n]+)\\)');
  for (const row of readme.split('\n').filter((l) => l.startsWith('|'))) {
    const m = re.exec(row);
    if (m && m[1].trim().length > 0) return m[1].trim();
  }
  return null;
}

/** The files over LIMIT lines whose README gives no reason. */
function unexplained(files: readonly { path: string; lines: number }[], readText: (path: string) => string | null): string[] {
  const missing: string[] = [];
  for (const f of files) {
    if (f.lines <= LIMIT) continue;
    const r = readmeOf(f.path, readText);
    if (!r || longReason(r.text, r.name) === null)
      missing.push(`${f.path} (${f.lines} lines): no \`${r?.name ?? f.path}\` (long: ...) in ${r?.readme ?? 'any README'}`);
  }
  return missing;
}

describe(`source files over ${LIMIT} lines`, () => {
  it('each has a one-line reason in its folder README', () => {
    const files = TREES.flatMap((t) => sources(t)).map((path) => ({ path, lines: lineCount(readFileSync(join(ROOT, path), 'utf8')) }));
    expect(files.length).toBeGreaterThan(100);
    const read = (p: string) => (existsSync(join(ROOT, p)) ? readFileSync(join(ROOT, p), 'utf8') : null);
    expect(unexplained(files, read)).toEqual([]);
  });

  it('can fail: a long file without its reason, a reason on another file, a reason out of a table', () => {
    const readmes: Record<string, string> = {
      'src/x/README.md':
        '# x\n\n| file | what |\n| --- | --- |\n| `a.ts` (long: one reader; one state machine) | a |\n| `b.ts` | b (long: not after its name) |\n| `*.test.ts` | `c.test.ts` (long: one case per shape) |\n\n`d.ts` (long: outside the table)\n',
      'src/ui/README.md': '| `pane/P.tsx` (long: one pane) | p |\n',
    };
    const files = [
      { path: 'src/x/a.ts', lines: 900 },
      { path: 'src/x/b.ts', lines: 401 },
      { path: 'src/x/c.test.ts', lines: 500 },
      { path: 'src/x/d.ts', lines: 450 },
      { path: 'src/x/e.ts', lines: 400 },
      { path: 'src/ui/pane/P.tsx', lines: 700 },
    ];
    const got = unexplained(files, (p) => readmes[p] ?? null);
    expect(got.map((m) => m.split(' ')[0])).toEqual(['src/x/b.ts', 'src/x/d.ts']);
    expect(longReason(readmes['src/x/README.md'], 'a.ts')).toBe('one reader; one state machine');
    expect(lineCount('a\nb\n')).toBe(2);
  });
});
