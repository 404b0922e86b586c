import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from '../formats/diagnostics.ts';
import { createTraceTextParser } from '../formats/trace-text.ts';
import { contextOf, type TraceEvent, type TraceLost, type TraceSink, type TraceStackRecord } from '../formats/types.ts';
import { StackTable } from './stack-table.ts';
import { TraceColumns } from './trace-columns.ts';
import { RecordKind } from './trace-columns-data.ts';

// The column sink (ids straight from the decoded text, records linked to their events instead of
// repeating their time, CPU, pid and task, small integers narrow) against the old layout written
// plainly here: a sink given the parser's objects (it has no id entry points, so the parser takes
// its object path), one row of every field per event and per record. Random traces, pushed in
// chunks of 1 to 17 bytes (so a line, a multi-byte character or a CRLF can be cut anywhere).

interface PlainRows {
  ev: { ts: number; cpu: number; pid: number; task: string; name: string; record: number }[];
  rec: { ts: number; cpu: number; pid: number; task: string; kind: number; slot: number; gen: number; frames: string[] | null; event: number }[];
  lost: { cpu: number; count: number; ts: number }[];
  user: string[][];
}

/**
 * The old TraceColumns.sink, on plain arrays; a record linked as the columns link it since nested
 * contexts (nested-context.test.ts): to the last event of its context on its CPU when there is one.
 */
function plainSink(out: PlainRows, details: { tgid: number; payload: string }[] = []): TraceSink {
  const lastOnCpu = new Map<number, number>();
  const lastOnCtx = new Map<string, number>();
  let lastTs = NaN;
  return {
    event(e: TraceEvent) {
      out.ev.push({ ts: e.ts, cpu: e.cpu, pid: e.pid, task: e.comm, name: e.name, record: -1 });
      details.push({ tgid: e.tgid ?? -1, payload: e.payload });
      lastOnCpu.set(e.cpu, out.ev.length - 1);
      const ctx = contextOf(e.flags, 0, e.flags.length);
      if (ctx >= 0 && e.cpu >= 0 && e.cpu < 1024) lastOnCtx.set(`${e.cpu} ${ctx}`, out.ev.length - 1);
      lastTs = e.ts;
    },
    stackRecord(r: TraceStackRecord) {
      const ctx = r.ctx ?? -1;
      const event = (ctx >= 0 && r.cpu >= 0 && r.cpu < 1024 ? lastOnCtx.get(`${r.cpu} ${ctx}`) : undefined) ?? lastOnCpu.get(r.cpu) ?? -1;
      const i = out.rec.length;
      if (event >= 0 && out.ev[event].record === -1) out.ev[event].record = i;
      const kind =
        r.kind === 'cookie' ? (r.generation === null ? RecordKind.CookieV7 : RecordKind.CookieV8) : r.kind === 'full' ? RecordKind.Full : RecordKind.User;
      const cookie = r.kind === 'cookie';
      out.rec.push({
        ts: r.ts,
        cpu: r.cpu,
        pid: r.pid,
        task: r.comm,
        kind,
        slot: cookie ? r.slot : -1,
        gen: cookie ? (r.generation ?? -1) : -1,
        frames: r.kind === 'full' ? [...r.frames!] : null,
        event,
      });
      if (r.kind === 'user') out.user.push([...r.frames!]);
      lastTs = r.ts;
    },
    lost(l: TraceLost) {
      out.lost.push({ cpu: l.cpu, count: l.count ?? -1, ts: lastTs });
    },
  };
}

const COMMS = ['bash', 'kworker/u8:2', 'irq/42-e1000', 'a b', '<...>', 'x-1-2', 'é', ...Array.from({ length: 150 }, (_, i) => `t${i}`)];
const NAMES = ['sched_switch', 'kmem_cache_alloc', 'kernel_stack', 'user_stack', 'x', 'ünï'];

