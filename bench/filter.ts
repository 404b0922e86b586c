// The event filter's cost and the memory of a field kept (issue 35). Two captures of ~100 MiB of
// kmem_cache_alloc and sched_wakeup events with stack records and dumps, from two generators:
// `cli generate --mb 100` (one generation, every record a cookie; its bytes_req and bytes_alloc
// then rewritten to random values 1..8192, seeded) and the sample's generator
// (src/core/sim/sample-capture.ts generateSample scaled up: four generations, a dump per
// generation, full stacks where the v8 map falls back, lost markers). Both are cached in /tmp.
//
//   npx tsx bench/filter.ts [--mb 100] [--rounds 3] [--json] [--smoke]
//
// Rows (bench contract, see bench/README.md):
//   filter-ratio-105mb: loadFiles + summarize in one child process per capture, A (no filter) and
//     B (LoadOptions.filter = EventFilter.parse(['kmem_cache_alloc: bytes_alloc > 512'])) alternating
//     (ABBA...), --rounds each; the median of each, value = B/A, the worse capture's; target <= 1.5.
//     The command line once each (`summary --json` and `summary --json --filter F`, through tsx)
//     in the note: there the unfiltered read of a large trace has a second thread and the
//     filtered one does not (load.ts).
//   filter-fields-bytes-per-event: what a loaded capture holds per event after GC (heapUsed +
//     arrayBuffers, node --expose-gc), beyond the stack table and what the other files hold
//     alone, plus what its fields kept add: every field of every event as typed columns
//     (field-columns.ts, from the files read again with `details: true`, the detailed capture
//     dropped), as the worker keeps them; the worse capture's; target <= 40 B/event. What one
//     weighted view of them then adds (weightedView(data, columns, 'bytes_alloc'): its record
//     weights) is a peer. In the peers: the capture alone, with
//     ExplorerData (the full-width columns the worker builds with or without a field), and all.
// --smoke: ~1 MiB captures, 1 round, no targets.
import { arg, flag } from './args.ts';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openAsBlob,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CACHE_ROOT, generated } from './generated.ts';
import { heldBytes } from './ingest-rows.ts';
import type { Row } from './contract.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..');
const SMOKE = flag('--smoke');
const MB = Number(arg('--mb', SMOKE ? '1' : '100'));
const ROUNDS = Math.max(1, Number(arg('--rounds', SMOKE ? '1' : '3')));
const JSON_OUT = flag('--json');
const FILTER = 'kmem_cache_alloc: bytes_alloc > 512';
const FIELD = 'bytes_alloc';
const log = (s: string) => (JSON_OUT ? process.stderr.write(s + '\n') : console.log(s));

interface TimeChild {
  files: number;
  mb: number;
  a: number[];
  b: number[];
  eventsA: number;
  eventsB: number;
  recordsA: number;
  recordsB: number;
}
interface MemoryChild {
  events: number;
  records: number;
  stackBytes: number;
  restBytes: number;
  /** bytes per event beyond the stack table and the other files: the capture, + ExplorerData, + the weighted view */
  capture: number;
  data: number;
  view: number;
  /** the capture and what its fields kept add to ExplorerData (every field's columns): what keeping the fields costs over the capture */
  field: number;
  /** what one weighted view then adds (its record weights) */
  viewAdds: number;
  /** the trace columns' buffers, the view's weights and the field columns, per event */
  columns: number;
  weights: number;
  fieldColumns: number;
  unweighed: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((p, q) => p - q);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// ---------------------------------------------------------------- inputs

/** A seeded xorshift32 in [0, 1). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

/** `cli generate --mb MB`, with bytes_req and bytes_alloc rewritten to random values (the other files linked). */
function generateShape(mb: number): string {
  const cap = generated(['--mb', String(mb), '--mode', 'v8', '--seed', '35']);
  const dir = `${cap.dir}-randpayload`;
  if (existsSync(join(dir, 'done'))) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const f of cap.files) if (!f.endsWith('/trace')) symlinkSync(f, join(dir, f.slice(f.lastIndexOf('/') + 1)));
  const text = readFileSync(join(cap.dir, 'trace'), 'latin1');
  const r = rng(35);
  const out = text.replace(/ bytes_(req|alloc)=\d+/g, (_m, k: string) => ` bytes_${k}=${1 + Math.floor(r() * 8192)}`);
  writeFileSync(join(dir, 'trace'), out, 'latin1');
  writeFileSync(join(dir, 'done'), '');
  return dir;
}

