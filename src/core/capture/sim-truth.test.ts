// A simulated run's ledger.json read with its trace (sim-truth.ts): the fixture's records
// (counted by hand) against traces written here, lined up per CPU.
import { describe, expect, it } from 'vitest';
import { sessionBanners } from './banners.ts';
import { summarize } from './summary.ts';
import { fixture } from '../testing/formats.ts';
import { ingestFiles } from '../testing/test-helpers.ts';

const line = (cpu: number, ts: string, payload: string) => `            cat-2211    [00${cpu}] ...1.  ${ts}: ${payload}`;

describe("a simulated run's ledger.json read with its trace (sim-truth.ts)", () => {
  // the fixture's four records: CPU 0 id 5 (correct), CPU 1 full, CPU 0 id 5 (wrong), CPU 0 id 9 (correct)
  const LEDGER = new TextDecoder().decode(fixture('sim_ledger/v1/run.json'));
  const trace = (order: string[]) => ['# tracer: nop', ...order, ''].join('\n');
  const id = (cpu: number, ts: number, slot: number) => [line(cpu, `${ts}.000001`, 'x <-y'), line(cpu, `${ts}.000002`, `<stack_id ${slot}>`)].join('\n');
  const full = (cpu: number, ts: number) =>
    [line(cpu, `${ts}.000001`, 'x <-y'), line(cpu, `${ts}.000002`, '<stack trace>'), ' => schedule+0x48/0xc0'].join('\n');
  const dump = ['stack_id 5 [ref 9, depth 1]', '  [0] schedule+0x48/0xc0', '', 'stack_id 9 [ref 9, depth 1]', '  [0] vfs_write+0x2b4/0x3c0', ''].join('\n');

  it("lines up per CPU: each unverified id's truth; CPUs interleaved either way", () => {
    for (const order of [
      [id(0, 1, 5), full(1, 2), id(0, 3, 5), id(0, 4, 9)],
      [full(1, 0), id(0, 1, 5), id(0, 3, 5), id(0, 4, 9)],
    ]) {
      const s = summarize(
        ingestFiles([
          ['trace', trace(order)],
          ['stack_map', dump],
          ['ledger.json', LEDGER],
        ]),
      );
      expect(s.simTruth).toMatchObject({ records: 4, matched: true, unverified: 3, unverifiedRight: 2, unverifiedWrong: 1 });
      const b = sessionBanners(s).find((x) => x.id === 'sim-truth')!;
      expect(b.files).toEqual(['ledger.json']);
      expect(b.body).toContainEqual({ num: 1 });
    }
  });

  it("another run's ledger: said so, and no truth claimed", () => {
    const s = summarize(
      ingestFiles([
        ['trace', trace([id(0, 1, 9), full(1, 2), id(0, 3, 5), id(0, 4, 9)])],
        ['stack_map', dump],
        ['ledger.json', LEDGER],
      ]),
    );
    expect(s.simTruth).toMatchObject({ matched: false, unverifiedWrong: 0 });
    expect(s.simTruth!.why).toBe("CPU 0's stack record 1 is id of slot 9 in the trace, id of slot 5 in the ledger");
    expect(sessionBanners(s).find((x) => x.id === 'sim-truth')!.title).toBe('A ledger that is not this trace\u2019s');
  });
});
