// The simulator's insert path, hit case (issue 11 point 7): W worker_threads (1, 2, 4), each a
// simulated CPU inserting stacks already in the map (what a CPU does for every event once the map
// is warm), on one SharedArrayBuffer. Each worker times chunks of CHUNK inserts and reports the
// median chunk's ns per insert, so a worker descheduled on this 2-core machine (4 workers) spoils
// a few chunks, not the figure. In the same run, alternating with it, the same loop doing only
// the hash (the baseline of the hashed rows) and doing nothing but pick the stack (the baseline of
// the cached-hash rows, where the caller hashed each stack once: `insertAt` given the hash, or
// `insertHashed` in map code without insertAt). The v7 document
// gives ~50 ns per event for the kernel's own lookup.
//
//   npx tsx bench/sim-insert.ts [--json] [--smoke] [--mode v7|v8] [--inserts N] [--rounds N] [--workers 1,2,4] [--dir SIM_DIR]
//   npx tsx bench/sim-insert.ts --against REV [--runs N]
//
// --dir loads the map from another copy of src/core/sim. --against REV copies src/core as of REV
// into a temp folder (package.json {"type":"module"}) and runs A (REV) and B (the tree) as
// alternating child processes, --runs times each, then prints each row's best of A and B and B/A,
// and for W > 1 also a `... together` line: the best of each side's median over the chunks that ran
// while another worker's did (runs where at least one chunk in ten did), since a run whose workers
// took turns on one core gives a 1-worker figure under a W-worker name.
// Every run checks that each insert hit and that the ref_counts grew by exactly the hits.
// With W > 1 the notes also say how many insert chunks ran while another worker's did (each
// chunk's middle inside another's span, on the process-wide monotonic clock, that span not cut by
// the scheduler) and their median
// apart: on this 2-core machine shared with others, W workers do not always run at once, and a
// chunk run alone pays no line transfer for the ref_counts the others wrote.
import { arg, coreAt } from './args.ts';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const CHUNK = 256;
const STACKS = 600;
const KINDS = ['empty', 'hash', 'insert', 'cached'] as const;
type Kind = (typeof KINDS)[number];
const MAP = { bits: 14, hashSeed: 0x9e3779b9 };
const POP = { kind: 'population', stacks: STACKS, zipf: 0, depthMin: 8, depthMax: 20, seed: 1 } as const;

interface Job {
  entry: string;
  dir: string;
  mode: 'v7' | 'v8';
  cpu: number;
  cpus: number;
  map: SharedArrayBuffer;
  /** the shared WebAssembly.Memory the map is the buffer of, where the map code makes one (its first-slot hits then run in WebAssembly) */
  memory?: WebAssembly.Memory;
  pop: { sab: SharedArrayBuffer; count: number; at?: number };
  sync: SharedArrayBuffer;
  inserts: number;
  rounds: number;
}
interface WorkerResult {
  cpu: number;
  /** median chunk ns per operation, per kind (null: the map has no such path) */
  ns: Record<Kind, number | null>;
  hits: number;
  misses: number;
  /** per timed chunk of the insert kinds: ns per insert, and its span (start, end) in process.hrtime ns */
  chunks: Record<'insert' | 'cached', { ns: Float64Array; spans: Float64Array } | null>;
}

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..');
const imp = (dir: string, f: string) => import(pathToFileURL(join(dir, f)).href);

