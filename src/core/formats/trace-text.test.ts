import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';
import { hasTraceCmd, readDat, reportText, type Got } from '../testing/trace-dat.ts';
import { SAMPLE_FORMAT, writeTraceDat, type DatWriteEvent } from './trace-dat/write.ts';
import { DiagnosticLog } from './diagnostics.ts';
import { feedChunks, fixture } from '../testing/formats.ts';
import { readEveryWay, readers } from '../testing/reader-kit.ts';
import { realDescribe, realIt, realTrace } from '../testing/real-traces.ts';
import { createTraceTextParser } from './trace-text.ts';
import { MAX_PRINT, REASON } from './trace-text-shared.ts';
import { writeTraceText, type TraceTextItem } from './trace-text-write.ts';
import type { TraceEvent, TraceLost, TraceStackRecord, TraceTextResult } from './types.ts';

interface Parsed {
  timeDigits: number;
  result: TraceTextResult;
  events: TraceEvent[];
  stacks: TraceStackRecord[];
  lost: TraceLost[];
  diagnostics: ReturnType<DiagnosticLog['list']>;
}

function parse(bytes: Uint8Array, chunkSize = 0, file = 'trace'): Parsed {
  const diagnostics = new DiagnosticLog(file);
  const events: TraceEvent[] = [];
  const stacks: TraceStackRecord[] = [];
  const lost: TraceLost[] = [];
  const parser = createTraceTextParser(
    { file, diagnostics },
    { event: (e) => events.push({ ...e }), stackRecord: (r) => stacks.push({ ...r }), lost: (l) => lost.push(l) },
  );
  const { timeDigits, ...result } = feedChunks(parser, bytes, chunkSize);
  return { result, timeDigits: timeDigits ?? 0, events, stacks, lost, diagnostics: diagnostics.list() };
}

/** The most digits after the point of any line's time (`  12.345678: `), by a regex over the text: the second method for timeDigits. */
function printedTimeDigits(bytes: Uint8Array): number {
  let most = 0;
  for (const line of new TextDecoder().decode(bytes).split('\n')) {
    const m = /\s(\d+)\.(\d+):(?:\s|$)/.exec(line);
    if (m && !line.startsWith('#')) most = Math.max(most, m[2].length);
  }
  return most;
}

/**
 * Parses every way (reader-kit.ts: every chunk size, renamed `unknown` through the sniffer, the
 * file's lines), checks each unused line is diagnosed once and the time digits by their second
 * method, returns the one-chunk reading.
 */
function parseAll(bytes: Uint8Array): Parsed {
  const r = readEveryWay('trace', bytes, readers.traceText);
  const { timeDigits, ...result } = r.result;
  const first: Parsed = { result, timeDigits: timeDigits ?? 0, events: r.got.events, stacks: r.got.stacks, lost: r.got.lost, diagnostics: r.diagnostics };
  const { lines } = first.result;
  expect(first.timeDigits).toBe(printedTimeDigits(bytes));
  const diagnosed = first.diagnostics.reduce((n, d) => n + d.count, 0);
  expect(diagnosed).toBe(lines.unused);
  return first;
}

const cookies = (p: Parsed) => p.stacks.filter((s) => s.kind === 'cookie').map((s) => [s.slot, s.generation, s.comm, s.pid, s.cpu]);
const diag = (p: Parsed) => Object.fromEntries(p.diagnostics.map((d) => [d.message, d.count]));
const sortedCounts = (xs: string[]) => {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
};

