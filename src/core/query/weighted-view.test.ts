import { openAsBlob, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadFiles } from '../capture/load.ts';
import { ExplorerData } from './explorer-data.ts';
import { FieldColumns } from './field-columns.ts';
import { weightedView } from './weighted-view.ts';

// The fields a filter or a weight may name, and a view weighed by one, against a second reading
// of the sample trace: a regex over its event lines, `EVENT: key=value ...`. A filter compares any
// decimal or 0x number (64 bits: ptr=0xffff88808db9cae2 too); a weight only those a double holds
// exactly (15 decimal digits, 13 hex: payload-fields.ts fieldInteger).

const TRACE = new URL('../../../public/samples/trace', import.meta.url).pathname;

function regexReading() {
  const byEvent = new Map<string, Map<string, boolean>>();
  const numericEvents = new Map<string, number>();
  const bytesAlloc: number[] = [];
  for (const line of readFileSync(TRACE, 'utf8').split('\n')) {
    const m = /^\s*\S.*\[\d+\] \S+\s+\d+\.\d+: (\w+): (.*)$/.exec(line);
    if (!m) continue;
    const fields = byEvent.get(m[1]) ?? new Map<string, boolean>();
    byEvent.set(m[1], fields);
    const counted = new Set<string>();
    for (const [, key, value] of m[2].matchAll(/(\w+)=(\S*)/g)) {
      const numeric = /^-?(0x[0-9a-f]+|\d+)$/i.test(value);
      fields.set(key, (fields.get(key) ?? false) || numeric);
      const exact = /^(-?\d{1,15}|0x[0-9a-f]{1,13})$/i.test(value);
      if (exact && !counted.has(key)) (counted.add(key), numericEvents.set(key, (numericEvents.get(key) ?? 0) + 1));
    }
    const b = /\bbytes_alloc=(\d+)/.exec(m[2]);
    bytesAlloc.push(b ? Number(b[1]) : NaN);
  }
  return { byEvent, numericEvents, bytesAlloc };
}

describe('the fields of a capture, for a filter and a weight', async () => {
  const blob = await openAsBlob(TRACE);
  const detailed = await loadFiles([{ name: 'trace', blob }], { details: true });
  const cols = FieldColumns.build(detailed.trace);
  const want = regexReading();

  it('fields: each event name with its payload keys, numeric where one of its events has a number there', () => {
    const got = cols.fields();
    expect(got.map((e) => e.event)).toEqual([...want.byEvent.keys()].sort());
    expect(got.length).toBeGreaterThanOrEqual(2);
    for (const e of got) expect(Object.fromEntries(e.fields.map((f) => [f.name, f.numeric])), e.event).toEqual(Object.fromEntries(want.byEvent.get(e.event)!));
    // both kinds present: bytes_alloc and the 64-bit ptr numeric, gfp_flags not
    const alloc = got.find((e) => e.event === 'kmem_cache_alloc')!.fields;
    expect(alloc.find((f) => f.name === 'bytes_alloc')?.numeric).toBe(true);
    expect(alloc.find((f) => f.name === 'ptr')?.numeric).toBe(true);
    expect(alloc.find((f) => f.name === 'gfp_flags')?.numeric).toBe(false);
  });

  it('numericFields: the keys a weight can be, with how many events hold such a number there, the most common first', () => {
    const got = cols.numericFields();
    expect(got.map((f) => f.name)).not.toContain('ptr');
    expect(Object.fromEntries(got.map((f) => [f.name, f.events]))).toEqual(Object.fromEntries(want.numericEvents));
    for (let i = 1; i < got.length; i++) expect(got[i - 1].events).toBeGreaterThanOrEqual(got[i].events);
  });

  it('weightedView: each record weighs its own event’s bytes_alloc (0 and unweighed where it has none); the columns must line up', async () => {
    const c = await loadFiles([{ name: 'trace', blob }]);
    const d = new ExplorerData(c);
    const v = weightedView(d, cols, 'bytes_alloc');
    const recEvent = d.t.recEvent.raw();
    let none = 0;
    for (let r = 0; r < d.recordCount; r++) {
      const b = recEvent[r] >= 0 ? want.bytesAlloc[recEvent[r]] : NaN;
      expect(v.data.recWeight[r], `record ${r}`).toBe(b === b ? b : 0);
      if (b !== b) none++;
    }
    expect(none).toBeGreaterThan(0); // sched_wakeup's records
    expect(v.unweighed).toBeLessThanOrEqual(none);
    // columns of another reading (one event less) are refused
    const fewer = await loadFiles([{ name: 'trace', blob: new Blob([readFileSync(TRACE, 'utf8').replace(/^.*kmem_cache_alloc: .*\n/m, '')]) }], {
      details: true,
    });
    expect(() => weightedView(d, FieldColumns.build(fewer.trace), 'bytes_alloc')).toThrow(/not weighed by bytes_alloc/);
  });

  it("a view's occurrences weigh its field though its capture's were asked first (the last answer is kept per weights), and the capture's stay plain", async () => {
    const c = await loadFiles([{ name: 'trace', blob }]);
    const d = new ExplorerData(c);
    const all = { range: null, generation: null, cpus: null };
    const plain = d.occurrences(all);
    const v = weightedView(d, cols, 'bytes_alloc');
    const weighed = v.data.occurrences(all);
    // another method: the same view of a fresh capture's data, asked nothing before
    const fresh = weightedView(new ExplorerData(c), cols, 'bytes_alloc').data.occurrences(all);
    expect(Array.from(weighed.weights)).toEqual(Array.from(fresh.weights));
    expect(Array.from(weighed.weights)).not.toEqual(Array.from(plain.weights));
    expect(Array.from(d.occurrences(all).weights)).toEqual(Array.from(plain.counts));
  });

  it('weightedView: values past 32 bits and fractions of none weigh exactly (8 bytes a record), 32-bit ones in 4', async () => {
    const L = (i: number, rest: string) =>
      `  t-1 [000] ...1. 1.${String(i).padStart(6, '0')}: ev: ${rest}\n  t-1 [000] ...1. 1.${String(i).padStart(6, '0')}: <stack trace>\n => f+0x1/0x10`;
    const text = ['# tracer: nop', L(1, 'n=5000000000 m=7'), L(2, 'n=-3 m=-2147483647'), L(3, 'n=0x10 m=x'), ''].join('\n');
    const blob = new Blob([text]);
    const d = new ExplorerData(await loadFiles([{ name: 'trace', blob }]));
    const c = FieldColumns.build((await loadFiles([{ name: 'trace', blob }], { details: true })).trace);
    const big = weightedView(d, c, 'n').data.recWeight;
    expect([big.BYTES_PER_ELEMENT, ...big]).toEqual([8, 5000000000, -3, 16]);
    const small = weightedView(d, c, 'm').data.recWeight;
    expect([small.BYTES_PER_ELEMENT, ...small]).toEqual([4, 7, -2147483647, 0]);
  });
});
