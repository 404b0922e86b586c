import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateSample } from '../sim/sample-capture.ts';
import { sampleFiles } from '../sim/sample-files.ts';
import { Explorer } from '../query/explorer.ts';
import { handCapture, sampleCapture } from '../testing/explorer-fixtures.ts';
import type { Capture } from '../capture/ingest.ts';
import { summarize } from '../capture/summary.ts';
import { buildTables, KIND_NAMES } from './build.ts';
import { captureIdOf, contentDigest } from './id.ts';
import { cellAt, TABLE_NAMES, TABLES, type TableData, type TableName } from './schema.ts';
import { Fnv1a64 } from './id.ts';
import { ingestFiles, printedNs } from '../testing/test-helpers.ts';
import { STATUS_NAMES } from '../capture/trace-columns-data.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';

/** FNV-1a 64 the textbook way, in BigInt: the second method for every hash below */
function fnvRef(bytes: Uint8Array): string {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}
const utf8 = (s: string) => new TextEncoder().encode(s);

type Row = Record<string, number | bigint | string | boolean | null>;
function rowsOf(t: TableData): Row[] {
  const out: Row[] = [];
  for (let i = 0; i < t.rows; i++) out.push(Object.fromEntries(t.spec.columns.map((c, k) => [c.name, cellAt(t.columns[k], i)])));
  return out;
}
function tables(c: Capture, id = 'cap'): Record<TableName, TableData> {
  const list = buildTables(new Explorer(c), { captureId: id });
  return Object.fromEntries(list.map((t) => [t.spec.name, t])) as Record<TableName, TableData>;
}
const countBy = <T>(xs: T[], key: (x: T) => string) => {
  const m: Record<string, number> = {};
  for (const x of xs) m[key(x)] = (m[key(x)] ?? 0) + 1;
  return m;
};

/** What summary --json says, counted again from the tables' rows (what export.test.ts asks DuckDB) */
function countsFromTables(t: Record<TableName, TableData>) {
  const recs = rowsOf(t.records);
  const cookies = recs.filter((r) => r.kind === 'cookie-v7' || r.kind === 'cookie-v8');
  const byHash = countBy(
    recs.filter((r) => r.stack_hash !== null),
    (r) => r.stack_hash as string,
  );
  return {
    events: t.events.rows,
    cookies: cookies.length,
    fullStacks: recs.filter((r) => r.status === 'full').length,
    resolved: cookies.filter((r) => r.status === 'resolved' || r.status === 'unverified').length,
    unresolved: cookies.filter((r) => r.status !== 'resolved' && r.status !== 'unverified').length,
    uniqueStacks: t.stacks.rows,
    top0: Math.max(0, ...Object.values(byHash)),
    status: Object.fromEntries(STATUS_NAMES.map((s) => [s, recs.filter((r) => r.status === s).length])),
  };
}
function countsFromSummary(c: Capture) {
  const s = summarize(c);
  return {
    events: s.events,
    cookies: s.cookies,
    fullStacks: s.fullStacks,
    resolved: s.resolved,
    unresolved: s.unresolved,
    uniqueStacks: s.uniqueStacks,
    top0: s.top[0]?.count ?? 0,
    status: s.status,
  };
}

/**
 * Every events and records row from the trace columns' own accessors (`get`, and a plain search
 * for each event's first record), not the raw arrays the tables share.
 */
