import { describe, expect, it } from 'vitest';
import { derive } from './derived.ts';
import { ingestFiles } from './test-helpers.ts';

const line = (ts: string, p: string) => `            bash-1234    [001] d..1.   ${ts}: ${p}`;
const trace =
  [
    '# tracer: nop',
    line('10.000001', '<stack_id 1 gen 1>'),
    line('10.000002', '<stack_id 1 gen 1>'),
    line('10.000003', '<stack_id 2 gen 1>'),
    line('10.000004', '<stack trace>'),
    ' => f+0x1/0x10',
    ' => g+0x2/0x20',
    line('11.500000', '<stack_id 7 gen 2>'),
    line('12.000000', '<stack_id 3>'),
  ].join('\n') + '\n';
const dump = 'stack_id 1 gen 1 [ref 2, depth 3]\n => a\n => b\n => c\n\nstack_id 2 gen 1 [ref 1, depth 1]\n => d\n\n';

describe('derived statistics', () => {
  const d = derive(ingestFiles([['trace', trace], ['stack_map', dump]]));

  it('counts ring-buffer bytes as the v8 cover letter does', () => {
    // with the map: 4 v8 cookies x 16 + one v7 id x 12 + the full stack 12 + 8 x 2
    expect(d.ringBuffer.bytesWithMap).toBe(4 * 16 + 12 + 28);
    // without: 2 x (12 + 24) + (12 + 8) + 28, and the two unresolved cookies at the mean resolved depth (7/3)
    expect(d.ringBuffer.assumedDepth).toBeCloseTo(7 / 3);
    expect(d.ringBuffer.bytesWithoutMap).toBe(Math.round(72 + 20 + 28 + 2 * (12 + (8 * 7) / 3)));
    expect(d.ringBuffer.gain).toBeCloseTo(d.ringBuffer.bytesWithoutMap / 104, 2);
  });

  it('gives each generation its span, cookies, coverage and dumps', () => {
    expect(d.generations.map((g) => [g.generation, g.cookies, g.resolved, g.dumpSlots])).toEqual([
      [null, 1, 0, 0],
      [1, 3, 3, 2],
      [2, 1, 0, 0],
    ]);
    const g1 = d.generations[1];
    expect([g1.firstTs, g1.lastTs, g1.coverage, g1.dumpFormats]).toEqual([10.000001, 10.000003, 1, ['stack_map_text']]);
  });

  it('dedup rate: the share of cookies that reused a slot', () => {
    // 5 cookies, 4 distinct (generation, slot) pairs
    expect(d.dedupRate).toBeCloseTo(1 - 4 / 5);
  });
});
