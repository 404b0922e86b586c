// The simulator's insert path, hit case: one thread inserting stacks already in the map (what a
// CPU does for every event once the map is warm), ns per insert, best of 5. The v7 document
// gives ~50 ns per event for the kernel's own lookup.
// Usage: npx tsx bench/sim-insert.ts [--mode v7|v8] [--inserts N] [--dir DIR_OF_SIM_CORE]
import { pathToFileURL } from 'node:url';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : def;
};
const mode = arg('--mode', 'v7') as 'v7' | 'v8';
const inserts = Number(arg('--inserts', '2000000'));
const dir = arg('--dir', new URL('../src/core/sim/', import.meta.url).pathname);
const imp = (f: string) => import(pathToFileURL(dir + f).href);
const { createMapBuffer } = await imp('map-layout.ts');
const { SharedStackMap } = await imp('shared-map.ts');
const { buildPopulation } = await imp('workload.ts');

const pop = buildPopulation({ kind: 'population', stacks: 600, zipf: 0, depthMin: 8, depthMax: 20, seed: 1 });
const params = { mode, bits: 14, cpus: 1, hashSeed: 0x9e3779b9 };
const map = new SharedStackMap(createMapBuffer(params), params);
for (let i = 0; i < pop.words.length; i++) map.insert(0, pop.words[i], pop.depths[i]);
const order = new Uint16Array(inserts);
let x = 1;
for (let i = 0; i < inserts; i++) order[i] = (x = (x * 1103515245 + 12345) >>> 0) % pop.words.length;
let best = Infinity;
for (let round = 0; round < 5; round++) {
  const t = performance.now();
  for (let i = 0; i < inserts; i++) {
    const s = order[i];
    map.insert(0, pop.words[s], pop.depths[s]);
  }
  best = Math.min(best, ((performance.now() - t) * 1e6) / inserts);
}
process.stdout.write(JSON.stringify({ mode, nsPerInsert: Math.round(best * 10) / 10 }) + '\n');