function checkRowsAgainstColumns(c: Capture, t: Record<TableName, TableData>) {
  const tr = c.trace;
  const firstRecord = new Map<number, number>();
  for (let r = 0; r < tr.recordCount; r++) if (!firstRecord.has(tr.recEvent.get(r))) firstRecord.set(tr.recEvent.get(r), r);
  const hashOf = (r: number) => {
    const st = tr.recStatus.get(r);
    const s = tr.recStack.get(r);
    return (st === 0 || st === 3 || st === 5) && s >= 0 ? fnvRef(utf8(c.stacks.framesOf(s).join('\n'))) : null;
  };
  const recordPart = (r: number | undefined) => {
    if (r === undefined) return { kind: null, status: null, stack_hash: null, slot: null };
    const kind = tr.recKind.get(r);
    return { kind: KIND_NAMES[kind], status: STATUS_NAMES[tr.recStatus.get(r)], stack_hash: hashOf(r), slot: kind <= 1 ? tr.recSlot.get(r) : null };
  };
  const ev = rowsOf(t.events);
  expect(ev.length).toBe(tr.eventCount);
  // one comparison of every row (a toEqual per row costs more than the tables)
  const evGot: Row[] = [];
  const evWant: Row[] = [];
  for (let e = 0; e < tr.eventCount; e++) {
    // ts_ns: its own test below, against the printed times
    const { generation: _g, ts_ns: _ns, ...rest } = ev[e];
    evGot.push(rest);
    evWant.push({
      capture_id: 'cap',
      event_id: e,
      ts: tr.evTs.get(e),
      cpu: tr.evCpu.get(e),
      pid: tr.evPid.get(e),
      tgid: null,
      task: tr.tasks.strings[tr.evTask.get(e)],
      event: tr.names.strings[tr.evName.get(e)],
      ...recordPart(firstRecord.get(e)),
      // a load without details (the page's) keeps no payload: export.test.ts checks the kept ones against trace-cmd and the lines
      payload: null,
    });
  }
  expect(evGot).toEqual(evWant);
  const rec = rowsOf(t.records);
  expect(rec.length).toBe(tr.recordCount);
  const recGot: Row[] = [];
  const recWant: Row[] = [];
  for (let r = 0; r < tr.recordCount; r++) {
    const { generation: _g, ts_ns: _ns, ...rest } = rec[r];
    const e = tr.recEvent.get(r);
    recGot.push(rest);
    recWant.push({
      capture_id: 'cap',
      event_id: e < 0 ? null : e,
      ts: tr.recTs.get(r),
      cpu: tr.recCpu.get(r),
      pid: tr.recPid.get(r),
      task: tr.tasks.strings[tr.recTask.get(r)],
      ...recordPart(r),
    });
  }
  expect(recGot).toEqual(recWant);
  // v8 cookies carry their own generation
  for (let r = 0; r < tr.recordCount; r++) if (tr.recKind.get(r) === 1) expect(rec[r].generation).toBe(tr.recGen.get(r));
}

describe('ts_ns: integer nanoseconds', () => {
  const line = (time: string, what: string) => `            cat-2211    [000] ...1.  ${time}: ${what}`;
  const cases: [string, string[]][] = [
    // the kernel's microseconds at 200 days of uptime: 1 us apart, where double seconds hold ~2 ns
    ['microseconds at 200 days', ['17280000.000001', '17280000.000002', '17280000.999999', '17280001.000000']],
    // nanosecond text below 48 days (2^22 s): every nanosecond
    ['nanoseconds at 11 days', ['1000000.000000001', '1000000.000000002', '1000000.999999999']],
    ['seconds since boot, small', ['0.000001', '5.123456']],
  ];
  it.each(cases)('%s: each as printed, in events and records alike, chunked and renamed', (_, times) => {
    const text = ['# tracer: nop', ...times.flatMap((t, i) => [line(t, 'do_sys_openat2 <-__x64_sys_openat'), line(t, `<stack_id ${i + 1}>`)]), ''].join('\n');
    for (const name of ['trace', 'unknown'])
      for (const chunk of [0, 1, 7]) {
        const t = buildTables(new Explorer(ingestFiles([[name, text]], chunk)), { captureId: 'cap' });
        const col = (table: TableData) =>
          Array.from({ length: table.rows }, (_, i) => cellAt(table.columns[table.spec.columns.findIndex((c) => c.name === 'ts_ns')], i));
        const want = times.map(printedNs);
        expect(col(t.find((x) => x.spec.name === 'events')!)).toEqual(want);
        expect(col(t.find((x) => x.spec.name === 'records')!)).toEqual(want);
      }
  });
});

