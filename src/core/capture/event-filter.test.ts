import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventFilter, textInteger, type FilterEvent } from './event-filter.ts';
import { FilterError, MAX_DEPTH } from './event-filter-parse.ts';

const ev = (name: string, payload: string, more: Partial<FilterEvent> = {}): FilterEvent => ({
  name,
  comm: 'kworker/0:1',
  pid: 88,
  cpu: 2,
  tgid: null,
  payload,
  ...more,
});
const match = (f: string | string[], e: FilterEvent) => EventFilter.parse(typeof f === 'string' ? [f] : f).matches(e);
const columnOf = (f: string): number => {
  try {
    EventFilter.parse([f]);
  } catch (e) {
    if (e instanceof FilterError) return e.column;
    throw e;
  }
  return 0;
};

describe('EventFilter on text payloads', () => {
  const alloc = ev('kmem_cache_alloc', 'call_site=init_file+0x80 ptr=0xffff8880c239548c bytes_req=500 bytes_alloc=512 gfp_flags=GFP_KERNEL node=-1');
  it('selects events by name, anchored, case-insensitive, as a basic regular expression', () => {
    expect(match('kmem_cache_alloc', alloc)).toBe(true);
    expect(match('KMEM_CACHE_ALLOC', alloc)).toBe(true);
    expect(match('kmem_cache_al', alloc)).toBe(false);
    expect(match('kmem_.*', alloc)).toBe(true);
    expect(match('sched_switch\\|kmem_cache_alloc', alloc)).toBe(true);
    // a bare | is a literal in a basic regular expression
    expect(match('sched_switch|kmem_cache_alloc', alloc)).toBe(false);
    expect(match('sched_switch, kmem_cache_alloc', alloc)).toBe(true);
    // no system in a text trace: SYSTEM/EVENT checks the event
    expect(match('kmem/kmem_cache_alloc', alloc)).toBe(true);
    expect(match('kmem', { ...alloc, system: 'kmem' })).toBe(true);
    expect(match('sched/kmem_cache_alloc', { ...alloc, system: 'kmem' })).toBe(false);
  });
  it('compares as unsigned 64-bit integers, arithmetic terms true when not 0', () => {
    expect(match('kmem_cache_alloc: bytes_alloc > 256', alloc)).toBe(true);
    expect(match('kmem_cache_alloc: bytes_alloc >= 0x200 && bytes_alloc <= 01000', alloc)).toBe(true);
    expect(match('kmem_cache_alloc: node == -1', alloc)).toBe(true);
    expect(match('kmem_cache_alloc: node < 0', alloc)).toBe(false);
    expect(match('kmem_cache_alloc: bytes_alloc & 256', alloc)).toBe(false);
    expect(match('kmem_cache_alloc: bytes_alloc & 512', alloc)).toBe(true);
    expect(match('kmem_cache_alloc: bytes_alloc % 3', alloc)).toBe(true);
    expect(match('kmem_cache_alloc: bytes_alloc - 512', alloc)).toBe(false);
    expect(match('kmem_cache_alloc: ptr > 0xffff888000000000', alloc)).toBe(true);
  });
  it('reads && and || left to right, ! of a comparison, parentheses', () => {
    expect(match('kmem_cache_alloc: CPU == 1 || bytes_alloc == 512 && CPU == 3', alloc)).toBe(false);
    expect(match('kmem_cache_alloc: CPU == 1 || (bytes_alloc == 512 && CPU == 2)', alloc)).toBe(true);
    expect(match('kmem_cache_alloc: !bytes_alloc == 512', alloc)).toBe(false);
    expect(match('kmem_cache_alloc: !(nosuch == 1)', alloc)).toBe(true);
    // an arithmetic term joined as a comparison is (trace-cmd 3.1 reads both so)
    expect(match('kmem_cache_alloc: bytes_alloc & 512 && CPU == 2', alloc)).toBe(true);
    expect(match('kmem_cache_alloc: CPU == 1 || bytes_alloc & 256', alloc)).toBe(false);
    expect(match('kmem_cache_alloc: nosuch == 1', alloc)).toBe(false);
  });
  it('compares strings exactly, regular expressions case-insensitive and unanchored', () => {
    expect(match('kmem_cache_alloc: COMM == "kworker/0:1"', alloc)).toBe(true);
    expect(match("kmem_cache_alloc: COMM == 'KWORKER/0:1'", alloc)).toBe(false);
    expect(match('kmem_cache_alloc: COMM =~ "WORK"', alloc)).toBe(true);
    expect(match('kmem_cache_alloc: COMM !~ "^work"', alloc)).toBe(true);
    expect(match('kmem_cache_alloc: gfp_flags == "GFP_KERNEL"', alloc)).toBe(true);
    expect(match('kmem_cache_alloc: common_pid == 88 && TGID == 88', alloc)).toBe(false);
    expect(match('kmem_cache_alloc: TGID == 88', { ...alloc, tgid: 88 })).toBe(true);
  });
  it('ORs several filters', () => {
    expect(match(['sched_switch', 'kmem_cache_alloc: CPU == 2'], alloc)).toBe(true);
    expect(match(['sched_switch', 'kmem_cache_alloc: CPU == 1'], alloc)).toBe(false);
  });
  it("reads payload integers whole, decimal or hex, negative ones as two's complement", () => {
    expect(textInteger('512')).toBe(512n);
    expect(textInteger('0x200')).toBe(512n);
    expect(textInteger('-1')).toBe((1n << 64n) - 1n);
    expect(textInteger('init_file+0x80')).toBe(undefined);
    expect(textInteger('')).toBe(undefined);
  });
});

