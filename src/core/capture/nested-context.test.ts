// Stack records under nested contexts (issue 36): the kernel writes an event's stack record in the
// event's own context, after any event an interrupt or NMI nested in between wrote with its stack.
// So a record belongs to the last event of its context on its CPU (the latency flags' irq column
// and preempt depth), not to the last event on the CPU. The expected events are worked out here
// from the flags by a regex reading of the lines, written by hand.
import { describe, expect, it } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';

const L = (flags: string, ts: string, rest: string) => `            bash-100     [000] ${flags}  ${ts}: ${rest}`;
const TRACE = [
  '# tracer: nop',
  L('d..1.', '10.000001', 'kmem_cache_alloc: call_site=do_sys_openat2+0x10 bytes_req=64 bytes_alloc=64'), // event 0, process context
  L('d.h1.', '10.000002', 'sched_wakeup: comm=sh pid=7 prio=120 target_cpu=000'), // event 1, hardirq nested in it
  L('d.Z1.', '10.000003', 'kmem_cache_alloc: call_site=nmi_handle+0x10 bytes_req=32 bytes_alloc=32'), // event 2, NMI nested in the hardirq
  L('d.Z1.', '10.000004', '<stack trace>'), // event 2's stack
  ' => nmi_handle+0x10/0x40',
  ' => exc_nmi+0x20/0x80',
  L('d.h1.', '10.000005', '<stack_id 5>'), // event 1's stack
  L('d..1.', '10.000006', '<stack trace>'), // event 0's stack
  ' => do_sys_openat2+0x10/0x90',
  ' => __x64_sys_openat+0x4/0x20',
  L('d..1.', '10.000007', 'sched_wakeup: comm=sh pid=8 prio=120 target_cpu=000'), // event 3
  L('d..1.', '10.000008', '<stack_id 6>'), // its stack
  '',
].join('\n');
const DUMP = [
  'stack_id 5 [ref 1, depth 1]',
  '  [0] try_to_wake_up+0x148/0x300',
  '',
  'stack_id 6 [ref 1, depth 1]',
  '  [0] try_to_wake_up+0x148/0x300',
  '',
].join('\n');

/** the second reading: each stack record line, the last event line before it with the same flags */
function byFlags(trace: string): number[] {
  const last = new Map<string, number>();
  const out: number[] = [];
  let events = 0;
  for (const line of trace.split('\n')) {
    const m = /^\s*\S+-\d+\s+\[\d+\]\s+(\S+)\s+[\d.]+: (.*)$/.exec(line);
    if (!m) continue;
    if (m[2] === '<stack trace>' || m[2].startsWith('<stack_id')) out.push(last.get(m[1]) ?? -1);
    else last.set(m[1], events++);
  }
  return out;
}

describe('a stack record belongs to the last event of its own context on its CPU', () => {
  it('interleaved process, hardirq and NMI contexts: each record to its own event, in any chunks, renamed alike', () => {
    const want = byFlags(TRACE);
    expect(want).toEqual([2, 1, 0, 3]);
    for (const name of ['trace', 'unknown'])
      for (const chunk of [0, 1, 7]) {
        const c = ingestFiles(
          [
            [name, TRACE],
            ['stack_map', DUMP],
          ],
          chunk,
        );
        expect(Array.from(c.trace.recEvent.raw()), `${name} ${chunk}`).toEqual(want);
      }
  });

  it('without latency flags the files cannot tell: the last event on the CPU, as before', () => {
    const plain = TRACE.split('\n')
      .map((l) => l.replace(/\] \S{5} /, '] '))
      .join('\n');
    const c = ingestFiles([
      ['trace', plain],
      ['stack_map', DUMP],
    ]);
    expect(Array.from(c.trace.recEvent.raw())).toEqual([2, 2, 2, 3]);
  });
});