async function main(): Promise<void> {
  const smoke = process.argv.includes('--smoke');
  const json = process.argv.includes('--json');
  const mode = arg('--mode', 'v7') as 'v7' | 'v8';
  const inserts = Number(arg('--inserts', smoke ? '4096' : '200000'));
  const rounds = Number(arg('--rounds', smoke ? '1' : '5'));
  const counts = arg('--workers', '1,2,4').split(',').map(Number);
  const dir = arg('--dir', join(repo, 'src/core/sim'));
  const rows: object[] = [];
  for (const w of counts) {
    const r = await runWorkers(dir, mode, w, inserts, rounds);
    const med = (k: Kind) => median(r.map((x) => x.ns[k]).filter((v): v is number => v !== null));
    const per = (k: Kind) => r.map((x) => (x.ns[k] === null ? '-' : x.ns[k]!.toFixed(1))).join(', ');
    const hit = med('insert');
    const hashOnly = med('hash');
    const empty = med('empty');
    const goal = (v: number) => (smoke ? {} : { goal: '<= 150 ns', met: v <= 150 });
    const together = (k: 'insert' | 'cached') => (w > 1 ? `; ${concurrency(r, k).text}` : '');
    // the median of the chunks that ran while another worker's did: what W workers at once cost
    const at = (k: 'insert' | 'cached') => (w > 1 ? { together: concurrency(r, k).together } : {});
    rows.push({
      id: `sim-insert-hit-${w}w`,
      what: `simulator ${mode} hit insert per worker, ${w} worker${w > 1 ? 's' : ''} on one map, hashing included (median ${CHUNK}-insert chunk)`,
      value: round1(hit),
      unit: 'ns',
      baseline: { what: 'the same loop hashing only (jhash2 over the stack)', value: round1(hashOnly), unit: 'ns' },
      ratio: round2(hit / round1(hashOnly)),
      ...goal(hit),
      note: `per worker: ${per('insert')} ns; hash only ${per('hash')} ns${together('insert')}`,
      ...at('insert'),
    });
    const cached = r.every((x) => x.ns.cached !== null) ? med('cached') : null;
    if (cached !== null)
      rows.push({
        id: `sim-insert-hit-nohash-${w}w`,
        what: `simulator ${mode} hit insert per worker, ${w} worker${w > 1 ? 's' : ''}, hash cached by the caller (excludes hashing; the kernel hashes every stack)`,
        value: round1(cached),
        unit: 'ns',
        baseline: { what: 'the same loop picking the stack only', value: round2(empty), unit: 'ns' },
        ...(round2(empty) > 0 ? { ratio: round2(cached / round2(empty)) } : {}),
        ...goal(cached),
        note: `per worker: ${per('cached')} ns${together('cached')}`,
        ...at('cached'),
      });
    if (!json) for (const row of rows.slice(-2)) console.log(human(row as Row));
  }
  if (json) process.stdout.write(JSON.stringify({ rows }) + '\n');
}

interface Row {
  id: string;
  value: number;
  unit: string;
  baseline: { value: number };
  ratio?: number;
  goal?: string;
  met?: boolean;
  note: string;
  together?: { share: number; ns: number | null };
}
function human(r: Row): string {
  return `${r.id.padEnd(24)} ${String(r.value).padStart(7)} ${r.unit}  (baseline ${r.baseline.value} ${r.unit}, ${r.ratio}x)${r.goal ? `  goal ${r.goal}: ${r.met ? 'met' : 'not met'}` : ''}  ${r.note}`;
}

/**
 * The share of the workers' timed chunks of kind `k` whose middle falls inside another worker's
 * chunk of that kind (the workers ran at once), and the median ns of those and of the rest.
 */
