import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Seed } from './fuzz.ts';
import { hasRealTraces, realTrace } from './real-traces-dir.ts';

/** The real traces among the seeds: small ones, of three formats. */
export const REAL_SEEDS = ['perf-tools-kprobe_example.txt', 'perf-tools-tpoint_example.txt', 'catapult-atrace_data.txt', 'flamegraph-perf-dd-stacks-01.txt'];

/** The valid captures mutations start from: the embedded sample and small real traces. (Node only.) */
export function fuzzSeeds(): Seed[][] {
  const root = new URL('../../../', import.meta.url).pathname;
  const read = (p: string, name = p.split('/').pop()!) => ({ name, bytes: new Uint8Array(readFileSync(join(root, p))) });
  const sample = ['trace', 'stack_map_bin.gen1', 'stack_map_bin.gen2', 'stack_map_bin.gen3', 'stack_map.gen3', 'stack_map_stat', 'kallsyms'].map((f) =>
    read(`public/samples/${f}`),
  );
  // without ../shared/real-traces/ the run starts from the sample and fixtures alone; fuzz.test.ts
  // has a real-trace test that these seeds are here, so the summary counts their absence
  const reals: Seed[][] = hasRealTraces ? REAL_SEEDS.map((f) => [{ name: f, bytes: realTrace(f) }]) : [];
  const fixtures: Seed[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(root, dir))) {
      const p = `${dir}/${e}`;
      if (statSync(join(root, p)).isDirectory()) {
        if (!p.endsWith('fuzz-regressions')) walk(p);
      } else fixtures.push(read(p, p.split('/').slice(-3).join('-')));
    }
  };
  walk('src/core/formats/fixtures');
  return [sample, ...reals, fixtures.filter((f) => f.bytes.length < 64 * 1024)];
}

/** Every case that ever failed, one folder each under src/core/formats/fixtures/fuzz-regressions. */
export function regressionCases(): { label: string; files: Seed[] }[] {
  const dir = new URL('../formats/fixtures/fuzz-regressions/', import.meta.url).pathname;
  return readdirSync(dir)
    .filter((d) => statSync(join(dir, d)).isDirectory())
    .map((d) => ({
      label: d,
      files: readdirSync(join(dir, d))
        .filter((f) => f !== 'README.txt')
        .map((f) => ({ name: f, bytes: new Uint8Array(readFileSync(join(dir, d, f))) })),
    }));
}
