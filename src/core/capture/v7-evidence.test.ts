// Stale v7 ids from the files alone (v7-evidence.ts): a slot whose ids in the trace outnumber the
// dump's ref_count. Expected numbers are counted by hand from the files below; the simulator's
// truth checks the same evidence in src/core/sim/scenarios.test.ts.
import { describe, expect, it } from 'vitest';
import { bannerText, sessionBanners } from './banners.ts';
import { summarize } from './summary.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';

const line = (cpu: number, ts: string, payload: string) => `            cat-2211    [00${cpu}] ...1.  ${ts}: ${payload}`;
/** `n` events, each with an id naming `slot` */
const ids = (slot: number, n: number, from: number) =>
  Array.from({ length: n }, (_, i) =>
    [line(0, `${from + i}.000001`, 'do_sys_openat2 <-__x64_sys_openat'), line(0, `${from + i}.000002`, `<stack_id ${slot}>`)].join('\n'),
  ).join('\n');

const DUMP = ['stack_id 5 [ref 2, depth 1]', '  [0] schedule+0x48/0xc0', '', 'stack_id 9 [ref 10, depth 1]', '  [0] vfs_write+0x2b4/0x3c0', ''].join('\n');

describe('ids from before a reset, as the files show them', () => {
  it('slot 5 named 5 times with ref 2: 3 ids at least were written before a reset; slot 9 named 4 times with ref 10: none', () => {
    const trace = ['# tracer: nop', ids(5, 5, 100), ids(9, 4, 200), ''].join('\n');
    for (const chunk of [0, 1, 7]) {
      const s = summarize(
        ingestFiles(
          [
            ['trace', trace],
            ['stack_map', DUMP],
          ],
          chunk,
        ),
      );
      expect(s.staleIds).toEqual({ slots: 1, ids: 5, excess: 3 });
      const b = sessionBanners(s).find((x) => x.id === 'stale-ids')!;
      expect(b.level).toBe('warn');
      expect(b.files).toEqual(['trace', 'stack_map']);
      expect(b.body).toContainEqual({ num: 3 });
    }
  });

  it('no evidence: ids within their ref_counts, no dump, or v8 cookies (their generation says it)', () => {
    const within = summarize(
      ingestFiles([
        ['trace', ['# tracer: nop', ids(5, 2, 100), ''].join('\n')],
        ['stack_map', DUMP],
      ]),
    );
    expect(within.staleIds).toEqual({ slots: 0, ids: 0, excess: 0 });
    expect(sessionBanners(within).some((b) => b.id === 'stale-ids')).toBe(false);
    expect(summarize(ingestFiles([['trace', ['# tracer: nop', ids(5, 5, 100), ''].join('\n')]])).staleIds).toBeNull();
    const v8 = [
      '# tracer: nop',
      line(0, '1.000001', 'x <-y'),
      line(0, '1.000002', '<stack_id 5 gen 1>'),
      line(0, '2.000001', 'x <-y'),
      line(0, '2.000002', '<stack_id 5 gen 1>'),
      '',
    ].join('\n');
    const dump8 = ['stack_id 5 gen 1 [ref 1, depth 1]', ' => schedule+0x48/0xc0', ''].join('\n');
    expect(
      summarize(
        ingestFiles([
          ['trace', v8],
          ['stack_map', dump8],
        ]),
      ).staleIds,
    ).toBeNull();
  });
});

describe('ids recorded before a reset the trace shows', () => {
  // capture.sh writes `stackmap reset N` to trace_marker before each reset; the kernel prints it
  // as `tracing_mark_write: ...`, trace-cmd report as `print: tracing_mark_write: ...`
  const marker = (ts: string, form: 'kernel' | 'trace-cmd', n: number) =>
    `              sh-1       [001] .....  ${ts}: ${form === 'kernel' ? '' : 'print: '}tracing_mark_write: stackmap reset ${n}`;
  const trace = [
    '# tracer: nop',
    ids(5, 3, 100), // 3 ids at 100..102
    marker('150.000000', 'kernel', 1),
    ids(9, 2, 200), // 2 ids at 200..201
    marker('250.000000', 'trace-cmd', 2),
    line(1, '260.000000', 'tracing_mark_write: stackmap resets are not this'),
    ids(9, 4, 300), // 4 ids at 300..303
    '',
  ].join('\n');

  it('two markers, the last at 250 s: the 5 ids before it, of 9; chunked and renamed alike', () => {
    for (const name of ['trace', 'unknown'])
      for (const chunk of [0, 1, 7]) {
        const s = summarize(
          ingestFiles(
            [
              [name, trace],
              ['stack_map', DUMP],
            ],
            chunk,
          ),
        );
        expect(s.beforeReset).toEqual({ resets: 2, lastTs: 250, ids: 5, of: 9 });
        const b = sessionBanners(s).find((x) => x.id === 'before-reset')!;
        expect(b.level).toBe('warn');
        // slot 5 is named 3 times with ref 2: the dump's evidence too, said in the same banner
        expect(s.staleIds).toEqual({ slots: 1, ids: 3, excess: 1 });
        expect(b.files).toEqual([name, 'stack_map']);
        expect(sessionBanners(s).some((x) => x.id === 'stale-ids')).toBe(false);
        expect(bannerText(b.body)).toContain('at least 1 of them was written before a reset');
        expect(b.body).toContainEqual({ num: 5 });
        expect(b.body).toContainEqual({ code: '250.000000' });
      }
  });

  it('no evidence without a marker, with the ids all after it, or with v8 cookies only', () => {
    const none = summarize(
      ingestFiles([
        ['trace', ['# tracer: nop', ids(5, 3, 100), ''].join('\n')],
        ['stack_map', DUMP],
      ]),
    );
    expect(none.beforeReset).toBeNull();
    const after = summarize(ingestFiles([['trace', ['# tracer: nop', marker('50.000000', 'kernel', 1), ids(5, 3, 100), ''].join('\n')]]));
    expect(after.beforeReset).toEqual({ resets: 1, lastTs: 50, ids: 0, of: 3 });
    expect(sessionBanners(after).some((b) => b.id === 'before-reset')).toBe(false);
    const v8 = ['# tracer: nop', line(0, '1.000001', 'x <-y'), line(0, '1.000002', '<stack_id 5 gen 1>'), marker('2.000000', 'kernel', 1), ''].join('\n');
    expect(summarize(ingestFiles([['trace', v8]])).beforeReset).toBeNull();
  });
});

describe('reset markers among real trace_marker writes', () => {
  // catapult's decompressed atrace (Android, published by the catapult project): 1,042
  // tracing_mark_write lines, none a reset marker. Each is still one print event, as grep counts them
  realIt('catapult-decompressed_atrace_data.txt: every tracing_mark_write line a print event, no reset marker', () => {
    const bytes = realTrace('catapult-decompressed_atrace_data.txt');
    const lines = new TextDecoder()
      .decode(bytes)
      .split('\n')
      .filter((l) => l.includes(': tracing_mark_write: ')).length;
    expect(lines).toBe(1042);
    for (const chunk of [0, 7]) {
      const c = ingestFiles([['unknown', bytes]], chunk);
      const print = c.trace.names.strings.indexOf('print');
      const names = c.trace.evName.raw();
      let prints = 0;
      for (let i = 0; i < names.length; i++) if (names[i] === print) prints++;
      expect(prints).toBe(lines);
      expect(c.trace.resetMarks.length).toBe(0);
      expect(summarize(c).beforeReset).toBeNull();
    }
  });
});
