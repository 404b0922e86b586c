/**
 * A trace text file read in two pieces (split-trace.ts: this thread up to a split, a part reader
 * for the rest, absorbed at the end) gives what one reader of the whole file gives, column for
 * column, id for id: events, records and their own values, stacks, frames, tasks, names, lost
 * markers, line counts and diagnostics. The second method is the plain one-reader path; inputs
 * are random line mixes (every kind of line the reader knows, and damage), the fixtures, and the
 * real traces others published.
 */
import fc from 'fast-check';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sniffKind } from '../formats/sniff.ts';
import { fixture } from '../testing/formats.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';
import { Ingest, type Capture } from './ingest.ts';
import { findSplit, readTracePart } from './split-trace.ts';

const enc = new TextEncoder();

function feed(p: { push(c: Uint8Array): void }, bytes: Uint8Array, chunk: number): void {
  if (chunk <= 0) p.push(bytes);
  else for (let i = 0; i < bytes.length; i += chunk) p.push(bytes.subarray(i, i + chunk));
}

function whole(name: string, bytes: Uint8Array, chunk: number): Capture {
  const ingest = new Ingest();
  const p = ingest.open(name);
  feed(p, bytes, chunk);
  p.end();
  return ingest.finish();
}

function split(name: string, bytes: Uint8Array, at: number, chunk: number): Capture {
  const ingest = new Ingest();
  const p = ingest.open(name);
  feed(p, bytes.subarray(0, at), chunk);
  const tail = readTracePart(name);
  feed(tail, bytes.subarray(at), chunk);
  // as posted from another thread
  p.end(structuredClone(tail.end()));
  return ingest.finish();
}

const arr = (a: ArrayLike<number>) => Array.from(a);

/** Everything a capture of one trace file holds, as plain data. */
function contents(c: Capture) {
  const t = c.trace;
  const st = c.stacks.columns();
  return {
    events: [t.evTs, t.evCpu, t.evPid, t.evTask, t.evName].map((col) => arr(col.view())),
    records: [t.recEvent, t.recKind, t.recSlot, t.recGen, t.recStack, t.recStatus].map((col) => arr(col.view())),
    recordOwn: [t.recTs, t.recCpu, t.recPid, t.recTask].map((col) => arr(col.raw())),
    ownKept: t.mark().own,
    weights: arr(t.evWeight.raw()),
    lost: [t.lostCpu, t.lostCount, t.lostTs].map((col) => arr(col.view())),
    resetMarks: arr(t.resetMarks.view()),
    // the fields noted for v4/v7 ids and full stacks (field-evidence.ts), by name
    noted: Array.from({ length: t.evidRec.length }, (_, k) => [
      t.evidRec.get(k),
      t.evidNames.strings[t.evidA.get(k)],
      t.evidB.get(k) < 0 ? null : t.evidNames.strings[t.evidB.get(k)],
    ]),
    userStacks: t.userStacks,
    tasks: t.tasks.strings,
    names: t.names.strings,
    stacks: { size: c.stacks.size, nodes: c.stacks.nodeCount, frame: arr(st.frame), parent: arr(st.parent), depth: arr(c.stacks.depths()) },
    frames: c.stacks.frames.strings,
    files: c.files,
    // the order of reasons is the order a reader met them, which depends on how the bytes came in chunks (the NUL gate sees a chunk before the lines in it)
    diagnostics: [...c.diagnostics].sort((a, b) => (a.message + a.where < b.message + b.where ? -1 : 1)),
    tracer: c.tracer,
  };
}

/** Every offset findSplit can choose in `bytes`. */
function candidates(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let q = 0; q < bytes.length;) {
    const s = findSplit(bytes.subarray(q), q);
    if (s < 0) break;
    out.push(s);
    q = s;
  }
  return out;
}

// ---------------------------------------------------------------- random traces

