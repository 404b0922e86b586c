import { gzipSync } from 'node:zlib';
import { packTar } from 'modern-tar';
import { describe, expect, it, vi } from 'vitest';
import { GENERATIONS_HEAD, GENERATIONS_TAIL } from './derived.ts';
import { loadFiles, MEMBER_CAP } from './load.ts';
import { summarize } from './summary.ts';
import { Ingest } from './ingest.ts';
import { readTracePart } from './split-trace.ts';
import { tarOfOneByteMembers } from '../testing/hostile-inputs.ts';
import { awkSegments } from '../testing/awk-segments.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Issue 34, 15: costs in proportion to the input, measured by counting what is kept (reports,
// diagnostic objects), never by time. Scaled down from the adversary's inputs.

describe('an archive of many members no reader takes', () => {
  it(`3,000 one-byte members in a tar.gz: the first ${MEMBER_CAP} reported, the rest counted in one diagnostic`, async () => {
    const n = 3_000;
    const tar = tarOfOneByteMembers(n);
    const cap = await loadFiles([{ name: 'many.tar.gz', blob: new Blob([new Uint8Array(gzipSync(tar))]) }]);
    const members = cap.files.filter((f) => f.file.startsWith('many.tar.gz/'));
    expect(members.length).toBe(MEMBER_CAP);
    expect(members.every((f) => f.kind === 'unknown')).toBe(true);
    // diagnostic objects: at most one per member kept, and one for the rest
    expect(cap.diagnostics.length).toBeLessThanOrEqual(MEMBER_CAP + 1);
    const rest = cap.diagnostics.filter((d) => d.file === 'many.tar.gz');
    expect(rest.map((d) => d.message)).toEqual([
      `${n - MEMBER_CAP} more members that no reader takes (${n - MEMBER_CAP} bytes, the first many.tar.gz/m${MEMBER_CAP}), past the first ${MEMBER_CAP} reported one by one: not listed`,
    ]);
  });

  it(`30,000 one-byte members in a tar, then a trace: a reader opened for the first ${MEMBER_CAP} and the trace only, the rest counted from their sniff`, async () => {
    const n = 30_000;
    const trace = new TextEncoder().encode(manyGenerationsTrace(100));
    // the members' tar without its end blocks, then a tar of the trace with its own
    const tail = await packTar([{ header: { name: 'trace', size: trace.length, type: 'file' }, body: trace }]);
    const tar = new Uint8Array(n * 1024 + tail.length);
    tar.set(tarOfOneByteMembers(n).subarray(0, n * 1024));
    tar.set(tail, n * 1024);
    const session = new Ingest();
    const open = vi.spyOn(session, 'open');
    const cap = await loadFiles([{ name: 'many.tar', blob: new Blob([tar]) }], { session });
    // issue 34: each member was opened, read through its own streams and rolled back (400,000: 48 s)
    expect(open).toHaveBeenCalledTimes(MEMBER_CAP + 1);
    expect(cap.files.map((f) => f.kind)).toEqual([...Array<string>(MEMBER_CAP).fill('unknown'), 'trace_text']);
    expect(cap.files[MEMBER_CAP].file).toBe('many.tar/trace');
    expect(cap.files[MEMBER_CAP].lines?.used).toBeGreaterThan(0);
    expect(cap.diagnostics.filter((d) => d.file === 'many.tar').map((d) => d.message)).toEqual([
      `${n - MEMBER_CAP} more members that no reader takes (${n - MEMBER_CAP} bytes, the first many.tar/m${MEMBER_CAP}), past the first ${MEMBER_CAP} reported one by one: not listed`,
    ]);
  });

  it('a tar of a few members is reported member by member as before', async () => {
    const cap = await loadFiles([{ name: 'few.tar', blob: new Blob([tarOfOneByteMembers(3) as Uint8Array<ArrayBuffer>]) }]);
    expect(cap.files.map((f) => f.file)).toEqual(['few.tar/m0', 'few.tar/m1', 'few.tar/m2']);
    expect(cap.diagnostics.some((d) => d.file === 'few.tar')).toBe(false);
  });
});