describe('trace text fixtures', () => {
  it('v7/stack_id: ids without generation, fallback stack, lost events', () => {
    const p = parseAll(fixture('trace_text/v7/stack_id.txt'));
    expect(p.result).toEqual({ lines: { total: 36, used: 36, unused: 0 }, tracer: 'nop', cpus: 4 });
    expect(p.events).toHaveLength(6);
    expect(p.events.map((e) => e.name)).toEqual(Array(6).fill('kmem_cache_alloc'));
    expect(p.events[0]).toEqual({
      lineNo: 13,
      comm: 'bash',
      pid: 1234,
      tgid: null,
      cpu: 2,
      ts: 812.106512,
      flags: '...1.',
      name: 'kmem_cache_alloc',
      payload: 'call_site=alloc_empty_file+0x4b/0x110 ptr=000000006b4c7a1e bytes_req=256 bytes_alloc=256 gfp_flags=GFP_KERNEL node=-1 accounted=false',
    });
    expect(p.events[2]).toMatchObject({ comm: 'kworker/2:1', pid: 88, flags: 'd.h..' });
    expect(p.events[4]).toMatchObject({ comm: '<idle>', pid: 0, cpu: 3, flags: 'd.s2.' });
    expect(p.stacks).toHaveLength(6);
    expect(cookies(p)).toEqual([
      [42, null, 'bash', 1234, 2],
      [7, null, 'bash', 1234, 2],
      [42, null, 'bash', 1234, 2],
      [16383, null, '<idle>', 0, 3],
      [7, null, 'gmain', 917, 1],
    ]);
    const full = p.stacks[2];
    expect(full).toMatchObject({ kind: 'full', lineNo: 18, comm: 'kworker/2:1', pid: 88, cpu: 2, ts: 812.107004 });
    expect(full.frames).toEqual([
      'trace_event_raw_event_kmem_cache_alloc+0xd2',
      'kmem_cache_alloc+0x1c4',
      '__alloc_skb+0x4d',
      'ip6_rt_cache_alloc+0x2b',
      'process_one_work+0x1e6',
      'worker_thread+0x4d',
      'kthread+0xe5',
      'ret_from_fork+0x31',
      'ret_from_fork_asm+0x1b',
    ]);
    expect(p.lost).toEqual([
      { lineNo: 30, cpu: 3, count: 128 },
      { lineNo: 34, cpu: 1, count: null },
    ]);
  });

  it('v8/stack_id_gen: cookies with generation, trampoline and kretprobe frames, function tracer', () => {
    const p = parseAll(fixture('trace_text/v8/stack_id_gen.txt'));
    expect(p.result).toEqual({ lines: { total: 30, used: 30, unused: 0 }, tracer: 'function', cpus: 4 });
    expect(p.events).toHaveLength(6);
    for (const e of p.events) {
      expect(e.name).toBe('function');
      expect(e.payload).toBe('do_sys_openat2 <-__x64_sys_openat');
    }
    expect(p.events.map((e) => e.comm)).toEqual(['<...>', 'cat', 'cat', 'systemd-udevd', 'Web Content', 'irq/51-ELAN0001']);
    expect(p.events.map((e) => e.pid)).toEqual([2211, 2211, 2211, 311, 5120, 402]);
    expect(cookies(p)).toEqual([
      [118, 3, '<...>', 2211, 1],
      [118, 3, 'cat', 2211, 1],
      [5, 4, 'systemd-udevd', 311, 0],
      [4294, 4, 'Web Content', 5120, 3],
      [118, 4, 'irq/51-ELAN0001', 402, 2],
    ]);
    const full = p.stacks.filter((s) => s.kind === 'full');
    expect(full).toHaveLength(1);
    expect(full[0].frames).toEqual([
      '[FTRACE TRAMPOLINE]',
      'do_sys_openat2+0x5',
      "[unknown/kretprobe'd]",
      '__x64_sys_openat+0x6d',
      'do_syscall_64+0x5d',
      'entry_SYSCALL_64_after_hwframe+0x76',
    ]);
    expect(p.lost).toEqual([]);
  });

  it('irq-info-tgid: TGID column, (-------) and (-----), 4- and 5-char flags', () => {
    const p = parseAll(fixture('trace_text/irq-info-tgid/record_tgid.txt'));
    expect(p.result).toEqual({ lines: { total: 19, used: 19, unused: 0 }, tracer: 'nop', cpus: 8 });
    expect(p.events.map((e) => [e.comm, e.pid, e.tgid, e.cpu, e.flags, e.name])).toEqual([
      // trace_marker writes: the kernel prints their caller, tracing_mark_write, for a name
      ['<...>', 19161, null, 1, '...1.', 'print'],
      ['ndroid.systemui', 13580, 13580, 1, '...1.', 'print'],
      ['RenderThread', 13622, 13580, 5, '...1.', 'kmem_cache_alloc'],
      ['kworker/u16:3', 7301, 7301, 4, 'd..2.', 'sched_switch'],
      ['<idle>', 0, 0, 4, 'dNh2.', 'sched_wakeup'],
      ['<...>', 18926, null, 0, '...1', 'print'],
    ]);
    // the payload keeps the caller, as the trace.dat reader's `%ps: %s`
    expect(p.events[0].payload).toBe('tracing_mark_write: trace_event_clock_sync: parent_ts=683201.375000');
    expect(p.events[0].ts).toBe(683201.354908);
    expect(cookies(p)).toEqual([[901, 0, 'RenderThread', 13622, 5]]);
  });

  it('no-irq-info/trace_pipe: no flags, no header, sym-addr frames, user stacks', () => {
    const p = parseAll(fixture('trace_text/no-irq-info/trace_pipe.txt'));
    expect(p.result).toEqual({ lines: { total: 13, used: 13, unused: 0 }, tracer: null, cpus: null });
    expect(p.events.map((e) => [e.comm, e.pid, e.cpu, e.flags, e.name, e.ts])).toEqual([
      ['bash', 1994, 2, '', 'sys_enter_openat', 221.804412],
      ['sshd', 811, 0, '', 'sys_enter_openat', 221.805101],
    ]);
    expect(p.events[0].payload).toBe('dfd: 0xffffff9c, filename: 0x55d1c0a7e2f0, flags: 0x00080000, mode: 0x00000000');
    expect(p.stacks.map((s) => [s.kind, s.lineNo, s.frames])).toEqual([
      ['full', 2, ['trace_event_raw_event_sys_enter+0x10e', '__x64_sys_openat', '0xffffffffc0a1b2c3', 'do_syscall_64+0x5d']],
      ['user', 7, ['0x7f8e4a2f1a7b', '/usr/lib/x86_64-linux-gnu/libc.so.6[+0x114a7b]', '0x55d1bfe3c0aa']],
      ['cookie', 12, null],
      // an empty user stack at end of input is still delivered
      ['user', 13, []],
    ]);
    expect(p.stacks[2]).toMatchObject({ slot: 12, generation: null });
  });

  it('trace-cmd/report: version, cpus, empty CPU, kernel_stack with (addr) frames', () => {
    const p = parseAll(fixture('trace_text/trace-cmd/report.txt'));
    expect(p.result).toEqual({ lines: { total: 18, used: 18, unused: 0 }, tracer: null, cpus: 4 });
    expect(p.events.map((e) => [e.comm, e.pid, e.cpu, e.flags, e.name, e.payload])).toEqual([
      ['<idle>', 0, 0, '', 'sched_switch', 'swapper/0:0 [120] R ==> kworker/0:1:31 [120]'],
      ['trace-cmd', 5120, 1, '', 'function', 'do_nanosleep <-- hrtimer_nanosleep'],
      [
        'trace-cmd',
        5120,
        1,
        'd..1.',
        'kmem_cache_alloc',
        'call_site=__alloc_skb+0x4d/0x1f0 ptr=0x0000000017a0e5b9 bytes_req=232 bytes_alloc=256 gfp_flags=GFP_ATOMIC',
      ],
      ['<idle>', 0, 3, '', 'sched_wakeup', 'trace-cmd:5120 [120] CPU:001'],
    ]);
    expect(p.stacks.map((s) => [s.kind, s.comm, s.frames])).toEqual([
      ['full', 'kworker/0:1', ['__schedule', 'schedule', 'worker_thread', 'kthread', 'ret_from_fork']],
      ['full', 'trace-cmd', ['ftrace_regs_call', '0xffffffffc0a1b2c3', 'hrtimer_nanosleep']],
      ['cookie', 'trace-cmd', null],
    ]);
    expect(p.stacks[2]).toMatchObject({ slot: 3, generation: 1 });
  });

  it('latency/irqsoff: banner headers, relative microsecond timestamps, indented frames', () => {
    const p = parseAll(fixture('trace_text/latency/irqsoff.txt'));
    expect(p.result).toEqual({ lines: { total: 32, used: 32, unused: 0 }, tracer: 'irqsoff', cpus: 4 });
    expect(p.events.map((e) => [e.comm, e.pid, e.cpu, e.flags, e.ts, e.name])).toEqual([
      ['<idle>', 0, 0, 'd.s2', 0, 'function'],
      ['<idle>', 0, 0, 'dNs3', 17e-6, 'function'],
      ['bash', 1994, 1, 'dN.2', 83e-6, 'kmem_cache_alloc'],
    ]);
    expect(p.stacks).toHaveLength(1);
    expect(p.stacks[0]).toMatchObject({ kind: 'full', comm: '<idle>', cpu: 0, ts: 25e-6 });
    expect(p.stacks[0].frames).toEqual([
      '_raw_spin_unlock_irq',
      'run_timer_softirq',
      '__do_softirq',
      'irq_exit',
      'smp_apic_timer_interrupt',
      'apic_timer_interrupt',
      'cpu_idle',
      'start_kernel',
    ]);
  });

  it('crlf: BOM and CRLF line ends', () => {
    const p = parseAll(fixture('trace_text/crlf/stack_id_gen_crlf.txt'));
    expect(p.result).toEqual({ lines: { total: 10, used: 10, unused: 0 }, tracer: 'nop', cpus: 2 });
    expect(p.events).toHaveLength(1);
    expect(p.events[0].payload.endsWith('accounted=false')).toBe(true);
    expect(cookies(p)).toEqual([[42, 2, 'bash', 1234, 1]]);
    expect(p.stacks[1].frames).toEqual(['kmem_cache_alloc+0x1c4', 'alloc_empty_file+0x4b']);
    expect(p.lost).toEqual([{ lineNo: 10, cpu: 0, count: 3 }]);
  });

  it('ns-timestamps: 9 decimals', () => {
    const p = parseAll(fixture('trace_text/ns-timestamps/ts9.txt'));
    expect(p.result.lines).toEqual({ total: 4, used: 4, unused: 0 });
    expect(p.events[0]).toMatchObject({ comm: 'kworker/0:2', pid: 201, ts: 512.000012345, name: 'sched_switch' });
    expect(cookies(p)).toEqual([[77, 12, 'kworker/0:2', 201, 0]]);
    expect(p.stacks[0].ts).toBe(512.000012501);
  });

  it('mixed/prose: prose, elisions, orphan frames and a bad stack_id are unused with diagnostics', () => {
    const p = parseAll(fixture('trace_text/mixed/prose.txt'));
    expect(p.result.lines).toEqual({ total: 15, used: 6, unused: 9 });
    expect(p.events).toHaveLength(1);
    expect(p.stacks.map((s) => [s.kind, s.lineNo, s.frames])).toEqual([['full', 9, ['kmem_cache_alloc+0x1c4', 'alloc_empty_file+0x4b']]]);
    expect(diag(p)).toEqual({
      [REASON.notTrace]: 4,
      [REASON.notHeader]: 1,
      [REASON.badStackId]: 1,
      [REASON.orphanFrame]: 3,
    });
    const orphan = p.diagnostics.find((d) => d.message === REASON.orphanFrame)!;
    expect(orphan.where).toBe('lines 6, 8, 13');
  });
});

