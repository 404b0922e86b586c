import type { LoadProgress } from '../core/capture/load.ts';

/** The progress line: the file, how much of the load is read, and MB/s, as the page's progress bar says it. */
export function progressLine(p: LoadProgress): string {
  const pct = p.totalBytes > 0 ? Math.floor((100 * p.bytesRead) / p.totalBytes) : 100;
  const mb = (n: number) => (n / 1e6).toFixed(1);
  const what = p.phase === 'indexing' ? 'indexing' : p.phase === 'inflating' ? `inflating ${p.file}` : `reading ${p.file}`;
  return `${what}: ${pct}% of ${mb(p.totalBytes)} MB, ${p.mbPerSecond.toFixed(0)} MB/s`;
}

/**
 * Progress on stderr while files load, when stderr is a terminal and --quiet was not given: one
 * line rewritten in place, cleared by `done()`. Silent in a pipe, a file or CI logs.
 */
export function ttyProgress(
  quiet: boolean,
  stream: NodeJS.WriteStream = process.stderr,
): { onProgress?: (p: LoadProgress) => void; progressEveryMs?: number; step(what: string, k: number, of: number): void; done(): void } {
  if (quiet || !stream.isTTY) return { step() {}, done() {} };
  let shown = false;
  return {
    // a later phase of a command, counted (export's tables: "writing events: 1 of 9")
    step(what, k, of) {
      shown = true;
      stream.write(`\r\x1b[Kwriting ${what}: ${k + 1} of ${of}`);
    },
    progressEveryMs: 100,
    onProgress(p) {
      shown = true;
      const cols = Math.max(20, (stream.columns ?? 80) - 1);
      stream.write(`\r\x1b[K${progressLine(p).slice(0, cols)}`);
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
    },
  };
}
