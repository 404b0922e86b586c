import { parentPort, workerData } from 'node:worker_threads';
import type { MapParams } from './map-layout.ts';
import { SharedStackMap } from './shared-map.ts';
import { populationViews, type PopulationShared } from './workload.ts';

/** A worker for insert-race.test.ts: `inserts` inserts of random stacks on one CPU, after every worker (and the test's own thread, where it counts itself in `sync`) is ready. */
export interface RaceJob {
  entry: string;
  map: SharedArrayBuffer;
  /** the Memory `map` is the buffer of (mapMemoryOf): the first-slot hits then run in WebAssembly */
  memory?: WebAssembly.Memory;
  params: MapParams;
  pop: PopulationShared;
  /** [0]: workers ready */
  sync: SharedArrayBuffer;
  cpu: number;
  inserts: number;
  /** draw among the first `stacks` of the population */
  stacks: number;
  /** MapOptions.raceWindowUs: each insert held between filling its element and publishing it */
  raceWindowUs?: number;
  /** MapOptions.claimRaceUs: each insert held between reading a key as empty and its cmpxchg */
  claimRaceUs?: number;
}

export interface RaceResult {
  cpu: number;
  /** inserts that returned a slot */
  slots: number;
  fallbacks: number;
}

const job = workerData as RaceJob;
const map = new SharedStackMap(job.map, job.params, { raceWindowUs: job.raceWindowUs, claimRaceUs: job.claimRaceUs, memory: job.memory });
const { words, depths } = populationViews(job.pop);
const hashes = words.map((w, i) => map.hash(w, depths[i]));
const sync = new Int32Array(job.sync);
Atomics.add(sync, 0, 1);
while (Atomics.load(sync, 0) < job.params.cpus) {
  /* spin: every worker starts inserting at about the same time */
}
let x = (job.cpu + 1) * 0x9e3779b1;
let slots = 0;
let fallbacks = 0;
for (let i = 0; i < job.inserts; i++) {
  x = (Math.imul(x, 1103515245) + 12345) >>> 0;
  const s = x % job.stacks;
  // both entries, so both are raced: the plain insert and the one given a cached hash
  const r = i & 1 ? map.insertHashed(job.cpu, words[s], depths[s], hashes[s]) : map.insert(job.cpu, words[s], depths[s]);
  if (r >= 0) slots++;
  else fallbacks++;
}
parentPort!.postMessage({ cpu: job.cpu, slots, fallbacks } satisfies RaceResult);
