// The third-party notices of a bundle: the licences of the packages whose code it holds (the
// bundlers drop their comments), for the command line (build-cli.ts, dist-cli/) and the app
// (vite.config.ts's `notices` plugin, dist/).
import { readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Plugin } from 'vite';

const root = new URL('../', import.meta.url).pathname;

/** The packages whose files the bundle holds, as their folders under node_modules (nested ones too), sorted. */
export function bundledPackages(inputs: Iterable<string>): string[] {
  const dirs = new Set<string>();
  for (const raw of inputs) {
    // a module id may carry a query (`?url`, `?worker`) or a leading NUL (a plugin's virtual module)
    const input = raw.replace(/^\0/, '').split('?')[0];
    const at = input.lastIndexOf('node_modules/');
    if (at < 0) continue;
    const rest = input.slice(at + 'node_modules/'.length).split('/');
    dirs.add(input.slice(0, at) + 'node_modules/' + (rest[0].startsWith('@') ? rest.slice(0, 2) : rest.slice(0, 1)).join('/'));
  }
  return [...dirs].sort();
}

/** Per package (folders as bundledPackages gives them, relative to the repository or absolute) its name, version, licence and the text of its LICENSE file, under `title`. */
export function thirdPartyNotices(title: string, packageDirs: readonly string[]): string {
  const parts = [`${title}\n`];
  for (const d of packageDirs) {
    const dir = isAbsolute(d) ? d : join(root, d);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string; license?: string };
    const file = readdirSync(dir).find((f) => /^(licen[sc]e|copying)(\.(md|txt))?$/i.test(f));
    const text = file ? readFileSync(join(dir, file), 'utf8').trim() : `(no licence file in the package; package.json says ${pkg.license ?? 'nothing'})`;
    parts.push(`\n${'-'.repeat(72)}\n${pkg.name} ${pkg.version} (${pkg.license ?? 'licence not stated'})\n\n${text}\n`);
  }
  return parts.join('');
}

/**
 * A Vite plugin writing THIRD_PARTY_NOTICES.txt into the build's folder: the packages of every
 * module in the module graph of the page and of its workers (Vite bundles each worker in a build of
 * its own, before the page's ends: `worker.plugins` gives them the same collector), a package that
 * only re-exports others (d3) included.
 */
export function noticesPlugin(): { page: Plugin; worker: () => Plugin[] } {
  const modules = new Set<string>();
  const collect: Plugin = {
    name: 'smx-notices-collect',
    apply: 'build',
    buildEnd() {
      for (const id of this.getModuleIds()) modules.add(id);
    },
  };
  const page: Plugin = {
    ...collect,
    name: 'smx-notices',
    generateBundle() {
      this.emitFile({
        type: 'asset',
        fileName: 'THIRD_PARTY_NOTICES.txt',
        source: thirdPartyNotices('Third-party software in this build of the app (dist/), with the notices their licences require.', bundledPackages(modules)),
      });
    },
  };
  return { page, worker: () => [collect] };
}