/**
 * A v8 trace whose cookies name `n` generations (1..n), a few of them twice and every 50th event
 * with a full stack instead, and the kernel's header: the shape of the adversary's million.
 */
function manyGenerationsTrace(n: number): string {
  const out = ['# tracer: nop', '#'];
  for (let i = 1; i <= n; i++) {
    const ts = (1000 + i / 1e6).toFixed(6);
    const head = `    kworker/u8:2-88      [00${i % 4}] ...1.  ${ts}:`;
    out.push(`${head} kmem_cache_alloc: call_site=kmalloc_trace+0x25c ptr=0x${i.toString(16)}`);
    if (i % 50 === 0) out.push(`${head} <stack trace>`, ' => __kmalloc+0x294/0x3a0', ' => kmalloc_trace+0x260/0x330');
    else out.push(`${head} <stack_id ${i % 7} gen ${i}>`);
    if (i % 1000 === 0) out.push(`${head} kmem_cache_alloc: call_site=kmalloc_trace+0x25c ptr=0x0`, `${head} <stack_id 3 gen ${i - 1}>`);
  }
  return out.join('\n') + '\n';
}

describe('a trace of many generations', () => {
  it(`20,000 generations: the lists keep ${GENERATIONS_HEAD} + ${GENERATIONS_TAIL}, the JSON stays small, the totals count every record`, async () => {
    const text = manyGenerationsTrace(20_000);
    // the expectations, from the text itself
    const events = text.match(/: kmem_cache_alloc: /g)!.length;
    const cookieGens = [...text.matchAll(/<stack_id \d+ gen (\d+)>/g)].map((m) => Number(m[1]));
    const fulls = text.match(/<stack trace>/g)!.length;
    const distinct = [...new Set(cookieGens)].sort((a, b) => a - b);
    expect(distinct.length).toBeGreaterThan(GENERATIONS_HEAD + GENERATIONS_TAIL);
    const cap = await loadFiles([{ name: 'trace', blob: new Blob([text]) }]);
    const s = summarize(cap);
    expect([s.events, s.cookies, s.fullStacks]).toEqual([events, cookieGens.length, fulls]);
    expect(Object.values(s.status).reduce((a, b) => a + b, 0)).toBe(cookieGens.length + fulls);
    expect(s.status['no-dump']).toBe(cookieGens.length);
    // the list: the first generations in order and the last few, the rest counted
    const kept = GENERATIONS_HEAD + GENERATIONS_TAIL;
    expect(s.generations).toEqual([...distinct.slice(0, GENERATIONS_HEAD), ...distinct.slice(-GENERATIONS_TAIL)]);
    expect(s.generationsCut).toBe(distinct.length - kept);
    expect(s.derived.generations.map((g) => g.generation)).toEqual(s.generations);
    expect(s.derived.generationsCut).toBe(distinct.length - kept);
    // a listed generation's own stats are whole: its cookies as the text counts them
    for (const g of [s.derived.generations[0], s.derived.generations[kept - 1]]) {
      expect(g.cookies).toBe(cookieGens.filter((x) => x === g.generation).length);
    }
    expect(s.derived.ringBuffer.records.v8Cookies).toBe(cookieGens.length);
    expect(s.derived.ringBuffer.records.fullStacks).toBe(fulls);
    // one diagnostic says how many were left out, naming the file
    const said = s.diagnostics.filter((d) => /generations are left out/.test(d.message));
    expect(
      said.map((d) => [
        d.file,
        d.message
          .match(/^([\d,]+) of ([\d,]+) /)!
          .slice(1)
          .map((x) => Number(x.replace(/,/g, ''))),
      ]),
    ).toEqual([['trace', [distinct.length - kept, distinct.length]]]);
    // what --json prints (two-space indent): bounded by the kept generations, not the 20,000
    const json = JSON.stringify(s, null, 2);
    expect(json.length).toBeLessThan(kept * 600 + 20_000);
    expect(JSON.parse(json).generationsCut).toBe(distinct.length - kept);
  });

  it('a few generations are listed whole, with nothing cut and nothing said', async () => {
    const text = manyGenerationsTrace(30);
    const cap = await loadFiles([{ name: 'trace', blob: new Blob([text]) }]);
    const s = summarize(cap);
    const distinct = new Set([...text.matchAll(/gen (\d+)>/g)].map((m) => Number(m[1])));
    expect(s.generations.length).toBe(distinct.size);
    expect([s.generationsCut, s.derived.generationsCut]).toEqual([0, 0]);
    expect(s.diagnostics.some((d) => /left out/.test(d.message))).toBe(false);
  });
});

