// No source file over 400 lines without a reason (issue 39, "the hard files split"): a file that
// long is either split along its seams or says in its folder README why it is one file.
//
// How a README gives the reason: on one of its table rows, the file's name in backticks followed
// at once by ` (long: REASON)`, REASON one line without a `)`:
//
//   | `perf-script.ts` (long: one format's reader; its grammar is one state machine) | `perf script` samples ... |
//   | `*.test.ts` | tests of the file of the same name; `trace-text.test.ts` (long: ...) ... |
//
// The file's README is the one readmes.ts says covers its folder (src/ui/README.md for
// src/ui/simulator/SimulatorPane.tsx), and the name is the file's path from that README's folder
// (`simulator/SimulatorPane.tsx`), as folder-readmes.test.ts has the READMEs name their files.
// Lines are counted as `wc -l` counts them (newlines). Tests and e2e specs count as well.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { coveredFiles, READMES } from './readmes.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const LIMIT = 400;

/** `wc -l`: the newlines in the text. */
const lineCount = (text: string): number => text.split('\n').length - 1;

/** A long file: its README, its name there (its path from the README's folder) and its lines. */
interface Long {
  readme: string;
  name: string;
  lines: number;
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

/** The long files whose README gives no reason (`readText` a README's text). */
function unexplained(files: readonly Long[], readText: (readme: string) => string): string[] {
  return files
    .filter((f) => f.lines > LIMIT && longReason(readText(f.readme), f.name) === null)
    .map((f) => `${join(dirname(f.readme), f.name)} (${f.lines} lines): no \`${f.name}\` (long: ...) in ${f.readme}`);
}

describe(`source files over ${LIMIT} lines`, () => {
  it('each has a one-line reason in its folder README', () => {
    const files: Long[] = READMES.flatMap((r) =>
      coveredFiles(join(ROOT, dirname(r.readme)), r.covers, true).map((name) => ({
        readme: r.readme,
        name,
        lines: lineCount(readFileSync(join(ROOT, dirname(r.readme), name), 'utf8')),
      })),
    );
    expect(files.length).toBeGreaterThan(100);
    expect(unexplained(files, (p) => readFileSync(join(ROOT, p), 'utf8'))).toEqual([]);
  });

  it('can fail: a long file without its reason, a reason on another file, a reason out of a table', () => {
    const readmes: Record<string, string> = {
      'src/x/README.md':
        '# x\n\n| file | what |\n| --- | --- |\n| `a.ts` (long: one reader; one state machine) | a |\n| `b.ts` | b (long: not after its name) |\n| `*.test.ts` | `c.test.ts` (long: one case per shape) |\n\n`d.ts` (long: outside the table)\n',
      'src/ui/README.md': '| `pane/P.tsx` (long: one pane) | p |\n',
    };
    const x = (name: string, lines: number) => ({ readme: 'src/x/README.md', name, lines });
    const files = [
      x('a.ts', 900),
      x('b.ts', 401),
      x('c.test.ts', 500),
      x('d.ts', 450),
      x('e.ts', 400),
      { readme: 'src/ui/README.md', name: 'pane/P.tsx', lines: 700 },
    ];
    const got = unexplained(files, (p) => readmes[p]);
    expect(got.map((m) => m.split(' ')[0])).toEqual(['src/x/b.ts', 'src/x/d.ts']);
    expect(longReason(readmes['src/x/README.md'], 'a.ts')).toBe('one reader; one state machine');
    expect(lineCount('a\nb\n')).toBe(2);
  });
});
