import { describe, expect, it } from 'vitest';
import { ingestFiles } from '../../core/testing/test-helpers.ts';
import { computedFields, kernelFields } from './stat-fields.ts';

// The stat pane's split (issue 36): the kernel's fields under the kernel's names, and what the
// explorer computes apart. The expected keys are the seeds' words, not the code's:
// - the v7 document's example output of `cat stack_map_stat`;
// - the v8 cover letter: "stack_map_stat has one field per line, adds generation and capacity,
//   drops table_size and success_rate, and renames drops to fallbacks".

/** the v7 document's "Output::" block, verbatim */
const V7_DOC = 'entries: 2500 / 16384\ntable_size: 32768\nsuccesses: 148923\ndrops: 0\nsuccess_rate: 100%\n';
/** v8 as the letter describes it: one field per line; v7's keys less table_size and success_rate, drops renamed, generation and capacity added */
const V8_LETTER = 'generation: 3\nentries: 264\ncapacity: 16384\nsuccesses: 3990\nfallbacks: 10\n';

const statOf = (text: string) => ingestFiles([['stack_map_stat', text]]).stats[0];

describe("stack_map_stat on the page: the kernel's fields, and the explorer's apart", () => {
  it("v7 (the v7 document's example): every field the document prints, as printed, and nothing computed", () => {
    const stat = statOf(V7_DOC);
    expect(kernelFields(stat).map((f) => [f.key, f.value])).toEqual([
      ['entries', '2500 / 16384'],
      ['table_size', '32768'],
      ['successes', '148923'],
      ['drops', '0'],
      ['success_rate', '100%'],
    ]);
    expect(computedFields(stat)).toEqual([]);
  });

  it("v8 (the letter's fields): fallbacks, no drops, no table_size or success_rate among the kernel's", () => {
    const stat = statOf(V8_LETTER);
    const keys = kernelFields(stat).map((f) => f.key);
    expect(keys).toEqual(['generation', 'entries', 'capacity', 'successes', 'fallbacks']);
    expect(keys).not.toContain('drops');
    expect(keys).not.toContain('table_size');
    expect(keys).not.toContain('success_rate');
    expect(kernelFields(stat).find((f) => f.key === 'fallbacks')).toEqual({ key: 'fallbacks', value: '10', warn: true });
  });

  it("v8: the success share and the table size are the explorer's computation, labelled so, with their arithmetic", () => {
    const computed = computedFields(statOf(V8_LETTER));
    expect(computed.map((f) => f.id)).toEqual(['rate', 'table']);
    // 3990 / (3990 + 10), by hand: 99.75% shown to one decimal
    expect(computed[0]).toMatchObject({ label: 'stored as a cookie', value: `${(100 * (3990 / 4000)).toFixed(1)}%` });
    expect(computed[0].how).toContain('successes / (successes + fallbacks) = 3,990 / 4,000');
    expect(computed[0].how).toContain('v8 prints no success_rate');
    // the v7 document's "2x over-provisioned table" of 16384
    expect(computed[1]).toMatchObject({ label: 'hash table', value: '32,768 slots' });
    expect(computed[1].how).toContain('v8 prints no table_size');
    for (const f of computed) expect(f.label).not.toMatch(/^(success_rate|table_size)$/);
  });

  it('v7 without success_rate (the reader accepts it): the rate is computed, and says the file printed none', () => {
    const stat = statOf('entries: 10 / 1024\ntable_size: 2048\nsuccesses: 30\ndrops: 10\n');
    expect(kernelFields(stat).map((f) => f.key)).toEqual(['entries', 'table_size', 'successes', 'drops']);
    const computed = computedFields(stat);
    expect(computed.map((f) => [f.id, f.value])).toEqual([['rate', '75.0%']]);
    expect(computed[0].how).toContain('this file prints no success_rate');
  });
});
