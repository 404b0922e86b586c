// Ctrl-C during an export (issue 23): the process ends with 130 and leaves nothing behind, no
// temporary file and no table of the capture (before, some tables of 8 stayed, which sql then
// queried as a capture). A real process, a real SIGINT, sent once the export has started writing.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cliArgv } from './test-io.ts';
import { describe, expect, it } from 'vitest';

/** every file under `dir`, recursively, relative to it */
const all = (dir: string): string[] => (existsSync(dir) ? (readdirSync(dir, { recursive: true }) as string[]) : []);

describe('Ctrl-C', () => {
  it('during export --parquet: exit 130, no temporary file, no table', async () => {
    const cap = mkdtempSync(join(tmpdir(), 'smx-int-cap-'));
    await promisify(execFile)(...cliArgv('generate', '--mb', '12', '--out', cap), { encoding: 'utf8' });
    const out = join(mkdtempSync(join(tmpdir(), 'smx-int-out-')), 'tables');
    // node itself on the bundle: the signal goes to the command line's own process
    const child = spawn(...cliArgv('export', '--parquet', out, ...readdirSync(cap).map((f) => join(cap, f))), {
      stdio: 'ignore',
    });
    const ended = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // the condition, not a clock: the first temporary table file is there
    let started = false;
    while (!started) {
      if (child.exitCode !== null) break;
      started = all(out).some((f) => f.includes('.tmp-'));
      if (!started) await new Promise((r) => setTimeout(r, 20));
    }
    expect(started).toBe(true);
    child.kill('SIGINT');
    expect(await ended).toBe(130);
    expect(all(out).filter((f) => f.endsWith('.parquet') || f.includes('.tmp-'))).toEqual([]);
  }, 120_000);
});