function concurrency(r: WorkerResult[], k: 'insert' | 'cached'): { text: string; together: { share: number; ns: number | null } } {
  // a chunk the scheduler cut in two spans the other workers' turn on the same core: only chunks
  // run through (at most twice the worker's median span) count as running
  const whole = r.map((x) => {
    const sp = x.chunks[k]?.spans;
    if (!sp) return [];
    const len = (c: number) => sp[2 * c + 1] - sp[2 * c];
    const limit = 2 * median(Array.from({ length: sp.length / 2 }, (_, c) => len(c)));
    return Array.from({ length: sp.length / 2 }, (_, c) => c).filter((c) => len(c) <= limit);
  });
  const running = r.map((x, i) => Float64Array.from(whole[i].flatMap((c) => [x.chunks[k]!.spans[2 * c], x.chunks[k]!.spans[2 * c + 1]])));
  const both: number[] = [];
  const alone: number[] = [];
  r.forEach((a, i) => {
    const ca = a.chunks[k];
    if (!ca) return;
    for (const c of whole[i]) {
      const mid = (ca.spans[2 * c] + ca.spans[2 * c + 1]) / 2;
      const inOther = running.some((sp, j) => j !== i && covers(sp, mid));
      (inOther ? both : alone).push(ca.ns[c]);
    }
  });
  const n = both.length + alone.length;
  const med = (v: number[]) => (v.length ? `${median(v).toFixed(1)} ns` : '-');
  const share = Math.round((100 * both.length) / Math.max(1, n));
  return {
    text: `${share}% of the whole chunks ran while another worker's did (their median ${med(both)}, the others' ${med(alone)})`,
    together: { share, ns: both.length ? round1(median(both)) : null },
  };
}
/** Whether time `t` lies inside one of the (start, end) spans, which follow each other in time. */
function covers(spans: Float64Array, t: number): boolean {
  let lo = 0;
  let hi = spans.length / 2 - 1;
  while (lo <= hi) {
    const m = (lo + hi) >> 1;
    if (spans[2 * m + 1] < t) lo = m + 1;
    else if (spans[2 * m] > t) hi = m - 1;
    else return true;
  }
  return false;
}

/** One map with every stack already inserted, W workers hitting it; checks every insert hit and no ref_count increment was lost. */
async function runWorkers(dir: string, mode: 'v7' | 'v8', cpus: number, inserts: number, rounds: number): Promise<WorkerResult[]> {
  const { createMapBuffer, mapBytes, mapMemoryOf } = await imp(dir, 'map-layout.ts');
  const { SharedStackMap } = await imp(dir, 'shared-map.ts');
  const { buildPopulation, populationBytes, populationInto } = await imp(dir, 'workload.ts');
  const params = { mode, cpus, ...MAP };
  const pop = buildPopulation(POP);
  // where the map code can, the stacks lie in the map's buffer past the map, as a Simulation puts them
  const inMap = typeof populationInto === 'function';
  const sab: SharedArrayBuffer = inMap ? createMapBuffer(params, populationBytes(pop.shared)) : createMapBuffer(params);
  const memory: WebAssembly.Memory | undefined = mapMemoryOf?.(sab);
  const shared = inMap ? populationInto(pop.shared, sab, mapBytes(MAP.bits, cpus)) : pop.shared;
  const map = new SharedStackMap(sab, params);
  const slots: number[] = pop.words.map((w: Uint32Array, i: number) => map.insert(0, w, pop.depths[i]));
  if (slots.some((s) => s < 0)) throw new Error('the warm-up inserts did not all find a slot');
  const refs = () => slots.reduce((n, s) => n + map.elementRef(map.published(s)), 0);
  const before = refs();
  const sync = new SharedArrayBuffer(8);
  const boot = new URL('../src/core/sim/node-worker-boot.mjs', import.meta.url);
  const results = await Promise.all(
    Array.from({ length: cpus }, (_, cpu) => {
      const job: Job = { entry: import.meta.url, dir, mode, cpu, cpus, map: sab, memory, pop: shared, sync, inserts, rounds };
      const w = new Worker(boot, { workerData: job });
      return new Promise<WorkerResult>((resolve, reject) => {
        w.once('message', (m: WorkerResult) => resolve(m));
        w.once('error', reject);
        w.once('exit', (code) => code !== 0 && reject(new Error(`worker ${cpu} exited with ${code}`)));
      }).finally(() => w.terminate());
    }),
  );
  const hits = results.reduce((n, r) => n + r.hits, 0);
  const misses = results.reduce((n, r) => n + r.misses, 0);
  if (misses !== 0) throw new Error(`${misses} of the inserts did not hit`);
  const grown = refs() - before;
  if (grown !== hits) throw new Error(`ref_counts grew by ${grown}, the workers counted ${hits} hits`);
  return results;
}

