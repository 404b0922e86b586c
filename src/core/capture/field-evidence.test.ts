import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REAL_TRACES_DIR, realIt, realTracePath } from '../testing/real-traces.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { fullStackContradictions } from './field-evidence.ts';
import { summarize } from './summary.ts';
import { RecordStatus, STATUS_NAMES } from './trace-columns-data.ts';

// A hand-written v7 capture: each event's call_site= (or FUNC <-PARENT) and the slot its id
// names, against one generation-less dump. What is contradicted is read off the lines by a
// regex here (the call site among the dump stack's first frames), not by the code under test.
const dump =
  'stack_id 1 [ref 3, depth 3]\n  [0] __kmalloc+0x4c/0x90\n  [1] seq_read+0x10/0x80\n  [2] vfs_read+0x8/0x40\n\n' +
  'stack_id 2 [ref 3, depth 3]\n  [0] kmem_cache_alloc+0x20/0x90\n  [1] dup_task_struct+0x14/0x80\n  [2] copy_process+0x60/0x400\n\n' +
  'stack_id 3 [ref 1, depth 2]\n  [0] do_sys_open+0x0/0x220\n  [1] __x64_sys_openat+0x44/0x80\n\n';
const events: [payload: string, slot: number][] = [
  ['kmem_cache_alloc: call_site=seq_read+0x10/0x80 ptr=0x1 bytes_req=32', 1], // holds it
  ['kmem_cache_alloc: call_site=seq_read+0x10/0x80 ptr=0x2 bytes_req=32', 2], // another stack: contradicted
  ['kmem_cache_alloc: call_site=dup_task_struct+0x14 ptr=0x3 bytes_req=32', 2], // no size printed: holds it
  ['kmem_cache_alloc: call_site=dup_task_struct+0x18/0x80 ptr=0x4 bytes_req=32', 2], // another site of the same function
  ['kmem_cache_alloc: call_site=ffffffff81234567 ptr=0x5 bytes_req=32', 1], // a raw address, no kallsyms: skipped
  ['function: do_sys_open <-__x64_sys_openat', 3], // holds both
  ['function: do_sys_open <-__x64_sys_openat', 1], // lacks both: contradicted
  ['sched_wakeup: comm=a pid=1 prio=120 target_cpu=001', 1], // no field naming a function
];
const lines: string[] = [];
events.forEach(([payload, slot], i) => {
  const ts = (100 + i / 1000).toFixed(6);
  lines.push(`            bash-1234    [001] ...1.   ${ts}: ${payload}`, `            bash-1234    [001] ...1.   ${ts}: <stack_id ${slot}>`);
});
const trace = '# tracer: nop\n' + lines.join('\n') + '\n';

/** The dump's stacks by slot, read by a regex: each frame as `function+0xoff`. */
function dumpStacks(text: string): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const block of text.split('\n\n')) {
    const id = /^stack_id (\d+)/.exec(block);
    if (id)
      out.set(
        Number(id[1]),
        [...block.matchAll(/\] (\S+?)\+(0x[0-9a-f]+)\//g)].map((m) => `${m[1]}+${m[2]}`),
      );
  }
  return out;
}

describe('contradicted: a v7 id whose event names a call site or function its stack lacks', () => {
  it.each([0, 7])('the ids the regex reading contradicts, and no other (chunk %i)', (chunk) => {
    const stacks = dumpStacks(dump);
    const expected = events.map(([payload, slot]) => {
      const st = stacks.get(slot)!;
      const cs = /call_site=(\w+)\+(0x[0-9a-f]+)/.exec(payload);
      if (cs) return st.slice(0, 6).includes(`${cs[1]}+0x${Number(cs[2]).toString(16)}`) ? 'unverified' : 'contradicted';
      const fn = /function: (\w+) <-(\w+)/.exec(payload);
      if (fn) return st.some((f) => f.startsWith(fn[1] + '+') || f.startsWith(fn[2] + '+')) ? 'unverified' : 'contradicted';
      return 'unverified';
    });
    expect(expected.filter((s) => s === 'contradicted').length).toBe(3);
    const c = ingestFiles(
      [
        ['trace', trace],
        ['stack_map', dump],
      ],
      chunk,
    );
    expect(Array.from({ length: c.trace.recordCount }, (_, i) => STATUS_NAMES[c.trace.recStatus.get(i)])).toEqual(expected);
    const s = summarize(c);
    expect(s.status.contradicted).toBe(3);
    // a contradicted id does not count as resolved, nor its stack among the top ones
    expect(s.resolved).toBe(events.length - 3);
    expect(s.unresolved).toBe(3);
  });

  it('a raw call_site address is not judged, with kallsyms or without', () => {
    const kallsyms = 'ffffffff81234500 T seq_read\nffffffff81234600 T vfs_read\nffffffff81300000 T dup_task_struct\nffffffff81300100 T copy_process\n';
    const raw = (addr: string, slot: number) =>
      `# tracer: nop\n            bash-1234    [001] ...1.   100.000001: kmem_cache_alloc: call_site=${addr} ptr=0x5\n            bash-1234    [001] ...1.   100.000001: <stack_id ${slot}>\n`;
    // seq_read+0x10 is in stack 1, not in stack 2; named through kallsyms it would contradict stack 2,
    // but addresses are not judged: a simulated trace.dat's named call sites did not line up with its dumps' frames
    const at = (slot: number) =>
      ingestFiles([
        ['trace', raw('ffffffff81234510', slot)],
        ['stack_map', dump],
        ['kallsyms', kallsyms],
      ]).trace.recStatus.get(0);
    expect([at(1), at(2)]).toEqual([RecordStatus.Unverified, RecordStatus.Unverified]);
    // without kallsyms the address names nothing: not judged
    expect(
      ingestFiles([
        ['trace', raw('ffffffff81234510', 2)],
        ['stack_map', dump],
      ]).trace.recStatus.get(0),
    ).toBe(RecordStatus.Unverified);
  });

  it('v8 cookies are not judged (their generation vouches for them)', () => {
    const v8 =
      '# tracer: nop\n            bash-1234    [001] ...1.   100.000001: kmem_cache_alloc: call_site=seq_read+0x10/0x80 ptr=0x5\n            bash-1234    [001] ...1.   100.000001: <stack_id 2 gen 1>\n';
    const v8dump = 'stack_id 2 gen 1 [ref 1, depth 1]\n => kmem_cache_alloc+0x20/0x90\n\n';
    expect(
      summarize(
        ingestFiles([
          ['trace', v8],
          ['stack_map', v8dump],
        ]),
      ).status,
    ).toMatchObject({ resolved: 1, contradicted: 0 });
  });
});

describe('captures of real kernels', () => {
  realIt('none contradicted; the rule held against their full stacks finds nothing either', () => {
    const names = readdirSync(REAL_TRACES_DIR).filter((n) => /\.(txt|dat)$/.test(n) && !n.startsWith('LICENSE'));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const c = ingestFiles([[name, new Uint8Array(readFileSync(realTracePath(name)))]]);
      expect([name, summarize(c).status.contradicted]).toEqual([name, 0]);
      expect([name, fullStackContradictions(c.trace, c.stacks)]).toEqual([name, []]);
    }
  });
});
