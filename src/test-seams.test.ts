// Test seams in the product (issue 39): what tests reach into, named so a search finds it
// (`...ForTests`, as speedscope's withMockedFileChunkSizeForTests and Perfetto's *_for_testing),
// and listed here, so a new one fails this test until it is added with its reason.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

/** Each seam, where it is, and what the tests use it for. */
const SEAMS: Record<string, string> = {
  'core/base/string-table.ts keyForTests': "StringTable's hash key fixed, to build a flood against it (hash-flood.test.ts)",
  'core/base/string-table.ts guardForTests': "StringTable's re-key guard off, to show its bound can fail",
  'core/base/string-table.ts hashMaskForTests': 'every hash forced equal, to drive the guard to stand down',
  'core/capture/stack-table.ts fixedHashForTests': "the stack table's old child-slot function, to flood it",
  'core/capture/stack-table.ts guardForTests': "the stack table's re-key guard off",
  'core/formats/perf-script.ts headerStepsForTests': 'characters the perf header scan visits, for the linear-work check',
  'core/unpack/inflate.ts inflateWorkForTests': 'bytes inflate copies and chunks it pushes, for the linear-work check',
  'core/capture/ip-pool.ts hashLimitForTests':
    "the binary dump's address table's limit (0: every dump read in two passes), so both paths are checked against each other",
  'core/capture/ingest.ts hashLimitForTests': 'the same limit, passed through a load',
  'core/capture/ingest.ts dumpHashLimitForTests': 'the load option that carries it',
  'core/capture/dumps.ts hashLimitForTests': 'the same limit, passed to IpPool',
  'core/query/flame.ts setFlameStrategyForTests': "the flame graph's merge strategy forced, so both strategies are checked against each other",
  'core/formats/lines.ts setLinesByMemchrForTests': "lines found the browser's way (one JS loop) in Node, so both ways are checked against each other",
  'core/sim/map-insert.ts hitForTests':
    "the simulator's WebAssembly hit wrapped, so a test counts the hits it takes itself (the JS path it gives up to makes the same map)",
};

/**
 * A switch the product reads at run time for tests, each with the reason. Each is compiled out of
 * the production build (TEST_HOOKS_BUILT, workers/ingest-api.ts): only the dev server and the e2e
 * tests' dist-hooks/ carry it, and e2e/dist-files.spec.ts greps dist/ for its names.
 */
const SWITCHES: Record<string, string> = {
  'state/load/load-worker.ts test-hooks':
    "?test-hooks: the e2e tests' window.__smxTest hooks and a worker that splits every trace past 64 KiB (users' split starts at 16 MiB, on two cores or more)",
  'workers/ingest-api.ts test-hooks':
    "the same switch as the ingest worker's name carries it (TEST_HOOKS): testStall, testHoldAt (a load held at a percent, for a cancel there), the low split threshold; TEST_HOOKS_BUILT, what compiles them out",
};

const isTest = (f: string) => /\.test\.tsx?$/.test(f) || f.startsWith('core/testing/') || f === 'cli/test-io.ts';

function files(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) files(p, out);
    else if (/\.(ts|tsx|mjs)$/.test(e.name)) out.push(p);
  }
  return out;
}

describe('test seams in the product', () => {
  const product = files(SRC)
    .map((f) => ({ path: relative(SRC, f), text: readFileSync(f, 'utf8') }))
    .filter((f) => !isTest(f.path));

  it('are named ...ForTests and each is listed with its reason', () => {
    const found = new Set<string>();
    for (const { path, text } of product) {
      for (const m of text.matchAll(/\b(\w+ForTests)\b/g)) {
        // declared in this file: `name?:`, `name =`, `function name`, `name:` in a parameter list
        const decl = new RegExp(`(?:function\\s+${m[1]}\\b|\\b${m[1]}\\??:|\\b(?:const|let|readonly)\\s+${m[1]}\\b)`);
        if (decl.test(text)) found.add(`${path} ${m[1]}`);
      }
    }
    expect([...found].sort()).toEqual(Object.keys(SEAMS).sort());
  });

  it('no product file calls something test support without naming it so', () => {
    const loose = product.filter((f) => /\(test support\)/.test(f.text)).map((f) => f.path);
    expect(loose).toEqual([]);
  });

  it('the run-time test switches are the listed ones', () => {
    const found = product.filter((f) => /['"`?]test-hooks\b|__SMX_TEST_HOOKS__/.test(f.text)).map((f) => f.path);
    expect(found.sort()).toEqual(
      Object.keys(SWITCHES)
        .map((k) => k.split(' ')[0])
        .sort(),
    );
  });
});
