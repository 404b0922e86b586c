import { describe, expect, it } from 'vitest';
import { createLiveBuffer, EVENT_KINDS, LANE_STATE, Live, LOG_ENTRIES } from './live.ts';
import { C, createMapBuffer, INSERT_FALLBACK, type Mode } from './map-layout.ts';
import { SharedStackMap, type MapEventKind } from './shared-map.ts';
import { buildPopulation } from './workload.ts';

const pop = buildPopulation({ kind: 'population', stacks: 50, zipf: 0, depthMin: 4, depthMax: 12, seed: 3 });

function traced(mode: Mode, bits = 10) {
  const p = { mode, bits, cpus: 1, hashSeed: 99 };
  const events: [MapEventKind, number][] = [];
  const map = new SharedStackMap(createMapBuffer(p), p, { onEvent: (k, slot) => events.push([k, slot]) });
  return { map, events };
}

describe('live hooks', () => {
  it('the insert path reports claim, publish and hit; a claimed key with no element is unpublished, or a gravestone with the pool empty', () => {
    const { map, events } = traced('v7');
    const s = map.insert(0, pop.words[0], pop.depths[0]);
    map.insert(0, pop.words[0], pop.depths[0]);
    expect(events).toEqual([
      ['claim', s],
      ['publish', s],
      ['hit', s],
    ]);
    // another CPU claimed the key and has not published: v7 waits for it (the v8 letter records
    // such a stack "in full instead of waiting"); in one thread nobody publishes, so the bounded
    // wait gives up and the stack is recorded in full
    events.length = 0;
    const h = map.hash(pop.words[1], pop.depths[1]);
    const start = map.startIndex(h);
    Atomics.store(map.u32, map.keysAt + start, h);
    expect(map.insert(0, pop.words[1], pop.depths[1])).toBe(INSERT_FALLBACK);
    expect(events).toEqual([
      ['unpublished', start],
      ['fallback-inflight', start],
    ]);
    // with the pool empty the same key is reported as a gravestone
    Atomics.store(map.i32, C.NEXT_ELT, map.capacity);
    events.length = 0;
    map.insert(0, pop.words[1], pop.depths[1]);
    expect(events).toEqual([
      ['gravestone', start],
      ['fallback-gravestone', start],
    ]);
    // v4 (no seed) advances past it and publishes a second copy
    const v4 = traced('v4');
    const h4 = v4.map.hash(pop.words[1], pop.depths[1]);
    const start4 = v4.map.startIndex(h4);
    Atomics.store(v4.map.u32, v4.map.keysAt + start4, h4);
    const dup = v4.map.insert(0, pop.words[1], pop.depths[1]);
    expect(v4.events.map((e) => e[0])).toEqual(['unpublished', 'claim', 'publish', 'duplicate']);
    expect(dup).not.toBe(start4);
    Atomics.store(v4.map.i32, C.NEXT_ELT, v4.map.capacity);
    v4.events.length = 0;
    v4.map.insert(0, pop.words[1], pop.depths[1]);
    expect(v4.events).toEqual([
      ['gravestone', start4],
      ['hit', dup],
    ]);
    events.length = 0;
    const v8 = traced('v8');
    const h2 = v8.map.hash(pop.words[2], pop.depths[2]);
    Atomics.store(v8.map.u32, v8.map.keysAt + v8.map.startIndex(h2), h2);
    Atomics.store(v8.map.i32, C.NEXT_ELT, v8.map.capacity);
    v8.map.insert(0, pop.words[2], pop.depths[2]);
    expect(v8.events.map((e) => e[0])).toEqual(['gravestone', 'fallback-gravestone']);
  });

  it('the reset path reports its steps, and EBUSY', () => {
    const { map, events } = traced('v8');
    map.insert(0, pop.words[0], pop.depths[0]);
    events.length = 0;
    expect(map.reset(() => expect(map.reset()).toBe('ebusy'))).toBe('ok');
    expect(events.map((e) => e[0])).toEqual(['reset-flag', 'reset-drained', 'ebusy', 'reset-cleared', 'reset-done']);
  });

  it('an entry whose writer took its index but has not yet published it is read later, not lost (a descheduled writer)', () => {
    const cpus = 2;
    const live = new Live(createLiveBuffer(cpus), cpus, performance.timeOrigin + performance.now());
    live.event('duplicate', 1, 7, 1);
    // a writer's first step, by hand: it takes index 1 (the cursor, word 0) and is stopped before it writes
    const pending = Atomics.add(live.i32, 0, 1);
    live.event('estale', -1, -1, 2); // a later writer finishes first
    const a = live.readLog(0);
    expect(a.entries.map((e) => e.kind)).toEqual(['duplicate']);
    expect(a.next).toBe(pending);
    expect(a.skipped).toBe(0);
    // the stopped writer resumes: its entry at the layout the header describes (48 words, 52 a CPU, 6 an entry), seq last
    const at = 48 + cpus * 52 + pending * 6;
    live.i32.set([EVENT_KINDS.indexOf('free-wait'), -1, 1, 2, 5], at + 1);
    Atomics.store(live.i32, at, pending + 1);
    const b = live.readLog(a.next);
    expect(b.entries.map((e) => [e.kind, e.slot])).toEqual([
      ['free-wait', 1],
      ['estale', -1],
    ]);
    expect(b.skipped).toBe(0);
  });

  it('the live buffer logs notable events (not the quiet ones), keeps exact totals, and the lanes their recent records', () => {
    const live = new Live(createLiveBuffer(2), 2, performance.timeOrigin + performance.now());
    live.event('claim', 0, 5, 1);
    live.event('duplicate', 1, 7, 1);
    live.event('estale', -1, -1, 2);
    const a = live.readLog(0);
    expect(a.entries.map((e) => [e.kind, e.cpu, e.slot, e.generation])).toEqual([
      ['duplicate', 1, 7, 1],
      ['estale', -1, -1, 2],
    ]);
    expect(live.total('claim')).toBe(1);
    expect(live.readLog(a.next).entries).toEqual([]);
    for (let i = 0; i < LOG_ENTRIES + 10; i++) live.event('bypass', 0, -1, 1);
    const b = live.readLog(a.next);
    expect(b.entries.length).toBe(LOG_ENTRIES);
    expect(b.skipped).toBe(10);
    expect(live.total('bypass')).toBe(LOG_ENTRIES + 10);
    live.setState(1, LANE_STATE.CLAIMED, 9, 3);
    for (let i = 0; i < 20; i++) live.record(1, 4, i, 3, i);
    const lane = live.laneView(1);
    expect(lane).toMatchObject({ state: LANE_STATE.CLAIMED, slot: 9, generation: 3 });
    expect(lane.recent[0].slot).toBe(19);
    expect(lane.recent.length).toBe(12);
  });
});
