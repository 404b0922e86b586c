// Builds the command line to plain JavaScript (npm run build:cli): dist-cli/stackmap-explorer.mjs,
// the `bin` of the package, plus dist-cli/sim-worker.mjs, the simulator's worker_threads entry
// (run-node.ts starts it when it runs from the bundle), dist-cli/trace-part-worker.mjs, the
// second thread of a large trace's read (trace-parts.ts), and the chunks they share. Code splitting
// keeps `--help` from parsing the readers and the simulator: each command's code is a chunk
// loaded by its dynamic import in main.ts.
import { build } from 'esbuild';
import { chmodSync, rmSync } from 'node:fs';

const root = new URL('../', import.meta.url).pathname;
const outdir = root + 'dist-cli';

export async function buildCli(): Promise<string[]> {
  rmSync(outdir, { recursive: true, force: true });
  const r = await build({
    absWorkingDir: root,
    entryPoints: { 'stackmap-explorer': 'src/cli/main.ts', 'sim-worker': 'src/core/sim/node-worker.ts', 'trace-part-worker': 'src/cli/trace-part-worker.ts' },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outExtension: { '.js': '.mjs' },
    // chunks beside the entries: run-node.ts finds ./sim-worker.mjs relative to its own chunk
    chunkNames: '[name]-[hash]',
    banner: { js: '#!/usr/bin/env node' },
    legalComments: 'none',
    // a native addon (a .node binary per platform) cannot be bundled: `sql` imports it at run time
    external: ['@duckdb/node-api'],
    metafile: true,
    logLevel: 'warning',
  });
  chmodSync(outdir + '/stackmap-explorer.mjs', 0o755);
  return Object.keys(r.metafile.outputs);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const outs = await buildCli();
  console.log(`wrote ${outs.length} files to dist-cli/: ${outs.map((o) => o.replace(/^dist-cli\//, '')).join(', ')}`);
}