describe('tables', () => {
  it('are defined once: every table starts with capture_id, names unique, types known', () => {
    expect(TABLES.map((t) => t.name)).toEqual([...TABLE_NAMES].sort((a, b) => TABLES.findIndex((t) => t.name === a) - TABLES.findIndex((t) => t.name === b)));
    expect(new Set(TABLES.map((t) => t.name))).toEqual(new Set(TABLE_NAMES));
    for (const t of TABLES) {
      expect(t.columns[0].name).toBe('capture_id');
      expect(new Set(t.columns.map((c) => c.name)).size).toBe(t.columns.length);
      for (const c of t.columns) expect(c.doc.length).toBeGreaterThan(3);
    }
    // DESIGN 5.3: events has at least these
    const ev = TABLES.find((t) => t.name === 'events')!.columns.map((c) => c.name);
    for (const c of ['ts', 'cpu', 'pid', 'task', 'event', 'status', 'stack_hash', 'generation', 'slot']) expect(ev).toContain(c);
  });

  it('hand capture: the numbers worked out in explorer-fixtures.ts', () => {
    const c = handCapture();
    const t = tables(c);
    expect(countsFromTables(t)).toEqual(countsFromSummary(c));
    const S1 = fnvRef(utf8('a+0x1\nb+0x2'));
    const S2 = fnvRef(utf8('c+0x3\nb+0x2'));
    const S3 = fnvRef(utf8('a+0x1\nd+0x4\na+0x9\nb+0x2'));
    const ev = rowsOf(t.events);
    expect(ev.map((r) => r.stack_hash)).toEqual([S1, S2, S1, S1, S3, null, S2, null, null, S2]);
    expect(ev.map((r) => r.status)).toEqual(['resolved', 'resolved', 'resolved', 'full', 'resolved', null, 'resolved', 'no-slot', 'no-dump', 'resolved']);
    expect(ev.map((r) => r.generation)).toEqual([1, 1, 1, 1, 1, 1, 2, 2, 3, 2]);
    expect(ev.map((r) => r.slot)).toEqual([1, 2, 1, null, 3, null, 1, 4, 9, 1]);
    expect(ev.map((r) => r.kind)).toEqual([
      'cookie-v8',
      'cookie-v8',
      'cookie-v8',
      'full',
      'cookie-v8',
      null,
      'cookie-v8',
      'cookie-v8',
      'cookie-v8',
      'cookie-v8',
    ]);
    expect(ev.map((r) => `${r.task}/${r.pid}/${r.cpu}/${r.event}`).slice(0, 2)).toEqual(['bash/1234/1/kmem_cache_alloc', 'sh/99/0/sched_wakeup']);
    expect(
      rowsOf(t.stacks)
        .map((r) => [r.stack_hash, r.depth, r.leaf, r.leaf_frame])
        .sort(),
    ).toEqual(
      [
        [S1, 2, 'a', 'a+0x1'],
        [S2, 2, 'c', 'c+0x3'],
        [S3, 4, 'a', 'a+0x1'],
      ].sort(),
    );
    expect(
      rowsOf(t.frames)
        .filter((r) => r.stack_hash === S3)
        .map((r) => [r.depth, r.frame, r.symbol, r.offset, r.module]),
    ).toEqual([
      [0, 'a+0x1', 'a', 1, null],
      [1, 'd+0x4', 'd', 4, null],
      [2, 'a+0x9', 'a', 9, null],
      [3, 'b+0x2', 'b', 2, null],
    ]);
    expect(t.frames.rows).toBe(2 + 2 + 4);
    expect(rowsOf(t.dumps).map((r) => [r.generation, r.slot, r.stack_hash, r.ref_count, r.file, r.format])).toEqual([
      [1, 1, S1, 2, 'stack_map.gen1', 'stack_map_text'],
      [1, 2, S2, 1, 'stack_map.gen1', 'stack_map_text'],
      [1, 3, S3, 1, 'stack_map.gen1', 'stack_map_text'],
      [2, 1, S2, 5, 'stack_map.gen2', 'stack_map_text'],
    ]);
    expect(rowsOf(t.files).map((r) => [r.file, r.kind, r.size])).toEqual(c.files.map((f) => [f.file, f.kind, f.size]));
    expect(t.stat.rows).toBe(0);
    checkRowsAgainstColumns(c, t);
  });

  it('sample capture: counts equal summary, rows equal the trace columns, stat and files as read', () => {
    const c = sampleCapture();
    const t = tables(c);
    expect(countsFromTables(t)).toEqual(countsFromSummary(c));
    checkRowsAgainstColumns(c, t);
    expect(rowsOf(t.stat).map((r) => [r.file, r.key, r.value])).toEqual(c.stats.flatMap((s) => s.values.map(([k, v]) => [s.file, k, v])));
    // frames: every stack's rows spell its frames, leaf first
    const frames = rowsOf(t.frames);
    const byHash = new Map<string, string[]>();
    for (const r of frames) {
      const l = byHash.get(r.stack_hash as string) ?? [];
      expect(r.depth).toBe(l.length);
      l.push(r.frame as string);
      byHash.set(r.stack_hash as string, l);
    }
    for (const r of rowsOf(t.stacks)) {
      const f = byHash.get(r.stack_hash as string)!;
      expect(fnvRef(utf8(f.join('\n')))).toBe(r.stack_hash);
      expect([f.length, f[0]]).toEqual([r.depth, r.leaf_frame]);
    }
    // dumps: one row per slot of each generation, ref_counts as the dumps say
    const dumps = rowsOf(t.dumps);
    const expected = [...c.dumps.byGeneration.values()].flatMap((g) =>
      [...g.slots].map(([slot, s]) => `${g.generation}:${slot}:${s.refCount}:${fnvRef(utf8(s.frames.join('\n')))}`),
    );
    expect(dumps.map((r) => `${r.generation}:${r.slot}:${r.ref_count}:${r.stack_hash}`).sort()).toEqual(expected.sort());
    expect(t.events.columns.every((col) => (col.type === 'utf8' ? col.codes : col.values).length === t.events.rows)).toBe(true);
  }, 30_000);

  it("generated captures of any shape: the tables hold summary's counts and the columns' rows", () => {
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 1, max: 1e6 }),
          cpus: fc.integer({ min: 1, max: 4 }),
          events: fc.integer({ min: 20, max: 300 }),
          resets: fc.integer({ min: 1, max: 3 }),
          bits: fc.integer({ min: 4, max: 10 }),
          tail: fc.integer({ min: 0, max: 30 }),
          lostMarkers: fc.integer({ min: 0, max: 2 }),
        }),
        (o) => {
          const c = ingestFiles(sampleFiles(generateSample(o)));
          const t = tables(c);
          expect(countsFromTables(t)).toEqual(countsFromSummary(c));
          checkRowsAgainstColumns(c, t);
        },
      ),
      { numRuns: 15, seed: 13 },
    );
  }, 60_000);

  for (const [name, file] of [
    ['perf script with callchains', 'flamegraph-perf-dd-stacks-01.txt'],
    ['atrace with a TGID column', 'catapult-atrace_data.txt'],
    ['trace.dat v6', 'trappy-trace.dat'],
  ]) {
    realIt(
      `a real trace (${name}): counts equal summary, diagnostics and files as summary has them`,
      () => {
        const c = ingestFiles([[file, realTrace(file)]]);
        const t = tables(c);
        expect(countsFromTables(t)).toEqual(countsFromSummary(c));
        const s = summarize(c);
        expect(rowsOf(t.diagnostics).map((r) => [r.file, r.where, r.message, r.count])).toEqual(
          s.diagnostics.map((d) => [d.file, d.where, d.message, d.count]),
        );
        expect(rowsOf(t.files).map((r) => [r.file, r.kind, r.lines_used, r.lines_unused, r.bytes_used, r.bytes_unused])).toEqual(
          s.files.map((f) => [f.file, f.kind, f.lines?.used ?? null, f.lines?.unused ?? null, f.bytes?.used ?? null, f.bytes?.unused ?? null]),
        );
      },
      30_000,
    );
  }
});

