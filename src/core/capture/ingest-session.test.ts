import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { frameKey, TRAMPOLINE, TRAMPOLINE_IP } from '../formats/frames.ts';
import { generateSample, type SampleOptions } from '../sim/sample-capture.ts';
import { Ingest, understood, type Capture } from './ingest.ts';
import { CaptureLoads, type LoadRequest } from './capture-loads.ts';
import { CancelledError, loadFiles, readFiles } from './load.ts';
import { summarize } from './summary.ts';
import { RecordStatus } from './trace-columns-data.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';

// the embedded sample, read from disk as the page and the command line read it
const SAMPLES = new URL('../../../public/samples/', import.meta.url);
const index = JSON.parse(readFileSync(new URL('index.json', SAMPLES), 'utf8')) as { options: SampleOptions; files: string[] };
const bytes = new Map(index.files.map((n) => [n, new Uint8Array(readFileSync(new URL(n, SAMPLES)))]));
const BINS = index.files.filter((n) => n.startsWith('stack_map_bin.'));
const ALL = index.files;

function feed(ingest: Ingest, names: readonly string[], chunk: number): void {
  for (const name of names) {
    const b = bytes.get(name)!;
    const p = ingest.open(name);
    for (let i = 0; i < b.length; i += chunk) p.push(b.subarray(i, i + chunk));
    p.end();
  }
}

function oneShot(names: readonly string[], chunk = 4096): Capture {
  const ingest = new Ingest();
  feed(ingest, names, chunk);
  return ingest.finish();
}

/** What a capture says, record by record: summary, every record's status and stack (as frames), every event. */
function fingerprint(c: Capture) {
  const t = c.trace;
  const records: string[] = [];
  for (let i = 0; i < t.recordCount; i++) {
    const s = t.recStack.get(i);
    records.push(`${t.recStatus.get(i)} ${t.recSlot.get(i)} ${t.recGen.get(i)} ${s < 0 ? '-' : c.stacks.framesOf(s).join(';')}`);
  }
  const events: string[] = [];
  for (let i = 0; i < t.eventCount; i++)
    events.push(`${t.evTs.get(i)} ${t.evCpu.get(i)} ${t.tasks.strings[t.evTask.get(i)]} ${t.names.strings[t.evName.get(i)]} ${t.evRecord.get(i)}`);
  return { summary: summarize(c), records, events };
}

// the generator's truth for the same capture: a second count of its distinct stacks
const truth = generateSample(index.options);
const hexKey = (ip: bigint) => (ip === TRAMPOLINE_IP ? TRAMPOLINE : '0x' + ip.toString(16));
const fullStacks = truth.lines.flatMap((l) => (l.type === 'stack' ? [l.frames.map(frameKey).join(';')] : []));
const dumpStacks = (key: (ip: bigint) => string) => truth.dumps.flatMap((d) => d.records.map((r) => Array.from(r.ips, key).join(';')));
const symbolized = (ip: bigint) => frameKey(truth.kernel.printFrame(ip));