/** The sample's generator with enough events for ~MB MiB of trace, its files written as make-sample does. */
async function sampleShape(mb: number): Promise<string> {
  const h = createHash('sha1');
  for (const f of [
    'src/core/sim/sample-capture.ts',
    'src/core/sim/sample-files.ts',
    'src/core/sim/kernel-symbols.ts',
    'src/core/formats/trace-text-write.ts',
    'src/core/formats/stack-map-write.ts',
  ])
    h.update(readFileSync(join(repo, f)));
  // the sample writes ~233 bytes of trace per event (a full stack where the map falls back)
  const events = Math.max(2000, Math.round((mb * 2 ** 20) / 233));
  const opts = { seed: 35, cpus: 4, events, resets: 3, bits: 14, tail: 40, lostMarkers: 2 };
  const dir = join(CACHE_ROOT, `filter-sample-${events}-${h.update(JSON.stringify(opts)).digest('hex').slice(0, 12)}`);
  if (existsSync(join(dir, 'done'))) return dir;
  const { generateSample } = await import('../src/core/sim/sample-capture.ts');
  const { sampleFiles } = await import('../src/core/sim/sample-files.ts');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = sampleFiles(generateSample(opts));
  for (const [name, bytes] of files) {
    const fd = openSync(join(dir, `${name}.part`), 'w');
    writeSync(fd, bytes);
    closeSync(fd);
    renameSync(join(dir, `${name}.part`), join(dir, name));
  }
  writeFileSync(join(dir, 'done'), '');
  return dir;
}

const captureFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f !== 'done' && !f.endsWith('.json'))
    .sort();

async function blobs(dir: string) {
  return Promise.all(captureFiles(dir).map(async (f) => ({ name: f, blob: await openAsBlob(join(dir, f)) })));
}

// ---------------------------------------------------------------- children

async function timeChild(dir: string, rounds: number): Promise<TimeChild> {
  const { loadFiles } = await import('../src/core/capture/load.ts');
  const { summarize } = await import('../src/core/capture/summary.ts');
  const { EventFilter } = await import('../src/core/capture/event-filter.ts');
  const named = await blobs(dir);
  const mb = named.reduce((n, f) => n + f.blob.size, 0) / 1e6;
  const out: TimeChild = { files: named.length, mb, a: [], b: [], eventsA: 0, eventsB: 0, recordsA: 0, recordsB: 0 };
  const run = async (filtered: boolean) => {
    const t = performance.now();
    const c = await loadFiles(named, filtered ? { filter: EventFilter.parse([FILTER]) } : {});
    const s = summarize(c);
    const ms = performance.now() - t;
    if (filtered) {
      out.b.push(ms);
      out.eventsB = s.events;
      out.recordsB = c.trace.recordCount;
    } else {
      out.a.push(ms);
      out.eventsA = s.events;
      out.recordsA = c.trace.recordCount;
    }
  };
  // A B, B A, A B, ...: neither side always runs first (after the other's garbage)
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [false, true] : [true, false];
    for (const f of order) await run(f);
  }
  return out;
}

async function memoryChild(dir: string): Promise<MemoryChild> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the memory child needs --expose-gc');
  const { loadFiles } = await import('../src/core/capture/load.ts');
  const { ExplorerData } = await import('../src/core/query/explorer-data.ts');
  const { weightedView } = await import('../src/core/query/weighted-view.ts');
  const { FieldColumns } = await import('../src/core/query/field-columns.ts');
  const named = await blobs(dir);
  // a loaded capture stays reachable until the event loop turns (what loadFiles left pending): wait for a timer, then collect
  const used = async () => {
    await new Promise((r) => setTimeout(r, 50));
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  // what the other files (dumps, kallsyms, stat) hold is not per event: measured without the trace, then taken off
  let m0 = await used();
  let rest: unknown = await loadFiles(named.filter((f) => f.name !== 'trace'));
  const restStacks = heldBytes((rest as { stacks: unknown }).stacks);
  const restBytes = (await used()) - m0 - restStacks;
  rest = null;
  m0 = await used();
  const c = await loadFiles(named);
  const m1 = await used();
  const stackBytes = heldBytes(c.stacks);
  const events = c.trace.eventCount;
  const d = new ExplorerData(c);
  const m2 = await used();
  let detailed: Awaited<ReturnType<typeof loadFiles>> | null = await loadFiles(named, { details: true });
  // every field of every event kept as typed columns (what the worker keeps), the detailed reading dropped
  const cols = FieldColumns.build(detailed.trace);
  detailed = null;
  const m3 = await used();
  // then one weighted view of them (a weight asked: its record weights)
  const view = weightedView(d, cols, FIELD);
  const m4 = await used();
  const per = (bytes: number) => (bytes - stackBytes - restBytes) / events;
  const out: MemoryChild = {
    events,
    records: c.trace.recordCount,
    stackBytes,
    restBytes,
    capture: per(m1 - m0),
    data: per(m2 - m0),
    view: per(m4 - m0),
    field: per(m1 - m0) + (m3 - m2) / events,
    viewAdds: (m4 - m3) / events,
    columns: heldBytes(c.trace, [c.stacks]) / events,
    weights: view.data.recWeight.byteLength / events,
    fieldColumns: cols.byteLength / events,
    unweighed: view.unweighed,
  };
  if (view.data.recordCount < 0 || d.recordCount < 0 || cols.events < 0) console.log(view, d, cols); // keep both alive up to the last reading
  return out;
}

