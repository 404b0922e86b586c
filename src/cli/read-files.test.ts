// Files whose size is not their content's (issue 34, 12): /proc and /sys files say 0 or 4096, and
// were read as empty ("empty file" for /proc/kallsyms, 121,437 symbols through cat). Read to
// their end now, as a pipe is; a pipe or device bounded as a decompression is (/dev/zero read
// 10 GB before), with the limit said. The second method: node:fs's own read of the file.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { summarize } from '../core/capture/summary.ts';
import { captureIdOfPaths } from './export-folder.ts';
import { captureIdOfSources, readFiles } from './read-files.ts';

const readable = (p: string) => {
  try {
    return readFileSync(p).length > 0;
  } catch {
    return false;
  }
};

describe('readFiles, files that say no size', () => {
  it.runIf(readable('/proc/kallsyms'))(
    '/proc/kallsyms (size 0): every symbol, every byte, as node:fs reads it',
    async () => {
      expect(statSync('/proc/kallsyms').size).toBe(0);
      const r = await readFiles(['/proc/kallsyms'], { digests: true });
      const bytes = readFileSync('/proc/kallsyms');
      const lines = bytes.toString('latin1').split('\n').length - (bytes.at(-1) === 0x0a ? 1 : 0);
      const s = summarize(r.capture);
      expect(s.files).toEqual([{ file: 'kallsyms', kind: 'kallsyms', size: bytes.length, lines: { total: lines, used: lines, unused: 0 }, bytes: null }]);
      expect(s.diagnostics).toEqual([]);
      // the capture's id, of the bytes read: the same from the paths (read to their end too)
      expect(captureIdOfSources(r.sources)).toBe(captureIdOfPaths(['/proc/kallsyms']));
    },
    20_000,
  );

  it('/proc/version and a /sys file, read as unknown: their real bytes counted (not 0, not 4096)', async () => {
    for (const p of ['/proc/version', '/sys/kernel/mm/transparent_hugepage/enabled', '/sys/devices/system/cpu/online'].filter(existsSync)) {
      const r = await readFiles([p]);
      const [f] = summarize(r.capture).files;
      const n = readFileSync(p).length;
      expect(n).toBeGreaterThan(0);
      expect([f.size, f.bytes]).toEqual([n, { total: n, used: 0, unused: n }]);
    }
  });

  it('a device read with a lowered budget: stops at it, keeps what was read, says so', async () => {
    const limit = 3 * 2 ** 20 + 5;
    const r = await readFiles(['/dev/zero'], { drainLimit: limit });
    const s = summarize(r.capture);
    expect([s.files[0].file, s.files[0].size]).toEqual(['zero', limit]);
    expect(s.diagnostics).toContainEqual({
      file: 'zero',
      where: 'file',
      message: `read stopped at ${limit.toLocaleString('en-US')} bytes, the most read from a pipe, a device or a file that gives no size: what was read before is kept`,
      count: 1,
    });
    // under the budget: no word of it (/dev/null, empty)
    expect(summarize((await readFiles(['/dev/null'], { drainLimit: limit })).capture).diagnostics.map((d) => d.message)).not.toContain(
      expect.stringMatching(/read stopped/),
    );
  });
});