describe('an ingest session continued by Add', () => {
  it.each([13, 4093])('trace, then the binary dumps and kallsyms, then the rest: the same as all at once (chunk %i)', (chunk) => {
    const ingest = new Ingest();
    feed(ingest, ['trace'], chunk);
    const first = ingest.finish();
    expect(summarize(first).unresolved).toBe(summarize(first).cookies); // no dump yet: nothing resolves
    feed(ingest, [...BINS, 'kallsyms'], chunk);
    const second = ingest.finish();
    expect(fingerprint(second)).toEqual(fingerprint(oneShot(['trace', ...BINS, 'kallsyms'])));
    feed(
      ingest,
      ALL.filter((n) => n !== 'trace' && !BINS.includes(n) && n !== 'kallsyms'),
      chunk,
    );
    const third = ingest.finish();
    const order = ['trace', ...BINS, 'kallsyms', ...ALL.filter((n) => n !== 'trace' && !BINS.includes(n) && n !== 'kallsyms')];
    expect(fingerprint(third)).toEqual(fingerprint(oneShot(order)));
    expect(summarize(third).uniqueStacks).toBe(new Set([...fullStacks, ...dumpStacks(symbolized)]).size);
  });

  it('raw-address stacks of a first finish do not linger once kallsyms comes', () => {
    const ingest = new Ingest();
    feed(ingest, ['trace', ...BINS], 4096);
    const hex = summarize(ingest.finish());
    // without symbols the dumps' stacks are hex and no longer merge with the trace's full stacks
    expect(hex.uniqueStacks).toBe(new Set([...fullStacks, ...dumpStacks(hexKey)]).size);
    feed(ingest, ['kallsyms'], 4096);
    const named = summarize(ingest.finish());
    expect(named.uniqueStacks).toBe(new Set([...fullStacks, ...dumpStacks(symbolized)]).size);
    expect(named.uniqueStacks).toBeLessThan(hex.uniqueStacks);
    expect(named).toEqual(summarize(oneShot(['trace', ...BINS, 'kallsyms'])));
  });

  it('a capture returned by finish stays as it was while the session reads and resolves more', () => {
    const ingest = new Ingest();
    feed(ingest, ['trace', BINS[0]], 4096);
    const first = ingest.finish();
    const before = fingerprint(first);
    feed(ingest, ['trace', ...BINS.slice(1), 'kallsyms'], 977);
    const second = ingest.finish();
    expect(second.trace.eventCount).toBe(2 * first.trace.eventCount);
    expect(fingerprint(first)).toEqual(before);
    expect(() => first.trace.sink()).toThrow(/read-only/);
    expect(() => first.stacks.intern(['x'])).toThrow(/read-only/);
  });

  it.each([7, 1024])('rollback of a load cut off mid-file returns the session to its mark (chunk %i)', (chunk) => {
    const ingest = new Ingest();
    feed(ingest, ['trace', ...BINS], chunk);
    const shown = ingest.finish();
    const want = fingerprint(shown);
    const mark = ingest.mark();
    // a whole trace and kallsyms, then half of a text dump, then the load stops
    feed(ingest, ['trace', 'kallsyms'], chunk);
    const half = bytes.get('stack_map.gen3')!;
    const p = ingest.open('stack_map.gen3');
    for (let i = 0; i < half.length / 2; i += chunk) p.push(half.subarray(i, i + chunk));
    ingest.report('bundle.tar', 'cut short', 12);
    ingest.rollback(mark);
    expect(fingerprint(ingest.finish())).toEqual(want);
    expect(fingerprint(shown)).toEqual(want);
    // and the session goes on as if the cancelled load had never been
    feed(ingest, ['kallsyms', 'stack_map.gen3', 'stack_map_stat'], chunk);
    expect(fingerprint(ingest.finish())).toEqual(fingerprint(oneShot(['trace', ...BINS, 'kallsyms', 'stack_map.gen3', 'stack_map_stat'], chunk)));
  });

  it('a rollback past a finish (a load taken back after it completed) gives the earlier capture again', () => {
    const ingest = new Ingest();
    feed(ingest, ['trace'], 4096);
    const want = fingerprint(ingest.finish());
    const mark = ingest.mark();
    feed(ingest, [...BINS, 'kallsyms'], 4096);
    const added = ingest.finish();
    expect(summarize(added).resolved).toBeGreaterThan(0);
    ingest.rollback(mark);
    expect(fingerprint(ingest.finish())).toEqual(want);
  });

  it('loadFiles continuing a session: cancel rolls it back, the next Add reads only its own files', async () => {
    const blob = (n: string) => ({ name: n, blob: new Blob([bytes.get(n)! as Uint8Array<ArrayBuffer>]) });
    const ingest = new Ingest();
    const first = await loadFiles([blob('trace')], { session: ingest });
    const want = fingerprint(first);
    let chunks = 0;
    await expect(readFiles(ingest, [blob('kallsyms'), blob('trace')], { isCancelled: () => ++chunks > 2 })).rejects.toBeInstanceOf(CancelledError);
    expect(fingerprint(ingest.finish())).toEqual(want);
    let read = 0;
    const added = await loadFiles([...BINS, 'kallsyms'].map(blob), { session: ingest, onProgress: (p) => (read = p.totalBytes), progressEveryMs: 0 });
    expect(read).toBe([...BINS, 'kallsyms'].reduce((n, f) => n + bytes.get(f)!.length, 0));
    expect(fingerprint(added)).toEqual(fingerprint(oneShot(['trace', ...BINS, 'kallsyms'])));
  });

  it("a second finish does not repeat the first one's diagnostics", () => {
    // a symbol file from another boot: every dump address misses, which finish reports
    const other = 'ffffffff00001000 T elsewhere\nffffffff00002000 T beyond\n';
    const ingest = new Ingest();
    feed(ingest, ['trace', BINS[0]], 4096);
    const p = ingest.open('System.map');
    p.push(new TextEncoder().encode(other));
    p.end();
    const a = ingest.finish().diagnostics;
    const b = ingest.finish().diagnostics;
    expect(a.filter((d) => d.message.includes('fall outside every symbol'))).toHaveLength(1);
    expect(b).toEqual(a);
  });

  /** a trace and a file of noise opened in one ingest: the ingest and whether each was understood */
  const traceAndNoise = () => {
    const ingest = new Ingest();
    const reports = ['trace', 'noise'].map((name) => {
      const p = ingest.open(name);
      p.push(name === 'trace' ? bytes.get('trace')!.subarray(0, 5000) : new Uint8Array([0, 1, 2, 250, 9, 0, 7]));
      return p.end();
    });
    return { ingest, understood: reports.map(understood) };
  };

  it('files it cannot read are told apart from files it read', () => {
    expect(traceAndNoise().understood).toEqual([true, false]);
  });

  realIt('files it cannot read are told apart from files it read: a real trace.dat after them is read', () => {
    const { ingest, understood: first } = traceAndNoise();
    expect(first).toEqual([true, false]);
    const dat = ingest.open('trace.dat');
    dat.push(realTrace('trappy-trace.dat'));
    const r = dat.end();
    expect(r.kind).toBe('trace_cmd_dat');
    expect(understood(r)).toBe(true); // read since issue 12.2
  });

  it('counts full-stack records of the trace toward unique stacks', () => {
    const c = oneShot(['trace']);
    let full = 0;
    for (let i = 0; i < c.trace.recordCount; i++) if (c.trace.recStatus.get(i) === RecordStatus.Full) full++;
    expect(full).toBe(fullStacks.length);
    expect(summarize(c).uniqueStacks).toBe(new Set(fullStacks).size);
  });
});

