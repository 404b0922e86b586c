// The command line's second thread for a large trace (trace-parts.ts): a real worker_threads
// worker reads the file from the split, and the capture is what one thread makes of it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, openAsBlob, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { summarize } from '../core/capture/summary.ts';
import { findSplit, readTracePart } from '../core/capture/split-trace.ts';
import { readFiles } from './read-files.ts';
import { nodeTraceParts } from './trace-parts.ts';

const SAMPLES = new URL('../../public/samples/', import.meta.url);
const sample = new Uint8Array(readFileSync(new URL('trace', SAMPLES)));
const dir = mkdtempSync(join(tmpdir(), 'trace-parts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// the sample trace four times over: a file past the split's minimum (set to 0 here)
const big = new Uint8Array(sample.length * 4);
for (let k = 0; k < 4; k++) big.set(sample, k * sample.length);
const tracePath = join(dir, 'trace');
writeFileSync(tracePath, big);
const binPath = join(dir, 'stack_map_bin.gen1');
writeFileSync(binPath, readFileSync(new URL('stack_map_bin.gen1', SAMPLES)));

describe('a large trace on two threads (worker_threads)', () => {
  it("a worker's part is what this thread reads of the same bytes", async () => {
    const blob = await openAsBlob(tracePath);
    const start = findSplit(big.subarray(big.length >> 1), big.length >> 1);
    expect(start).toBeGreaterThan(0);
    const seen: number[] = [];
    const run = nodeTraceParts(new Map([[blob, tracePath]]), 0).start(blob, start, 'trace', (n) => seen.push(n));
    expect(run).not.toBeNull();
    const part = await run!.part;
    const here = readTracePart('trace');
    here.push(big.subarray(start));
    expect(part).toEqual(here.end());
    expect(part.bytes).toBe(big.length - start);
  });

  it('a trace after a dump: its worker starts when the load begins (early-part.ts), and the capture is what one thread makes and grep counts', async () => {
    const two = await readFiles([binPath, tracePath], { partMinBytes: 0 });
    const one = await readFiles([binPath, tracePath], { partMinBytes: Infinity });
    expect(summarize(two.capture)).toEqual(summarize(one.capture));
    const grep = (pattern: string) => Number(execFileSync('grep', ['-c', '-F', pattern, tracePath], { encoding: 'utf8' }).trim());
    expect(summarize(two.capture).cookies).toBe(grep('<stack_id '));
    expect(two.capture.trace.recordCount).toBe(grep('<stack_id ') + grep('<stack trace>'));
  });

  it('readFiles splits a large trace and gives what one thread gives, and the records grep counts in the file', async () => {
    const two = await readFiles([tracePath, binPath], { partMinBytes: 0 });
    const one = await readFiles([tracePath, binPath], { partMinBytes: Infinity });
    expect(summarize(two.capture)).toEqual(summarize(one.capture));
    expect(two.capture.trace.eventCount).toBe(one.capture.trace.eventCount);
    expect(one.capture.trace.eventCount).toBeGreaterThan(0);
    // a count by another tool: grep over the same file (its cookie lines and its full-stack lines)
    const grep = (pattern: string) => Number(execFileSync('grep', ['-c', '-F', pattern, tracePath], { encoding: 'utf8' }).trim());
    const s = summarize(two.capture);
    expect(s.cookies).toBe(grep('<stack_id '));
    expect(s.fullStacks).toBe(grep('<stack trace>'));
    expect(s.cookies + s.fullStacks).toBe(two.capture.trace.recordCount);
  });

  it('a file gone before the worker opens it: the worker says why, and a Blob it was not given is not read there', async () => {
    const gonePath = join(dir, 'gone');
    writeFileSync(gonePath, big);
    const blob = await openAsBlob(gonePath);
    rmSync(gonePath);
    const parts = nodeTraceParts(new Map([[blob, gonePath]]), 0);
    await expect(parts.start(blob, 100, 'gone')!.part).rejects.toThrow(/could not read .*gone from byte 100: /);
    expect(parts.start(new Blob([big]), 100, 'x')).toBeNull();
  });
});
