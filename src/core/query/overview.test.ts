import { describe, expect, it } from 'vitest';
import { derive, GENERATIONS_HEAD, GENERATIONS_TAIL } from '../capture/derived.ts';
import { ExplorerData } from './explorer-data.ts';
import { handCapture, line, sampleCapture, TIMED_APART_TRACE } from '../testing/explorer-fixtures.ts';
import { overview } from './overview.ts';
import { ingestFiles } from '../testing/test-helpers.ts';

describe('overview', () => {
  it('hand capture: span, CPUs, tasks, generations, resets', () => {
    const o = overview(new ExplorerData(handCapture()));
    expect([o.t0, o.t1]).toEqual([100.000001, 101.000003]);
    expect(o.cpus).toEqual([0, 1]);
    expect(o.tasks).toEqual([
      { task: 0, name: 'bash', events: 6 },
      { task: 1, name: 'sh', events: 4 },
    ]);
    expect(o.generations.map((g) => [g.generation, g.records, g.cookies, g.resolved, g.dumpKinds, g.dumpSlots])).toEqual([
      [1, 5, 4, 4, ['stack_map_text'], 3],
      [2, 3, 3, 2, ['stack_map_text'], 1],
      [3, 1, 1, 0, [], 0],
    ]);
    const g1 = o.generations[0];
    expect([g1.firstTs, g1.lastTs, g1.coverage]).toEqual([100.000001, 100.000005, 1]);
    expect(o.generations[1].coverage).toBeCloseTo(2 / 3);
    // gen 2 spans 101.000000..101.000003 and gen 3 sits inside it: only spans that start later make a reset
    expect(o.resets).toEqual([
      { ts: (100.000005 + 101.0) / 2, from: 1, to: 2 },
      { ts: (101.000003 + 101.000002) / 2, from: 2, to: 3 },
    ]);
    expect(o.lost).toEqual([]);
    expect(o.statusNames).toEqual(['resolved', 'no-dump', 'no-slot', 'unverified', 'ambiguous', 'full', 'user', 'contradicted', 'no-stack-record']);
  });

  it("v7 records are generation 'none'; lost markers carry the last time before them", () => {
    const trace =
      [
        '# tracer: nop',
        line('x-1', 0, '1.000000', 'foo: a'),
        line('x-1', 0, '1.000000', '<stack_id 3>'),
        'CPU:0 [LOST 12 EVENTS]',
        line('x-1', 0, '2.000000', 'foo: b'),
        'CPU:1 [LOST EVENTS]',
      ].join('\n') + '\n';
    const c = ingestFiles([
      ['trace', trace],
      ['map', 'stack_id 3 [ref 1, depth 1]\n  [0] f+0x1/0x2\n\n'],
    ]);
    const o = overview(new ExplorerData(c));
    expect(o.generations.map((g) => [g.generation, g.records, g.resolved, g.dumpKinds, g.dumpSlots])).toEqual([['none', 1, 1, ['stack_map_text'], 1]]);
    expect(o.lost).toEqual([
      { ts: 1, cpu: 0, count: 12 },
      { ts: 2, cpu: 1, count: null },
    ]);
    expect(o.resets).toEqual([]);
  });

  it('sample: generations agree with derive(), resets fall between spans', () => {
    const c = sampleCapture();
    const o = overview(new ExplorerData(c));
    const d = derive(c);
    expect(o.generations.map((g) => g.generation)).toEqual([1, 2, 3]);
    for (const g of o.generations) {
      const dg = d.generations.find((x) => x.generation === g.generation)!;
      expect([g.cookies, g.resolved, g.dumpSlots, g.dumpKinds]).toEqual([dg.cookies, dg.resolved, dg.dumpSlots, dg.dumpFormats]);
    }
    expect(o.generations[2].dumpKinds).toEqual(['stack_map_bin', 'stack_map_text']);
    expect(o.resets.map((r) => [r.from, r.to])).toEqual([
      [1, 2],
      [2, 3],
    ]);
    for (const r of o.resets) {
      const a = o.generations.find((g) => g.generation === r.from)!;
      const b = o.generations.find((g) => g.generation === r.to)!;
      expect(r.ts).toBeGreaterThan(a.lastTs);
      expect(r.ts).toBeLessThan(b.firstTs);
    }
    expect(o.tasks.reduce((n, t) => n + t.events, 0)).toBe(c.trace.eventCount);
    expect(o.cpus).toEqual([0, 1, 2, 3]);
    expect(o.segments.map((s) => [s.file, s.events])).toEqual([['trace', c.trace.eventCount]]);
  });

  it('two unrelated traces: a span per segment, and no reset between them', () => {
    // trace a: gen 1 then gen 2 (a reset between); trace b, an hour later: gen 1 again (another boot)
    const a = ['# tracer: nop', line('x-1', 0, '10.000000', '<stack_id 1 gen 1>'), line('x-1', 0, '10.500000', '<stack_id 1 gen 2>')].join('\n') + '\n';
    const b = ['# tracer: nop', line('y-2', 1, '3600.000000', '<stack_id 5 gen 1>'), line('y-2', 1, '3600.250000', '<stack_id 6 gen 1>')].join('\n') + '\n';
    const o = overview(
      new ExplorerData(
        ingestFiles([
          ['a', a],
          ['b', b],
        ]),
      ),
    );
    expect(o.segments.map((s) => [s.file, s.firstTs, s.lastTs])).toEqual([
      ['a', 10, 10.5],
      ['b', 3600, 3600.25],
    ]);
    const g1 = o.generations.find((g) => g.generation === 1)!;
    expect(g1.segments.map((s) => [s.segment, s.firstTs, s.lastTs, s.records])).toEqual([
      [0, 10, 10, 1],
      [1, 3600, 3600.25, 2],
    ]);
    expect(g1.duration).toBeCloseTo(0.25, 9);
    // one reset, inside trace a; none from gen 2 of a to gen 1 of b
    expect(o.resets).toEqual([{ ts: 10.25, from: 1, to: 2 }]);
  });

  it('a generation is not in force in a later file that only inherits it (full stacks, no cookie of it)', () => {
    const a = ['# tracer: nop', line('x-1', 0, '10.000000', '<stack_id 1 gen 2>')].join('\n') + '\n';
    const c = ['# tracer: nop', line('z-3', 0, '9000.000000', 'foo: c'), line('z-3', 0, '9000.000001', '<stack trace>'), ' => f+0x1/0x2'].join('\n') + '\n';
    const o = overview(
      new ExplorerData(
        ingestFiles([
          ['a', a],
          ['c', c],
        ]),
      ),
    );
    expect(o.segments.length).toBe(2);
    const g2 = o.generations.find((g) => g.generation === 2)!;
    // the full stack of c does not take generation 2 from the unrelated trace a (selection.ts:
    // the generation in force restarts in each file), and gen 2 has no span in c's segment
    expect(g2.records).toBe(1);
    expect(g2.segments.map((s) => s.segment)).toEqual([0]);
  });
});

