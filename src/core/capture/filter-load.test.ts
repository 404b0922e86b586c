// The event filter applied while a text trace is read (trace-columns.ts: the column fast path
// takes an event, its payload then decides whether it stays), held to a regex reading of the
// sample's trace: the events a filter keeps and the stack records that follow them, read whole,
// in 1- and 7-byte chunks, and with the file renamed `unknown`.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EventFilter } from './event-filter.ts';
import { Ingest } from './ingest.ts';

const TRACE = readFileSync('public/samples/trace', 'utf8');

function load(name: string, chunk: number, filter: EventFilter) {
  const ingest = new Ingest({ filter });
  const bytes = new TextEncoder().encode(TRACE);
  const p = ingest.open(name);
  if (chunk <= 0) p.push(bytes);
  else for (let i = 0; i < bytes.length; i += chunk) p.push(bytes.subarray(i, i + chunk));
  p.end();
  return ingest.finish();
}

/** the second reading: per event line, its name, pid and bytes_alloc; a stack record line goes with the event before it on its CPU */
function byRegex(keep: (e: { name: string; pid: number; bytes: number | null }) => boolean): { events: number; records: number } {
  let events = 0;
  let records = 0;
  const kept = new Map<string, boolean>();
  for (const line of TRACE.split('\n')) {
    const m = /^\s*.+?-(\d+)\s+\[(\d+)\]\s+\S+\s+\d+\.\d+: (.*)$/.exec(line);
    if (!m) continue;
    const [, pid, cpu, rest] = m;
    if (rest.startsWith('<stack_id ') || rest === '<stack trace>') {
      if (kept.get(cpu)) records++;
      continue;
    }
    const ev = /^(\w+): (.*)$/.exec(rest);
    if (!ev) continue;
    const b = /(?:^| )bytes_alloc=(\d+)/.exec(ev[2]);
    const k = keep({ name: ev[1], pid: Number(pid), bytes: b ? Number(b[1]) : null });
    kept.set(cpu, k);
    if (k) events++;
  }
  return { events, records };
}

describe('a filter while a text trace is read', () => {
  const CASES: [string, (e: { name: string; pid: number; bytes: number | null }) => boolean][] = [
    ['kmem_cache_alloc: bytes_alloc > 512', (e) => e.name === 'kmem_cache_alloc' && e.bytes !== null && e.bytes > 512],
    ['sched_wakeup', (e) => e.name === 'sched_wakeup'],
    [
      'kmem_cache_alloc: common_pid == 1403 || bytes_alloc < 64',
      (e) => e.name === 'kmem_cache_alloc' && (e.pid === 1403 || (e.bytes !== null && e.bytes < 64)),
    ],
  ];
  for (const [text, keep] of CASES)
    it(`${text}: the events and stack records a regex reading keeps, in any chunks, renamed alike`, () => {
      const want = byRegex(keep);
      expect(want.events).toBeGreaterThan(0);
      for (const name of ['trace', 'unknown'])
        for (const chunk of [0, 1, 7]) {
          const c = load(name, chunk, EventFilter.parse([text]));
          expect([c.trace.evTs.length, c.trace.recEvent.length], `${name} ${chunk}`).toEqual([want.events, want.records]);
        }
    });
});
