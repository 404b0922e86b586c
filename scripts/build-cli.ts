// Builds the command line to plain JavaScript (npm run build:cli): dist-cli/stackmap-explorer.mjs,
// the `bin` of the package, plus dist-cli/sim-worker.mjs, the simulator's worker_threads entry
// (run-node.ts starts it when it runs from the bundle), dist-cli/trace-part-worker.mjs, the
// second thread of a large trace's read (trace-parts.ts), and the chunks they share. Code splitting
// keeps `--help` from parsing the readers and the simulator: each command's code is a chunk
// loaded by its dynamic import in main.ts. Beside them, THIRD_PARTY_NOTICES.txt: the licences of
// the packages bundled (esbuild drops their comments).
import { build } from 'esbuild';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

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

export async function buildCli(): Promise<string[]> {
  rmSync(outdir, { recursive: true, force: true });
  const r = await build({
    ...cliBuildOptions(root, outdir, { 'stackmap-explorer': 'src/cli/main.ts', 'sim-worker': 'src/core/sim/node-worker.ts', 'trace-part-worker': 'src/cli/trace-part-worker.ts' }),
    // chunks beside the entries: run-node.ts finds ./sim-worker.mjs relative to its own chunk
    chunkNames: '[name]-[hash]',
    banner: { js: '#!/usr/bin/env node' },
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  chmodSync(outdir + '/stackmap-explorer.mjs', 0o755);
  writeFileSync(outdir + '/THIRD_PARTY_NOTICES.txt', thirdPartyNotices(bundledPackages(Object.keys(r.metafile.inputs))));
  return [...Object.keys(r.metafile.outputs), 'dist-cli/THIRD_PARTY_NOTICES.txt'];
}

/** The packages whose files the bundle holds, as their folders under node_modules (nested ones too), sorted. */
export function bundledPackages(inputs: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const input of inputs) {
    const at = input.lastIndexOf('node_modules/');
    if (at < 0) continue;
    const rest = input.slice(at + 'node_modules/'.length).split('/');
    dirs.add(input.slice(0, at) + 'node_modules/' + (rest[0].startsWith('@') ? rest.slice(0, 2) : rest.slice(0, 1)).join('/'));
  }
  return [...dirs].sort();
}

/**
 * The notices the bundled code's licences ask to keep with it (esbuild drops their comments from
 * the bundle): per package its name, version, licence and the text of its LICENSE file.
 */
export function thirdPartyNotices(packageDirs: readonly string[]): string {
  const parts = ['Third-party software in dist-cli/ (the bundled command line), with the notices their licences require.\n'];
  for (const dir of packageDirs) {
    const pkg = JSON.parse(readFileSync(root + dir + '/package.json', 'utf8')) as { name: string; version: string; license?: string };
    const file = readdirSync(root + dir).find((f) => /^(licen[sc]e|copying)(\.(md|txt))?$/i.test(f));
    const text = file && existsSync(root + dir + '/' + file) ? readFileSync(root + dir + '/' + file, 'utf8').trim() : `(no licence file in the package; package.json says ${pkg.license ?? 'nothing'})`;
    parts.push(`\n${'-'.repeat(72)}\n${pkg.name} ${pkg.version} (${pkg.license ?? 'licence not stated'})\n\n${text}\n`);
  }
  return parts.join('');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const outs = await buildCli();
  console.log(`wrote ${outs.length} files to dist-cli/: ${outs.map((o) => o.replace(/^dist-cli\//, '')).join(', ')}`);
}