describe('resets of a v7 trace, from its own markers', () => {
  // capture.sh and the simulator write `stackmap reset N` to trace_marker before each reset; the
  // kernel prints it as `tracing_mark_write: ...`, trace-cmd report as `print: tracing_mark_write: ...`
  const ev = (ts: string) => `            cat-2211    [000] ...1.  ${ts}: do_sys_openat2 <-__x64_sys_openat`;
  const id = (ts: string, slot: number) => `            cat-2211    [000] ...1.  ${ts}: <stack_id ${slot}>`;
  const marker = (ts: string, form: 'kernel' | 'trace-cmd', n: number) =>
    `              sh-1       [001] .....  ${ts}: ${form === 'kernel' ? '' : 'print: '}tracing_mark_write: stackmap reset ${n}`;
  const trace = [
    '# tracer: nop',
    ev('100.000001'),
    id('100.000002', 5),
    marker('150.000000', 'kernel', 1),
    ev('200.000001'),
    id('200.000002', 5),
    marker('250.000000', 'trace-cmd', 2),
    '              sh-1       [001] .....  260.000000: tracing_mark_write: stackmap resets are not this',
    ev('300.000001'),
    id('300.000002', 9),
    '',
  ].join('\n');
  const dump = ['stack_id 5 [ref 2, depth 1]', '  [0] schedule+0x48/0xc0', '', 'stack_id 9 [ref 1, depth 1]', '  [0] vfs_write+0x2b4/0x3c0', ''].join('\n');

  it('a line at each marker (the times the lines above print), none for other prints; chunked and renamed alike', () => {
    // the second method: the marker lines' times, read from the text with a regex
    const want = [...trace.matchAll(/ (\d+\.\d+): (?:print: )?tracing_mark_write: stackmap reset \d+$/gm)].map((m) => Number(m[1]));
    expect(want).toEqual([150, 250]);
    for (const name of ['trace', 'unknown'])
      for (const chunk of [0, 1, 7]) {
        const o = overview(
          new ExplorerData(
            ingestFiles(
              [
                [name, trace],
                ['stack_map', dump],
              ],
              chunk,
            ),
          ),
        );
        expect(o.resets).toEqual(want.map((ts) => ({ ts, from: 'none', to: 'none', marker: true })));
      }
  });
});