const head = fc.record({
  comm: fc.constantFrom(...COMMS),
  pid: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 5_000_000 })),
  cpu: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom(200, 1023, 1024, 70_000)),
  tgid: fc.option(fc.oneof(fc.constant('-----'), fc.integer({ min: 1, max: 99999 }).map(String)), { nil: null }),
  flags: fc.constantFrom('', 'd..3.', '...1', 'dNh2.'),
  ts: fc.integer({ min: 0, max: 9_999_999_999 }).map((n) => (n / 1e6).toFixed(6)),
});
const text = (h: { comm: string; pid: number; cpu: number; tgid: string | null; flags: string; ts: string }) =>
  `${h.comm.padStart(16)}-${h.pid} ${h.tgid === null ? '' : `(${h.tgid.padStart(5)}) `}[${String(h.cpu).padStart(3, '0')}] ${h.flags ? h.flags + ' ' : ''}${h.ts}: `;
const frame = fc.constantFrom('do_sys_open+0x1f/0x210', 'vfs_read+0x9/0x10 [ext4]', '0xffffffff81000010', 'sym <ffffffff81234567>', '[FTRACE TRAMPOLINE]');
/** a line (or a block of lines) and whether it repeats the head of the line before it (or all but its time or COMM) */
const piece = fc.oneof(
  fc.record({
    h: head,
    same: fc.constantFrom('same', 'new', 'ts', 'comm'),
    body: fc.oneof(
      fc.constantFrom(...NAMES).map((n) => `${n}: a=1 b=2`),
      fc.constant('do_sys_open <-__x64_sys_openat'),
      fc.constant('free text'),
      fc.constant('tracing_mark_write: B|12|draw'),
      fc.constant('tracing_mark_write: stackmap reset gen 3'),
    ),
  }),
  fc.record({
    h: head,
    same: fc.constantFrom('same', 'new', 'ts', 'comm'),
    body: fc.tuple(fc.nat(70_000), fc.option(fc.nat(40_000), { nil: null })).map(([s, g]) => (g === null ? `<stack_id ${s}>` : `<stack_id ${s} gen ${g}>`)),
  }),
  fc.record({
    h: head,
    same: fc.constantFrom('same', 'new', 'ts', 'comm'),
    body: fc.array(frame, { maxLength: 5 }).map((f) => ['<stack trace>', ...f.map((x) => ` => ${x}`)].join('\n')),
  }),
  fc.record({
    h: head,
    same: fc.constantFrom('same', 'new', 'ts', 'comm'),
    body: fc
      .array(fc.constantFrom('<00007f12>', '<0000000000400000>', 'main+0x10'), { maxLength: 3 })
      .map((f) => ['<user stack trace>', ...f.map((x) => ` => ${x}`)].join('\n')),
  }),
  fc.constantFrom(
    'CPU:2 [LOST 17 EVENTS]',
    'CPU:0 [LOST EVENTS]',
    '# tracer: nop',
    '',
    'garbage line',
    ' => orphan_frame+0x1/0x2',
    '  <idle>-0 [001] 12.5: <stack_id x>',
  ),
);

function traceOf(pieces: (string | { h: Parameters<typeof text>[0]; same: string; body: string })[], crlf: boolean): string {
  let prev: Parameters<typeof text>[0] | null = null;
  const lines: string[] = [];
  for (const p of pieces) {
    if (typeof p === 'string') lines.push(p);
    else {
      // the line before's head, the same but for its time or COMM, or a head of its own
      const h: Parameters<typeof text>[0] =
        !prev || p.same === 'new' ? p.h : p.same === 'ts' ? { ...prev, ts: p.h.ts } : p.same === 'comm' ? { ...prev, comm: p.h.comm } : prev;
      lines.push(text(h) + p.body);
      prev = h;
    }
  }
  return lines.join(crlf ? '\r\n' : '\n') + '\n';
}

function feed(bytes: Uint8Array, sizes: number[], sink: TraceSink): void {
  const p = createTraceTextParser({ file: 'trace', diagnostics: new DiagnosticLog('trace') }, sink);
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const n = sizes[k % sizes.length];
    p.push(bytes.subarray(at, at + n));
    at += n;
  }
  p.end();
}

