// Progress on a terminal (issue 23): one line on stderr rewritten in place while the files load,
// cleared at the end; nothing when stderr is not a terminal or with --quiet.
import { describe, expect, it, vi } from 'vitest';
import { whatif } from './whatif.ts';
import { sqlCommand } from './sql.ts';
import { captureOutput } from './test-io.ts';
import { progressLine, ttyProgress } from './progress.ts';
import { readFiles } from './read-files.ts';
import { exportParquet } from './export.ts';
import { TABLE_NAMES } from '../core/tables/schema.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SAMPLES = new URL('../../public/samples/', import.meta.url).pathname;
const FILES = ['trace', 'stack_map_bin.gen1', 'kallsyms'].map((f) => SAMPLES + f);

const fake = (isTTY: boolean) => {
  const out: string[] = [];
  return { out, stream: { isTTY, columns: 100, write: (s: string) => out.push(s) > 0 } as unknown as NodeJS.WriteStream };
};

describe('progress on stderr', () => {
  it('on a terminal: the line rewritten in place as the files load, at 100% of their bytes at the end, then cleared', async () => {
    const { out, stream } = fake(true);
    const p = ttyProgress(false, stream);
    await readFiles(FILES, { ...p, progressEveryMs: 0 });
    p.done();
    expect(out.length).toBeGreaterThan(2);
    for (const s of out) expect(s.startsWith('\r\x1b[K')).toBe(true);
    expect(out.some((s) => s.includes('reading trace: '))).toBe(true);
    expect(out.at(-2)).toMatch(/: 100% of [\d.]+ MB, \d+ MB\/s$/);
    expect(out.at(-1)).toBe('\r\x1b[K');
  });

  it('export: the load, then each table as it is written, one line in place', async () => {
    const { out, stream } = fake(true);
    const p = ttyProgress(false, stream);
    const r = await exportParquet(FILES, join(mkdtempSync(join(tmpdir(), 'smx-prog-')), 'out'), {
      log: () => {},
      progress: { ...p, progressEveryMs: 0 },
      onTable: p.step,
    });
    p.done();
    expect('error' in r).toBe(false);
    const steps = out.filter((s) => s.includes('writing '));
    expect(steps).toEqual(TABLE_NAMES.map((t, k) => `\r\x1b[Kwriting ${t}: ${k + 1} of ${TABLE_NAMES.length}`));
    expect(out.indexOf(steps[0])).toBeGreaterThan(out.findIndex((s) => s.includes('reading trace: ')));
    expect(out.at(-1)).toBe('\r\x1b[K');
  });

  it('whatif and sql on a capture show it too on a terminal; --quiet silences them', async () => {
    const tty = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
    try {
      for (const [name, run] of [
        ['whatif', (q: string[]) => whatif([...q, '--json', ...FILES])],
        ['sql', (q: string[]) => sqlCommand(['SELECT count(*) FROM events', ...q, ...FILES])],
      ] as const) {
        for (const quiet of [false, true]) {
          const { err } = captureOutput();
          expect(await run(quiet ? ['--quiet'] : [])).toBe(0);
          vi.restoreAllMocks();
          const lines = err.filter((s) => s.startsWith('\r\x1b[K'));
          expect([name, quiet, lines.length > 0]).toEqual([name, quiet, !quiet]);
          if (!quiet) expect(lines.at(-1)).toBe('\r\x1b[K');
        }
      }
    } finally {
      if (tty) Object.defineProperty(process.stderr, 'isTTY', tty);
      else delete (process.stderr as { isTTY?: boolean }).isTTY;
    }
  }, 60_000);

  it('silent in a pipe and with --quiet', async () => {
    for (const [tty, quiet] of [
      [false, false],
      [true, true],
    ] as const) {
      const { out, stream } = fake(tty);
      const p = ttyProgress(quiet, stream);
      await readFiles(FILES, p);
      p.done();
      expect(out).toEqual([]);
    }
  });

  it('says the phase and the share', () => {
    const base = { file: 'trace', bytesRead: 50e6, totalBytes: 200e6, inflatedBytes: 0, inflatedTotal: null, mbPerSecond: 91.6 } as const;
    expect(progressLine({ ...base, phase: 'reading' })).toBe('reading trace: 25% of 200.0 MB, 92 MB/s');
    expect(progressLine({ ...base, phase: 'inflating' })).toBe('inflating trace: 25% of 200.0 MB, 92 MB/s');
    expect(progressLine({ ...base, phase: 'indexing' })).toBe('indexing: 25% of 200.0 MB, 92 MB/s');
  });
});
