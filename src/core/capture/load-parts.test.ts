// loadFiles with a part reader (split-trace.ts): a large trace text file read on two threads. The
// second method is the plain load of the same files on one thread.
import { describe, expect, it } from 'vitest';
import { CancelledError, loadFiles, type LoadProgress } from './load.ts';
import { namedBlob, sampleFile } from '../testing/formats.ts';
import { summarize } from './summary.ts';
import { readTracePart, type TracePartReader } from './split-trace.ts';

const bytesOf = sampleFile;
const TRACE = bytesOf('trace');
const STAT = bytesOf('stack_map_stat');
const BIN1 = bytesOf('stack_map_bin.gen1');
const blob = namedBlob;

describe('a large trace read on two threads (parts)', () => {
  const big = new Uint8Array(TRACE.length * 3);
  for (let k = 0; k < 3; k++) big.set(TRACE, k * TRACE.length);

  /** A part reader on this thread (the command line's runs a worker: trace-parts.test.ts), posting its part as a worker would. */
  const inProcess = (fails = false) => {
    const starts: number[] = [];
    const parts: TracePartReader = {
      minBytes: 0,
      share: 0.5,
      start(b, start, file, onBytes) {
        starts.push(start);
        const part = (async () => {
          const bytes = new Uint8Array(await b.slice(start).arrayBuffer());
          const r = readTracePart(file);
          for (let i = 0; i < bytes.length; i += 65536) {
            r.push(bytes.subarray(i, i + 65536));
            onBytes?.(Math.min(bytes.length, i + 65536));
            if (fails && i > 0) throw new Error('the worker went away');
          }
          return structuredClone(r.end());
        })();
        return { part, cancel() {} };
      },
    };
    return { parts, starts };
  };

  it('gives what one thread gives (every number, file report and diagnostic), and progress reaches the total', async () => {
    const files = [blob('trace', big), blob('stack_map_bin.gen1', BIN1), blob('stack_map_stat', STAT)];
    const one = summarize(await loadFiles(files));
    const { parts, starts } = inProcess();
    const seen: LoadProgress[] = [];
    const two = summarize(await loadFiles(files, { parts, onProgress: (p) => seen.push(p), progressEveryMs: 0 }));
    expect(starts.length).toBe(1);
    // near the middle, at a line start
    expect(Math.abs(starts[0] - big.length / 2)).toBeLessThan(4096);
    expect(big[starts[0] - 1]).toBe(10);
    expect(two).toEqual(one);
    expect(one.events).toBeGreaterThan(0);
    const total = files.reduce((n, f) => n + f.blob.size, 0);
    for (let i = 1; i < seen.length; i++) expect(seen[i].bytesRead).toBeGreaterThanOrEqual(seen[i - 1].bytesRead);
    expect(seen.at(-1)!.bytesRead).toBe(total);
  });

  it('a trace after other files: its part starts before any file is read, takes more of the trace, and the capture is the same', async () => {
    const files = [blob('stack_map_bin.gen1', BIN1), blob('stack_map_stat', STAT), blob('trace', big)];
    const one = summarize(await loadFiles(files));
    const { parts, starts } = inProcess();
    const order: string[] = [];
    const counting: TracePartReader = { ...parts, start: (...a) => (order.push('part'), parts.start(...a)) };
    const seen: LoadProgress[] = [];
    const cap = await loadFiles(files, { parts: counting, onBytes: (f) => order.push(f.name), onProgress: (p) => seen.push(p), progressEveryMs: 0 });
    expect(summarize(cap)).toEqual(one);
    expect(one.events).toBeGreaterThan(0);
    // started once, before the first byte of the first file was read
    expect(order[0]).toBe('part');
    expect(order.filter((x) => x === 'part').length).toBe(1);
    expect(starts.length).toBe(1);
    // at a line start where both threads read as many bytes: this one the files before the trace
    // and the trace up to the split, the other the rest
    expect(big[starts[0] - 1]).toBe(10);
    const before = BIN1.length + STAT.length;
    expect(Math.abs(starts[0] - (big.length - before) / 2)).toBeLessThan(4096);
    expect(seen.at(-1)!.bytesRead).toBe(files.reduce((n, f) => n + f.blob.size, 0));
  });

  it('a load cancelled before the trace comes cancels the part started early', async () => {
    const files = [blob('stack_map_bin.gen1', BIN1), blob('trace', big)];
    const { parts } = inProcess();
    let cancelled = 0;
    const counting: TracePartReader = {
      ...parts,
      start: (...a) => {
        const r = parts.start(...a)!;
        return { part: r.part, cancel: () => void cancelled++ };
      },
    };
    let read = 0;
    await expect(loadFiles(files, { parts: counting, onBytes: () => void read++, isCancelled: () => read > 0 })).rejects.toThrow(CancelledError);
    expect(cancelled).toBe(1);
  });

  it.each([
    ['read first', () => [blob('trace', big), blob('stack_map_bin.gen1', BIN1)]],
    ['after a dump (its part started early)', () => [blob('stack_map_bin.gen1', BIN1), blob('trace', big)]],
  ])('a part reader that fails leaves the rest to this thread, the trace %s: the same capture, nothing lost', async (_, make) => {
    const files = make();
    const one = summarize(await loadFiles(files));
    const { parts, starts } = inProcess(true);
    expect(summarize(await loadFiles(files, { parts }))).toEqual(one);
    expect(starts.length).toBe(1);
  });

  it('is not used below its minimum size, nor for a file that is not trace text', async () => {
    const { parts, starts } = inProcess();
    await loadFiles([blob('trace', big), blob('stack_map_bin.gen1', BIN1)], { parts: { ...parts, minBytes: big.length + 1 } });
    await loadFiles([blob('big.bin', new Uint8Array(big.length).fill(7))], { parts });
    expect(starts).toEqual([]);
  });
});