describe('overview of a trace of many generations', () => {
  it('lists the first generations and the last few (what the generation menu draws), counting the rest', () => {
    const n = 3_000;
    const lines: string[] = [];
    for (let i = 1; i <= n; i++) {
      const ts = (1000 + i / 1e6).toFixed(6);
      lines.push(
        `  kworker/u8:2-88  [001] ...1.  ${ts}: kmem_cache_alloc: call_site=x+0x1`,
        `  kworker/u8:2-88  [001] ...1.  ${ts}: <stack_id ${i % 5} gen ${i}>`,
      );
    }
    const text = lines.join('\n') + '\n';
    const distinct = [...new Set([...text.matchAll(/<stack_id \d+ gen (\d+)>/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
    const o = overview(new ExplorerData(ingestFiles([['trace', text]])));
    const listed = [...distinct.slice(0, GENERATIONS_HEAD), ...distinct.slice(-GENERATIONS_TAIL)];
    expect(o.generations.map((g) => g.generation)).toEqual(listed);
    expect(o.generationsCut).toBe(distinct.length - listed.length);
    expect(o.generations.every((g) => g.records === 1 && g.cookies === 1)).toBe(true);
    // resets between the listed generations only
    expect(o.resets.length).toBe(listed.length - 1);
  });
});

describe("generations' times read without the records' time column", () => {
  it("equal a plain pass over that column (each record's time gathered from its event or its own), with orphans and records timed apart from their event", () => {
    const trace = TIMED_APART_TRACE;
    const d = new ExplorerData(ingestFiles([['trace', trace]]));
    const want = new Map<number, { firstTs: number; lastTs: number; records: number }>();
    for (let r = 0; r < d.rec.ts.length; r++) {
      const g = d.recGen[r];
      const w = want.get(g) ?? { firstTs: Infinity, lastTs: -Infinity, records: 0 };
      want.set(g, { firstTs: Math.min(w.firstTs, d.rec.ts[r]), lastTs: Math.max(w.lastTs, d.rec.ts[r]), records: w.records + 1 });
    }
    // the times the trace prints, by the generation each record carries
    expect([...want]).toEqual([
      [3, { firstTs: 99, lastTs: 9000.25, records: 4 }],
      [4, { firstTs: 101.75, lastTs: 101.75, records: 1 }],
    ]);
    const fresh = new ExplorerData(ingestFiles([['trace', trace]]));
    const got = overview(fresh).generations.map((g) => [g.generation, { firstTs: g.firstTs, lastTs: g.lastTs, records: g.records }]);
    expect(got).toEqual([...want]);
  });
});