describe('EventFilter errors name the column', () => {
  it.each([
    ['kmem_cache_alloc: bytes_alloc = 3', 31, 'expected an operator after'],
    ['kmem_cache_alloc: bytes_alloc ==', 33, 'expected a value'],
    ['kmem_cache_alloc: bytes_alloc == 512 &&', 40, "expected a comparison after '&&'"],
    ['kmem_cache_alloc: bytes_alloc & 256 == 256', 37, 'an arithmetic term is not compared further'],
    ['kmem_cache_alloc: (bytes_alloc == 512', 38, "expected ')'"],
    ['kmem_cache_alloc: bytes_alloc == 512)', 37, "expected '&&', '||' or the end"],
    ['kmem_cache_alloc: 512 == bytes_alloc', 19, 'expected a field name'],
    ['kmem_cache_alloc: bytes_req != bytes_alloc', 32, 'not a field'],
    ['kmem_cache_alloc: COMM > "a"', 24, 'a string compares only'],
    ['kmem_cache_alloc: COMM == "kworker', 27, 'unterminated string'],
    ['kmem_cache_alloc: bytes_alloc / 0', 33, 'division by zero'],
    ['kmem_cache_alloc:', 18, 'expected a filter after the colon'],
    [':bytes_alloc > 1', 1, 'expected an event name'],
    ['kmem_cache_alloc: CPU == 1 CPU == 2', 28, "expected '&&', '||'"],
    ['kmem_cache_alloc: ()', 20, 'expected a field name'],
    ['kmem_cache_alloc: COMM =~ "a[b"', 29, 'unterminated bracket'],
  ])('%s: column %i', (f, column, words) => {
    expect(columnOf(f)).toBe(column);
    expect(() => EventFilter.parse([f])).toThrow(words);
  });
  it('says which filter when there are several', () => {
    expect(() => EventFilter.parse(['sched_switch', 'x: a =='])).toThrow(FilterError);
  });
  it('refuses nesting past MAX_DEPTH instead of overflowing the stack', () => {
    const deep = 'e: ' + '('.repeat(MAX_DEPTH + 5) + 'a == 1' + ')'.repeat(MAX_DEPTH + 5);
    expect(() => EventFilter.parse([deep])).toThrow(FilterError);
    const bangs = 'e: ' + '!'.repeat(100_000) + 'a == 1';
    expect(() => EventFilter.parse([bangs])).toThrow(FilterError);
  });
});

describe('EventFilter properties', () => {
  const pieces = [
    'e',
    'kmem',
    ':',
    ',',
    '/',
    ' ',
    'a',
    'COMM',
    'CPU',
    '==',
    '!=',
    '>=',
    '<',
    '&',
    '%',
    '/',
    '=~',
    '!~',
    '&&',
    '||',
    '!',
    '(',
    ')',
    '"x"',
    "'y",
    '"',
    '0x1f',
    '0',
    '17',
    '-',
    '[',
    '\\(',
    '\\|',
    '*',
    '.',
  ];
  const filterText = fc.array(fc.constantFrom(...pieces), { maxLength: 30 }).map((a) => a.join(''));
  it('throws nothing but FilterError, and what it parses matches without throwing', () => {
    fc.assert(
      fc.property(fc.oneof(filterText, fc.string({ maxLength: 40 })), (t) => {
        let f: EventFilter;
        try {
          f = EventFilter.parse([t]);
        } catch (e) {
          expect(e).toBeInstanceOf(FilterError);
          expect((e as FilterError).column).toBeGreaterThanOrEqual(1);
          expect((e as FilterError).column).toBeLessThanOrEqual(t.length + 1);
          return;
        }
        f.matches(ev('e', 'a=1 b=x'));
        f.matches(ev('kmem', ''));
      }),
      { numRuns: 2000 },
    );
  });
  it('parses in time linear in the filter (counted by growth: 16x the text, at most ~16x the time)', () => {
    const unit = '(a == 1 || COMM =~ "x") && ';
    const time = (n: number) => {
      const text = 'e: ' + unit.repeat(n) + 'b != 2';
      const t0 = performance.now();
      for (let k = 0; k < 5; k++) EventFilter.parse([text]);
      return performance.now() - t0;
    };
    time(200);
    const small = Math.max(time(500), 1);
    const large = time(8000);
    // quadratic would be 256x
    expect(large / small).toBeLessThan(64);
    const names = (n: number) => {
      const text = 'kmem_cache_alloc,'.repeat(n) + 'x';
      const t0 = performance.now();
      EventFilter.parse([text]);
      return performance.now() - t0;
    };
    names(200);
    expect(names(16_000) / Math.max(names(1000), 1)).toBeLessThan(64);
  });
});
