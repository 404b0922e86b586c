import { beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';
import { DiagnosticLog } from './diagnostics.ts';
import { sniffKind } from './sniff.ts';
import { createSystraceHtmlParser } from './systrace-html.ts';
import { feedChunks } from '../testing/formats.ts';
import { readEveryWay, readers } from '../testing/reader-kit.ts';
import { realDescribe, realTrace } from '../testing/real-traces.ts';
import type { TraceEvent, TraceSink, TraceStackRecord } from './types.ts';

const HTML = 'trappy-trace_surfaceflinger.html';

function collect(): { sink: TraceSink; events: TraceEvent[]; records: TraceStackRecord[] } {
  const events: TraceEvent[] = [];
  const records: TraceStackRecord[] = [];
  return { sink: { event: (e) => events.push({ ...e }), stackRecord: (r) => records.push({ ...r }), lost: () => {} }, events, records };
}

/*
 * Counts verified with a second method (awk + grep over the file):
 *   awk '/<script class="trace-data"/{inb=1;next} inb&&/<\/script>/{inb=0} inb' trappy-trace_surfaceflinger.html > /tmp/ftrace.txt
 *   wc -l /tmp/ftrace.txt                 -> 2517 lines in the ftrace block (HTML lines 589..3105)
 *   grep -c '^#' /tmp/ftrace.txt          -> 11 header lines
 *   grep -vc '^#' /tmp/ftrace.txt         -> 2506 event lines
 *   grep -v '^#' /tmp/ftrace.txt | sed -E 's/.*[0-9]+\.[0-9]+: ([^: ]+):.*\/\1/' | sort | uniq -c
 *     -> 715 sched_switch, 621 cpu_idle, 421 sched_wakeup, 366 sugov_set_iowait_boost,
 *        160 tracing_mark_write, 104 cpu_frequency, 88 clock_set_rate, 31 sched_blocked_reason
 *   (`tracing_mark_write:` is no event's name but the caller the kernel prints for a trace_marker
 *   write, its `print` event: trace_output.c trace_print_print)
 *   wc -l < trappy-trace_surfaceflinger.html -> 3111 (newline-terminated: 3111 lines)
 *   the second trace-data block (line 3107) holds JSON on one line (3108)
 */
const NAMES: Record<string, number> = {
  sched_switch: 715,
  cpu_idle: 621,
  sched_wakeup: 421,
  sugov_set_iowait_boost: 366,
  print: 160,
  cpu_frequency: 104,
  clock_set_rate: 88,
  sched_blocked_reason: 31,
};

// the body runs to collect the tests even without the folder: the file is read in beforeAll
realDescribe('systrace HTML (trappy trace_surfaceflinger.html)', () => {
  let bytes: Uint8Array = new Uint8Array(0);
  beforeAll(() => {
    bytes = realTrace(HTML);
  });

  it('sniffs as systrace_html', () => {
    expect(sniffKind(bytes.subarray(0, 16384))).toBe('systrace_html');
  });

  it('reads the ftrace block and accounts every line (every way: reader-kit.ts at chunks of 0, 1, 7, 64 and 4096 bytes, renamed `unknown`)', () => {
    const k = readEveryWay(HTML, bytes, { ...readers.systraceHtml, sizes: [0, 1, 7, 64, 4096] });
    const [r, c] = [k.result, { events: k.got.events, records: k.got.stacks }];
    expect(c.events.length).toBe(2506);
    expect(c.records.length).toBe(0);
    expect(r.lines).toEqual({ total: 3111, used: 3110, unused: 1 });
    expect(r.tracer).toBe('nop');
    expect(r.cpus).toBe(8);
    // lineNo names the HTML line: the first event is on line 600, the last on 3105
    expect(c.events[0].lineNo).toBe(600);
    expect(c.events[c.events.length - 1].lineNo).toBe(3105);
    expect(c.events[0]).toMatchObject({ comm: 'kworker/u17:1', pid: 959, tgid: 959, cpu: 6, ts: 538.064659, name: 'sched_switch' });
    const diags = k.diagnostics;
    expect(diags).toHaveLength(1);
    expect(diags[0].where).toBe('line 3107');
    expect(diags[0].message).toMatch(/JSON/);
  });

  it('through Ingest: exact event counts per name', () => {
    const cap = ingestFiles([[HTML, bytes]], 4096);
    expect(cap.files[0].kind).toBe('systrace_html');
    expect(cap.files[0].lines).toEqual({ total: 3111, used: 3110, unused: 1 });
    expect(cap.trace.eventCount).toBe(2506);
    expect(cap.trace.recordCount).toBe(0);
    const counts: Record<string, number> = {};
    for (let i = 0; i < cap.trace.eventCount; i++) {
      const n = cap.trace.names.strings[cap.trace.evName.get(i)];
      counts[n] = (counts[n] ?? 0) + 1;
    }
    expect(counts).toEqual(NAMES);
    expect(cap.tracer).toBe('nop');
  });
});

describe('systrace HTML variants', () => {
  const enc = new TextEncoder();
  const ev = (ts: string) => `          bash-1234  [001] d..1   ${ts}: sched_switch: a=b`;
  const read = (text: string, chunk = 0) => {
    const log = new DiagnosticLog('t.html');
    const c = collect();
    const r = feedChunks(createSystraceHtmlParser({ file: 't.html', diagnostics: log }, c.sink), enc.encode(text), chunk);
    return { r, log, ...c };
  };

  it('reads text on the tag lines and several ftrace blocks (every way: reader-kit.ts)', () => {
    const html = [
      '<html><body>',
      `<script class="trace-data" type="application/text">${ev('1.000001')}`,
      ev('1.000002'),
      `${ev('1.000003')}</script><script class="trace-data">{"a": 1}</script>`,
      "<script class='trace-data'>",
      'garbage line',
      ev('2.000000'),
      '</script></body></html>',
    ].join('\n');
    const k = readEveryWay('t.html', html, readers.systraceHtml);
    const [r, events] = [k.result, k.got.events];
    expect(events.map((e) => e.ts)).toEqual([1.000001, 1.000002, 1.000003, 2.0]);
    expect(events.map((e) => e.lineNo)).toEqual([2, 3, 4, 7]);
    // line 4 carries ftrace text (counted by the trace parser) and a JSON block
    expect(r.lines).toEqual({ total: 8, used: 7, unused: 1 });
    expect(k.diagnostics.map((d) => [d.where, d.message])).toEqual([
      ['line 4', 'trace-data block holds JSON (Chrome trace events), not ftrace text: its 1 lines are not read'],
      ['line 6', 'not a trace line'],
    ]);
  });

  it('an HTML page without trace-data says so, and uses none of its lines', () => {
    const { r, log, events } = read('<!DOCTYPE html>\n<html>\n<p>hi</p>\n</html>\n');
    expect(events).toEqual([]);
    expect(r.lines).toEqual({ total: 4, used: 0, unused: 4 });
    expect(log.list().map((d) => [d.where, d.message])).toEqual([
      ['file', 'no <script class="trace-data"> block and no linuxPerfData string: not a systrace HTML file, nothing read (its 4 lines are not used)'],
    ]);
  });

  it('compressed trace data is reported, not read: the file uses none of its lines', () => {
    const { r, log } = read(`<html>\n<script class="trace-data">\n${'eJzt'.repeat(40)}\n</script>\n</html>`);
    expect(r.lines).toEqual({ total: 5, used: 0, unused: 5 });
    expect(log.list().map((d) => d.message)).toEqual([
      'trace-data block holds compressed (base64) data: its 1 lines are not read',
      "none of the 1 trace-data blocks holds ftrace text: nothing read (the file's 5 lines are not used)",
    ]);
  });
});

realDescribe('formats recognized but not read', () => {
  it('trace-cmd trace.dat: its own kind, read by trace-dat.ts (exact counts in trace-dat.test.ts)', () => {
    const bytes = realTrace('trappy-trace.dat');
    expect(sniffKind(bytes.subarray(0, 16384))).toBe('trace_cmd_dat');
    const cap = ingestFiles([['trace.dat', bytes]], 65536);
    expect(cap.files[0]).toMatchObject({ kind: 'trace_cmd_dat', bytes: { total: bytes.length, used: bytes.length, unused: 0 } });
    expect(cap.trace.eventCount).toBeGreaterThan(0);
    // its kallsyms was saved without privilege: the one diagnostic says so
    expect(cap.diagnostics.map((d) => d.message)).toEqual([expect.stringContaining('kallsyms was read without privilege')]);
  });

  it('perf script output: its own kind, read by perf-script.ts (counted in perf-script.test.ts)', () => {
    const bytes = realTrace('flamegraph-perf-dd-stacks-01.txt');
    expect(sniffKind(bytes)).toBe('perf_script');
    const cap = ingestFiles([['perf.txt', bytes]], 7);
    expect(cap.files[0]).toMatchObject({ kind: 'perf_script', lines: { unused: 0 } });
    expect(cap.diagnostics).toEqual([]);
  });

  it('the real ftrace texts still sniff as trace_text', () => {
    for (const f of [
      'catapult-atrace_data.txt',
      'catapult-decompressed_atrace_data.txt',
      'perf-tools-functrace_example.txt',
      'perf-tools-kprobe_example.txt',
      'perf-tools-tpoint_example.txt',
    ]) {
      expect([f, sniffKind(realTrace(f).subarray(0, 16384))]).toEqual([f, 'trace_text']);
    }
  });
});

realDescribe('a document that only mentions systrace HTML', () => {
  it('is not taken for it: SOURCES.md quotes `<script class="trace-data">` inside a table', () => {
    expect(sniffKind(realTrace('SOURCES.md'))).toBe('unknown');
  });
});
