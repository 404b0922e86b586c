import { describe, expect, it } from 'vitest';
import { createRingBuffer, kernelPages, kernelRecordBytes, RB, REC, RECORD_SIZE, Ring, type RingModel } from './ring.ts';

/** Writes one event (seq in its payload, as cpu-loop does) and its stack record (a cookie, an id or `depth` frames in full). */
function write(r: Ring, seq: number, stack: 'cookie' | 'id' | number, eventBytes = 56, ts = seq * 1e-6): void {
  const ev = r.reserve(REC.EVENT, eventBytes, seq, -1, ts);
  r.data[ev + 1] = 100;
  r.data[ev + 2] = seq;
  r.data[ev + 3] = seq ^ 0x5a5a;
  if (stack === 'cookie') {
    const c = r.reserve(REC.COOKIE, RECORD_SIZE.cookie, seq, 7, ts);
    r.data[c + 1] = 100;
    r.data[c + 2] = seq % 1000;
    r.data[c + 3] = 7;
  } else if (stack === 'id') {
    const c = r.reserve(REC.ID, RECORD_SIZE.id, seq, 7, ts);
    r.data[c + 1] = 100;
    r.data[c + 2] = seq % 1000;
  } else {
    const c = r.reserve(REC.FULL, RECORD_SIZE.full(stack), seq, -1, ts);
    r.data[c + 1] = 100;
    r.data[c + 2] = stack;
    for (let i = 0; i < 2 * stack; i++) r.data[c + 3 + i] = seq * 1000 + i;
  }
}

const events = (r: Ring) => r.records().filter((x) => x.type === REC.EVENT);

describe('ring sizes (kernel ring buffer constants)', () => {
  it('adds the 4-byte event header, and a length word above 112 bytes of data', () => {
    expect(kernelRecordBytes(56)).toBe(60); // kmem_cache_alloc event: type_len 14
    expect(kernelRecordBytes(12)).toBe(16); // v7 id
    expect(kernelRecordBytes(16)).toBe(20); // v8 cookie
    expect(kernelRecordBytes(112)).toBe(116); // RB_MAX_SMALL_DATA: still type_len 28
    expect(kernelRecordBytes(116)).toBe(124); // type_len 0 + array[0]
    expect(kernelRecordBytes(172)).toBe(180); // a 20-frame stack
    expect(kernelRecordBytes(8)).toBe(16); // 12 would be mistaken for a time extend
    expect(kernelRecordBytes(54)).toBe(60); // 4-byte aligned
  });

  it('allocates ceil(size / 4080) pages, at least 2', () => {
    expect(RB.PAGE_DATA).toBe(4080);
    expect(kernelPages(512 * 1024)).toBe(129); // 524288 / 4080 = 128.5
    expect(kernelPages(1024)).toBe(2);
    expect(kernelPages(2 * 4080)).toBe(2);
    expect(kernelPages(2 * 4080 + 8)).toBe(3);
    expect(new Ring(null, 512 * 1024, 'kernel').capacity).toBe(129 * 4080);
    expect(new Ring(null, 512 * 1024, 'seed').capacity).toBe(512 * 1024);
  });
});

