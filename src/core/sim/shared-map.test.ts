import { describe, expect, it } from 'vitest';
import { BinDumpReader, decodeBinDump, ESTALE, readBinDump, readTextDump } from './dump-reader.ts';
import { stackHash } from './jhash.ts';
import { computeLedger } from './ledger.ts';
import { C, createMapBuffer, INSERT_BYPASS, INSERT_FALLBACK, INSERT_OFF, type Mode } from './map-layout.ts';
import { REC, Ring, RECORD_SIZE } from './ring.ts';
import { EBUSY, EINVAL, SharedStackMap } from './shared-map.ts';
import { buildPopulation } from './workload.ts';

const pop = buildPopulation({ kind: 'population', stacks: 3000, zipf: 0, depthMin: 4, depthMax: 16, seed: 7 });

function newMap(mode: Mode, bits = 12, cpus = 1): SharedStackMap {
  const p = { mode, bits, cpus, hashSeed: 0x1234567 };
  return new SharedStackMap(createMapBuffer(p), p);
}

describe('SharedStackMap (single thread)', () => {
  it('hashes as the kernel does: jhash2 over the ips as u32 words, start index hash >>> (32 - (bits + 1))', () => {
    const m = newMap('v7');
    for (let i = 0; i < 20; i++) {
      expect(m.hash(pop.words[i], pop.depths[i])).toBe(stackHash(pop.ips[i], 0x1234567));
    }
    const slot = m.insert(0, pop.words[0], pop.depths[0]);
    const h = stackHash(pop.ips[0], 0x1234567);
    expect(slot).toBe(h >>> (32 - 13));
    expect(m.key(slot)).toBe(h);
  });

  it('finds a stored stack again and counts its references', () => {
    for (const mode of ['v4', 'v7', 'v8'] as const) {
      const m = newMap(mode);
      const a = m.insert(0, pop.words[3], pop.depths[3]);
      expect(m.insert(0, pop.words[3], pop.depths[3])).toBe(a);
      expect(m.insert(0, pop.words[3], pop.depths[3])).toBe(a);
      expect(m.elementRef(m.published(a))).toBe(3);
      expect(Array.from(m.elementIps(m.published(a)))).toEqual(Array.from(pop.ips[3]));
      const c = m.counters();
      expect(c).toMatchObject({ attempts: 3, successes: 3, fallbacks: 0, newElements: 1 });
    }
  });

  it('runs the pool dry: gravestones stay claimed, the rest falls back, entries stop at capacity', () => {
    for (const mode of ['v7', 'v8'] as const) {
      const m = newMap(mode, 10);
      for (let i = 0; i < 3000; i++) m.insert(0, pop.words[i], pop.depths[i]);
      const c = m.counters();
      expect(m.entries).toBe(1024);
      expect(c.newElements).toBe(1024);
      expect(c.fallbacksPoolEmpty).toBeGreaterThan(0);
      expect(m.gravestones()).toBe(c.fallbacksPoolEmpty);
      expect(c.attempts).toBe(c.successes + c.fallbacks + c.bypasses);
      // every stored stack is still found
      let found = 0;
      for (let i = 0; i < 3000; i++) if (m.insert(0, pop.words[i], pop.depths[i]) >= 0) found++;
      expect(found).toBe(1024);
    }
  });

  it('resets: one at a time, inserts during one bypass, generation++, v4 refused while recording', () => {
    const m = newMap('v8');
    const s = m.insert(0, pop.words[1], pop.depths[1]);
    expect(s).toBeGreaterThanOrEqual(0);
    let inner = '';
    let during = 0;
    expect(
      m.reset(() => {
        inner = m.reset();
        during = m.insert(0, pop.words[1], pop.depths[1]);
      }),
    ).toBe('ok');
    expect(inner).toBe('ebusy');
    expect(during).toBe(INSERT_BYPASS);
    expect(m.generation).toBe(2);
    expect(m.entries).toBe(0);
    expect(m.published(s)).toBe(-1);
    const c = m.counters();
    expect(c).toMatchObject({ attempts: 2, successes: 1, fallbacks: 0, bypasses: 1 });
    expect(Atomics.load(m.i32, C.EBUSY)).toBe(1);

    const v4 = newMap('v4');
    expect(v4.reset()).toBe('refused');
    Atomics.store(v4.i32, C.RECORDING, 0);
    expect(v4.reset()).toBe('ok');
    expect(Atomics.load(v4.i32, C.REFUSED)).toBe(1);
  });

  // v8 letter: "If another context is inserting the same stack, that stack is recorded in full
  // instead of waiting" (so v7 waited); v7 document: only "the `cmpxchg` loser advances by one
  // slot and may insert the same stack again". v4 (no seed) advances past it.
  it('an unpublished element of the same hash: v8 records in full at once, v7 waits (bounded) and never inserts a second copy, v4 advances', () => {
    for (const mode of ['v4', 'v7', 'v8'] as const) {
      const m = newMap(mode);
      const w = pop.words[5];
      const h = m.hash(w, pop.depths[5]);
      // another context has claimed the key and not published yet (in this one thread it never will)
      Atomics.store(m.u32, m.keysAt + m.startIndex(h), h);
      const r = m.insert(0, w, pop.depths[5]);
      if (mode === 'v4') {
        expect(r).toBe((m.startIndex(h) + 1) & (m.slots - 1));
        expect(m.entries).toBe(1);
        continue;
      }
      // v7's wait is bounded (an NMI on the claiming CPU would otherwise spin forever): it gives up, in full
      expect(r).toBe(INSERT_FALLBACK);
      expect(m.counters()).toMatchObject({ fallbacks: 1, fallbacksInFlight: 1, newElements: 0 });
      expect(m.entries).toBe(0);
    }
  });
});