describe('the column sink against the old layout', () => {
  it('every event and record field, lost markers and user stacks, on random traces cut anywhere', () => {
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        (pieces, sizes, crlf) => {
          const bytes = new TextEncoder().encode(traceOf(pieces, crlf));
          const want: PlainRows = { ev: [], rec: [], lost: [], user: [] };
          const wantDetails: { tgid: number; payload: string }[] = [];
          feed(bytes, sizes, plainSink(want, wantDetails));
          // with details kept: each event's TGID and payload as the parser's objects give them (a
          // print's continuation lines joined), and the columns as without
          const withDetails = new TraceColumns(new StackTable(), { details: true });
          feed(bytes, sizes, withDetails.sink('trace'));
          for (const d of [withDetails.details!, withDetails.snapshot(new StackTable()).details!]) {
            expect(d.payload).toEqual(wantDetails.map((x) => x.payload));
            expect(Array.from(d.tgid.raw())).toEqual(wantDetails.map((x) => x.tgid));
          }
          expect(Array.from({ length: withDetails.eventCount }, (_, i) => withDetails.names.strings[withDetails.evName.get(i)])).toEqual(
            want.ev.map((e) => e.name),
          );
          expect(withDetails.recordCount).toBe(want.rec.length);
          const stacks = new StackTable();
          const t = new TraceColumns(stacks);
          feed(bytes, sizes, t.sink('trace'));
          const snap = t.snapshot(stacks);
          for (const c of [t, snap]) {
            expect(c.eventCount).toBe(want.ev.length);
            expect(c.recordCount).toBe(want.rec.length);
            const rawTs = c.recTs.raw();
            const rawCpu = c.recCpu.raw();
            const rawEvRecord = c.evRecord.raw();
            const got = {
              ev: want.ev.map((_, i) => ({
                ts: c.evTs.get(i),
                cpu: c.evCpu.get(i),
                pid: c.evPid.get(i),
                task: c.tasks.strings[c.evTask.get(i)],
                name: c.names.strings[c.evName.get(i)],
                record: c.evRecord.get(i),
              })),
              rec: want.rec.map((_, i) => ({
                ts: c.recTs.get(i),
                cpu: c.recCpu.get(i),
                pid: c.recPid.get(i),
                task: c.tasks.strings[c.recTask.get(i)],
                kind: c.recKind.get(i),
                slot: c.recSlot.get(i),
                gen: c.recGen.get(i),
                frames: c.recKind.get(i) === RecordKind.Full ? stacks.framesOf(c.recStack.get(i)) : null,
                event: c.recEvent.get(i),
              })),
              lost: Array.from({ length: c.lostCpu.length }, (_, i) => ({ cpu: c.lostCpu.get(i), count: c.lostCount.get(i), ts: c.lostTs.get(i) })),
              user: c.userStacks,
            };
            expect(got).toEqual(want);
            expect(Array.from(rawTs)).toEqual(want.rec.map((r) => r.ts));
            expect(Array.from(rawCpu)).toEqual(want.rec.map((r) => r.cpu));
            expect(Array.from(rawEvRecord)).toEqual(want.ev.map((e) => e.record));
          }
        },
      ),
      { numRuns: 250 },
    );
  });

  it('a rollback and a trim leave what loading the kept part alone gives', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.array(piece, { maxLength: 30 }), (a, b) => {
        const enc = (p: typeof a) => new TextEncoder().encode(traceOf(p, false));
        const stacks = new StackTable();
        const t = new TraceColumns(stacks, { details: true });
        feed(enc(a), [64], t.sink('a'));
        const m = t.mark();
        const before = t.snapshot(stacks);
        feed(enc(b), [7], t.sink('b'));
        t.rollback(m);
        t.trim();
        const alone = new TraceColumns(new StackTable(), { details: true });
        feed(enc(a), [3], alone.sink('a'));
        const rows = (c: TraceColumns) => ({
          ev: Array.from({ length: c.eventCount }, (_, i) => [
            c.evTs.get(i),
            c.evCpu.get(i),
            c.evPid.get(i),
            c.tasks.strings[c.evTask.get(i)],
            c.names.strings[c.evName.get(i)],
            c.evRecord.get(i),
          ]),
          rec: Array.from({ length: c.recordCount }, (_, i) => [
            c.recTs.get(i),
            c.recCpu.get(i),
            c.recPid.get(i),
            c.tasks.strings[c.recTask.get(i)],
            c.recKind.get(i),
            c.recSlot.get(i),
            c.recGen.get(i),
            c.recEvent.get(i),
          ]),
          lost: Array.from({ length: c.lostCpu.length }, (_, i) => [c.lostCpu.get(i), c.lostCount.get(i)]),
          details: [c.details!.payload, Array.from(c.details!.tgid.raw())],
        });
        expect(rows(t)).toEqual(rows(alone));
        expect(rows(before)).toEqual(rows(alone));
      }),
      { numRuns: 150 },
    );
  });
});

