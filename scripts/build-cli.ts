// Builds the command line to plain JavaScript (npm run build:cli): dist-cli/stackmap-explorer.mjs,
// the `bin` of the package, plus dist-cli/sim-worker.mjs, the simulator's worker_threads entry
// (run-node.ts starts it when it runs from the bundle), dist-cli/trace-part-worker.mjs, the
// second thread of a large trace's read (trace-parts.ts), and the chunks they share. Code splitting
// keeps `--help` from parsing the readers and the simulator: each command's code is a chunk
// loaded by its dynamic import in main.ts. Beside them, THIRD_PARTY_NOTICES.txt: the licences of
// the packages bundled (esbuild drops their comments; notices.ts).
import { build } from 'esbuild';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { bundledPackages, thirdPartyNotices } from './notices.ts';

const root = new URL('../', import.meta.url).pathname;
const outdir = root + 'dist-cli';

/** esbuild's options for the command line of the tree at `root` (build:cli's, and the benchmarks' bundle of another revision). */
export function cliBuildOptions(root: string, outdir: string, entryPoints: Record<string, string>) {
  return {
    absWorkingDir: root,
    entryPoints,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm' as const,
    platform: 'node' as const,
    target: 'node20',
    outExtension: { '.js': '.mjs' },
    // a native addon (a .node binary per platform) cannot be bundled: `sql` imports it at run time
    external: ['@duckdb/node-api'],
  };
}

/**
 * The command line bundled into `dir` (its entries and chunks, the entry executable): build:cli's
 * bundle, and the one the integration tests run (scripts/cli-bundle.setup.ts). `dir` must be a
 * folder of the repository's top, as dist-cli/ is: the external `@duckdb/node-api` resolves from
 * its node_modules and version.ts reads ../package.json.
 */
export async function buildCliInto(dir: string) {
  const r = await build({
    ...cliBuildOptions(root, dir, {
      'stackmap-explorer': 'src/cli/main.ts',
      'sim-worker': 'src/core/sim/node-worker.ts',
      'trace-part-worker': 'src/cli/trace-part-worker.ts',
    }),
    // chunks beside the entries: run-node.ts finds ./sim-worker.mjs relative to its own chunk
    chunkNames: '[name]-[hash]',
    banner: { js: '#!/usr/bin/env node' },
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  chmodSync(dir + '/stackmap-explorer.mjs', 0o755);
  return r;
}

export async function buildCli(): Promise<string[]> {
  rmSync(outdir, { recursive: true, force: true });
  const r = await buildCliInto(outdir);
  writeFileSync(
    outdir + '/THIRD_PARTY_NOTICES.txt',
    thirdPartyNotices(
      'Third-party software in dist-cli/ (the bundled command line), with the notices their licences require.',
      bundledPackages(Object.keys(r.metafile.inputs)),
    ),
  );
  return [...Object.keys(r.metafile.outputs), 'dist-cli/THIRD_PARTY_NOTICES.txt'];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const outs = await buildCli();
  console.log(`wrote ${outs.length} files to dist-cli/: ${outs.map((o) => o.replace(/^dist-cli\//, '')).join(', ')}`);
}