/*
 * Real traces: expected numbers counted independently in the shell (GNU grep), in
 * ../shared/real-traces/:
 *   all event lines incl. stack lines:
 *     grep -cE '^ *.+-[0-9]+ +(\([ 0-9-]+\) +)?\[[0-9]+\] +([^ ]{4,5} +)?[0-9]+\.[0-9]+: ' F
 *   <stack trace> records:  grep -cE '\] .*[0-9]: <stack trace>$' F
 *   frame lines:            grep -cE '^ *=> ' F
 *   '#' lines:              grep -c '^#' F     shell prompts among them:  grep -cE '^# (\./|wc )' F
 *   blank lines:            grep -cE '^\s*$' F
 *   lines:                  wc -l F   (every file ends with a newline)
 * used = event lines + frames + ('#' lines - prompts) + blank; events = event lines - stack records.
 */
realDescribe('real traces', () => {
  it('catapult atrace_data: 116 events, no stacks', () => {
    const p = parseAll(realTrace('catapult-atrace_data.txt'));
    expect(p.result).toEqual({ lines: { total: 127, used: 127, unused: 0 }, tracer: 'nop', cpus: 1 });
    expect(p.events).toHaveLength(116);
    expect(p.stacks).toHaveLength(0);
    expect(p.events[0]).toMatchObject({ comm: 'atrace', pid: 14446, cpu: 0, flags: '...2', name: 'sched_switch' });
    // COMM with a space and a dash
    expect(p.events.some((e) => e.comm === 'irq/363-ARM64 s' && e.pid === 292)).toBe(true);
  });

  it('catapult decompressed_atrace_data: 1042 events with a TGID column', () => {
    const p = parseAll(realTrace('catapult-decompressed_atrace_data.txt'));
    expect(p.result).toEqual({ lines: { total: 1053, used: 1053, unused: 0 }, tracer: 'nop', cpus: 6 });
    expect(p.events).toHaveLength(1042);
    expect(p.stacks).toHaveLength(0);
    expect(p.events[0]).toMatchObject({ comm: '<...>', pid: 19161, tgid: null, cpu: 1, name: 'print' });
    expect(p.events[2]).toMatchObject({ comm: 'ndroid.systemui', pid: 13580, tgid: 13580 });
    // grep -c 'tracing_mark_write: ' catapult-decompressed_atrace_data.txt: trace_marker writes, the kernel's `print` events
    expect(p.events.filter((e) => e.name === 'print')).toHaveLength(1042);
    expect(p.events.every((e) => e.payload.startsWith('tracing_mark_write: '))).toBe(true);
  });

  it('perf-tools kprobe_example: 131 events, 3 stacks of 10 frames, prose unused', () => {
    const p = parseAll(realTrace('perf-tools-kprobe_example.txt'));
    // 134 event lines, 3 stacks, 30 frames, 28 '#' lines of which 17 prompts, 65 blank
    expect(p.result.lines).toEqual({ total: 379, used: 240, unused: 139 });
    expect(p.events).toHaveLength(131);
    expect(p.stacks).toHaveLength(3);
    expect(p.stacks.map((s) => s.frames!.length)).toEqual([10, 10, 10]);
    expect(p.stacks[0].frames![0]).toBe('tcp_write_xmit');
    expect(p.stacks[0].frames![9]).toBe('system_call_fastpath');
    expect(p.events.some((e) => e.comm === 'jbd2/xvda1-8' && e.pid === 212 && e.flags === '')).toBe(true);
    expect(p.events.some((e) => e.comm === 'flush-202:1' && e.pid === 409)).toBe(true);
    expect(diag(p)[REASON.notHeader]).toBe(17);
    expect(diag(p)[REASON.notTrace]).toBe(139 - 17);
  });

  it('perf-tools tpoint_example: 18 events, 5 stacks, prose unused', () => {
    const p = parseAll(realTrace('perf-tools-tpoint_example.txt'));
    // 23 event lines, 5 stacks, 67 frames, 18 '#' lines of which 7 prompts, 31 blank
    expect(p.result.lines).toEqual({ total: 210, used: 132, unused: 78 });
    expect(p.events).toHaveLength(18);
    expect(p.stacks).toHaveLength(5);
    expect(p.stacks.map((s) => s.frames!.length)).toEqual([17, 14, 14, 11, 11]);
    expect(p.events.every((e) => e.name === 'block_rq_issue' || e.name === 'block_rq_insert')).toBe(true);
    expect(diag(p)[REASON.notHeader]).toBe(7);
  });

  it('perf-tools functrace_example: 37 function events, prose unused', () => {
    const p = parseAll(realTrace('perf-tools-functrace_example.txt'));
    // 37 event lines, 26 '#' lines of which 11 prompts, 39 blank
    expect(p.result.lines).toEqual({ total: 341, used: 91, unused: 250 });
    expect(p.events).toHaveLength(37);
    expect(p.stacks).toHaveLength(0);
    expect(p.events.every((e) => e.name === 'function')).toBe(true);
    expect(p.events[0]).toMatchObject({ comm: 'svscan', pid: 1678, payload: 'do_nanosleep <-hrtimer_nanosleep' });
    expect(p.events.some((e) => e.comm === 'register_start.' && e.pid === 17008)).toBe(true);
    expect(diag(p)[REASON.notHeader]).toBe(11);
  });
});