describe("ring, 'seed' model", () => {
  it('packs records back to back, evicts record by record', () => {
    // 56 + 16 = 72 B per event: 7200 B hold exactly 100
    const r = new Ring(null, 7200, 'seed');
    for (let i = 0; i < 100; i++) write(r, i, 'cookie');
    expect([r.eventsIn, r.stacksIn, r.bytesIn, r.overheadIn, r.recordsEvicted]).toEqual([100, 100, 7200, 0, 0]);
    // one more event evicts exactly one record, the oldest (event 0), not a page
    const ev = r.reserve(REC.EVENT, 56, 100, -1, 1);
    r.data[ev + 2] = 100;
    expect([r.eventsIn, r.stacksIn, r.bytesIn, r.recordsEvicted]).toEqual([100, 100, 7200, 1]);
    const recs = r.records();
    expect(recs[0].type).toBe(REC.COOKIE); // event 0's cookie is now the oldest record
    expect(recs[0].a).toBe(0);
    expect(events(r).map((x) => x.a)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('pads the end of the buffer instead of wrapping a record, and counts the pad as overhead', () => {
    // 1024 B: 14 pairs of 72 B = 1008, 16 B left; the 15th event (56 B) does not fit: a 16 B pad
    const r = new Ring(null, 1024, 'seed');
    for (let i = 0; i < 15; i++) write(r, i, 'cookie');
    // the 15th pair took the place of pair 0 (72 B) at offset 0
    expect([r.eventsIn, r.stacksIn, r.bytesIn, r.overheadIn, r.recordsEvicted]).toEqual([14, 14, 1008, 16, 2]);
    const recs = r.records();
    expect(recs.reduce((n, x) => n + x.bytes, 0)).toBe(r.bytesIn);
    expect(events(r).map((x) => x.a)).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
    expect(r.pagesIn).toBe(0);
    expect(r.pagesEvicted).toBe(0);
  });

  it('keeps the ids and full stacks as written', () => {
    const r = new Ring(null, 4096, 'seed');
    write(r, 1, 'id');
    write(r, 2, 5);
    const recs = r.records();
    expect(recs.map((x) => [x.type, x.bytes])).toEqual([
      [REC.EVENT, 56],
      [REC.ID, 12],
      [REC.EVENT, 56],
      [REC.FULL, 52],
    ]);
    expect(recs[1].a).toBe(1);
    expect(recs[3].a).toBe(5);
    expect(Array.from(recs[3].words!)).toEqual(Array.from({ length: 10 }, (_, i) => 2000 + i));
  });
});

describe("ring, 'kernel' model", () => {
  it('fits 51 events with 16 B cookies in a page: (56 + 4) + (16 + 4) = 80, 4080 / 80 = 51', () => {
    const r = new Ring(null, 3 * 4080, 'kernel');
    expect(r.pages).toBe(3);
    for (let i = 0; i < 153; i++) write(r, i, 'cookie');
    // three pages, exactly full: no padding, nothing evicted
    expect([r.eventsIn, r.stacksIn, r.pagesIn, r.pagesEvicted, r.recordsEvicted]).toEqual([153, 153, 3, 0, 0]);
    expect(r.bytesIn).toBe(153 * 72); // data only, as the letter counts it
    expect(r.overheadIn).toBe(3 * 16 + 306 * 4); // page headers + event headers
    expect(r.bytesIn + r.overheadIn).toBe(3 * 4096);
    // the next event does not fit in the tail page and the ring is full: page 0 (51 events, 51 cookies) goes
    write(r, 153, 'cookie');
    expect([r.eventsIn, r.stacksIn, r.pagesIn, r.pagesEvicted, r.recordsEvicted]).toEqual([103, 103, 3, 1, 102]);
    expect(events(r).map((x) => x.a)).toEqual(Array.from({ length: 103 }, (_, i) => 51 + i));
  });

  it('fits 53 events with 12 B ids in a page and pads the last 52 bytes: 4080 = 53 x (60 + 16) + 52', () => {
    const r = new Ring(null, 2 * 4080, 'kernel');
    for (let i = 0; i < 106; i++) write(r, i, 'id');
    expect([r.eventsIn, r.stacksIn, r.pagesIn, r.pagesEvicted]).toEqual([106, 106, 2, 0]);
    expect(r.bytesIn).toBe(106 * 68);
    // page 0: 16 + 106 headers + 52 padding; page 1: 16 + 106 headers, 4044 bytes in use
    expect(r.overheadIn).toBe(16 + 106 * 4 + 52 + 16 + 106 * 4);
    expect(r.bytesIn + r.overheadIn).toBe(4096 + 4044);
    // event 106 (60 B) does not fit in the 52 bytes left: page 0 is overwritten whole
    write(r, 106, 'id');
    expect([r.eventsIn, r.stacksIn, r.pagesEvicted, r.recordsEvicted]).toEqual([54, 54, 1, 106]);
    const recs = r.records();
    expect(recs[0].type).toBe(REC.EVENT);
    expect(recs[0].a).toBe(53);
    expect(events(r).map((x) => x.a)).toEqual(Array.from({ length: 54 }, (_, i) => 53 + i));
  });

  it('fits 17 events with 20-frame stacks in a page: (56 + 4) + (172 + 8) = 240, 4080 / 240 = 17', () => {
    const r = new Ring(null, 4 * 4080, 'kernel');
    for (let i = 0; i < 68; i++) write(r, i, 20);
    expect([r.eventsIn, r.pagesIn, r.pagesEvicted, r.bytesIn]).toEqual([68, 4, 0, 68 * 228]);
    expect(r.overheadIn).toBe(4 * 16 + 68 * (4 + 8));
    // the raw words: the event has type_len 14, the stack type_len 0 and array[0] = 172 + 4
    const d = r.data;
    expect(d[4] & 31).toBe(14);
    expect(d[4 + 15] & 31).toBe(0);
    expect(d[4 + 16]).toBe(176);
    expect(d[2]).toBe(4080); // page 0's commit
    // wrap twice around the 4 pages: 17 more events each evict one page
    for (let i = 68; i < 68 + 17 * 6; i++) write(r, i, 20);
    expect([r.eventsIn, r.pagesIn, r.pagesEvicted]).toEqual([68, 4, 6]);
    const recs = r.records();
    expect(events(r).map((x) => x.a)).toEqual(Array.from({ length: 68 }, (_, i) => 102 + i));
    const full = recs.filter((x) => x.type === REC.FULL);
    expect(full[0].bytes).toBe(172);
    expect(Array.from(full[0].words!).slice(0, 3)).toEqual([102000, 102001, 102002]);
  });

  it('records the time delta in the event header', () => {
    const r = new Ring(null, 1024, 'kernel');
    r.reserve(REC.EVENT, 56, 0, -1, 2);
    r.reserve(REC.EVENT, 56, 0, -1, 2 + 1e-6);
    expect(r.data[4] >>> 5).toBe(0); // the first event of a page: its time is the page's
    expect(r.data[4 + 15] >>> 5).toBe(1000);
    expect((r.data[0] >>> 0) + r.data[1] * 2 ** 32).toBe(2e9); // page time stamp, ns
  });

  it('never splits a record over two pages, and a full ring holds between pages - 1 and pages pages', () => {
    // a mix of 56 B events with cookies, ids and stacks of 1..64 frames
    let seed = 12345;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
    const r = new Ring(null, 10 * 4080, 'kernel');
    for (let i = 0; i < 5000; i++) {
      const k = rnd(3);
      write(r, i, k === 0 ? 'cookie' : k === 1 ? 'id' : 1 + rnd(64));
      const inUse = r.bytesIn + r.overheadIn;
      expect(inUse).toBeLessThanOrEqual(r.pagesIn * 4096);
      expect(inUse).toBeGreaterThan((r.pagesIn - 1) * 4096 + 16);
    }
    expect(r.pagesIn).toBe(10);
    const recs = r.records();
    expect(recs.reduce((n, x) => n + x.bytes, 0)).toBe(r.bytesIn);
    expect(recs.filter((x) => x.type === REC.EVENT).length).toBe(r.eventsIn);
    expect(recs.filter((x) => x.type !== REC.EVENT).length).toBe(r.stacksIn);
    const overhead = recs.reduce((n, x) => n + kernelRecordBytes(x.bytes) - x.bytes, 0) + 10 * 16;
    expect(r.overheadIn).toBeGreaterThanOrEqual(overhead); // the rest is page-end padding
    // page-end padding is less than the largest record (a 64-frame stack) on each of the 9 full pages
    expect(r.overheadIn - overhead).toBeLessThan(9 * kernelRecordBytes(RECORD_SIZE.full(64)));
    // oldest first, without gaps: the events are the last eventsIn written
    expect(events(r).map((x) => x.a)).toEqual(Array.from({ length: r.eventsIn }, (_, i) => 5000 - r.eventsIn + i));
  });

  it('rejects a record larger than a page', () => {
    const r = new Ring(null, 1024, 'kernel');
    expect(() => r.reserve(REC.EVENT, 4076, 0, -1, 0)).toThrow(RangeError);
    expect(() => r.reserve(REC.EVENT, 4072, 0, -1, 0)).not.toThrow();
  });
});

describe.each<RingModel>(['seed', 'kernel'])("ring on a SharedArrayBuffer ('%s')", (model) => {
  it('reads back on another instance after sync(), and clear() empties it for its writer', () => {
    const size = 2 * 4080;
    const sab = createRingBuffer(size);
    const w = new Ring(sab, size, model);
    for (let i = 0; i < 500; i++) write(w, i, i % 2 ? 'cookie' : 12, 56, 10 + i * 1e-6);
    const r = new Ring(sab, size, model);
    r.sync();
    const recs = r.records();
    expect(recs.length).toBe(r.eventsIn + r.stacksIn);
    expect(recs.reduce((n, x) => n + x.bytes, 0)).toBe(r.bytesIn);
    const ev = recs.filter((x) => x.type === REC.EVENT);
    expect(ev.map((x) => x.a)).toEqual(Array.from({ length: ev.length }, (_, i) => 500 - ev.length + i));
    expect(ev.every((x) => x.truthStack === x.a && x.pid === 100)).toBe(true);
    expect(recs.filter((x) => x.type === REC.COOKIE).every((x) => x.b === 7 && x.truthGeneration === 7)).toBe(true);
    expect(recs[recs.length - 1].ts).toBeCloseTo(10 + 499e-6, 9);
    if (model === 'kernel') expect(r.pagesEvicted).toBeGreaterThan(0);
    else expect(r.pagesEvicted).toBe(0);

    // the host clears it (v4 reset), the CPU re-reads the header and goes on
    r.clear();
    expect([r.eventsIn, r.stacksIn, r.bytesIn, r.overheadIn, r.records().length]).toEqual([0, 0, 0, 0, 0]);
    w.sync();
    write(w, 1000, 'cookie', 56, 20);
    r.sync();
    expect(r.records().map((x) => [x.type, x.a])).toEqual([
      [REC.EVENT, 1000],
      [REC.COOKIE, 0],
    ]);
    expect(r.bytesIn).toBe(72);
    expect(r.overheadIn).toBe(model === 'kernel' ? 16 + 8 : 0);
  });
});