describe('writes to stack_map (v7 document: "Writing ``0`` or ``reset`` clears all entries.", "Reset returns ``-EBUSY`` only if another reset is already in progress."; v8 letter: "Reset is "echo 0 > stack_map" only", "until "free" is written to stack_map")', () => {
  /** a map holding 10 stacks, the option off (so v8's free may run) */
  function holding(mode: Mode): SharedStackMap {
    const m = newMap(mode);
    for (let i = 0; i < 10; i++) m.insert(0, pop.words[i], pop.depths[i]);
    m.setOption(false);
    if (mode === 'v4') Atomics.store(m.i32, C.RECORDING, 0); // v4 resets with tracing off
    return m;
  }
  // echo writes the word and a newline; a write(2) of the word alone is the same command
  const cases: [Mode, string, 'reset' | 'free' | null][] = [
    ['v7', '0', 'reset'],
    ['v7', '0\n', 'reset'],
    ['v7', 'reset', 'reset'],
    ['v7', 'reset\n', 'reset'],
    ['v7', 'free\n', null],
    ['v7', '1\n', null],
    ['v8', '0', 'reset'],
    ['v8', '0\n', 'reset'],
    ['v8', 'free', 'free'],
    ['v8', 'free\n', 'free'],
    ['v8', 'reset', null],
    ['v8', 'reset\n', null],
    ['v8', '1\n', null],
    // neither version names these
    ['v7', '', null],
    ['v8', '', null],
    ['v7', ' 0\n', null],
    ['v8', '0 \n', null],
    ['v7', 'reset\n\n', null],
    ['v8', 'free\n\n', null],
    ['v7', 'RESET\n', null],
    ['v8', 'FREE\n', null],
  ];
  it.each(cases)('%s: %j is %s', (mode, text, command) => {
    const m = holding(mode);
    const gen = m.generation;
    const w = m.write(text);
    expect(w.command).toBe(command);
    if (command === null) {
      // not a command: -EINVAL, and the map untouched
      expect(w.ret).toBe(-EINVAL);
      expect([m.entries, m.generation, m.allocated]).toEqual([10, gen, true]);
    } else if (command === 'reset') {
      // "clears all entries"; write(2) returns the bytes it took
      expect(w).toMatchObject({ ret: text.length, reset: 'ok' });
      expect([m.entries, m.generation, m.allocated]).toEqual([0, gen + 1, true]);
    } else {
      // free: the map released (stack_map then reads "stackmap not initialized")
      expect(w).toMatchObject({ ret: text.length, free: 'ok' });
      expect(m.allocated).toBe(false);
      expect(readTextDump(m).uninitialized).toBe(true);
    }
  });

  it("v4 (no seed) takes v7's words", () => {
    for (const text of ['0\n', 'reset\n']) expect(holding('v4').write(text)).toMatchObject({ ret: text.length, command: 'reset', reset: 'ok' });
    expect(holding('v4').write('free\n')).toEqual({ ret: -EINVAL, command: null });
  });

  it("-EBUSY: a reset while another is in progress; v8's free while options/stackmap is on", () => {
    for (const mode of ['v7', 'v8'] as const) {
      const m = holding(mode);
      let inner = null as ReturnType<SharedStackMap['write']> | null;
      expect(m.write('0\n', { beforeClear: () => (inner = m.write('0\n')) }).ret).toBe(2);
      expect(inner).toEqual({ ret: -EBUSY, command: 'reset', reset: 'ebusy' });
    }
    const m = holding('v8');
    m.setOption(true);
    expect(m.write('free\n')).toEqual({ ret: -EBUSY, command: 'free', free: 'busy' });
    expect(m.allocated).toBe(true);
  });
});