describe('writeTraceText', () => {
  const items: TraceTextItem[] = [
    {
      type: 'event',
      comm: 'bash',
      pid: 1234,
      tgid: null,
      cpu: 2,
      ts: 812.106512,
      flags: '...1.',
      name: 'kmem_cache_alloc',
      payload: 'call_site=x+0x4b/0x110 ptr=0000000012345678',
    },
    { type: 'stack', kind: 'cookie', comm: 'bash', pid: 1234, cpu: 2, ts: 812.106515, slot: 42, generation: null, frames: null },
    {
      type: 'event',
      comm: 'Web Content',
      pid: 5120,
      tgid: 5100,
      cpu: 11,
      ts: 100123.5,
      flags: 'd.h2.',
      name: 'function',
      payload: 'do_sys_openat2 <-__x64_sys_openat',
    },
    { type: 'stack', kind: 'cookie', comm: 'Web Content', pid: 5120, cpu: 11, ts: 100123.500002, slot: 7, generation: 3, frames: null },
    { type: 'lost', cpu: 3, count: 17 },
    { type: 'event', comm: 'irq/51-ELAN0001', pid: 402, tgid: null, cpu: 0, ts: 3.000001, flags: '', name: 'sched_waking', payload: '' },
    {
      type: 'stack',
      kind: 'full',
      flags: 'd....',
      comm: 'irq/51-ELAN0001',
      pid: 402,
      cpu: 0,
      ts: 3.000002,
      slot: -1,
      generation: null,
      frames: ['[FTRACE TRAMPOLINE]', 'do_sys_openat2+0x5', "[unknown/kretprobe'd]", '0xffffffffc0a1b2c3', 'schedule', 'ip6_rt_cache_alloc+0x2b'],
    },
    { type: 'lost', cpu: 0, count: null },
    {
      type: 'stack',
      kind: 'user',
      comm: '<...>',
      pid: 9,
      cpu: 1,
      ts: 4.5,
      slot: -1,
      generation: null,
      frames: ['0x7f8e4a2f1a7b', '/usr/lib/x86_64-linux-gnu/libc.so.6[+0x114a7b]'],
    },
    { type: 'stack', kind: 'full', comm: '<...>', pid: 9, cpu: 1, ts: 4.6, slot: -1, generation: null, frames: [] },
  ];

  it('round-trips events, stack records and lost markers', () => {
    const text = writeTraceText(items, { tracer: 'function', cpus: 12 });
    const p = parseAll(new TextEncoder().encode(text));
    expect(p.result.tracer).toBe('function');
    expect(p.result.cpus).toBe(12);
    expect(p.result.lines.unused).toBe(0);
    const strip = <T extends { lineNo: number }>(x: T) => {
      const { lineNo: _, ...rest } = x;
      return rest;
    };
    const want = items.filter((i) => i.type === 'event').map(({ type: _, ...e }) => e);
    expect(p.events.map(strip)).toEqual(want);
    const wantStacks = items.filter((i) => i.type === 'stack').map(({ type: _, flags: __, ...s }) => s);
    // a record's context (its latency flags as a key) is nested-context.test.ts's to check
    expect(p.stacks.map(strip).map(({ ctx: _, ...r }) => r)).toEqual(wantStacks);
    expect(p.lost.map(strip)).toEqual([
      { cpu: 3, count: 17 },
      { cpu: 0, count: null },
    ]);
  });

  it('writes kernel columns', () => {
    const text = writeTraceText(items.slice(0, 2));
    expect(text.split('\n').slice(-3)).toEqual([
      '            bash-1234    [002] ...1.   812.106512: kmem_cache_alloc: call_site=x+0x4b/0x110 ptr=0000000012345678',
      '            bash-1234    [002] .....   812.106515: <stack_id 42>',
      '',
    ]);
    expect(text.startsWith('# tracer: nop\n#\n# entries-in-buffer/entries-written: 2/2   #P:3\n')).toBe(true);
  });

  it('re-parses a parsed fixture to the same records', () => {
    const p = parse(fixture('trace_text/v8/stack_id_gen.txt'));
    const again: TraceTextItem[] = [];
    let s = 0;
    for (const e of p.events) {
      const { lineNo: _, ...rest } = e;
      again.push({ type: 'event', ...rest });
      const r = p.stacks[s];
      if (r && r.lineNo > e.lineNo && !p.events.some((x) => x.lineNo > e.lineNo && x.lineNo < r.lineNo)) {
        const { lineNo: __, ...rr } = r;
        again.push({ type: 'stack', ...rr });
        s++;
      }
    }
    const q = parse(new TextEncoder().encode(writeTraceText(again, { tracer: 'function', cpus: 4 })));
    const drop = <T extends { lineNo: number }>(xs: T[]) => xs.map(({ lineNo: _, ...r }) => r);
    expect(drop(q.events)).toEqual(drop(p.events));
    // the writer prints a stack record's flags only when given them: its context is not round-tripped here
    const noCtx = <T extends { ctx?: number }>(xs: T[]) => xs.map(({ ctx: _, ...r }) => r);
    expect(noCtx(drop(q.stacks))).toEqual(noCtx(drop(p.stacks)));
  });
});

