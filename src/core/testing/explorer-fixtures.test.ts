// The hand capture's comment table in explorer-fixtures.ts, made executable (issue 39): the
// table, its stack legend and its dumps line are parsed from the comment itself and held to what
// the readers read from HAND_TRACE and the dumps (every way, reader-kit.ts) and to what the
// capture makes of them (status, stack, generation per event). Edit the table and this follows.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Explorer } from '../query/explorer.ts';
import { buildTables } from '../tables/build.ts';
import { cellAt } from '../tables/schema.ts';
import { HAND_DUMP_GEN1, HAND_DUMP_GEN2, HAND_TRACE, handCapture } from './explorer-fixtures.ts';
import { readEveryWay, readers } from './reader-kit.ts';

const SOURCE = readFileSync(new URL('./explorer-fixtures.ts', import.meta.url), 'utf8');

/** The comment's `| a | b |` rows as objects keyed by its header row. */
function commentTable(src: string): Record<string, string>[] {
  const rows = src
    .split('\n')
    .filter((l) => /^ \* \|.*\|\s*$/.test(l))
    .map((l) =>
      l
        .replace(/^ \* \|/, '')
        .replace(/\|\s*$/, '')
        .split('|')
        .map((c) => c.trim()),
    );
  const [head, ...body] = rows;
  return body.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]])));
}

const TABLE = commentTable(SOURCE);
/** `S1 = a+0x1 <- b+0x2 (leaf first), S2 = ...`: each stack's frames, leaf first */
const LEGEND = new Map([...SOURCE.matchAll(/\b(S\d+) = ([^,(\n]+?)\s*(?=[,(\n])/g)].map((m) => [m[1], m[2].split(' <- ')]));
/** `Dumps: gen 1 {1: S1 ref 2, ...}, gen 2 {...}`: [generation, slot, stack, ref] */
const DUMPS = [...(/Dumps: (.*(?:\n \*.*)?)/.exec(SOURCE)?.[1] ?? '').matchAll(/gen (\d+) \{([^}]*)\}/g)].flatMap((g) =>
  [...g[2].matchAll(/(\d+): (S\d+) ref (\d+)/g)].map((e) => [+g[1], +e[1], e[2], +e[3]] as const),
);

describe("explorer-fixtures.ts's hand capture, as its comment table says", () => {
  it('the table, legend and dumps line parse (10 events, 3 stacks, 4 dump records)', () => {
    expect(TABLE.map((r) => r.ev)).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9']);
    expect([...LEGEND.keys()]).toEqual(['S1', 'S2', 'S3']);
    expect(DUMPS).toHaveLength(4);
  });

  it("the trace reader's events and their records (read every way: reader-kit.ts)", () => {
    const { got } = readEveryWay('trace', HAND_TRACE, readers.traceText);
    expect(got.events).toHaveLength(TABLE.length);
    TABLE.forEach((row, i) => {
      const e = got.events[i];
      const next = got.events[i + 1]?.lineNo ?? Infinity;
      const recs = got.stacks.filter((s) => s.lineNo > e.lineNo && s.lineNo < next);
      expect([e.cpu, e.ts.toFixed(6), e.comm], row.ev).toEqual([+row.cpu, row.ts, row.task]);
      const cookie = /^<stack_id (\d+) gen (\d+)>$/.exec(row.record);
      const full = /^<stack trace> (.*)$/.exec(row.record);
      const none = /^\(none: (\w+)\)$/.exec(row.record);
      if (cookie)
        expect(
          recs.map((r) => [r.kind, r.slot, r.generation]),
          row.ev,
        ).toEqual([['cookie', +cookie[1], +cookie[2]]]);
      else if (full)
        expect(
          recs.map((r) => [r.kind, r.frames]),
          row.ev,
        ).toEqual([['full', full[1].split(', ')]]);
      else {
        expect(none, `${row.ev}: a record column the test does not know`).not.toBeNull();
        expect([e.name, recs], row.ev).toEqual([none![1], []]);
      }
    });
  });

  it('the dumps as the stack_map reader reads them (every way, written back: reader-kit.ts)', () => {
    const read = [HAND_DUMP_GEN1, HAND_DUMP_GEN2].flatMap((text, i) =>
      readEveryWay(`stack_map.gen${i + 1}`, text, readers.stackMapText).result.records.map((r) => [r.generation, r.slot, r.frames, r.refCount]),
    );
    expect(read).toEqual(DUMPS.map(([gen, slot, s, ref]) => [gen, slot, LEGEND.get(s), ref]));
  });

  it("each event's status, stack and generation in the capture", () => {
    const c = handCapture();
    const events = buildTables(new Explorer(c), { captureId: 'hand' }).find((t) => t.spec.name === 'events')!;
    const col = (name: string) => events.spec.columns.findIndex((x) => x.name === name);
    const [status, generation] = [col('status'), col('generation')];
    expect(events.rows).toBe(TABLE.length);
    TABLE.forEach((row, i) => {
      const r = c.trace.evRecord.get(i);
      const s = r < 0 ? -1 : c.trace.recStack.get(r);
      expect(
        {
          status: cellAt(events.columns[status], i) ?? 'no record',
          stack: s < 0 ? '' : [...LEGEND].find(([, f]) => f.join('\n') === c.stacks.framesOf(s).join('\n'))?.[0],
          gen: cellAt(events.columns[generation], i),
        },
        row.ev,
      ).toEqual({ status: row.status, stack: row.stack, gen: +row.gen });
    });
  });
});