describe('when the map exists (v8 letter: "The map is allocated when the option is enabled at runtime; with trace_options=stackmap it is allocated during tracefs initialization. It stays allocated when the option is disabled, until "free" is written to stack_map."; v7 document: "This allocation happens even if the runtime ``stackmap`` option remains disabled.")', () => {
  it('booted with trace_options=stackmap (a new map): allocated from the start, in every mode', () => {
    for (const mode of ['v4', 'v7', 'v8'] as const) {
      const m = newMap(mode);
      expect([m.optionOn, m.allocated]).toEqual([true, true]);
      expect(readTextDump(m).uninitialized).toBeUndefined();
    }
  });

  it('v8 booted with the option off: no map, stack_map reads "stackmap not initialized", until the option is enabled; then kept when disabled', () => {
    const m = newMap('v8');
    m.bootOptionOff();
    expect([m.optionOn, m.allocated]).toEqual([false, false]);
    expect(readTextDump(m).uninitialized).toBe(true);
    // every stack in full, no map operation
    expect(m.insert(0, pop.words[1], pop.depths[1])).toBe(INSERT_OFF);
    expect(m.counters().attempts).toBe(0);
    // "allocated when the option is enabled at runtime"
    m.setOption(true);
    expect(m.allocated).toBe(true);
    const slot = m.insert(0, pop.words[1], pop.depths[1]);
    expect(slot).toBeGreaterThanOrEqual(0);
    // "It stays allocated when the option is disabled, until "free" is written"
    m.setOption(false);
    expect(m.allocated).toBe(true);
    expect(readTextDump(m).records.map((r) => r.slot)).toEqual([slot]);
    expect(m.free()).toBe('ok');
    expect(m.allocated).toBe(false);
    expect(readTextDump(m).uninitialized).toBe(true);
  });

  it('v7 booted with the option off: allocated all the same, an empty map to read', () => {
    for (const mode of ['v7', 'v4'] as const) {
      const m = newMap(mode);
      m.bootOptionOff();
      expect([m.optionOn, m.allocated]).toEqual([false, true]);
      const d = readTextDump(m);
      expect(d.uninitialized).toBeUndefined();
      expect(d.records).toEqual([]);
      expect(m.insert(0, pop.words[1], pop.depths[1])).toBe(INSERT_OFF);
    }
  });

  it('the boot state is set before anything records', () => {
    const m = newMap('v8');
    m.insert(0, pop.words[1], pop.depths[1]);
    expect(() => m.bootOptionOff()).toThrow(/already recorded/);
  });
});