/** A simulated CPU: KINDS in turn (all workers in step), each timed per chunk; medians per kind. */
async function worker(job: Job): Promise<void> {
  const { SharedStackMap } = await imp(job.dir, 'shared-map.ts');
  const { populationViews } = await imp(job.dir, 'workload.ts');
  const map = new SharedStackMap(job.map, { mode: job.mode, cpus: job.cpus, ...MAP }, { memory: job.memory });
  const { words, depths } = populationViews(job.pop) as { words: Uint32Array[]; depths: number[] };
  const hashes = Int32Array.from(words, (w, i) => map.hash(w, depths[i]));
  // stacks in the map's buffer (runWorkers put them there where the map code can): inserted as the
  // simulator's CPUs insert them, with each one's byte in the buffer (cpu-loop.ts, insertAt)
  const offsets = typeof map.insertAt === 'function' && job.pop.sab === job.map ? Int32Array.from(words, (w) => w.byteOffset) : null;
  const hasCached = typeof map.insertHashed === 'function';
  const order = new Uint16Array(job.inserts);
  let x = (job.cpu + 1) * 0x9e3779b1;
  for (let i = 0; i < order.length; i++) order[i] = (x = (Math.imul(x, 1103515245) + 12345) >>> 0) % words.length;
  const chunks = Math.floor(job.inserts / CHUNK);
  const times: Record<Kind, Float64Array> = Object.fromEntries(KINDS.map((k) => [k, new Float64Array(chunks * job.rounds)])) as never;
  const spans: Record<Kind, Float64Array> = Object.fromEntries(KINDS.map((k) => [k, new Float64Array(2 * chunks * job.rounds)])) as never;
  const clock = () => Number(process.hrtime.bigint()); // one monotonic clock for every thread
  const sync = new Int32Array(job.sync);
  let step = 0;
  const barrier = () => {
    // every worker arrives before any starts the next kind, so kinds run concurrently across workers
    step++;
    Atomics.add(sync, 0, 1);
    while (Atomics.load(sync, 0) < step * job.cpus) Atomics.wait(sync, 0, Atomics.load(sync, 0), 5);
    Atomics.notify(sync, 0);
  };
  let hits = 0;
  let misses = 0;
  let sink = 0;
  for (let r = 0; r < job.rounds; r++) {
    for (const kind of KINDS) {
      barrier();
      if (kind === 'cached' && !hasCached) continue;
      const t = times[kind];
      for (let c = 0; c < chunks; c++) {
        const from = c * CHUNK;
        const at = clock(); // outside the timed part
        const start = performance.now();
        if (kind === 'empty') sink += loopEmpty(order, from, depths);
        else if (kind === 'hash') sink += loopHash(map, order, from, words, depths);
        else {
          const h =
            offsets !== null
              ? loopAt(map, job.cpu, order, from, words, depths, offsets, kind === 'insert' ? null : hashes)
              : kind === 'insert'
                ? loopInsert(map, job.cpu, order, from, words, depths)
                : loopCached(map, job.cpu, order, from, words, depths, hashes);
          hits += h;
          misses += CHUNK - h;
        }
        t[r * chunks + c] = ((performance.now() - start) * 1e6) / CHUNK;
        spans[kind][2 * (r * chunks + c)] = at;
        spans[kind][2 * (r * chunks + c) + 1] = clock();
      }
    }
  }
  if (sink === 0.5) console.log(sink);
  const ns = Object.fromEntries(KINDS.map((k) => [k, k === 'cached' && !hasCached ? null : median(Array.from(times[k]))])) as WorkerResult['ns'];
  const chunksOf = (k: 'insert' | 'cached') => (k === 'cached' && !hasCached ? null : { ns: times[k], spans: spans[k] });
  parentPort!.postMessage({ cpu: job.cpu, ns, hits, misses, chunks: { insert: chunksOf('insert'), cached: chunksOf('cached') } } satisfies WorkerResult);
}