describe('cookie ids beyond 32 bits', () => {
  it('are reported, not wrapped onto another slot', () => {
    const text =
      [
        '  bash-1 [000] ..... 1.000001: <stack_id 4294967296 gen 1>',
        '  bash-1 [000] ..... 1.000002: <stack_id 7 gen 1099511627776>',
        '  bash-1 [000] ..... 1.000003: <stack_id 4294967295 gen 3>',
      ].join('\n') + '\n';
    const records: TraceStackRecord[] = [];
    const diagnostics = new DiagnosticLog('trace');
    const p = createTraceTextParser({ file: 'trace', diagnostics }, { event() {}, stackRecord: (r) => records.push({ ...r }), lost() {} });
    p.push(new TextEncoder().encode(text));
    const r = p.end();
    expect(records.map((x) => [x.slot, x.generation])).toEqual([[4294967295, 3]]);
    expect(r.lines).toEqual({ total: 3, used: 1, unused: 2 });
    expect(diagnostics.list().map((d) => [d.where, d.message])).toEqual([['lines 1, 2', 'stack_id slot or generation beyond 32 bits']]);
  });
});

// ---------------------------------------------------------------- trace_printk and trace_marker

const head = (ts: string) => `            bash-12    [000] ...1  ${ts}: `;

describe("trace_printk and trace_marker events: the kernel's names, bprint and print", () => {
  // The kernel prints both without a name: trace_output.c trace_bprint_print and
  // trace_print_print write seq_print_ip_sym(ip) (`%ps`; `%pS` with sym-offset, ` <addr>` after it
  // with sym-addr, `0` for no ip, `0x...` without a symbol, ` [module]` for a module's) and `: `.
  // trace-cmd report prints the event's name first (`bprint: `, `print: `, `bputs: `).
  const lines: [string, string, string][] = [
    // payload after the head, the name, the payload read
    ['tracing_mark_write: B|12|draw', 'print', 'tracing_mark_write: B|12|draw'],
    ['tracing_mark_write+0x5c/0xa0: E', 'print', 'tracing_mark_write+0x5c/0xa0: E'],
    ['0: C|12|VSYNC|1', 'print', '0: C|12|VSYNC|1'],
    ['0xffffffffc0a1b2c3: n=3', 'bprint', '0xffffffffc0a1b2c3: n=3'],
    ['do_work+0x1c/0x40: n=3', 'bprint', 'do_work+0x1c/0x40: n=3'],
    ['do_work.isra.0: n=3', 'bprint', 'do_work.isra.0: n=3'],
    ['my_fn [mymod]: n=3', 'bprint', 'my_fn [mymod]: n=3'],
    ['do_work <ffffffff81000104>: n=3', 'bprint', 'do_work <ffffffff81000104>: n=3'],
    ['my_fn+0x10/0x80 [mymod] <ffffffffc0001010>: n=3', 'bprint', 'my_fn+0x10/0x80 [mymod] <ffffffffc0001010>: n=3'],
    ['tracing_mark_write <ffffffff81200010>: x', 'print', 'tracing_mark_write <ffffffff81200010>: x'],
    ['bprint: do_work: n=3', 'bprint', 'do_work: n=3'],
    ['print: tracing_mark_write: hi', 'print', 'tracing_mark_write: hi'],
    ['bputs: do_work: hello', 'bputs', 'do_work: hello'],
    // a bare symbol has an event name's shape: it cannot be told from one
    ['do_work: n=3', 'do_work', 'n=3'],
    ['sched_switch: prev_comm=a', 'sched_switch', 'prev_comm=a'],
    // not these shapes: the old sched_switch tracer's `0:120:R`, a function tracer line, a word and a blank, `0x` without digits
    ['0:120:R ==> [000] 13:120:R kworker/0:1', '', '0:120:R ==> [000] 13:120:R kworker/0:1'],
    ['do_sys_open <-do_syscall_64', 'function', 'do_sys_open <-do_syscall_64'],
    ['my_fn [mymod] x: n=3', '', 'my_fn [mymod] x: n=3'],
    ['0x: n', '0x', 'n'],
    ['0xfg: n', '0xfg', 'n'],
    ['foo+bar: n', 'foo+bar', 'n'],
  ];
  const text = lines.map(([p], i) => head(`1.${String(i + 1).padStart(6, '0')}`) + p).join('\n') + '\n';

  it('each caller shape the kernel prints, and the names trace-cmd report prints', () => {
    const p = parseAll(new TextEncoder().encode(text));
    expect(p.events.map((e) => [e.name, e.payload])).toEqual(lines.map(([, n, pl]) => [n, pl]));
    expect(p.result.lines).toEqual({ total: lines.length, used: lines.length, unused: 0 });
  });

  it('the same names through Ingest (the trace columns, read in place)', () => {
    const want = parse(new TextEncoder().encode(text)).events.map((e) => e.name);
    for (const chunk of [0, 7, 4096]) {
      const cap = ingestFiles([['unknown', text]], chunk);
      const names = Array.from({ length: cap.trace.eventCount }, (_, i) => cap.trace.names.strings[cap.trace.evName.get(i)]);
      expect(names).toEqual(want);
    }
  });
});