describe("CaptureLoads: the worker's loads, one at a time", () => {
  const blob = (n: string) => ({ name: n, blob: new Blob([bytes.get(n)! as Uint8Array<ArrayBuffer>]) });
  let seq = 0;
  const req = (mode: LoadRequest['mode'], names: string[]): LoadRequest => ({ id: ++seq, mode, files: names.map(blob) });
  const fresh = () => new CaptureLoads((c) => summarize(c));
  const want = (names: string[]) => summarize(oneShot(names));

  it('Add continues the capture, Replace starts anew, an unreadable load keeps the capture and says what it got', async () => {
    const loads = fresh();
    await loads.load(req('replace', ['trace']));
    const added = await loads.load(req('add', [...BINS, 'kallsyms']));
    expect(added.outcome === 'loaded' && added.built).toEqual(want(['trace', ...BINS, 'kallsyms']));
    const junk = { id: ++seq, mode: 'add' as const, files: [{ name: 'noise.bin', blob: new Blob([new Uint8Array([0, 1, 2, 250, 9, 0, 7])]) }] };
    const rejected = await loads.load(junk);
    expect(rejected.outcome).toBe('rejected');
    if (rejected.outcome === 'rejected') {
      expect(rejected.files.map((f) => [f.file, f.kind])).toEqual([['noise.bin', 'unknown']]);
      expect(rejected.diagnostics[0].message).toContain('not a known format');
    }
    expect(loads.current).toEqual(want(['trace', ...BINS, 'kallsyms']));
    // and the session was not touched: a further Add is still exact
    const more = await loads.load(req('add', ['stack_map_stat']));
    expect(more.outcome === 'loaded' && more.built).toEqual(want(['trace', ...BINS, 'kallsyms', 'stack_map_stat']));
    await loads.load(req('replace', ['kallsyms', 'trace']));
    expect(loads.current).toEqual(want(['kallsyms', 'trace']));
  });

  it('cancel(id) mid-load rejects it and keeps the capture; an Add after it is exact', async () => {
    const loads = fresh();
    await loads.load(req('replace', ['trace', BINS[0]]));
    const before = loads.current;
    const r = req('add', ['kallsyms', 'trace', ...BINS.slice(1)]);
    let reports = 0;
    const run = loads.load(r, { progressEveryMs: 0, onProgress: () => ++reports === 3 && loads.cancel(r.id) });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(loads.current).toBe(before);
    const next = await loads.load(req('add', BINS.slice(1)));
    expect(next.outcome === 'loaded' && next.built).toEqual(want(['trace', ...BINS]));
  });

  it("a cancel that arrives once every byte is read (the other thread's half awaited, the indexing report) still rejects it", async () => {
    const loads = fresh();
    await loads.load(req('replace', ['trace']));
    const before = loads.current;
    const r = req('add', [...BINS, 'kallsyms']);
    // the last report before finish(): the page's cancel, read by the worker at its first turn after the reading
    const run = loads.load(r, { progressEveryMs: 0, onProgress: (p) => p.phase === 'indexing' && loads.cancel(r.id) });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(loads.current).toBe(before);
    const next = await loads.load(req('add', ['kallsyms']));
    expect(next.outcome === 'loaded' && next.built).toEqual(want(['trace', 'kallsyms']));
  });

  it('a newer request cancels an older one, waiting or running; each cancel names its own load', async () => {
    const loads = fresh();
    await loads.load(req('replace', ['trace']));
    const a = req('add', [...BINS]);
    const b = req('add', ['kallsyms']);
    const c = req('add', ['stack_map_stat']);
    const ra = loads.load(a);
    const rb = loads.load(b);
    const rc = loads.load(c);
    // cancelling b (waiting) leaves c alone
    loads.cancel(b.id);
    await expect(ra).rejects.toBeInstanceOf(CancelledError);
    await expect(rb).rejects.toBeInstanceOf(CancelledError);
    const done = await rc;
    expect(done.outcome === 'loaded' && done.built).toEqual(want(['trace', 'stack_map_stat']));
  });

  it('a load cancelled after it finished is taken back, unless a newer one started', async () => {
    const loads = fresh();
    await loads.load(req('replace', ['trace']));
    const first = loads.current;
    const a = req('add', [...BINS, 'kallsyms']);
    await loads.load(a);
    loads.cancel(a.id); // the page dropped a's answer
    expect(loads.current).toBe(first);
    const b = req('add', ['kallsyms']);
    const rb = await loads.load(b);
    expect(rb.outcome === 'loaded' && rb.built).toEqual(want(['trace', 'kallsyms']));
    const r = req('replace', [...BINS]);
    await loads.load(r);
    await loads.load(req('add', ['trace']));
    loads.cancel(r.id); // too late: a newer load has started since
    expect(loads.current).toEqual(want([...BINS, 'trace']));
    // a Replace taken back gives the old capture and its session again
    const x = req('replace', ['stack_map_stat']);
    await loads.load(x);
    loads.cancel(x.id);
    const y = await loads.load(req('add', ['kallsyms']));
    expect(y.outcome === 'loaded' && y.built).toEqual(want([...BINS, 'trace', 'kallsyms']));
  });
});
