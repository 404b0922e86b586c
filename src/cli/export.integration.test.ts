// Two exports started together into one new folder (issue 23): both captures end up in it, one
// beside the other, and the lock is gone. Before, both chose the flat layout and the second
// silently replaced the first (2 of 6 trials). Real processes, started at once.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliArgv } from './test-io.ts';
import { captureIdOfPaths } from './export-folder.ts';
import { EXPORT_LOCK } from './export-lock.ts';

const SAMPLES = new URL('../../public/samples/', import.meta.url).pathname;

describe('export --parquet, two at once', () => {
  it('into one new folder: both captures there, each once, the lock released', async () => {
    const base = mkdtempSync(join(tmpdir(), 'smx-conc-'));
    // two captures: the sample trace, and the sample trace with one event more
    const a = [SAMPLES + 'trace', SAMPLES + 'stack_map_bin.gen1'];
    const other = join(base, 'trace');
    writeFileSync(
      other,
      Buffer.concat([readFileSync(SAMPLES + 'trace'), Buffer.from('           <...>-1     [000] ...1.  9999.000000: do_sys_openat2 <-__x64_sys_openat\n')]),
    );
    const b = [other, SAMPLES + 'stack_map_bin.gen1'];
    const ids = [captureIdOfPaths(a), captureIdOfPaths(b)];
    expect(ids[0]).not.toBe(ids[1]);
    const out = join(base, 'fleet');
    for (let trial = 0; trial < 3; trial++) {
      const dir = join(out, String(trial));
      const runs = [a, b].map(
        (files) =>
          new Promise<number | null>((resolve) => {
            const child = spawn(...cliArgv('export', '--parquet', dir, ...files), { stdio: 'ignore' });
            child.on('exit', (code) => resolve(code));
          }),
      );
      expect(await Promise.all(runs)).toEqual([0, 0]);
      // one capture beside the other: DIR/<table>/<capture_id>.parquet for both
      expect(readdirSync(join(dir, 'events')).sort()).toEqual(ids.map((id) => `${id}.parquet`).sort());
      expect(existsSync(join(dir, EXPORT_LOCK))).toBe(false);
      expect(readdirSync(dir).filter((f) => f.endsWith('.parquet'))).toEqual([]);
    }
  }, 180_000);
});
