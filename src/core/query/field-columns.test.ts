import { openAsBlob, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadFiles } from '../capture/load.ts';
import { FieldColumns } from './field-columns.ts';

// The fields kept as typed columns (issue 35), against a second reading of the same lines: a regex
// over the trace, `EVENT: key=value ...`, each value's text and its number computed here.

const TRACE = new URL('../../../public/samples/trace', import.meta.url).pathname;

/** per event line, its name and its fields as printed (the first of a key printed twice) */
function regexEvents(text: string): { name: string; fields: Map<string, string> }[] {
  const out: { name: string; fields: Map<string, string> }[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*\S.*\[\d+\] \S+\s+\d+\.\d+: (\w+): (.*)$/.exec(line);
    if (!m) continue;
    const fields = new Map<string, string>();
    for (const [, k, v] of m[2].matchAll(/(\w+)=(\S*)/g)) if (!fields.has(k)) fields.set(k, v);
    out.push({ name: m[1], fields });
  }
  return out;
}

/** a value's number as the weights take it: a decimal of at most 15 digits or 0x of at most 13, else NaN */
const numberOf = (v: string) => (/^-?\d{1,15}$/.test(v) ? Number(v) : /^0x[0-9a-f]{1,13}$/i.test(v) ? parseInt(v.slice(2), 16) : NaN);

async function columnsOf(text: string, perName?: number) {
  const c = await loadFiles([{ name: 'trace', blob: new Blob([text]) }], { details: true });
  return { cols: FieldColumns.build(c.trace, perName), detailed: c };
}

function expectLikeRegex(cols: FieldColumns, events: ReturnType<typeof regexEvents>) {
  expect(cols.events).toBe(events.length);
  const keys = new Set(events.flatMap((e) => [...e.fields.keys()]));
  for (const k of keys) {
    const t = cols.texts(k);
    const n = cols.numbers(k);
    events.forEach((ev, e) => {
      const want = ev.fields.get(k);
      expect(t.of[e] < 0 ? undefined : t.names[t.of[e]], `${k} of event ${e}`).toBe(want);
      expect(n[e], `${k} of event ${e}`).toBe(want === undefined ? NaN : numberOf(want));
    });
  }
}

describe('FieldColumns', () => {
  it('the sample: every field of every event prints back as the trace printed it, and weighs what its text says', async () => {
    const text = readFileSync(TRACE, 'utf8');
    const c = await loadFiles([{ name: 'trace', blob: await openAsBlob(TRACE) }], { details: true });
    const cols = FieldColumns.build(c.trace);
    const events = regexEvents(text);
    expectLikeRegex(cols, events);
    // each event's names (their fields: weighted-view.test.ts)
    expect(cols.fields().map((e) => e.event)).toEqual([...new Set(events.map((e) => e.name))].sort());
    // no payload string is kept: the columns' bytes are a few per event
    expect(cols.byteLength / events.length).toBeLessThan(20);
  });

  it('kinds that change: a decimal then a word, 002, hex then a decimal, absent first and last, a key printed twice, negative and past 31 bits', async () => {
    const L = (i: number, rest: string) => `  t-1 [000] ...1. 1.${String(i).padStart(6, '0')}: ev: ${rest}`;
    const text = [
      '# tracer: nop',
      L(1, 'b=0x10 c=002 d=-3'),
      L(2, 'a=1 b=0x0 c=2 d=4294967296 e=0xffff88808db9cae2'),
      L(3, 'a=word b=12 c=3 d=-2147483647 e=0xffffffffffffffff'),
      L(4, 'a=2 a=7 b=0x1f c=04'),
      L(5, 'x=1'),
      L(6, 'a=0x0001 e=0x01'),
      L(7, 'e=0x1'),
      '',
    ].join('\n');
    const { cols } = await columnsOf(text);
    expectLikeRegex(cols, regexEvents(text));
  });

  it('at most perName fields an event name: the values of the rest counted and named, not kept', async () => {
    const text = ['# tracer: nop', '  t-1 [000] ...1. 1.000001: ev: a=1 b=2 c=3 d=4', '  t-1 [000] ...1. 1.000002: ev: a=1 e=5', ''].join('\n');
    const { cols } = await columnsOf(text, 2);
    expect(cols.fields()).toEqual([
      {
        event: 'ev',
        fields: [
          { name: 'a', numeric: true },
          { name: 'b', numeric: true },
        ],
      },
    ]);
    expect(cols.skipped()).toEqual({ values: 3, first: ['ev: c', 'ev: d', 'ev: e'] });
    expect([...cols.numbers('c')].every((v) => v !== v)).toBe(true);
  });
});