const comm = fc.constantFrom('cat', '<...>', 'Web Content', 'irq/51-ELAN0001', 'kworker/0:1', 'CPUhog', 'a');
const pid = fc.constantFrom(1, 311, 2211, 5120);
const cpu = fc.oneof({ arbitrary: fc.constantFrom(0, 1, 2, 3), weight: 9 }, { arbitrary: fc.constant(2000), weight: 1 });
const ts = fc.integer({ min: 1_000_000, max: 1_000_010 }).map((n) => (n / 1000).toFixed(6));
const head = fc.record({ comm, pid, cpu, ts, flags: fc.constantFrom('...1.', 'd..2.', '.N.1.') });
type Head = { comm: string; pid: number; cpu: number; ts: string; flags: string };
const line = (h: Head, payload: string) => `${h.comm.padStart(16)}-${h.pid}     [${String(h.cpu).padStart(3, '0')}] ${h.flags} ${h.ts}: ${payload}`;

const kernelFrame = fc.oneof(
  fc.tuple(fc.constantFrom('do_sys_openat2', 'kmalloc', '__x64_sys_openat', 'f'), fc.nat({ max: 0x30 })).map(([f, o]) => ` => ${f}+0x${o.toString(16)}/0x40`),
  fc.constant(' => [FTRACE TRAMPOLINE]'),
  fc.constant(' => 0xffffffff81000010'),
);
const userFrame = fc.constantFrom(' => <00007f0012345678>', ' => ??', ' => <0000000000401000>');
const frames = (f: fc.Arbitrary<string>) => fc.array(f, { maxLength: 6 });

/** An event and what may follow it: a stack record with its head or another, a frame block, a print message's lines. */
const group: fc.Arbitrary<string[]> = fc.oneof(
  fc
    .tuple(head, fc.constantFrom('do_sys_openat2 <-__x64_sys_openat', 'kmem_alloc: bytes_alloc=64', 'sched_switch: prev_comm=a next_pid=0'))
    .map(([h, p]) => [line(h, p)]),
  fc
    .tuple(head, fc.option(head), fc.nat({ max: 40 }), fc.option(fc.nat({ max: 5 })))
    .map(([h, other, slot, gen]) => [
      line(h, 'do_sys_openat2 <-__x64_sys_openat'),
      line(other ?? h, gen === null ? `<stack_id ${slot}>` : `<stack_id ${slot} gen ${gen}>`),
    ]),
  fc.tuple(head, fc.option(head), frames(kernelFrame)).map(([h, other, fs]) => [line(h, 'kmalloc <-f'), line(other ?? h, '<stack trace>'), ...fs]),
  fc.tuple(head, frames(userFrame)).map(([h, fs]) => [line(h, '<user stack trace>'), ...fs]),
  fc
    .tuple(head, fc.array(fc.constantFrom('continued message', '', 'more: of it'), { maxLength: 3 }))
    .map(([h, more]) => [line(h, 'bprint: do_work: n=3'), ...more]),
  // the capture script's reset marker (the columns keep where it is), in the kernel's and trace-cmd's forms
  fc
    .tuple(head, fc.constantFrom('tracing_mark_write: stackmap reset 1', 'print: tracing_mark_write: stackmap reset 2', 'tracing_mark_write: stackmap resets'))
    .map(([h, p]) => [line(h, p)]),
  // a record alone (its event before the split, or nowhere)
  fc.tuple(head, fc.nat({ max: 40 })).map(([h, slot]) => [line(h, `<stack_id ${slot} gen 1>`)]),
);
const other: fc.Arbitrary<string[]> = fc
  .constantFrom(
    'CPU:1 [LOST 34 EVENTS]',
    'CPU:2000 [LOST EVENTS]',
    '##### CPU 2 buffer started ####',
    '# tracer: function',
    '#P:4',
    '',
    'garbage words here',
    'text with \u0000 a nul',
    'caf\u00e9 line',
    ' => orphan_frame+0x1/0x2',
    '# ./a shell prompt | quoted',
    'x'.repeat(70_000),
  )
  .map((l) => [l]);

