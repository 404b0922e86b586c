// summarize's top stacks and counts, held to a plain count over the records: each record that
// stands for a known stack (a resolved or unverified cookie, a full stack) keyed by its frames'
// text, counted in a Map, ordered by count and then by its first record (the second method; the
// capture's columns are what both read).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateSample } from '../sim/sample-capture.ts';
import { sampleFiles } from '../sim/sample-files.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { hasStack } from './cookie-index.ts';
import { statusTally, summarize } from './summary.ts';
import { RecordKind, RecordStatus, STATUS_NAMES } from './trace-columns-data.ts';
import { handCapture, sampleCapture } from '../testing/explorer-fixtures.ts';
import type { Capture } from './ingest.ts';

/** A frame's function: its text up to the `+` of its offset (the generated kernel's names have none). */
const fn = (frame: string) => (frame.includes('+') ? frame.slice(0, frame.indexOf('+')) : frame);

function plainTop(c: Capture, n: number, byFunction = false): { count: number; frames: string[] }[] {
  const t = c.trace;
  const byKey = new Map<string, { count: number; first: number; frames: string[] }>();
  for (let i = 0; i < t.recordCount; i++) {
    const kind = t.recKind.get(i);
    const st = t.recStatus.get(i);
    const cookie = kind === RecordKind.CookieV7 || kind === RecordKind.CookieV8;
    if (cookie ? !hasStack(st) : st !== RecordStatus.Full) continue;
    const site = c.stacks.framesOf(t.recStack.get(i));
    const frames = byFunction ? site.map(fn) : site;
    const key = frames.join('\n');
    const e = byKey.get(key);
    if (e) e.count++;
    else byKey.set(key, { count: 1, first: i, frames });
  }
  return [...byKey.values()]
    .sort((a, b) => b.count - a.count || a.first - b.first)
    .slice(0, n)
    .map(({ count, frames }) => ({ count, frames }));
}

describe('summarize: the top stacks against a plain count of the records by their frames', () => {
  it('by call site, on generated captures (ties among the rarer stacks included), any N', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 60 }), (seed, n) => {
        const sample = generateSample({ seed, cpus: 2, events: 300, resets: 1, bits: 12, tail: 10 });
        const c = ingestFiles(sampleFiles(sample));
        const s = summarize(c, n, 'site');
        expect(s.top).toEqual(plainTop(c, n));
        expect(s.top.length).toBe(Math.min(n, new Set(plainTop(c, 1e9).map((r) => r.frames.join('\n'))).size));
      }),
      { numRuns: 25 },
    );
  });

  it('by function: stacks that differ only in their offsets are one, counted together, first seen first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 60 }), (seed, n) => {
        const sample = generateSample({ seed, cpus: 2, events: 300, resets: 1, bits: 12, tail: 10 });
        const c = ingestFiles(sampleFiles(sample));
        expect(summarize(c, n, 'function').top).toEqual(plainTop(c, n, true));
      }),
      { numRuns: 25 },
    );
  });
});

describe('statusTally', () => {
  it.each([
    ['the hand capture (v8)', handCapture],
    ['the sample', sampleCapture],
  ])('%s: the records and the cookies by status, as a plain count of the columns gives them, counted once', (_, make) => {
    const c = make();
    const t = c.trace;
    const kinds = t.recKind.raw();
    const statuses = t.recStatus.raw();
    const every = new Array<number>(STATUS_NAMES.length).fill(0);
    const cookie = new Array<number>(STATUS_NAMES.length).fill(0);
    let cookies = 0;
    for (let r = 0; r < t.recordCount; r++) {
      every[statuses[r]]++;
      if (kinds[r] === RecordKind.CookieV7 || kinds[r] === RecordKind.CookieV8) {
        cookie[statuses[r]]++;
        cookies++;
      }
    }
    const tally = statusTally(c);
    expect(Array.from(tally.byStatus)).toEqual(every);
    expect(Array.from(tally.cookieStatus)).toEqual(cookie);
    expect(tally.cookies).toBe(cookies);
    expect(tally.resolved).toBe(cookie[RecordStatus.Resolved] + cookie[RecordStatus.Unverified]);
    // the summary and a second ask read the same tally: one pass per capture
    expect(summarize(c).cookies).toBe(cookies);
    expect(statusTally(c)).toBe(tally);
  });
});

describe('statusTally of the embedded sample, against awk over its files', () => {
  it('cookies, their v8 generations and the full stacks, as awk counts their lines in public/samples', () => {
    const dir = join(import.meta.dirname, '../../../public/samples');
    const names = readdirSync(dir).filter((n) => n !== 'index.json');
    const c = ingestFiles(names.map((n) => [n, new Uint8Array(readFileSync(join(dir, n)))] as [string, Uint8Array]));
    const awk = (program: string) => execFileSync('awk', [program, join(dir, 'trace')], { encoding: 'utf8' }).trim();
    // a cookie line ends `<stack_id N>` or `<stack_id N gen G>`; a full stack starts at `<stack trace>`
    const cookies = Number(awk('/<stack_id [0-9]+( gen [0-9]+)?>[ \\t]*$/ { n++ } END { print n + 0 }'));
    const gens = awk(
      'match($0, /<stack_id [0-9]+ gen [0-9]+>/) { s = substr($0, RSTART, RLENGTH); sub(/.* gen /, "", s); sub(/>/, "", s); g[s] = 1 } END { for (k in g) print k }',
    )
      .split('\n')
      .map(Number)
      .sort((a, b) => a - b);
    const fulls = Number(awk('/<stack trace>[ \\t]*$/ { n++ } END { print n + 0 }'));
    const tally = statusTally(c);
    expect(cookies).toBeGreaterThan(3000);
    expect(tally.cookies).toBe(cookies);
    expect([...tally.cookieGens].sort((a, b) => a - b)).toEqual(gens);
    expect(tally.byStatus[RecordStatus.Full]).toBe(fulls);
    // every record is a cookie or a full stack in the sample
    expect(tally.byStatus.reduce((n, x) => n + x, 0)).toBe(cookies + fulls);
  });
});