/** A trace of `n` events, each with a full stack of `depth` frames no other stack shares (`f<s>_<k>+0x..`). */
function distinctFramesTrace(n: number, depth: number): string {
  const out = ['# tracer: nop'];
  for (let s = 0; s < n; s++) {
    const head = `    kworker/u8:2-88      [00${s % 2}] ...1.  ${(100 + s / 1e6).toFixed(6)}:`;
    out.push(`${head} kmem_cache_alloc: call_site=x+0x1`, `${head} <stack trace>`);
    // the first frame of every stack is shared: a frame seen before costs nothing
    out.push(' => common_leaf+0x10/0x20');
    for (let k = 1; k < depth; k++) out.push(` => f${s}_${k}+0x${k.toString(16)}/0x100`);
  }
  return out.join('\n') + '\n';
}

/** The stacks a reader keeps under `limit` distinct frames, counted over the text: those before the first that needs a frame past it. */
function stacksWithin(text: string, limit: number): { stacks: number; line: number } {
  const seen = new Set<string>();
  const lines = text.split('\n');
  let stacks = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].endsWith('<stack trace>')) continue;
    let ok = true;
    for (let j = i + 1; j < lines.length && lines[j].startsWith(' => '); j++) {
      const key = / => (\S+)\/0x/.exec(lines[j])![1];
      if (!seen.has(key)) seen.add(key);
      if (seen.size > limit) ok = false;
    }
    if (!ok) return { stacks, line: i + 1 };
    stacks++;
  }
  return { stacks, line: -1 };
}

describe('a trace of more distinct frames than a file may add', () => {
  const limit = 1_000;
  const text = distinctFramesTrace(300, 12);
  const want = stacksWithin(text, limit);
  const events = text.match(/: kmem_cache_alloc: /g)!.length;
  const allStacks = text.match(/<stack trace>/g)!.length;

  it('read on one thread: the first stacks are kept, the rest said in one diagnostic at the line it stopped', () => {
    expect(want.stacks).toBeGreaterThan(40);
    expect(want.stacks).toBeLessThan(allStacks);
    const ingest = new Ingest({ frameLimit: limit });
    const p = ingest.open('trace');
    p.push(new TextEncoder().encode(text));
    p.end();
    const cap = ingest.finish();
    expect(cap.trace.recordCount).toBe(want.stacks);
    expect(cap.stacks.size).toBe(want.stacks);
    // the event of the stack record it stopped at is kept, nothing after it
    expect(cap.trace.eventCount).toBe(want.stacks + 1);
    const said = cap.diagnostics.filter((d) => /distinct frames/.test(d.message));
    expect(said.map((d) => [d.file, d.where])).toEqual([['trace', `line ${want.line}`]]);
    expect(said[0].message).toContain(`${events - want.stacks - 1} events, ${allStacks - want.stacks} stack records`);
    // the lines from there on are counted unused
    const lines = cap.files.find((f) => f.file === 'trace')!.lines!;
    expect(lines.used).toBe(want.line - 1);
    expect(lines.used + lines.unused).toBe(lines.total);
  });

  it('a second half read apart and absorbed: kept up to the same stack, one diagnostic', () => {
    // split at an event line near the middle, as the command line's second thread reads it
    const at = text.indexOf('\n    kworker', text.length >> 1) + 1;
    const ingest = new Ingest({ frameLimit: limit });
    const p = ingest.open('trace');
    p.push(new TextEncoder().encode(text.slice(0, at)));
    const part = readTracePart('trace');
    part.push(new TextEncoder().encode(text.slice(at)));
    p.end(part.end());
    const cap = ingest.finish();
    expect(cap.stacks.size).toBe(want.stacks);
    expect(cap.trace.recordCount).toBe(want.stacks);
    expect(cap.diagnostics.filter((d) => /distinct frames/.test(d.message)).length).toBe(1);
  });
});

