// The test run's temporary files in one folder of its own, removed when the run ends: TMPDIR,
// which os.tmpdir() reads at each call and the processes the tests start inherit. vitest's and
// Playwright's global setup (each calls it once a run, before its workers start). The tests'
// mkdtempSync folders (87 call sites, and the specs' captures) were left in /tmp, ~130 a run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'smx-vitest-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true });
  };
}
