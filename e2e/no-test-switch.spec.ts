// Issue 39: the production bundle holds no test switch. `npm run test:e2e` builds the app twice,
// dist/ (what users get) and dist-hooks/ (VITE_TEST_HOOKS=1, for faults.spec and split-trace.spec):
// every file of the first is free of the hooks' names, and the second holds them, so the check
// below sees the strings where they are (it fails if the hooks were renamed and not looked for).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';

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
