/**
 * Test support for weights and groups (issue 35): a small v8 text capture with a TGID column,
 * `kmem_cache_alloc` events (bytes_alloc decimal, 0x hex, now and then not a number) and
 * `sched_wakeup` events (no bytes_alloc), each followed by its `<stack_id K gen 1>` cookie, and
 * the stack_map text dump the cookies resolve through (one cookie names a slot the dump lacks).
 *
 * And its second reading, by regular expressions over the text only: what a reader of the two
 * files sees per event, the stack resolved through the dump text by its own parse.
 */

export interface WeighedCapture {
  trace: string;
  dump: string;
}

const TASKS = [
  { comm: 'kworker/u8:2', pid: 88, tgid: '88' },
  { comm: 'system_server', pid: 1403, tgid: '1403' },
  { comm: 'binder:1403_4', pid: 1577, tgid: '1403' },
  { comm: 'sh', pid: 3101, tgid: '-------' },
  { comm: 'surfaceflinger', pid: 612, tgid: '612' },
];
const FNS = [
  '__kmalloc',
  'kmem_cache_alloc',
  'kmalloc_trace',
  'seq_read_iter',
  'vfs_read',
  'ksys_read',
  'try_to_wake_up',
  'wake_up_q',
  'futex_wake',
  'do_futex',
  'do_syscall_64',
  'entry_SYSCALL_64_after_hwframe',
  'ext4_es_insert_extent',
  'dup_task_struct',
];

/** A deterministic capture of `events` events over `stacks` stacks. */
export function weighedCapture(events = 600, stacks = 12, seed = 35): WeighedCapture {
  let x = seed >>> 0 || 1;
  const rnd = (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
  const ids: number[] = [];
  const dump: string[] = [];
  for (let s = 0; s < stacks; s++) {
    const id = 100 + s * 37;
    ids.push(id);
    const depth = 3 + rnd(5);
    dump.push(`stack_id ${id} gen 1 [ref ${1 + rnd(50)}, depth ${depth}]`);
    for (let k = 0; k < depth; k++)
      dump.push(` => ${FNS[(s + k * 3 + rnd(2)) % FNS.length]}+0x${(16 + rnd(400)).toString(16)}/0x${(512 + rnd(100)).toString(16)}`);
    dump.push('');
  }
  const lines = [
    '# tracer: nop',
    '#',
    `# entries-in-buffer/entries-written: ${events}/${events}   #P:4`,
    '#',
    '#           TASK-PID     TGID     CPU#  |||||  TIMESTAMP  FUNCTION',
    '#              | |         |        |   |||||     |         |',
  ];
  for (let e = 0; e < events; e++) {
    const t = TASKS[rnd(TASKS.length)];
    const prefix = `${t.comm.padStart(16)}-${t.pid}`.padEnd(24) + ` (${t.tgid.padStart(7)}) [00${rnd(4)}] ...1. ${(100 + e * 0.000137).toFixed(6)}: `;
    let payload: string;
    if (rnd(10) < 7) {
      const alloc = 8 << rnd(10);
      const kind = rnd(20);
      // mostly decimal, sometimes hex, now and then not a number
      const shown = kind === 0 ? `0x${alloc.toString(16)}` : kind === 1 ? 'n/a' : String(alloc);
      payload = `kmem_cache_alloc: call_site=${FNS[rnd(FNS.length)]}+0x4c ptr=0xffff8880${(rnd(1 << 30) >>> 0).toString(16).padStart(8, '0')} bytes_req=${alloc - rnd(8)} bytes_alloc=${shown} gfp_flags=GFP_KERNEL`;
    } else payload = `sched_wakeup: comm=${TASKS[rnd(TASKS.length)].comm} pid=${1000 + rnd(100)} prio=120 target_cpu=00${rnd(4)}`;
    lines.push(prefix + payload);
    // one cookie in a hundred names a slot the dump lacks (no-slot: not counted)
    const id = rnd(100) === 0 ? 9999 : ids[Math.min(rnd(stacks), rnd(stacks))];
    lines.push(prefix + `<stack_id ${id} gen 1>`);
  }
  return { trace: lines.join('\n') + '\n', dump: dump.join('\n') + '\n' };
}

/** One event as the regular expressions read it, with its resolved stack. */
export interface ReadEvent {
  comm: string;
  pid: number;
  /** null where the TGID column says `(-------)` */
  tgid: number | null;
  event: string;
  /** bytes_alloc as a number, null where absent or not a number */
  bytesAlloc: number | null;
  /** frame keys `sym+0xoff`, leaf first */
  frames: string[];
}

/** The events whose cookie the dump resolves, read with regular expressions from the two texts. */
export function readByRegex(trace: string, dump: string): ReadEvent[] {
  const stacks = new Map<string, string[]>();
  for (const block of dump.split(/\n\n+/)) {
    const m = /^stack_id (\d+) gen (\d+) \[/.exec(block);
    if (!m) continue;
    stacks.set(
      `${m[1]}/${m[2]}`,
      [...block.matchAll(/^ => (\S+?)\/0x[0-9a-f]+$/gm)].map((f) => f[1]),
    );
  }
  const out: ReadEvent[] = [];
  let last: Omit<ReadEvent, 'frames'> | null = null;
  for (const line of trace.split('\n')) {
    const m = /^\s*(.+)-(\d+)\s+\(\s*(-+|\d+)\)\s+\[\d+\]\s+\S+\s+\d+\.\d+: (.*)$/.exec(line);
    if (!m) continue;
    const cookie = /^<stack_id (\d+) gen (\d+)>$/.exec(m[4]);
    if (cookie) {
      const frames = stacks.get(`${cookie[1]}/${cookie[2]}`);
      if (last && frames) out.push({ ...last, frames });
      last = null;
      continue;
    }
    const ev = /^(\w+): (.*)$/.exec(m[4])!;
    const b = /(?:^| )bytes_alloc=(0x[0-9a-fA-F]+|\d+)(?= |$)/.exec(ev[2]);
    last = { comm: m[1], pid: +m[2], tgid: /^\d+$/.test(m[3]) ? +m[3] : null, event: ev[1], bytesAlloc: b ? Number(b[1]) : null };
  }
  return out;
}

/** Sums per key: records and bytes_alloc (0 where none), and the records without a numeric bytes_alloc. */
export function sumBy(events: ReadEvent[], key: (e: ReadEvent) => string): Map<string, { count: number; bytes: number; unweighed: number }> {
  const m = new Map<string, { count: number; bytes: number; unweighed: number }>();
  for (const e of events) {
    const k = key(e);
    const x = m.get(k) ?? { count: 0, bytes: 0, unweighed: 0 };
    x.count++;
    x.bytes += e.bytesAlloc ?? 0;
    if (e.bytesAlloc === null) x.unweighed++;
    m.set(k, x);
  }
  return m;
}
