import { describe, expect, it } from 'vitest';
import { HIT_GAVE_UP, hitOver, type HitFn } from './insert-wasm.ts';
import { C, CPU_STRIDE, CTL_WORDS, createMapBuffer, ELT_WORDS, K, mapBytes, mapMemoryOf, refLimit, SCRATCH_WORDS, type MapParams } from './map-layout.ts';
import { SharedStackMap } from './shared-map.ts';
import { buildPopulation, populationBytes, populationInto, populationViews } from './workload.ts';

// The WebAssembly hit called directly, apart from MapInsert: a map's words cannot show that it
// hits when called through the insert path, since the JS path it gives up to makes the same map.
// A stack inserted once by the JS path, then the hit over the map's memory: it must return the
// slot and count what a hit counts (ATTEMPTS, PROBES, SUCCESSES, ref_count), or give up having
// counted nothing.

const params: MapParams = { mode: 'v7', bits: 10, cpus: 2, hashSeed: 0x9e3779b9 };
const pop = buildPopulation({ kind: 'population', stacks: 8, zipf: 0, depthMin: 3, depthMax: 30, seed: 3 });

/** A map with the population in its buffer past the map (as a Simulation puts it), and the hit over its memory. */
function setUp(): { m: SharedStackMap; hit: HitFn; words: Uint32Array[]; depths: number[] } {
  const sab = createMapBuffer(params, populationBytes(pop.shared));
  const memory = mapMemoryOf(sab);
  if (memory === undefined) throw new Error('no shared WebAssembly.Memory in this Node');
  const hit = hitOver(memory);
  if (hit === null) throw new Error('no WebAssembly threads in this Node');
  const { words, depths } = populationViews(populationInto(pop.shared, sab, mapBytes(params.bits, params.cpus)));
  return { m: new SharedStackMap(sab, params, { wasm: false }), hit, words, depths };
}

/** hit()'s arguments for CPU `cpu` and a stack at byte `wordsAt` of the map's buffer (`hash` 0: it hashes) */
function call(hit: HitFn, m: SharedStackMap, cpu: number, wordsAt: number, nr: number, hash: number): number {
  return hit(
    4 * (CTL_WORDS + cpu * CPU_STRIDE),
    wordsAt,
    nr,
    params.hashSeed | 0,
    32 - (params.bits + 1),
    4 * m.keysAt,
    4 * m.valsAt,
    4 * m.eltsAt,
    refLimit(params.mode),
    hash,
    4 * (m.scratchAt + cpu * SCRATCH_WORDS),
  );
}

const cpuWords = (m: SharedStackMap, cpu: number) => Array.from(m.i32.subarray(m.cpuWord(cpu, 0), m.cpuWord(cpu, CPU_STRIDE)));
const refOf = (m: SharedStackMap, slot: number) => Atomics.load(m.u32, m.eltsAt + m.published(slot) * ELT_WORDS + 1);

describe('the WebAssembly hit, called directly', () => {
  for (const cached of [false, true])
    it(`hits a stack the JS path inserted: its slot, ATTEMPTS, PROBES and SUCCESSES and ref_count each one more, nothing else (${cached ? 'hash given' : 'it hashes'})`, () => {
      const { m, hit, words, depths } = setUp();
      for (const cpu of [0, 1]) {
        const i = 2 + cpu;
        const slot = m.insert(0, words[i], depths[i]);
        expect(slot).toBeGreaterThanOrEqual(0);
        expect(m.startIndex(m.hash(words[i], depths[i]))).toBe(slot); // an empty map: its first slot
        const before = cpuWords(m, cpu);
        const ref = refOf(m, slot);
        const keys = Array.from(m.i32.subarray(m.keysAt, m.scratchAt));
        const h = m.hash(words[i], depths[i]) | 0;
        expect(call(hit, m, cpu, words[i].byteOffset, depths[i], cached ? h : 0)).toBe(slot);
        const want = [...before];
        for (const k of [K.ATTEMPTS, K.PROBES, K.SUCCESSES]) want[k]++;
        expect(cpuWords(m, cpu)).toEqual(want); // the gate back to 0, the other counters as they were
        expect(refOf(m, slot)).toBe(ref + 1);
        // the generation read inside the read side, and the hash
        const out = m.scratchAt + cpu * SCRATCH_WORDS;
        expect(m.i32[out]).toBe(Atomics.load(m.i32, C.GENERATION));
        expect(m.i32[out + 1]).toBe(h);
        // nothing else of the map changed but that ref_count
        keys[m.eltsAt + m.published(slot) * ELT_WORDS + 1 - m.keysAt] = ref + 1;
        expect(Array.from(m.i32.subarray(m.keysAt, m.scratchAt))).toEqual(keys);
      }
    });

  it('gives up, counting nothing, on a stack not in the map, and with options/stackmap off', () => {
    const { m, hit, words, depths } = setUp();
    m.insert(0, words[0], depths[0]);
    const before = cpuWords(m, 0);
    expect(call(hit, m, 0, words[1].byteOffset, depths[1], 0)).toBe(HIT_GAVE_UP);
    expect(cpuWords(m, 0)).toEqual(before);
    expect(m.i32[m.scratchAt + 1]).toBe(m.hash(words[1], depths[1]) | 0); // the hash it made, for the JS path
    m.setOption(false);
    const off = cpuWords(m, 0);
    expect(call(hit, m, 0, words[0].byteOffset, depths[0], 0)).toBe(HIT_GAVE_UP);
    expect(cpuWords(m, 0)).toEqual(off);
  });
});
