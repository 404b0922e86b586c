// Stale v7 ids from the files alone (v7-evidence.ts): a slot whose ids in the trace outnumber the
// dump's ref_count. Expected numbers are counted by hand from the files below; the simulator's
// truth checks the same evidence in src/core/sim/scenarios.test.ts.
import { describe, expect, it } from 'vitest';
import { sessionBanners } from './banners.ts';
import { summarize } from './summary.ts';
import { ingestFiles } from '../testing/test-helpers.ts';

const line = (cpu: number, ts: string, payload: string) => `            cat-2211    [00${cpu}] ...1.  ${ts}: ${payload}`;
/** `n` events, each with an id naming `slot` */
const ids = (slot: number, n: number, from: number) =>
  Array.from({ length: n }, (_, i) => [line(0, `${from + i}.000001`, 'do_sys_openat2 <-__x64_sys_openat'), line(0, `${from + i}.000002`, `<stack_id ${slot}>`)].join('\n')).join('\n');

const DUMP = ['stack_id 5 [ref 2, depth 1]', '  [0] schedule+0x48/0xc0', '', 'stack_id 9 [ref 10, depth 1]', '  [0] vfs_write+0x2b4/0x3c0', ''].join('\n');

describe('ids from before a reset, as the files show them', () => {
  it('slot 5 named 5 times with ref 2: 3 ids at least were written before a reset; slot 9 named 4 times with ref 10: none', () => {
    const trace = ['# tracer: nop', ids(5, 5, 100), ids(9, 4, 200), ''].join('\n');
    for (const chunk of [0, 1, 7]) {
      const s = summarize(ingestFiles([['trace', trace], ['stack_map', DUMP]], chunk));
      expect(s.staleIds).toEqual({ slots: 1, ids: 5, excess: 3 });
      const b = sessionBanners(s).find((x) => x.id === 'stale-ids')!;
      expect(b.level).toBe('warn');
      expect(b.files).toEqual(['trace', 'stack_map']);
      expect(b.body).toContainEqual({ num: 3 });
    }
  });

  it('no evidence: ids within their ref_counts, no dump, or v8 cookies (their generation says it)', () => {
    const within = summarize(ingestFiles([['trace', ['# tracer: nop', ids(5, 2, 100), ''].join('\n')], ['stack_map', DUMP]]));
    expect(within.staleIds).toEqual({ slots: 0, ids: 0, excess: 0 });
    expect(sessionBanners(within).some((b) => b.id === 'stale-ids')).toBe(false);
    expect(summarize(ingestFiles([['trace', ['# tracer: nop', ids(5, 5, 100), ''].join('\n')]])).staleIds).toBeNull();
    const v8 = ['# tracer: nop', line(0, '1.000001', 'x <-y'), line(0, '1.000002', '<stack_id 5 gen 1>'), line(0, '2.000001', 'x <-y'), line(0, '2.000002', '<stack_id 5 gen 1>'), ''].join('\n');
    const dump8 = ['stack_id 5 gen 1 [ref 1, depth 1]', ' => schedule+0x48/0xc0', ''].join('\n');
    expect(summarize(ingestFiles([['trace', v8], ['stack_map', dump8]])).staleIds).toBeNull();
  });
});