describe('dump reader', () => {
  function filled(mode: Mode) {
    const m = newMap(mode);
    for (let i = 0; i < 300; i++) m.insert(0, pop.words[i], pop.depths[i]);
    return m;
  }

  it('binary: a reset during the read fails with ESTALE; a completed read stays valid', () => {
    const m = filled('v8');
    expect(readBinDump(m, (pass) => pass === 3 && m.reset())).toBe(ESTALE);
    for (let i = 0; i < 300; i++) m.insert(0, pop.words[i], pop.depths[i]);
    const r = new BinDumpReader(m, 4096);
    const parts: Uint8Array[] = [];
    for (let c = r.read(); c !== null; c = r.read()) {
      expect(c).not.toBe(ESTALE);
      parts.push((c as Uint8Array).slice());
    }
    expect(m.reset()).toBe('ok');
    expect(r.read()).toBe(null); // EOF, not ESTALE
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((o, p) => (bytes.set(p, o), o + p.length), 0);
    const d = decodeBinDump(bytes);
    expect(d.generation).toBe(2);
    expect(d.records.length).toBe(300);
    expect(r.nrStacks).toBe(300);
  });

  it('binary: bytes already produced by a pass are handed out before the check', () => {
    const m = filled('v7');
    const r = new BinDumpReader(m, 1 << 20);
    expect((r.read() as Uint8Array).length).toBe(16); // the header
    const first = r.read(100) as Uint8Array;
    expect(first.length).toBe(100);
    m.reset();
    // the rest of the one big pass is buffered: no ESTALE, and the stream ends
    let n = 16 + first.length;
    for (let c = r.read(); c !== null; c = r.read()) n += (c as Uint8Array).length;
    expect(n).toBeGreaterThan(16 + 300 * 16);
  });

  it('text: no check, so a read across a reset splices two generations', () => {
    const m = filled('v8');
    const d = readTextDump(m, 50, (pass) => {
      if (pass !== 2) return;
      m.reset();
      for (let i = 1000; i < 1300; i++) m.insert(0, pop.words[i], pop.depths[i]);
    });
    expect(d.generationsSeen).toEqual([1, 2]);
    expect(new Set(d.records.map((r) => r.generation))).toEqual(new Set([1, 2]));
  });
});

describe('ring buffer', () => {
  it('overwrites the oldest records and counts what it holds', () => {
    const r = new Ring(null, 1024);
    let events = 0;
    for (let i = 0; i < 100; i++) {
      r.reserve(REC.EVENT, 56, 0, 0, i);
      r.reserve(REC.FULL, RECORD_SIZE.full(10), 0, 0, i);
      events++;
    }
    expect(events).toBe(100);
    expect(r.bytesIn).toBeLessThanOrEqual(1024);
    expect(r.bytesIn).toBeGreaterThan(1024 - (56 + 92) * 2);
    const recs = r.records();
    expect(recs.filter((x) => x.type === REC.EVENT).length).toBe(r.eventsIn);
    expect(recs.reduce((n, x) => n + x.bytes, 0)).toBe(r.bytesIn);
  });
});

describe('ledger', () => {
  const dump = (generation: number | null, slots: [number, bigint[]][]) => ({
    format: 'bin' as const,
    generation,
    generationsSeen: [],
    records: slots.map(([slot, ips]) => ({ slot, generation, refCount: 1, ips: BigUint64Array.from(ips) })),
  });

  it('v7 ids: unverified when the dumps agree, ambiguous when they disagree, wrong when the only holder is another stack', () => {
    const l = computeLedger(
      [
        { kind: 'id', slot: 1, generation: null, truth: 'a' },
        { kind: 'id', slot: 2, generation: null, truth: 'a' },
        { kind: 'id', slot: 3, generation: null, truth: 'a' },
        { kind: 'id', slot: 4, generation: null, truth: 'a' },
      ],
      [
        dump(null, [
          [1, [0xan]],
          [2, [0xan]],
          [3, [0xbn]],
        ]),
        dump(null, [
          [1, [0xan]],
          [2, [0xbn]],
        ]),
      ],
    );
    expect(l.entries.map((e) => [e.status, e.outcome])).toEqual([
      ['unverified', 'correct'],
      ['ambiguous', 'detected'],
      ['unverified', 'wrong'],
      ['no-slot', 'unresolved'],
    ]);
  });

  it('v8 cookies: only against a dump of their own generation', () => {
    const l = computeLedger(
      [
        { kind: 'cookie', slot: 1, generation: 1, truth: 'a' },
        { kind: 'cookie', slot: 1, generation: 2, truth: 'a' },
        { kind: 'cookie', slot: 2, generation: 1, truth: 'a' },
        { kind: 'full', slot: -1, generation: null, truth: 'a' },
      ],
      [dump(1, [[1, [0xan]]]), dump(3, [[1, [0xbn]]])],
    );
    expect(l.entries.map((e) => [e.status, e.outcome])).toEqual([
      ['resolved', 'correct'],
      ['no-dump', 'detected'],
      ['no-slot', 'detected'],
      ['full', 'full'],
    ]);
    expect(l).toMatchObject({ correct: 1, wrong: 0, detected: 2, unresolved: 0, full: 1, ids: 3 });
  });
});
