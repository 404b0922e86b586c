import { openAsBlob, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadFiles } from '../capture/load.ts';
import { fieldsByEvent, numericFields } from './weighted-view.ts';

// The fields a filter or a weight may name, against a second reading of the sample trace: a regex
// over its event lines, `EVENT: key=value ...`. A filter compares any decimal or 0x number (64
// bits: ptr=0xffff88808db9cae2 too); a weight only those a double holds exactly (15 decimal digits,
// 13 hex: payload-fields.ts fieldInteger).

const TRACE = new URL('../../../public/samples/trace', import.meta.url).pathname;

function regexReading() {
  const byEvent = new Map<string, Map<string, boolean>>();
  const numericEvents = new Map<string, number>();
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
  }
  return { byEvent, numericEvents };
}

describe('the fields of a capture, for a filter and a weight', async () => {
  const detailed = await loadFiles([{ name: 'trace', blob: await openAsBlob(TRACE) }], { details: true });
  const want = regexReading();

  it('fieldsByEvent: each event name with its payload keys, numeric where one of its events has a number there', () => {
    const got = fieldsByEvent(detailed);
    expect(got.map((e) => e.event)).toEqual([...want.byEvent.keys()].sort());
    expect(got.length).toBeGreaterThanOrEqual(2);
    for (const e of got) {
      const w = want.byEvent.get(e.event)!;
      expect(Object.fromEntries(e.fields.map((f) => [f.name, f.numeric])), e.event).toEqual(Object.fromEntries(w));
    }
    // both kinds present: bytes_alloc and the 64-bit ptr numeric, gfp_flags not
    const alloc = got.find((e) => e.event === 'kmem_cache_alloc')!.fields;
    expect(alloc.find((f) => f.name === 'bytes_alloc')?.numeric).toBe(true);
    expect(alloc.find((f) => f.name === 'ptr')?.numeric).toBe(true);
    expect(alloc.find((f) => f.name === 'gfp_flags')?.numeric).toBe(false);
  });

  it('fieldsByEvent: at most the fields and events asked', () => {
    const got = fieldsByEvent(detailed, 2, 1);
    expect(got.length).toBe(1);
    expect(got[0].fields.length).toBe(2);
  });

  it('numericFields: the keys a weight can be, with how many events hold such a number there, the most common first', () => {
    const got = numericFields(detailed);
    expect(got.map((f) => f.name)).not.toContain('ptr');
    expect(Object.fromEntries(got.map((f) => [f.name, f.events]))).toEqual(Object.fromEntries(want.numericEvents));
    for (let i = 1; i < got.length; i++) expect(got[i - 1].events).toBeGreaterThanOrEqual(got[i].events);
  });
});