const traceArb = fc
  .tuple(fc.array(fc.oneof({ arbitrary: group, weight: 6 }, { arbitrary: other, weight: 1 }), { minLength: 4, maxLength: 40 }), fc.boolean(), fc.boolean())
  .map(([groups, crlf, trailing]) => {
    const text = ['# tracer: nop', '#', ...groups.flat()].join(crlf ? '\r\n' : '\n') + (trailing ? '\n' : '');
    return enc.encode(text);
  });

describe('a trace read in two pieces', () => {
  it('is what one reader makes of the whole file, at every split and chunk size', () => {
    let splits = 0;
    fc.assert(
      fc.property(traceArb, fc.nat(), fc.constantFrom(0, 1, 7, 64), fc.constantFrom('trace', 'unknown'), (bytes, pick, chunk, name) => {
        const cs = candidates(bytes).filter((at) => sniffKind(bytes.subarray(0, Math.min(at, 16384))) === 'trace_text');
        fc.pre(cs.length > 0);
        const at = cs[pick % cs.length];
        splits++;
        expect(contents(split(name, bytes, at, chunk))).toEqual(contents(whole(name, bytes, 0)));
      }),
      { numRuns: 300 },
    );
    // the property ran on splits, not on inputs fc.pre threw away
    expect(splits).toBeGreaterThan(200);
  });

  it('splits only before an event line, never inside a frame block or a message', () => {
    const text = [
      'a-1 [000] ...1. 1.000000: <stack trace>',
      ' => f+0x1/0x2',
      ' => g+0x1/0x2',
      'a-1 [000] ...1. 2.000000: bprint: w: n',
      'more',
      'b-2 [001] ...1. 3.000000: x <-y',
      '',
    ].join('\n');
    const bytes = enc.encode(text);
    const at = text.indexOf('b-2');
    expect(candidates(bytes)).toEqual([text.indexOf('a-1 [000] ...1. 2.'), at]);
    expect(findSplit(bytes.subarray(text.indexOf(' => g')), text.indexOf(' => g'))).toBe(text.indexOf('a-1 [000] ...1. 2.'));
    expect(findSplit(bytes.subarray(at), at)).toBe(-1);
  });

  const fixtures = readdirSync(new URL('../formats/fixtures/trace_text/', import.meta.url)).flatMap((d) =>
    readdirSync(new URL(`../formats/fixtures/trace_text/${d}/`, import.meta.url)).map((f) => `trace_text/${d}/${f}`),
  );
  it.each(fixtures)('%s: at every split', (rel) => {
    const bytes = fixture(rel);
    const cs = candidates(bytes);
    // a latency-format file has no line the split takes (it stays on one thread); other kinds are not split
    if (sniffKind(bytes.subarray(0, 16384)) !== 'trace_text' || rel.includes('latency')) return expect(cs.length === 0 || !rel.includes('latency')).toBe(true);
    expect(cs.length).toBeGreaterThan(0);
    const expected = contents(whole('f', bytes, 0));
    // the loader splits past the sniffed head only (load.ts); below it, a piece this small may sniff as another kind
    const sniffed = (at: number) => sniffKind(bytes.subarray(0, Math.min(at, 16384))) === 'trace_text';
    expect(cs.filter(sniffed).length).toBeGreaterThan(0);
    for (const at of cs.filter(sniffed)) expect(contents(split('f', bytes, at, 7))).toEqual(expected);
  });

  for (const name of ['catapult-atrace_data.txt', 'catapult-decompressed_atrace_data.txt']) {
    realIt(`${name} (real): at 25 splits through the file`, () => {
      const bytes = realTrace(name);
      expect(sniffKind(bytes.subarray(0, 16384))).toBe('trace_text');
      const cs = candidates(bytes);
      expect(cs.length).toBeGreaterThan(25);
      const expected = contents(whole(name, bytes, 0));
      for (let k = 0; k < 25; k++) expect(contents(split(name, bytes, cs[Math.floor((k * cs.length) / 25)], 4096))).toEqual(expected);
    });
  }
});
