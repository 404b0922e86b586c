import { describe, expect, it } from 'vitest';
import { handCapture, line } from '../testing/explorer-fixtures.ts';
import { NO_STACK_RECORD } from './api.ts';
import { eventColumns, genKey, genValue, isAll, NO_GEN, recordGenerations, SelectionFilter, sortedOrder } from './selection.ts';
import type { Capture } from '../capture/ingest.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { RecordStatus } from '../capture/trace-columns-data.ts';
import { ExplorerData } from './explorer-data.ts';

const growable = (xs: number[]) => Float64Array.from(xs);
const cols = (c: Capture) => ({ kind: c.trace.recKind.view(), gen: c.trace.recGen.view() });

describe('effective generations', () => {
  it('a v8 cookie has its own; a full stack the one in force; an event without a record the one before it', () => {
    const c = handCapture();
    const rg = recordGenerations(cols(c));
    expect(Array.from(rg)).toEqual([1, 1, 1, 1, 1, 2, 2, 3, 2]);
    const { status, gen } = eventColumns(c.trace.evRecord.view(), c.trace.recStatus.view(), rg);
    expect(Array.from(gen)).toEqual([1, 1, 1, 1, 1, 1, 2, 2, 3, 2]);
    const R = RecordStatus;
    expect(Array.from(status)).toEqual([R.Resolved, R.Resolved, R.Resolved, R.Full, R.Resolved, NO_STACK_RECORD, R.Resolved, R.NoSlot, R.NoDump, R.Resolved]);
  });

  it("v7 ids have none; a full stack before the first v8 cookie takes the first cookie's", () => {
    const trace =
      [
        '# tracer: nop',
        line('x-1', 0, '1.000000', '<stack trace>'),
        ' => f+0x1/0x2',
        line('x-1', 0, '1.000001', '<stack_id 3>'),
        line('x-1', 0, '1.000002', '<stack_id 4 gen 7>'),
      ].join('\n') + '\n';
    const c = ingestFiles([['trace', trace]]);
    expect(Array.from(recordGenerations(cols(c)))).toEqual([7, NO_GEN, 7]);
    const v7 = ingestFiles([['trace', '# tracer: nop\n' + line('x-1', 0, '1.000000', '<stack_id 3>') + '\n']]);
    expect(Array.from(recordGenerations(cols(v7)))).toEqual([NO_GEN]);
  });

  it('keys round-trip', () => {
    expect([genKey('none'), genKey(4), genValue(NO_GEN), genValue(4)]).toEqual([NO_GEN, 4, 'none', 4]);
  });
});

describe('timestamp order', () => {
  it('is null when already sorted', () => {
    expect(sortedOrder(growable([1, 1, 2, 3]))).toBeNull();
  });
  it('sorts stably, NaN last', () => {
    expect(Array.from(sortedOrder(growable([3, 1, NaN, 1, 2]))!)).toEqual([1, 3, 4, 0, 2]);
  });
});

describe('selection filter', () => {
  it('tests range (either order), generation and CPUs', () => {
    const f = new SelectionFilter({ range: [2, 1], generation: 3, cpus: [0, 2] });
    expect(f.test(1.5, 2, 3)).toBe(true);
    expect(f.test(2.5, 2, 3)).toBe(false);
    expect(f.test(1.5, 1, 3)).toBe(false);
    expect(f.test(1.5, 0, 2)).toBe(false);
    const none = new SelectionFilter({ range: null, generation: 'none', cpus: [100000] });
    expect(none.test(0, 100000, NO_GEN)).toBe(true);
    expect(none.test(0, 1, NO_GEN)).toBe(false);
    expect(isAll({ range: null, generation: null, cpus: null })).toBe(true);
    expect(new SelectionFilter({ range: null, generation: null, cpus: null }).all).toBe(true);
  });
});

describe('effective generations held as int32 where they fit', () => {
  // each event an event line and its cookie's line; the generations as the trace prints them
  const traceOf = (gens: number[]) =>
    [
      '# tracer: nop',
      ...gens.flatMap((g, i) => [line('x-1', 0, `1.00000${i}`, 'sched_wakeup: pid=1'), line('x-1', 0, `1.00000${i}`, `<stack_id ${i} gen ${g}>`)]),
    ].join('\n') + '\n';
  /** the generations printed in the trace, read back with a regular expression: what the events' and records' columns must say */
  const printed = (text: string) => Array.from(text.matchAll(/gen (\d+)>/g), (m) => Number(m[1]));
  it.each([
    [[1, 2, 2147483647], Int32Array],
    [[5, 2147483648, 4294967295], Float64Array],
  ] as const)('%j: %o, every generation exact', (gens, kind) => {
    const text = traceOf([...gens]);
    const d = new ExplorerData(ingestFiles([['trace', text]]));
    expect(d.recGen).toBeInstanceOf(kind);
    expect(d.evGen).toBeInstanceOf(kind);
    expect(Array.from(d.recGen)).toEqual(printed(text));
    expect(Array.from(d.evGen)).toEqual(printed(text));
  });
});
