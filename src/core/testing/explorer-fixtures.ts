/**
 * Small hand-written captures for the explorer's tests, with the numbers worked out by hand
 * in the comments. Not a test file itself: the *.test.ts files next to each query import it.
 */
import { generateSample, type SampleOptions } from '../sim/sample-capture.ts';
import { sampleFiles } from '../sim/sample-files.ts';
import type { Capture } from '../capture/ingest.ts';
import { ingestFiles } from './test-helpers.ts';

/** a trace line: `task` is COMM-PID */
export const line = (task: string, cpu: number, ts: string, payload: string) =>
  `${task.padStart(16)}    [${String(cpu).padStart(3, '0')}] d..1.   ${ts}: ${payload}`;

const ev = (task: string, cpu: number, ts: string, name: string) => line(task, cpu, ts, `${name}: x=1`);

/**
 * Records whose time or CPU is not their event's (what TraceColumns keeps in its own rows): an
 * orphan on CPU 1 before any event (99 s), a record of another task after its CPU's event (100.5
 * s), an orphan on CPU 2 (101.75 s, generation 4) and a record a quarter second after its event
 * (9000.25 s). Generation 3 spans 99 to 9000.25 s in 4 records, generation 4 one record; awk's
 * snippets (segments.test) are 100-101.75 and 9000-9000.25.
 */
export const TIMED_APART_TRACE =
  [
    '# tracer: nop',
    line('a-1', 1, '99.000000', '<stack_id 9 gen 3>'),
    line('a-1', 0, '100.000000', 'sched_wakeup: pid=1'),
    line('a-1', 0, '100.000000', '<stack_id 1 gen 3>'),
    line('b-2', 0, '100.500000', '<stack_id 2 gen 3>'),
    line('a-1', 0, '101.000000', 'sched_wakeup: pid=1'),
    line('c-3', 2, '101.750000', '<stack_id 4 gen 4>'),
    line('a-1', 0, '9000.000000', 'sched_wakeup: pid=1'),
    line('a-1', 0, '9000.250000', '<stack_id 5 gen 3>'),
  ].join('\n') + '\n';

/**
 * Ten events, nine stack records (v8), three generations:
 *
 * | ev | cpu | ts         | task     | record                         | status    | stack | gen |
 * | e0 | 1   | 100.000001 | bash     | <stack_id 1 gen 1>             | resolved  | S1    | 1   |
 * | e1 | 0   | 100.000002 | sh       | <stack_id 2 gen 1>             | resolved  | S2    | 1   |
 * | e2 | 1   | 100.000003 | bash     | <stack_id 1 gen 1>             | resolved  | S1    | 1   |
 * | e3 | 0   | 100.000004 | sh       | <stack trace> a+0x1, b+0x2     | full      | S1    | 1   |
 * | e4 | 1   | 100.000005 | bash     | <stack_id 3 gen 1>             | resolved  | S3    | 1   |
 * | e5 | 1   | 100.000006 | bash     | (none: sched_switch)           | no record |       | 1   |
 * | e6 | 0   | 101.000000 | sh       | <stack_id 1 gen 2>             | resolved  | S2    | 2   |
 * | e7 | 0   | 101.000001 | sh       | <stack_id 4 gen 2>             | no-slot   |       | 2   |
 * | e8 | 1   | 101.000002 | bash     | <stack_id 9 gen 3>             | no-dump   |       | 3   |
 * | e9 | 1   | 101.000003 | bash     | <stack_id 1 gen 2>             | resolved  | S2    | 2   |
 *
 * S1 = a+0x1 <- b+0x2 (leaf first), S2 = c+0x3 <- b+0x2, S3 = a+0x1 <- d+0x4 <- a+0x9 <- b+0x2
 * (a recursion of a). Dumps: gen 1 {1: S1 ref 2, 2: S2 ref 1, 3: S3 ref 1}, gen 2 {1: S2 ref 5}.
 */