function spawnChild<T>(kind: string, dir: string, rounds: number): T {
  const p = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '--max-old-space-size=8000',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--child',
      kind,
      '--input',
      dir,
      '--rounds',
      String(rounds),
    ],
    { cwd: repo, encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  if (p.status !== 0) throw new Error(`${kind} child failed on ${dir}: ${p.stderr.slice(-2000)}`);
  return JSON.parse(p.stdout.trim().split('\n').pop()!) as T;
}

/** The command line's summary --json, without and with the filter, once each (tsx from source: its start is in both). */
function cliOnce(dir: string): { a: number; b: number; eventsA: number; eventsB: number } {
  const files = captureFiles(dir).map((f) => join(dir, f));
  const once = (extra: string[]) => {
    const t = performance.now();
    const p = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'src/cli/main.ts'), 'summary', '--json', ...extra, ...files], {
      cwd: repo,
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    const ms = performance.now() - t;
    if (p.status !== 0) throw new Error(`summary ${extra.join(' ')} exited ${p.status}: ${p.stderr.slice(-1000)}`);
    return { ms, events: (JSON.parse(p.stdout) as { events: number }).events };
  };
  const a = once([]);
  const b = once(['--filter', FILTER]);
  return { a: a.ms, b: b.ms, eventsA: a.events, eventsB: b.events };
}

// ---------------------------------------------------------------- rows