// The lines read from their bytes (trace-text.ts's byte path: no text decoded for an ordinary
// event line, a cookie, a `<stack trace>` and its frames) against the same columns filled by the
// parser's object path (the sink's TraceSink methods alone, every line decoded): every column,
// the stacks, the tasks and names in the order they came, and the fields noted for v7 ids and
// full stacks (field-evidence.ts), whether each line lies inside a chunk or is cut by one, each
// chunk pushed from one buffer the next overwrites (the reader keeps none of it past its push).

const callSite = fc.constantFrom(
  'call_site=kmalloc+0x1c/0x40',
  'call_site=0',
  'call_site=0x0',
  'call_site=(null)',
  'call_site=ffffffff81000010',
  'ip=0xffffffff81001234',
  'x=1 call_site=vfs_read+0x9',
  'call_site=',
  'ip=00',
);
const evidencePiece = fc.oneof(
  piece,
  fc.record({
    h: head,
    same: fc.constantFrom('same', 'new', 'ts'),
    body: fc.tuple(fc.constantFrom('kmem_cache_alloc', 'kmalloc', 'mm_page_alloc'), callSite).map(([n, f]) => `${n}: ${f} bytes_req=64`),
  }),
  fc.record({ h: head, same: fc.constantFrom('same', 'new', 'ts'), body: fc.constantFrom('do_sys_open <-__x64_sys_openat', '  f <-g', 'f <-', ' <-g') }),
  fc.record({ h: head, same: fc.constantFrom('same', 'same', 'ts'), body: fc.nat(40).map((s) => `<stack_id ${s}>`) }),
  // white space a regex's \s takes, line terminators inside a line, multi-byte characters
  fc.record({
    h: head,
    same: fc.constantFrom('same', 'new'),
    body: fc.constantFrom(
      'a: x\u2028y',
      'a: x\ry',
      'a:\tx',
      'a: 5 €',
      'a:\u00a0x',
      '\u2029',
      '<stack_id 4>\u00a0',
      '<stack trace>\t ',
      'e\u0301: x',
      'a: call_site=f\u00e9+0x1',
    ),
  }),
);

/**
 * Everything a TraceColumns over `stacks` holds, as plain data; a full stack as its frame keys
 * (the object path interns a stack's frames root first, the id path as their lines come).
 */