describe('a multi-line trace_printk: its continuation lines join it', () => {
  const text = [
    '# tracer: nop',
    head('1.000001') + 'bprint: do_work: first line',
    'second: line',
    '  third',
    '',
    'after a blank',
    head('1.000002') + 'sched_switch: a=1',
    'not joined: after sched_switch',
    head('1.000003') + 'tracing_mark_write: B|12|x',
    '# a header-like line is not joined',
    'nor what follows it',
    head('1.000004') + 'print: tracing_mark_write: y',
    ' => not_joined_frame',
    head('1.000005') + 'bprint: 0xc0: z',
    '',
    '',
    head('1.000006') + '0xffffffffc0a1b2c3: w',
    'w2',
    head('1.000006') + '<stack_id 7>',
    'CPU:0 [LOST 3 EVENTS]',
    'not joined: after a lost marker',
    head('1.000007') + 'bputs: do_work: v',
    'v2',
  ].join('\n');

  it('joins only right after a bprint, print or bputs event, and only lines that are nothing else', () => {
    const p = parseAll(new TextEncoder().encode(text));
    expect(p.events.map((e) => [e.lineNo, e.name, e.payload])).toEqual([
      [2, 'bprint', 'do_work: first line\nsecond: line\n  third\n\nafter a blank'],
      [7, 'sched_switch', 'a=1'],
      [9, 'print', 'tracing_mark_write: B|12|x'],
      [12, 'print', 'tracing_mark_write: y'],
      // blank lines after it, no continuation: not joined
      [14, 'bprint', '0xc0: z'],
      [17, 'bprint', '0xffffffffc0a1b2c3: w\nw2'],
      [22, 'bputs', 'do_work: v\nv2'],
    ]);
    // the stack record still follows its event
    expect(p.stacks.map((s) => [s.lineNo, s.slot])).toEqual([[19, 7]]);
    expect(p.lost).toEqual([{ lineNo: 20, cpu: 0, count: 3 }]);
    expect(p.diagnostics.map((d) => [d.where, d.message])).toEqual([
      ['lines 8, 11, 21', REASON.notTrace],
      ['line 10', REASON.notHeader],
      ['line 13', REASON.orphanFrame],
    ]);
    expect(p.result.lines).toEqual({ total: 23, used: 18, unused: 5 });
  });

  it('through Ingest the same lines are used and the same events read', () => {
    const want = parse(new TextEncoder().encode(text));
    for (const chunk of [0, 1, 7, 4096]) {
      const cap = ingestFiles([['unknown', text]], chunk);
      expect(cap.files[0].lines).toEqual(want.result.lines);
      expect(cap.trace.eventCount).toBe(want.events.length);
    }
  });

  it('a message grows to MAX_PRINT characters at most: the lines past it are reported', () => {
    const long = 'x'.repeat(999);
    const n = Math.ceil(MAX_PRINT / 1000) + 5;
    const t = [head('1.000001') + 'bprint: 0xc0: start', ...Array<string>(n).fill(long)].join('\n');
    const p = parseAll(new TextEncoder().encode(t));
    expect(p.events).toHaveLength(1);
    const joined = p.events[0].payload.split('\n').length - 1;
    expect(p.events[0].payload.length).toBeLessThanOrEqual(MAX_PRINT);
    expect(joined).toBe(Math.floor((MAX_PRINT - '0xc0: start'.length) / 1000));
    expect(p.result.lines).toEqual({ total: n + 1, used: joined + 1, unused: n - joined });
  });
});

