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
  /** the stacks, in `map`'s buffer past the map (populationInto), as a Simulation puts them */
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
if (job.pop.sab !== job.map) throw new Error("the race worker's stacks must lie in the map's buffer (populationInto)");
const { words, depths } = populationViews(job.pop);
const hashes = Int32Array.from(words, (w, i) => map.hash(w, depths[i]));
const at = Int32Array.from(words, (w) => w.byteOffset);
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
  // every entry, so each is raced: insertAt (the WebAssembly hit first where the Memory is given),
  // hashing and given the hash, and the JS path alone, hashing and given the hash
  const k = i & 3;
  const r =
    k === 0
      ? map.insertAt(job.cpu, words[s], depths[s], at[s])
      : k === 1
        ? map.insertHashed(job.cpu, words[s], depths[s], hashes[s])
        : k === 2
          ? map.insertAt(job.cpu, words[s], depths[s], at[s], hashes[s])
          : map.insert(job.cpu, words[s], depths[s]);
  if (r >= 0) slots++;
  else fallbacks++;
}
parentPort!.postMessage({ cpu: job.cpu, slots, fallbacks } satisfies RaceResult);