function columns(c: TraceColumns, stacks: StackTable) {
  const arr = (a: ArrayLike<number>) => Array.from(a);
  return {
    events: [c.evTs, c.evCpu, c.evPid, c.evTask, c.evName].map((col) => arr(col.view())),
    records: [c.recEvent, c.recKind, c.recSlot, c.recGen, c.recStatus].map((col) => arr(col.view())),
    stacks: arr(c.recStack.view()).map((n) => (n < 0 ? null : stacks.framesOf(n))),
    recordOwn: [c.recTs, c.recCpu, c.recPid, c.recTask].map((col) => arr(col.raw())),
    lost: [c.lostCpu, c.lostCount, c.lostTs].map((col) => arr(col.view())),
    resetMarks: arr(c.resetMarks.view()),
    ctx: [arr(c.ctxRec.view()), arr(c.ctxKey.view())],
    noted: Array.from({ length: c.evidRec.length }, (_, k) => [
      c.evidRec.get(k),
      c.evidNames.strings[c.evidA.get(k)],
      c.evidB.get(k) < 0 ? null : c.evidNames.strings[c.evidB.get(k)],
    ]),
    userStacks: c.userStacks,
    tasks: c.tasks.strings,
    names: c.names.strings,
  };
}

describe('lines read from their bytes', () => {
  it('fill the columns as the same lines decoded do, in chunks of any size', () => {
    fc.assert(
      fc.property(
        fc.array(evidencePiece, { maxLength: 80 }),
        fc.oneof(
          fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 8 }),
          fc.array(fc.integer({ min: 60, max: 400 }), { minLength: 1, maxLength: 8 }),
          fc.constantFrom<number[]>([1 << 20], [4096], [100, 1 << 16]),
        ),
        fc.boolean(),
        (pieces, sizes, crlf) => {
          const bytes = new TextEncoder().encode(traceOf(pieces, crlf));
          const stacks = new StackTable();
          const t = new TraceColumns(stacks);
          // each chunk in one buffer, overwritten by the next (a caller may reuse what it pushed)
          const scratch = new Uint8Array(bytes.length);
          const p = createTraceTextParser({ file: 'trace', diagnostics: new DiagnosticLog('trace') }, t.sink('trace'));
          for (let at = 0, k = 0; at < bytes.length; k++) {
            const n = Math.min(sizes[k % sizes.length], bytes.length - at);
            scratch.fill(0x2d);
            scratch.set(bytes.subarray(at, at + n));
            p.push(scratch.subarray(0, n));
            at += n;
          }
          p.end();
          const plainStacks = new StackTable();
          const plain = new TraceColumns(plainStacks);
          const s = plain.sink('trace');
          // its TraceSink methods only: the parser decodes every line and gives it as objects
          feed(bytes, sizes, { event: (e) => s.event(e), stackRecord: (r) => s.stackRecord(r), lost: (l) => s.lost(l) });
          expect(columns(t, stacks)).toEqual(columns(plain, plainStacks));
        },
      ),
      {
        numRuns: 300,
        // a CPU's candidate kept aside from one chunk, then a new one in the next whose bytes went
        // unsaved (bytesDone listed the CPU only when its count went from 0): the stack record after
        // it took no fields once the buffer was reused (found by CI's seed -973734994)
        examples: [
          [
            [
              {
                h: { comm: 'bash', pid: 0, cpu: 0, tgid: null, flags: '', ts: '0.000000' },
                same: 'same',
                body: 'kmem_cache_alloc: call_site=kmalloc+0x1c/0x40 bytes_req=64',
              },
              { h: { comm: 'bash', pid: 0, cpu: 200, tgid: null, flags: '', ts: '0.000000' }, same: 'same', body: 'do_sys_open <-__x64_sys_openat' },
              { h: { comm: 'bash', pid: 0, cpu: 0, tgid: null, flags: '', ts: '0.000000' }, same: 'same', body: 'a: x y' },
              { h: { comm: 'bash', pid: 0, cpu: 0, tgid: '1', flags: '', ts: '0.000000' }, same: 'same', body: 'do_sys_open <-__x64_sys_openat' },
              { h: { comm: 'bash', pid: 0, cpu: 0, tgid: null, flags: '', ts: '0.000000' }, same: 'same', body: 'do_sys_open <-__x64_sys_openat' },
              { h: { comm: 'bash', pid: 0, cpu: 0, tgid: null, flags: '', ts: '0.000000' }, same: 'same', body: '<stack trace>' },
            ],
            [60, 173, 103, 60],
            false,
          ],
        ],
      },
    );
  });
});