// The same capture as trace.dat (our reader) and as `trace-cmd report`'s text (our text reader):
// the same events by name, CPU and time, the same bprint and print text; and as the kernel's own `trace`
// file would print it (report's lines without the `bprint: ` / `print: ` name, trace_output.c).
describe.skipIf(!hasTraceCmd)('trace.dat and its trace-cmd report text: one name per event', () => {
  const dir = mkdtempSync(join(tmpdir(), 'text-report-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const enc = new TextEncoder();
  const us = (s: number) => String(Math.round(s * 1e6));
  const key = (e: TraceEvent) => `${e.cpu} ${us(e.ts)} ${e.name}`;
  /** `trace-cmd report` as the kernel prints bprint and print: the name column dropped */
  const kernelShape = (report: string) => report.replace(/^(\s*.+?-\d+\s+\[\d+\]\s+(?:\S+\s+)?\d+\.\d+: )(?:bprint|print):\s+/gm, '$1');

  function compare(datBytes: Uint8Array, file: string): { dat: Got; text: Parsed; report: string } {
    writeFileSync(file, datBytes);
    const report = reportText(['-i', file]);
    const dat = readDat(datBytes, 0).got;
    const text = parseAll(enc.encode(report));
    expect(text.diagnostics).toEqual([]);
    expect(text.events.map(key).sort()).toEqual(dat.events.map(key).sort());
    const names = (es: TraceEvent[]) => sortedCounts(es.map((e) => e.name));
    expect(names(text.events)).toEqual(names(dat.events));
    // the bprint text, every line of it
    const prints = (es: TraceEvent[]) =>
      es
        .filter((e) => e.name === 'bprint' || e.name === 'print')
        .map((e) => `${key(e)} ${e.payload.trimEnd()}`)
        .sort();
    expect(prints(text.events)).toEqual(prints(dat.events));
    return { dat, text, report };
  }

  realIt("trappy-trace.dat, the real file: every event's name, bprint text", () => {
    const { dat, text } = compare(realTrace('trappy-trace.dat'), join(dir, 'trappy.dat'));
    expect(sortedCounts(text.events.map((e) => e.name))).toEqual([
      ['bprint', 501],
      ['cdev_update', 18],
      ['thermal_temperature', 6],
    ]);
    expect(dat.events).toHaveLength(525);
    // its kallsyms is all zeros: the callers print as addresses, which the kernel's shape names too
    const k = parse(enc.encode(kernelShape(reportText(['-i', join(dir, 'trappy.dat')]))));
    expect(sortedCounts(k.events.map((e) => e.name))).toEqual(sortedCounts(dat.events.map((e) => e.name)));
  });

  const COMMON =
    '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n';
  // the kernel's ftrace/print format (trace_entries.h: ip, buf[])
  const PRINT_FORMAT = `name: print\nID: 5\nformat:\n${COMMON}\n\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:1;\n\nprint fmt: "%ps: %s", (void *)REC->ip, REC->buf\n`;
  const printRecord = (ip: bigint, s: string) => {
    const b = new Uint8Array(8 + enc.encode(s).length + 1);
    new DataView(b.buffer).setBigUint64(0, ip, true);
    b.set(enc.encode(s), 8);
    return b;
  };
  // bprint callers below every symbol (printed as addresses), print callers in tracing_mark_write
  const KALLSYMS = 'ffffffff81000000 T _stext\nffffffff81000100 t do_work\nffffffff81200000 T tracing_mark_write\nffffffff81200400 T schedule\n';
  const MESSAGES = ['one line\n', 'first line\nsecond: line\n  third\n', 'a\n\nb\n', 'no newline at the end', 'n=%d\nm=%s\n'];
  const MARKS = ['B|7|draw\n', 'two\nlines\n', 'C|7|count|3'];

  function capture(symbolic: boolean): Uint8Array {
    const printk: [bigint, string][] = MESSAGES.map((m, i) => [0xc0000000n + BigInt(i) * 64n, m]);
    const events: DatWriteEvent[] = [];
    let ts = 1000;
    for (let round = 0; round < 3; round++) {
      MESSAGES.forEach((m, i) => {
        const args = m.includes('%d') ? [{ size: 4 as const, value: BigInt(round) }, { str: `s${round}` }] : [];
        events.push({
          kind: 'print',
          cpu: (i + round) % 2,
          ts: (ts += 1000),
          pid: 7,
          ip: symbolic ? 0xffffffff81000104n : 0xffffffff80000010n + BigInt(i),
          fmt: printk[i][0],
          args,
        });
      });
      for (const m of MARKS) events.push({ kind: 'raw', cpu: round % 2, ts: (ts += 1000), pid: 7, id: 5, data: printRecord(0xffffffff81200010n, m) });
      events.push({ kind: 'sample', cpu: 1, ts: (ts += 1000), pid: 7, value: round, label: 'x' });
    }
    return writeTraceDat({
      littleEndian: true,
      longSize: 8,
      cpus: 2,
      comms: [[7, 'seven']],
      kallsyms: KALLSYMS,
      printk,
      eventSystems: [['ftrace_print', [SAMPLE_FORMAT, PRINT_FORMAT]]],
      events,
    });
  }

  for (const symbolic of [false, true]) {
    it(`a trace.dat written here with multi-line trace_printk and trace_marker messages (${symbolic ? 'callers with symbols' : 'callers as addresses'})`, () => {
      const { text, report } = compare(capture(symbolic), join(dir, `w${symbolic}.dat`));
      // every line of the report is used: the continuation lines joined their events
      expect(text.result.lines.unused).toBe(0);
      expect(report.split('\n').some((l) => l === 'second: line')).toBe(true);
      // the print text: the marker written, its one trailing newline dropped, after the caller
      const marks = text.events.filter((e) => e.name === 'print').map((e) => e.payload);
      expect(marks).toEqual(Array.from({ length: 3 }, () => MARKS.map((m) => 'tracing_mark_write: ' + m.replace(/\n$/, ''))).flat());
      // the kernel's shape: names where the caller's form tells them (an address; tracing_mark_write)
      const k = parseAll(enc.encode(kernelShape(report)));
      if (!symbolic) {
        expect(k.result.lines.unused).toBe(0);
        expect(k.events.map((e) => [e.name, e.payload])).toEqual(text.events.map((e) => [e.name, e.payload]));
        return;
      }
      // a bare symbol (`do_work: first line`) has an event's shape: named by it, its message's
      // later lines not joined (reported): 2 + 1 + 1 of them in each of the 3 rounds
      const bare = (e: TraceEvent) => e.name === 'bprint';
      expect(k.events.map((e) => [e.name, e.payload])).toEqual(
        text.events.map((e) => (bare(e) ? ['do_work', e.payload.slice('do_work: '.length).split('\n')[0]] : [e.name, e.payload])),
      );
      expect(k.result.lines.unused).toBe(3 * (2 + 1 + 1));
      expect(k.diagnostics.map((d) => d.message)).toEqual([REASON.notTrace]);
    });
  }
});