async function main(): Promise<void> {
  const shapes = [
    { name: 'generate', dir: generateShape(MB) },
    { name: 'sample', dir: await sampleShape(MB) },
  ];
  const size = `${Math.round(MB * 1.048576)}mb`;
  const rows: Row[] = [];

  const times = shapes.map((s) => {
    const t = spawnChild<TimeChild>('time', s.dir, ROUNDS);
    const a = median(t.a);
    const b = median(t.b);
    const ratio = b / a;
    log(
      `${s.name}: A ${t.a.map((x) => x.toFixed(0)).join(', ')} ms, B ${t.b.map((x) => x.toFixed(0)).join(', ')} ms; median ${a.toFixed(0)} vs ${b.toFixed(0)} ms, B/A ${ratio.toFixed(2)} -- ${t.eventsA} events -> ${t.eventsB}, ${t.mb.toFixed(1)} MB`,
    );
    if (!(t.eventsA > 0) || !(t.eventsB > 0) || t.eventsB >= t.eventsA) throw new Error(`${s.name}: the filter kept ${t.eventsB} of ${t.eventsA} events`);
    return { ...s, t, a, b, ratio };
  });
  const worst = times.reduce((p, q) => (q.ratio > p.ratio ? q : p));
  const cli = cliOnce(shapes[0].dir);
  if (cli.eventsA !== times[0].t.eventsA || cli.eventsB !== times[0].t.eventsB)
    throw new Error(`the command line counted ${cli.eventsA} -> ${cli.eventsB} events, loadFiles ${times[0].t.eventsA} -> ${times[0].t.eventsB}`);
  log(`cli (generate): summary --json ${cli.a.toFixed(0)} ms, --filter ${cli.b.toFixed(0)} ms, ${(cli.b / cli.a).toFixed(2)}x`);
  const met = worst.ratio <= 1.5;
  rows.push({
    id: `filter-ratio-${size}`,
    what: `loadFiles + summarize with --filter '${FILTER}' (B) against no filter (A), in-process, alternating, median of ${ROUNDS} each; the worse of two ~${MB} MiB captures`,
    value: worst.ratio,
    unit: 'x',
    baseline: { what: `the same load unfiltered (A, ${worst.name} capture, median)`, value: worst.a, unit: 'ms' },
    goal: '<= 1.5x the unfiltered query',
    met,
    note:
      `${met ? 'pass' : 'miss'} (target 1.5). ` +
      times
        .map(
          (x) =>
            `${x.name} (${x.t.mb.toFixed(1)} MB, ${x.t.files} files): A ${x.a.toFixed(0)} ms, B ${x.b.toFixed(0)} ms, B/A ${x.ratio.toFixed(2)}, ${x.t.eventsA} -> ${x.t.eventsB} events, ${x.t.recordsA} -> ${x.t.recordsB} records`,
        )
        .join('; ') +
      `; command line once each on the generate capture (tsx): summary --json ${cli.a.toFixed(0)} ms, --filter ${cli.b.toFixed(0)} ms (${(cli.b / cli.a).toFixed(2)}x; unfiltered reads the trace on two threads, filtered on one)`,
  });

  const mem = shapes.map((s) => {
    const m = spawnChild<MemoryChild>('memory', s.dir, 1);
    log(
      `${s.name}: ${m.field.toFixed(1)} B/event the capture + its fields; ${m.capture.toFixed(1)} B/event the capture, ${m.data.toFixed(1)} with ExplorerData, ${m.view.toFixed(1)} with the ${FIELD} view (columns ${m.columns.toFixed(1)}, weights ${m.weights.toFixed(1)}, every field ${m.fieldColumns.toFixed(1)}) -- ${m.events} events, ${m.records} records`,
    );
    return { ...s, m };
  });
  const mw = mem.reduce((p, q) => (q.m.field > p.m.field ? q : p));
  const memMet = mw.m.field <= 40;
  rows.push({
    id: 'filter-fields-bytes-per-event',
    what: `memory a loaded capture holds per event with its fields kept: the capture plus every field as typed columns (FieldColumns, the detailed capture dropped), after GC (heapUsed + arrayBuffers), beyond the stack table and the other files; the worse of the two captures. ExplorerData's full-width columns, held with or without a field, are not in the value (see the peers)`,
    value: mw.m.field,
    unit: 'B/event',
    goal: '<= 40 B/event',
    met: memMet,
    peers: [
      { name: `the capture alone (${mw.name})`, value: mw.m.capture, unit: 'B/event' },
      { name: `the capture + ExplorerData (${mw.name})`, value: mw.m.data, unit: 'B/event' },
      { name: `the capture + ExplorerData + the view: all the worker holds (${mw.name})`, value: mw.m.view, unit: 'B/event' },
      { name: `the view's record weights (${mw.name})`, value: mw.m.weights, unit: 'B/event' },
      { name: `what a '${FIELD}' weighted view then adds, measured (${mw.name})`, value: mw.m.viewAdds, unit: 'B/event' },
      { name: `every field's columns (${mw.name})`, value: mw.m.fieldColumns, unit: 'B/event' },
    ],
    note:
      `${memMet ? 'pass' : 'miss'} (target 40). ` +
      mem
        .map(
          (x) =>
            `${x.name}: capture + field ${x.m.field.toFixed(1)}; capture ${x.m.capture.toFixed(1)}, + ExplorerData ${x.m.data.toFixed(1)}, + view ${x.m.view.toFixed(1)} B/event (trace columns ${x.m.columns.toFixed(1)}, weights ${x.m.weights.toFixed(1)}, every field's columns ${x.m.fieldColumns.toFixed(1)}); ${x.m.events} events, ${x.m.records} records, ${x.m.unweighed} unweighed; stack table ${x.m.stackBytes} and other files ${x.m.restBytes} bytes taken off`,
        )
        .join('; '),
  });

  if (SMOKE) {
    // at 1 MB the heap figures are within GC noise (they can come out negative): only the ratio and the buffers' sums must be there
    for (const x of mem) if (!(x.m.columns > 0) || !(x.m.weights > 0)) throw new Error(`${x.name}: no column bytes`);
    if (!((rows[0].value ?? 0) > 0)) throw new Error('no ratio');
    for (const r of rows) {
      delete r.met;
      if (!Number.isFinite(r.value ?? NaN)) r.value = 0;
    }
  }
  if (JSON_OUT) console.log(JSON.stringify({ rows }));
}

const child = arg('--child', '');
if (child === 'time') process.stdout.write(JSON.stringify(await timeChild(arg('--input', ''), ROUNDS)) + '\n');
else if (child === 'memory') process.stdout.write(JSON.stringify(await memoryChild(arg('--input', ''))) + '\n');
else await main();