function loopEmpty(order: Uint16Array, from: number, depths: number[]): number {
  let s = 0;
  for (let i = from; i < from + CHUNK; i++) s += depths[order[i]];
  return s;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyMap = any;
function loopHash(map: AnyMap, order: Uint16Array, from: number, words: Uint32Array[], depths: number[]): number {
  let s = 0;
  for (let i = from; i < from + CHUNK; i++) {
    const k = order[i];
    s ^= map.hash(words[k], depths[k]);
  }
  return s;
}
function loopInsert(map: AnyMap, cpu: number, order: Uint16Array, from: number, words: Uint32Array[], depths: number[]): number {
  let hits = 0;
  for (let i = from; i < from + CHUNK; i++) {
    const k = order[i];
    if (map.insert(cpu, words[k], depths[k]) >= 0) hits++;
  }
  return hits;
}
function loopAt(
  map: AnyMap,
  cpu: number,
  order: Uint16Array,
  from: number,
  words: Uint32Array[],
  depths: number[],
  at: Int32Array,
  hashes: Int32Array | null,
): number {
  let hits = 0;
  for (let i = from; i < from + CHUNK; i++) {
    const k = order[i];
    if (map.insertAt(cpu, words[k], depths[k], at[k], hashes === null ? 0 : hashes[k]) >= 0) hits++;
  }
  return hits;
}
function loopCached(map: AnyMap, cpu: number, order: Uint16Array, from: number, words: Uint32Array[], depths: number[], hashes: Int32Array): number {
  let hits = 0;
  for (let i = from; i < from + CHUNK; i++) {
    const k = order[i];
    if (map.insertHashed(cpu, words[k], depths[k], hashes[k]) >= 0) hits++;
  }
  return hits;
}

function median(v: number[]): number {
  if (v.length === 0) return NaN;
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
const round1 = (v: number) => Math.round(v * 10) / 10;
const round2 = (v: number) => Math.round(v * 100) / 100;

function compare(rev: string, runs: number): void {
  const tmp = coreAt(repo, rev, 'sim-insert-');
  try {
    const pass = ['--mode', '--inserts', '--rounds', '--workers'].flatMap((f) => (process.argv.includes(f) ? [f, arg(f, '')] : []));
    const run = (dir: string): Row[] => {
      const p = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--json', '--dir', dir, ...pass], {
        cwd: repo,
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      });
      if (p.status !== 0) throw new Error(p.stderr);
      return JSON.parse(p.stdout.trim().split('\n').pop()!).rows;
    };
    const best = new Map<string, { a: number[]; b: number[] }>();
    for (let i = 0; i < runs; i++) {
      for (const [side, dir] of [
        ['a', join(tmp, 'src/core/sim')],
        ['b', join(repo, 'src/core/sim')],
      ] as const) {
        const rows = run(dir);
        const tg = (r: Row) => (r.together ? ` (together ${r.together.ns ?? '-'} at ${r.together.share}%)` : '');
        console.log(`${side === 'a' ? 'A ' + rev.slice(0, 10) : 'B tree'} run ${i + 1}: ${rows.map((r) => `${r.id} ${r.value}${tg(r)}`).join(', ')}`);
        for (const r of rows) {
          const e = best.get(r.id) ?? { a: [], b: [] };
          e[side].push(r.value);
          best.set(r.id, e);
          // the chunks that ran while another worker's did, from runs where at least one in ten did
          if (r.together && r.together.ns !== null && r.together.share >= 10) {
            const t = best.get(`${r.id} together`) ?? { a: [], b: [] };
            t[side].push(r.together.ns);
            best.set(`${r.id} together`, t);
          }
        }
      }
    }
    for (const [id, { a, b }] of best) {
      const ma = a.length ? Math.min(...a) : NaN;
      const mb = b.length ? Math.min(...b) : NaN;
      console.log(JSON.stringify({ id, before: ma, after: mb, ratio: round2(mb / ma), runsA: a, runsB: b }));
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (!isMainThread) await worker(workerData as Job);
else if (arg('--against', '')) compare(arg('--against', ''), Number(arg('--runs', '3')));
else await main();
