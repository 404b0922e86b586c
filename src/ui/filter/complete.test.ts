import { describe, expect, it } from 'vitest';
import { complete, type FieldChoice } from './complete.ts';
import { EventFilter } from '../../core/capture/event-filter.ts';
import { FilterError } from '../../core/capture/event-filter-parse.ts';

const EVENTS = ['kmem_cache_alloc', 'kmem_cache_free', 'sched_wakeup'];
const FIELDS = new Map<string, FieldChoice[]>([
  [
    'kmem_cache_alloc',
    [
      { name: 'call_site', numeric: false },
      { name: 'bytes_req', numeric: true },
      { name: 'bytes_alloc', numeric: true },
      { name: 'gfp_flags', numeric: false },
    ],
  ],
  ['kmem_cache_free', [{ name: 'ptr', numeric: true }]],
  [
    'sched_wakeup',
    [
      { name: 'comm', numeric: false },
      { name: 'pid', numeric: true },
    ],
  ],
]);
const values = (text: string) => complete(text, EVENTS, FIELDS).map((c) => c.value);

/** a completed line parses as trace-cmd's filter once a comparison is added (the offer is well-formed) */
function parsesWith(line: string, rest: string): boolean {
  try {
    EventFilter.parse([line + rest]);
    return true;
  } catch (e) {
    if (e instanceof FilterError) return false;
    throw e;
  }
}

describe('completing a filter line', () => {
  it('event names before the colon, the next one after a comma', () => {
    expect(values('kmem')).toEqual(['kmem_cache_alloc', 'kmem_cache_free']);
    expect(values('')).toEqual(EVENTS);
    expect(values('kmem_cache_alloc, sch')).toEqual(['kmem_cache_alloc, sched_wakeup']);
    expect(values('KMEM_CACHE_F')).toEqual(['kmem_cache_free']);
  });

  it("after the colon the named event's own fields, text ones too, then COMM, common_pid, CPU and TGID", () => {
    const got = complete('kmem_cache_alloc: ', EVENTS, FIELDS);
    expect(got.map((c) => c.value)).toEqual(
      ['call_site', 'bytes_req', 'bytes_alloc', 'gfp_flags', 'COMM', 'common_pid', 'CPU', 'TGID'].map((f) => `kmem_cache_alloc: ${f}`),
    );
    expect(got.find((c) => c.value.endsWith('gfp_flags'))?.label).toBe('text');
    expect(got.find((c) => c.value.endsWith('bytes_alloc'))?.label).toBe('number');
    // sched_wakeup's fields are not kmem_cache_alloc's
    expect(values('kmem_cache_alloc: p')).toEqual([]);
    expect(values('sched_wakeup:p')).toEqual(['sched_wakeup: pid']);
  });

  it('each term after &&, ||, ( and !, not once its operator is typed', () => {
    expect(values('kmem_cache_alloc: bytes_alloc > 512 && gf')).toEqual(['kmem_cache_alloc: bytes_alloc > 512 && gfp_flags']);
    expect(values('kmem_cache_alloc: bytes_alloc > 512 ||bytes_r')).toEqual(['kmem_cache_alloc: bytes_alloc > 512 || bytes_req']);
    expect(values('kmem_cache_alloc: (bytes_alloc > 512) && !(call')).toEqual(['kmem_cache_alloc: (bytes_alloc > 512) && !(call_site']);
    expect(values('kmem_cache_alloc: bytes_alloc ')).toEqual([]);
    expect(values('kmem_cache_alloc: bytes_alloc >')).toEqual([]);
    expect(values('kmem_cache_alloc: bytes_alloc != 1')).toEqual([]);
    // a quoted value's characters are no operators
    expect(values('sched_wakeup: comm == "a&&b" && p')).toEqual(['sched_wakeup: comm == "a&&b" && pid']);
    expect(values('sched_wakeup: comm == "a && p')).toEqual([]);
  });

  it('several events: the fields of each; a pattern no event is called: every event’s', () => {
    expect(values('kmem_cache_free,sched_wakeup: p')).toEqual(['kmem_cache_free,sched_wakeup: ptr', 'kmem_cache_free,sched_wakeup: pid']);
    expect(values('kmem/kmem_cache_free: p')).toEqual(['kmem/kmem_cache_free: ptr']);
    expect(values('kmem_.*: p')).toEqual(['kmem_.*: ptr', 'kmem_.*: pid']);
  });

  it('every offer, with a comparison after it, is a filter trace-cmd’s syntax takes', () => {
    const lines = ['', 'kmem', 'kmem_cache_alloc:', 'kmem_cache_alloc: bytes_alloc > 512 && ', 'sched_wakeup: (pid == 1 || co'];
    for (const l of lines) {
      for (const v of values(l)) {
        const rest = v.includes(':') ? ' == 1' + ')'.repeat((v.match(/\(/g) ?? []).length - (v.match(/\)/g) ?? []).length) : ': pid == 1';
        expect(parsesWith(v, rest), v + rest).toBe(true);
      }
    }
  });
});
