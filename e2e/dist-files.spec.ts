// What dist/ holds beside the app (issue 39). No test switch: `npm run test:e2e` builds the app twice,
// dist/ (what users get) and dist-hooks/ (VITE_TEST_HOOKS=1, for faults.spec and split-trace.spec):
// every file of the first is free of the hooks' names, and the second holds them, so the check
// below sees the strings where they are (it fails if the hooks were renamed and not looked for).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, test } from '@playwright/test';
import { importSpecs, packageOf } from '../scripts/imports.ts';

const DIST = process.env.PW_DIST ?? 'dist';
/** the switch in the URL, the worker's name mark, the hooks' global and the switch on window */
const NAMES = ['test-hooks', '__smxTest', '__SMX_TEST_HOOKS__'];

function files(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) files(p, out);
    else if (/\.(js|mjs|html)$/.test(e.name)) out.push(p);
  }
  return out;
}

/** Each name and the files of `dir` that hold it. */
function holders(dir: string): Record<string, string[]> {
  const texts = files(dir).map((f) => ({ f, text: readFileSync(f, 'utf8') }));
  return Object.fromEntries(NAMES.map((n) => [n, texts.filter((t) => t.text.includes(n)).map((t) => t.f)]));
}

test('the production build holds no test switch, and the hooks build holds each', () => {
  expect(holders(DIST)).toEqual(Object.fromEntries(NAMES.map((n) => [n, []])));
  const hooks = holders(`${DIST}-hooks`);
  for (const n of NAMES) expect(hooks[n].length, `${n} in ${DIST}-hooks`).toBeGreaterThan(0);
});

/**
 * The packages the page's code imports by name, from the source: every file reached from the
 * page's entry (index.html's src/ui/main.tsx) through static and dynamic imports and `new
 * URL('./x.worker.ts', import.meta.url)` workers, type-only imports left out. A second count
 * beside the module graph Vite's build gives the notices plugin.
 */
function importedPackages(): string[] {
  const found = new Set<string>();
  const seen = new Set<string>();
  const todo = ['src/ui/main.tsx'];
  while (todo.length) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const specs = importSpecs(readFileSync(file, 'utf8'))
      .filter((i) => !i.typeOnly)
      .map((i) => i.spec);
    for (const raw of specs) {
      const spec = raw.split('?')[0];
      if (spec.startsWith('.')) {
        const to = join(dirname(file), spec);
        if (/\.(tsx?|mjs|js)$/.test(to) && existsSync(to)) todo.push(to);
      } else if (packageOf(spec) !== 'node:*') found.add(packageOf(spec));
    }
  }
  return [...found].sort();
}

test('dist/THIRD_PARTY_NOTICES.txt names every package the page imports, with its version and licence text', () => {
  const file = join(DIST, 'THIRD_PARTY_NOTICES.txt');
  expect(existsSync(file)).toBe(true);
  const notices = readFileSync(file, 'utf8');
  const wanted = importedPackages();
  expect(wanted).toEqual(expect.arrayContaining(['react', 'zustand', 'comlink', 'fflate']));
  for (const name of wanted) {
    const pkg = JSON.parse(readFileSync(join('node_modules', name, 'package.json'), 'utf8')) as { version: string };
    expect(notices, name).toContain(`\n${name} ${pkg.version} (`);
  }
});
