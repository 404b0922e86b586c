import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { frameKey } from '../formats/frames.ts';
import { Explorer } from '../query/explorer.ts';
import { ALL } from '../query/api.ts';
import { summarize } from '../capture/summary.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { exportCapture } from './export.ts';
import { ReplayKernel, replayWorkload } from './replay.ts';
import { runNode } from './run-node.ts';

const SAMPLES = new URL('../../../public/samples/', import.meta.url);
const sample = (JSON.parse(readFileSync(new URL('index.json', SAMPLES), 'utf8')) as { files: string[] }).files.map(
  (f) => [f, new Uint8Array(readFileSync(new URL(f, SAMPLES)))] as [string, Uint8Array],
);

describe('ReplayKernel', () => {
  it('prints every replayed frame back to its frame key, and symbolizes through its kallsyms', () => {
    const stacks = [
      ['kfree+0x8', 'do_exit+0x1c0', '0xffffffff81234567', '[FTRACE TRAMPOLINE]'],
      ['schedule', 'kfree+0x10'],
    ];
    const k = new ReplayKernel(stacks);
    const back = stacks.map((s) => s.map((key) => frameKey(k.printFrame(k.ipOf(key)))));
    expect(back).toEqual([stacks[0], ['schedule+0x0', 'kfree+0x10']]);
    expect(
      k
        .kallsyms()
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ')[2]),
    ).toEqual(['do_exit', 'kfree', 'schedule']);
  });
});

describe('replaying the loaded capture on the simulator', () => {
  it('records the capture\u2019s stacks at its frequencies, and the exported run reads back as them', async () => {
    const explorer = new Explorer(ingestFiles(sample));
    const src = explorer.replayStacks(ALL);
    const original = summarize(ingestFiles(sample));
    expect(src.frames.length).toBeGreaterThan(300);
    expect(src.counts.reduce((a, b) => a + b, 0)).toBe(original.resolved + original.fullStacks);
    const { stacks, weights, kernel } = replayWorkload(src);
    const run = await runNode({
      mode: 'v8',
      v8Variant: 'bin',
      cpus: 4,
      bits: 12,
      events: 8000,
      resets: 1,
      seed: 3,
      replay: stacks,
      replayOrder: 'weights',
      replayWeights: weights,
      replaySymbols: kernel,
    });
    const replayed = summarize(ingestFiles(exportCapture(run)));
    const known = new Set(src.frames.map((f) => f.join(';')));
    // every stack of the run is one of the capture's, by frame keys, and the busiest is the same
    for (const t of replayed.top) expect(known.has(t.frames.join(';'))).toBe(true);
    expect(replayed.top[0].frames).toEqual(original.top[0].frames);
    expect(replayed.diagnostics).toEqual([]);
  }, 30_000);
});