describe('capture_id', () => {
  it('FNV-1a 64 over bytes equals the textbook BigInt loop', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 0, max: 300 }), (b, cut) => {
        // fed in two pieces or one: the same
        expect(new Fnv1a64().update(b.subarray(0, cut)).update(b.subarray(cut)).hex()).toBe(fnvRef(b));
      }),
    );
  });

  it('is the documented bytes: files sorted by name, name 0 size 0 headLength 0 head 0 digest; the order given does not matter', async () => {
    const head = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);
    const whole = head(10_000, 1);
    // the digest of the whole content, streamed in pieces, is FNV-1a 64 of all its bytes
    async function* pieces() {
      for (let i = 0; i < whole.length; i += 777) yield whole.subarray(i, i + 777);
    }
    const digest = await contentDigest(pieces());
    expect(digest).toBe(fnvRef(whole));
    const a = { name: 'trace', size: 10_000, head: whole.subarray(0, 5000), digest };
    const b = { name: 'kallsyms', size: 3, head: head(3, 2), digest: fnvRef(head(3, 2)) };
    const bytes = [
      ...utf8('kallsyms'),
      0,
      ...utf8('3'),
      0,
      ...utf8('3'),
      0,
      ...b.head,
      0,
      ...utf8(b.digest),
      ...utf8('trace'),
      0,
      ...utf8('10000'),
      0,
      ...utf8('4096'),
      0,
      ...a.head.subarray(0, 4096),
      0,
      ...utf8(a.digest),
    ];
    expect(captureIdOf([a, b])).toBe(fnvRef(Uint8Array.from(bytes)));
    expect(captureIdOf([b, a])).toBe(captureIdOf([a, b]));
    expect(captureIdOf([a, { ...b, size: 4 }])).not.toBe(captureIdOf([a, b]));
    expect(captureIdOf([a, { ...b, name: 'kallsyms2' }])).not.toBe(captureIdOf([a, b]));
    expect(captureIdOf([a])).toMatch(/^[0-9a-f]{16}$/);
    // one byte past the head differs: so does the id (it did not, with the head alone)
    const changed = whole.slice();
    changed[9000] ^= 1;
    expect(captureIdOf([{ ...a, digest: fnvRef(changed) }, b])).not.toBe(captureIdOf([a, b]));
  });

  it('every table carries it in every row', () => {
    for (const t of buildTables(new Explorer(handCapture()), { captureId: '0123456789abcdef' })) {
      for (const r of rowsOf(t)) expect(r.capture_id).toBe('0123456789abcdef');
    }
  });
});
