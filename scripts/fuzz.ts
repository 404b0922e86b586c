// The long fuzz run: npm run fuzz [-- --cases N] [--seed S] [--max-ms M]
// Mutated captures through loadFiles (src/core/testing/fuzz.ts); each failing case is written to
// src/core/formats/fixtures/fuzz-regressions/<seed>-<n>/ so npm test keeps checking it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeCase, Prng, runCase } from '../src/core/testing/fuzz.ts';
import { fuzzSeeds } from '../src/core/testing/fuzz-seeds.ts';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const cases = arg('--cases', 20000);
const seed = arg('--seed', (Date.now() % 0xffffffff) >>> 0);
const maxMs = arg('--max-ms', 15000);
const seeds = fuzzSeeds();
const r = new Prng(seed);
const out = new URL('../src/core/formats/fixtures/fuzz-regressions/', import.meta.url).pathname;
let failed = 0;
const t0 = performance.now();
for (let i = 0; i < cases; i++) {
  const c = makeCase(r.pick(seeds), r);
  const why = await runCase(c, maxMs);
  if (why) {
    failed++;
    const dir = join(out, `${seed}-${i}`);
    mkdirSync(dir, { recursive: true });
    for (const f of c.files) writeFileSync(join(dir, f.name.replace(/[^\w.-]/g, '_')), f.bytes);
    writeFileSync(join(dir, 'README.txt'), `${c.label}\n${why}\n`);
    process.stdout.write(`FAIL ${i}: ${c.label}\n  ${why}\n  kept in ${dir}\n`);
  }
  if ((i + 1) % 1000 === 0) process.stdout.write(`${i + 1} cases, ${failed} failed, ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
}
process.stdout.write(`seed ${seed}: ${cases} cases, ${failed} failed in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
process.exit(failed ? 1 : 0);