export const HAND_TRACE =
  [
    '# tracer: nop',
    ev('bash-1234', 1, '100.000001', 'kmem_cache_alloc'),
    line('bash-1234', 1, '100.000001', '<stack_id 1 gen 1>'),
    ev('sh-99', 0, '100.000002', 'sched_wakeup'),
    line('sh-99', 0, '100.000002', '<stack_id 2 gen 1>'),
    ev('bash-1234', 1, '100.000003', 'kmem_cache_alloc'),
    line('bash-1234', 1, '100.000003', '<stack_id 1 gen 1>'),
    ev('sh-99', 0, '100.000004', 'kmem_cache_alloc'),
    line('sh-99', 0, '100.000004', '<stack trace>'),
    ' => a+0x1/0x10',
    ' => b+0x2/0x20',
    ev('bash-1234', 1, '100.000005', 'kmem_cache_alloc'),
    line('bash-1234', 1, '100.000005', '<stack_id 3 gen 1>'),
    ev('bash-1234', 1, '100.000006', 'sched_switch'),
    ev('sh-99', 0, '101.000000', 'kmem_cache_alloc'),
    line('sh-99', 0, '101.000000', '<stack_id 1 gen 2>'),
    ev('sh-99', 0, '101.000001', 'kmem_cache_alloc'),
    line('sh-99', 0, '101.000001', '<stack_id 4 gen 2>'),
    ev('bash-1234', 1, '101.000002', 'kmem_cache_alloc'),
    line('bash-1234', 1, '101.000002', '<stack_id 9 gen 3>'),
    ev('bash-1234', 1, '101.000003', 'kmem_cache_alloc'),
    line('bash-1234', 1, '101.000003', '<stack_id 1 gen 2>'),
  ].join('\n') + '\n';

export const HAND_DUMP_GEN1 =
  'stack_id 1 gen 1 [ref 2, depth 2]\n => a+0x1/0x10\n => b+0x2/0x20\n\n' +
  'stack_id 2 gen 1 [ref 1, depth 2]\n => c+0x3/0x10\n => b+0x2/0x20\n\n' +
  'stack_id 3 gen 1 [ref 1, depth 4]\n => a+0x1/0x10\n => d+0x4/0x10\n => a+0x9/0x10\n => b+0x2/0x20\n\n';
export const HAND_DUMP_GEN2 = 'stack_id 1 gen 2 [ref 5, depth 2]\n => c+0x3/0x10\n => b+0x2/0x20\n\n';

export function handCapture(): Capture {
  return ingestFiles([
    ['trace', HAND_TRACE],
    ['stack_map.gen1', HAND_DUMP_GEN1],
    ['stack_map.gen2', HAND_DUMP_GEN2],
  ]);
}

/** the stack node of frame keys (leaf first) in a capture; throws when it is not there */
export function stackOf(c: Capture, leafFirst: string[]): number {
  for (let i = 0; i < c.trace.recordCount; i++) {
    const s = c.trace.recStack.get(i);
    if (s >= 0 && c.stacks.framesOf(s).join('|') === leafFirst.join('|')) return s;
  }
  throw new Error('no such stack: ' + leafFirst.join(' <- '));
}

/** The hand capture's three stacks (HAND_TRACE, HAND_DUMP_GEN1/GEN2): S1 a <- b, S2 c <- b, S3 a <- d <- a <- b (leaf first). */
export function handStacks(c: Capture): { S1: number; S2: number; S3: number } {
  return {
    S1: stackOf(c, ['a+0x1', 'b+0x2']),
    S2: stackOf(c, ['c+0x3', 'b+0x2']),
    S3: stackOf(c, ['a+0x1', 'd+0x4', 'a+0x9', 'b+0x2']),
  };
}

export const SAMPLE_OPTIONS: SampleOptions = { seed: 11, cpus: 4, events: 2000, resets: 2, bits: 14, tail: 40 };
let sample: Capture | null = null;
/** the generated v8 capture (three generations, bin dumps, a text dump, kallsyms, stat), built once */
export function sampleCapture(): Capture {
  return (sample ??= ingestFiles(sampleFiles(generateSample(SAMPLE_OPTIONS))));
}
