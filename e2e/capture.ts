import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSample, type SampleOptions } from '../src/core/sim/sample-capture.ts';
import { sampleFiles } from '../src/core/sim/sample-files.ts';

/** Writes a generated capture's files to a fresh folder and returns their paths. */
export function writeCapture(opts: SampleOptions): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'smx-capture-'));
  const paths: string[] = [];
  for (const [name, bytes] of sampleFiles(generateSample(opts))) {
    const p = join(dir, name);
    writeFileSync(p, bytes);
    paths.push(p);
  }
  return paths;
}

/** Bundles files into a .tar.gz with the repo's script, as a user would, and returns its path. */
export function bundle(paths: string[], name = 'capture.tar.gz'): string {
  const out = join(mkdtempSync(join(tmpdir(), 'smx-bundle-')), name);
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/make-bundle.ts', out, ...paths]); // Node with tsx's loader: no npx lookup
  return out;
}
