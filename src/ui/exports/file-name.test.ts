import { describe, expect, it } from 'vitest';
import { exportFileName, rangeText } from './file-name.ts';

const sel = (p: Partial<Parameters<typeof exportFileName>[1]> = {}) => ({ range: null, generation: null, cpus: null, ...p });

describe('export file names', () => {
  it('say what selection they hold', () => {
    expect(exportFileName('folded', sel({ generation: 2, range: [12.3, 14.1], cpus: [1, 0] }))).toBe('stackmap-gen2-12.3s-14.1s-cpu0,1.folded');
    expect(exportFileName('folded', sel())).toBe('stackmap-all.folded');
    expect(exportFileName('speedscope', sel({ generation: 'none' }))).toBe('stackmap-gen-none.speedscope.json');
    expect(exportFileName('chrome-trace', sel({ cpus: [3] }), { weight: 'refcount' })).toBe('stackmap-cpu3.trace.json');
    // an event filter on: not the whole capture
    expect(exportFileName('folded', sel(), { filtered: true })).toBe('stackmap-filtered.folded');
    expect(exportFileName('folded', sel({ generation: 2 }), { filtered: true, weight: 'field:bytes_alloc' })).toBe('stackmap-filtered-gen2-bytes_alloc.folded');
  });

  it('the SVG names its shape; ref_count weights say so; odd characters are replaced', () => {
    expect(exportFileName('svg', sel(), { mode: 'top-down' })).toBe('stackmap-all.svg');
    expect(exportFileName('svg', sel({ generation: 3 }), { mode: 'sandwich', focus: '__kmalloc', weight: 'refcount' })).toBe(
      'stackmap-gen3-sandwich-__kmalloc-refcount.svg',
    );
    expect(exportFileName('svg', sel(), { mode: 'sandwich', focus: 'a/b c' })).toBe('stackmap-all-sandwich-a_b_c.svg');
  });

  it('ranges print with the fewest decimals that keep their ends apart', () => {
    expect(rangeText([5123.31, 5123.52])).toBe('5123.3s-5123.5s');
    expect(rangeText([5123.301, 5123.304])).toBe('5123.301s-5123.304s');
    expect(rangeText([1.0000001, 1.0000004])).toBe('1.0000001s-1.0000004s');
  });
});