describe('perf script of more distinct frames than a file may add', () => {
  it('the samples before the one past the limit are kept, one diagnostic at its header line', () => {
    const out: string[] = [];
    for (let s = 0; s < 200; s++) {
      out.push(`dd 1234 [000] ${(100 + s / 1e6).toFixed(6)}: 1 cycles:`);
      for (let k = 0; k < 10; k++) out.push(`\tffffffff81${String(s).padStart(4, '0')}${k}0 g${s}_${k}+0x${(k + 1).toString(16)} ([kernel.kallsyms])`);
      out.push('');
    }
    const text = out.join('\n');
    const limit = 555;
    // a second reading: frame keys (function+offset) in order of first sight, the first sample that needs one past the limit
    const seen = new Set<string>();
    let kept = 0;
    let stopLine = -1;
    const lines = text.split('\n');
    for (let i = 0; i < lines.length && stopLine < 0; i++) {
      if (!lines[i].endsWith(' cycles:')) continue;
      // a sample is taken when its frames end; those past the limit are not
      if (seen.size >= limit) stopLine = i + 1;
      else {
        for (let j = i + 1; (lines[j] ?? '').startsWith('\t'); j++) seen.add(/ (\S+) \(/.exec(lines[j])![1]);
        kept++;
      }
    }
    const ingest = new Ingest({ frameLimit: limit });
    const p = ingest.open('perf.txt');
    p.push(new TextEncoder().encode(text));
    p.end();
    const cap = ingest.finish();
    expect(cap.files[0].kind).toBe('perf_script');
    expect(cap.trace.recordCount).toBe(kept);
    const said = cap.diagnostics.filter((d) => /distinct frames/.test(d.message));
    expect(said.map((d) => d.where)).toEqual([`line ${stopLine}`]);
  });
});

/**
 * `events` events each with its v8 cookie; each event line carries `pad` payload bytes, so the
 * bytes per event (what the columns are sized from) are the caller's to vary along the file.
 */
function cookieLines(events: number, pad: number, from = 0): string {
  const out: string[] = [];
  const fill = 'x'.repeat(pad);
  for (let i = from; i < from + events; i++) {
    const ts = `${100 + Math.floor(i / 1e6)}.${String(i % 1e6).padStart(6, '0')}`;
    out.push(`       bash-4021  [00${i % 4}] ...1.  ${ts}: sched_wakeup: comm=${fill} pid=${i % 30000}\n`);
    out.push(`       bash-4021  [00${i % 4}] ...1.  ${ts}: <stack_id ${i % 4096} gen 1>\n`);
  }
  return out.join('');
}

describe('a large trace text file: its columns sized once from its size (columnSizer)', () => {
  /**
   * Loads `bytes` as one file, watching the columns' own `reserve`: `sized`, the event columns'
   * capacity after each reservation that grew them; `sizedBuffers`, each watched column's buffer
   * right after its first (null for one never reserved).
   */
  async function load(bytes: Uint8Array<ArrayBuffer>) {
    const ingest = new Ingest();
    const t = ingest.trace;
    const columns = () => [t.evTs, t.evCpu, t.recEvent, t.recGen];
    const sizedBuffers: (ArrayBufferLike | null)[] = columns().map(() => null);
    const sized: number[] = [];
    columns().forEach((c, i) => {
      const reserve = c.reserve.bind(c);
      c.reserve = (n: number) => {
        reserve(n);
        sizedBuffers[i] ??= c.raw().buffer;
        if (i === 0) sized.push(c.capacity);
      };
    });
    const cap = await loadFiles([{ name: 'trace', blob: new Blob([bytes]) }], { session: ingest });
    return { cap, ingest, sizedBuffers, columns, sized };
  }
  const encode = (text: string) => new TextEncoder().encode(text);

  it('a nearly even file: sized at 1/16 of its bytes, then no growth; what a finish keeps beyond the rows is under 1/16', async () => {
    const events = 60_000;
    // the first lines a little longer: the guess at half asks a few rows more, which the room made at 1/16 holds
    const head = 4_000;
    const { cap, sizedBuffers, columns, sized } = await load(encode(cookieLines(head, 12) + cookieLines(events - head, 10, head)));
    expect(sized.length).toBe(1);
    // counted by the text's maker, not by the reader
    expect([cap.trace.eventCount, cap.trace.recordCount]).toEqual([events, events]);
    expect(sizedBuffers.every((b) => b !== null)).toBe(true);
    // the buffers the first sizing made are the ones the rows ended in: no doubling, no copy after it
    expect(columns().map((c, i) => c.raw().buffer === sizedBuffers[i])).toEqual([true, true, true, true]);
    for (const c of columns()) {
      expect(c.capacity).toBeGreaterThanOrEqual(events);
      expect(c.capacity).toBeLessThanOrEqual(events * (1 + 1 / 16));
    }
    expect(cap.trace.evTs.raw()[events - 1]).toBeCloseTo(100 + (events - 1) / 1e6, 6);
  });

  it('a file denser in its second half: sized again at half, every row kept, the slack trimmed to under 1/16', async () => {
    const sparse = 20_000;
    const dense = 80_000;
    const { cap, ingest, sized } = await load(encode(cookieLines(sparse, 120) + cookieLines(dense, 4, sparse)));
    expect([cap.trace.eventCount, cap.trace.recordCount]).toEqual([sparse + dense, sparse + dense]);
    // the first guess, from the sparse head, falls short of every event; the second, at half, grows it
    expect(sized.length).toBe(2);
    expect(sized[0]).toBeLessThan(sparse + dense);
    expect(sized[1]).toBeGreaterThan(sized[0]);
    const ev = cap.trace.recEvent.raw();
    for (let r = 0; r < ev.length; r += 997) expect(ev[r]).toBe(r);
    for (const c of [ingest.trace.evTs, ingest.trace.recEvent]) expect(c.capacity).toBeLessThanOrEqual((sparse + dense) * (1 + 1 / 16));
  });

  realIt('a published atrace file, 48 copies end to end (4.7 MB): every event awk counts, sized once, the same buffers to the end', async () => {
    const one = realTrace('catapult-decompressed_atrace_data.txt');
    const copies = 48;
    const bytes = new Uint8Array(one.length * copies);
    for (let k = 0; k < copies; k++) bytes.set(one, k * one.length);
    const dir = mkdtempSync(join(tmpdir(), 'sized-'));
    const path = join(dir, 'trace');
    writeFileSync(path, bytes);
    // awk over the very bytes loaded (each copy steps back in time: a segment of its own)
    const awk = awkSegments([path]);
    const { cap, sizedBuffers, sized } = await load(bytes);
    expect(cap.trace.eventCount).toBe(awk.reduce((n, s) => n + s[2], 0));
    expect(cap.trace.recordCount).toBe(awk.reduce((n, s) => n + s[3], 0));
    expect(sized.length).toBe(1);
    expect(cap.trace.evTs.raw().buffer).toBe(sizedBuffers[0]);
    expect(cap.trace.evTs.raw().buffer.byteLength / 8).toBeLessThanOrEqual(cap.trace.eventCount * (1 + 1 / 16));
  });
});
