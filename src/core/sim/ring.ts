/**
 * A per-CPU ring buffer of a fixed byte size that overwrites the oldest records, on a
 * SharedArrayBuffer (one per CPU). Only its CPU writes it; the host reads it once the CPU has
 * stopped (or, in v4, clears it while every CPU is paused), so record words are plain typed-array
 * accesses and only the header is published with Atomics.
 *
 * Data sizes (the "data" of a record, `RingRecord.bytes`, and what `bytesIn` counts) are the ones
 * the v8 cover letter and the cookie ABI mail count:
 *   event      `eventBytes` (default 56: a kmem_cache_alloc record on a 64-bit 6.x kernel,
 *              trace_entry 8 + call_site 8 + ptr 8 + bytes_req 8 + bytes_alloc 8 + gfp_flags 8
 *              + node 4 + accounted 1, padded to 8)
 *   full stack 12 + 8 * depth (trace_entry 8 + size 4 + ips; the mail: ~20 frames = 172 B)
 *   v4/v7 id   12 (trace_entry 8 + id 4)
 *   v8 cookie  16 (trace_entry 8 + cookie 8)
 *
 * Two models of the buffer around that data (`RingModel`):
 *
 * 'seed' (the default, as the letter counts): the buffer is `size` bytes of data, records are
 *   packed back to back, nothing else costs a byte, and overwrite evicts the oldest record(s),
 *   one at a time. Records do not wrap: at the end of the buffer a pad record fills the rest
 *   (counted in `overheadIn`, not in `bytesIn`).
 *
 * 'kernel' (kernel/trace/ring_buffer.c, 64-bit, no CONFIG_HAVE_64BIT_ALIGNED_ACCESS):
 *   - every record has the 4-byte event header `type_len:5, time_delta:27`; data of more than
 *     RB_MAX_SMALL_DATA (112) bytes has type_len 0 and its length in one more word, array[0]
 *     (= data + 4, as rb_update_event stores it); data is 4-byte aligned (all sizes here are
 *     multiples of 4). rb_calculate_event_length's bump of a 12-byte record to 16 is applied too
 *     (it needs 8 bytes of data, which no record here has).
 *   - the buffer is a ring of pages of 4096 bytes, each with a 16-byte header (u64 time_stamp,
 *     local_t commit) and 4080 bytes for events (BUF_PAGE_SIZE). `size` is buffer_size_kb * 1024,
 *     the data size asked for; like ring_buffer_resize the model allocates
 *     max(2, ceil(size / 4080)) pages (512 KB: 129 pages, 526,320 bytes for events). The reader
 *     page the kernel adds is not modelled (it holds nothing until a consuming read).
 *   - a record never straddles a page: when it does not fit in the rest of the tail page, the
 *     rest is padding and the writer moves to the next page. When that page still holds data
 *     (the ring is full), the whole page is evicted, the oldest one, as the overwrite mode does
 *     (rb_handle_head_page). So a full ring holds between (pages - 1) and pages pages of events.
 *   - not modelled: time-extend records (8 bytes when two events are more than 2^27 ns apart,
 *     rare in a tight allocation loop) and the padding event the kernel writes in the rest of a
 *     page (here a page's commit word ends its records).
 *   `bytesIn` stays the data only, as the letter's "retained bytes/event" counts it; event
 *   headers, length words, page headers and page-end padding are in `overheadIn`, so in this
 *   model bytesIn + overheadIn = the bytes of the pages in use (full pages, and the tail page up
 *   to its commit).
 *
 * Record layout in `data` (words). The data of a record starts with a tag word,
 * type << 24 | bytes (it stands in for trace_entry's type), then:
 *   event   pid, seq, aux (random bits for the printed payload)
 *   full    pid, nr, ips as (low, high) pairs
 *   id      pid, slot
 *   cookie  pid, slot, generation      (the cookie gen << 32 | slot, little-endian)
 * `reserve` returns the word offset of the tag. In 'kernel' the event header (and length word)
 * sit just before it. The truth (which stack a record stood for, and the map generation at the
 * time) and the timestamp live in side arrays indexed by the tag's word offset, outside the
 * counted bytes.
 */

import { kernelPages, kernelRecordBytes, RB, REC, type RingModel, type RingRecord } from './ring-records.ts';

export * from './ring-records.ts';

const H = {
  HEAD: 0,
  TAIL: 1,
  USED: 2,
  /** event records in the buffer */
  EVENTS_IN: 3,
  /** data bytes in the buffer (pads and ring-buffer headers excluded) */
  BYTES_IN: 4,
  EVENTS_WRITTEN: 5,
  RECORDS_EVICTED: 6,
  /** stack records (full, id, cookie) in the buffer */
  STACKS_IN: 7,
  /** bytes in use that are not data: seed, the end pad; kernel, event headers, length words, page headers, page-end padding */
  OVERHEAD_IN: 8,
  /** kernel: whole pages overwritten */
  PAGES_EVICTED: 9,
} as const;
const HEADER_WORDS = 16;

/** Bytes of the data region: enough for either model (the kernel model's pages can exceed `size`). */
function regionBytes(size: number): number {
  return Math.max(size, kernelPages(size) * RB.PAGE);
}

export function ringBytes(size: number): number {
  // header, data, truth stack (i32), truth generation (i32), timestamp (f64), truth event (i32)
  const r = regionBytes(size);
  return HEADER_WORDS * 4 + r + r + r + 2 * r + r;
}

export function createRingBuffer(size: number): SharedArrayBuffer {
  if (size % 8 !== 0 || size < 1024) throw new RangeError('ring size must be a multiple of 8, at least 1024');
  return new SharedArrayBuffer(ringBytes(size));
}

const PAGE_WORDS = RB.PAGE / 4;

export class Ring {
  readonly size: number;
  /** 'kernel': pages in the ring; 'seed': 0 */
  readonly pages: number;
  private readonly hdr: Int32Array;
  readonly data: Int32Array;
  private readonly truthStack: Int32Array | null;
  private readonly truthGen: Int32Array | null;
  private readonly tsArr: Float64Array | null;
  /** the record's event and context (packEvent): an event's own, a stack record's event's */
  private readonly truthEvent: Int32Array | null;
  // local copies of the header (single writer).
  // seed: byte offsets of the oldest record and of the write position, bytes in use.
  // kernel: head = byte offset of the oldest page, used = bytes from there to the write
  // position counting whole pages ((pages in use - 1) * 4096 + offset in the tail page),
  // tail = byte offset of the write position (informative).
  private head = 0;
  private tail = 0;
  private used = 0;
  /** kernel: ts of the last record written (for time_delta) */
  private lastTs = 0;

  /** A shared ring (sab from createRingBuffer), or a local accounting-only ring (sab = null). */
  constructor(
    sab: SharedArrayBuffer | null,
    size: number,
    readonly model: RingModel = 'seed',
  ) {
    this.size = size;
    this.pages = model === 'kernel' ? kernelPages(size) : 0;
    const r = regionBytes(size);
    if (sab) {
      if (sab.byteLength < ringBytes(size)) throw new RangeError('ring buffer too small for its size');
      this.hdr = new Int32Array(sab, 0, HEADER_WORDS);
      this.data = new Int32Array(sab, HEADER_WORDS * 4, r / 4);
      this.truthStack = new Int32Array(sab, HEADER_WORDS * 4 + r, r / 4);
      this.truthGen = new Int32Array(sab, HEADER_WORDS * 4 + 2 * r, r / 4);
      this.tsArr = new Float64Array(sab, HEADER_WORDS * 4 + 3 * r, r / 4);
      this.truthEvent = new Int32Array(sab, HEADER_WORDS * 4 + 5 * r, r / 4);
    } else {
      this.hdr = new Int32Array(HEADER_WORDS);
      this.data = new Int32Array(r / 4);
      this.truthStack = this.truthGen = null;
      this.tsArr = null;
      this.truthEvent = null;
    }
    this.sync();
  }

  /** Reserves a record of `bytes` data bytes (evicting the oldest records as needed); returns the word offset of its tag. */
  /** `truthEvent`: the record's event and context (packEvent), -1 unknown */
  reserve(type: number, bytes: number, truthStack: number, truthGen: number, ts: number, truthEvent = -1): number {
    if (this.model === 'kernel') return this.reserveKernel(type, bytes, truthStack, truthGen, ts, truthEvent);
    if (this.tail + bytes > this.size) {
      const pad = this.size - this.tail;
      this.makeRoom(pad);
      this.data[this.tail >> 2] = (REC.PAD << 24) | pad;
      this.used += pad;
      this.tail = 0;
      Atomics.add(this.hdr, H.OVERHEAD_IN, pad);
    }
    this.makeRoom(bytes);
    const off = this.tail >> 2;
    this.data[off] = (type << 24) | bytes;
    this.setTruth(off, truthStack, truthGen, ts, truthEvent);
    this.tail += bytes;
    if (this.tail === this.size) this.tail = 0;
    this.used += bytes;
    this.count(type, bytes);
    this.publish();
    return off;
  }

  private setTruth(off: number, truthStack: number, truthGen: number, ts: number, truthEvent: number): void {
    if (this.truthStack) {
      this.truthStack[off] = truthStack;
      this.truthGen![off] = truthGen;
      this.truthEvent![off] = truthEvent;
      this.tsArr![off] = ts;
    }
  }

  private count(type: number, bytes: number): void {
    Atomics.add(this.hdr, H.BYTES_IN, bytes);
    if (type === REC.EVENT) {
      Atomics.add(this.hdr, H.EVENTS_IN, 1);
      Atomics.add(this.hdr, H.EVENTS_WRITTEN, 1);
    } else Atomics.add(this.hdr, H.STACKS_IN, 1);
  }

  private uncount(type: number, bytes: number): void {
    Atomics.sub(this.hdr, H.BYTES_IN, bytes);
    if (type === REC.EVENT) Atomics.sub(this.hdr, H.EVENTS_IN, 1);
    else Atomics.sub(this.hdr, H.STACKS_IN, 1);
    Atomics.add(this.hdr, H.RECORDS_EVICTED, 1);
  }

  private makeRoom(bytes: number): void {
    while (this.size - this.used < bytes) {
      const h = this.data[this.head >> 2];
      const len = h & 0xffffff;
      const type = h >>> 24;
      if (type !== REC.PAD) this.uncount(type, len);
      else Atomics.sub(this.hdr, H.OVERHEAD_IN, len);
      this.head += len;
      if (this.head === this.size) this.head = 0;
      this.used -= len;
    }
  }

  // ---- the kernel model ----

  /** pages holding data */
  private get pagesUsed(): number {
    return Math.ceil(this.used / RB.PAGE);
  }

  private reserveKernel(type: number, bytes: number, truthStack: number, truthGen: number, ts: number, truthEvent: number): number {
    if (bytes <= 0 || bytes % RB.ALIGN !== 0) throw new RangeError(`record data must be a positive multiple of ${RB.ALIGN} bytes`);
    const len = kernelRecordBytes(bytes);
    if (len > RB.PAGE_DATA) throw new RangeError(`a ${bytes}-byte record does not fit in a ring-buffer page (the kernel drops it)`);
    const headPage = this.head / RB.PAGE;
    let n = this.pagesUsed;
    let tailPage = n === 0 ? headPage : (headPage + n - 1) % this.pages;
    let at = n === 0 ? 0 : this.used - (n - 1) * RB.PAGE; // offset in the tail page
    if (n === 0) {
      this.startPage(tailPage, ts);
      n = 1;
      at = RB.PAGE_HEADER;
    } else if (at + len > RB.PAGE) {
      // the rest of the tail page is padding; move on, overwriting the oldest page if the ring is full
      Atomics.add(this.hdr, H.OVERHEAD_IN, RB.PAGE - at);
      tailPage = (tailPage + 1) % this.pages;
      if (n === this.pages) {
        this.evictPage(headPage);
        this.head = ((headPage + 1) % this.pages) * RB.PAGE;
        n--;
      }
      this.startPage(tailPage, ts);
      n++;
      at = RB.PAGE_HEADER;
    }
    const w = tailPage * PAGE_WORDS + (at >> 2);
    const d = this.data;
    const delta = Math.min(RB.MAX_DELTA, Math.max(0, Math.round((ts - this.lastTs) * 1e9)));
    this.lastTs = ts;
    let off: number;
    if (len - RB.EVENT_HEADER > RB.MAX_SMALL_DATA) {
      d[w] = 0 | (delta << 5); // type_len 0
      d[w + 1] = len - RB.EVENT_HEADER; // array[0]: the length word and the data
      off = w + 2;
    } else {
      d[w] = ((len - RB.EVENT_HEADER) >> 2) | (delta << 5);
      off = w + 1;
    }
    d[off] = (type << 24) | bytes;
    this.setTruth(off, truthStack, truthGen, ts, truthEvent);
    at += len;
    d[tailPage * PAGE_WORDS + 2] = at - RB.PAGE_HEADER; // commit: bytes of events in the page
    this.used = (n - 1) * RB.PAGE + at;
    this.tail = tailPage * RB.PAGE + at;
    Atomics.add(this.hdr, H.OVERHEAD_IN, len - bytes);
    this.count(type, bytes);
    this.publish();
    return off;
  }

  private startPage(p: number, ts: number): void {
    const w = p * PAGE_WORDS;
    const ns = Math.max(0, Math.round(ts * 1e9));
    this.data[w] = (ns % 0x100000000) | 0; // time_stamp, low word
    this.data[w + 1] = Math.floor(ns / 0x100000000) | 0;
    this.data[w + 2] = 0; // commit (local_t, low word)
    this.data[w + 3] = 0;
    this.lastTs = ts;
    Atomics.add(this.hdr, H.OVERHEAD_IN, RB.PAGE_HEADER);
  }

  /** Drops every record of page `p` (a full page: all its 4096 bytes leave the buffer). */
  private evictPage(p: number): void {
    let data = 0;
    this.forEachInPage(p, (_off, type, bytes) => {
      this.uncount(type, bytes);
      data += bytes;
    });
    Atomics.sub(this.hdr, H.OVERHEAD_IN, RB.PAGE - data);
    Atomics.add(this.hdr, H.PAGES_EVICTED, 1);
  }

  /** Calls `f(tag word offset, type, data bytes)` for each record of page `p`, in order. */
  private forEachInPage(p: number, f: (off: number, type: number, bytes: number) => void): void {
    const d = this.data;
    const base = p * PAGE_WORDS;
    let w = base + (RB.PAGE_HEADER >> 2);
    const end = w + (d[base + 2] >> 2);
    while (w < end) {
      const typeLen = d[w] & 31;
      let len: number;
      let off: number;
      if (typeLen === 0) {
        len = d[w + 1] + RB.EVENT_HEADER;
        off = w + 2;
      } else {
        len = typeLen * 4 + RB.EVENT_HEADER;
        off = w + 1;
      }
      const tag = d[off];
      f(off, tag >>> 24, tag & 0xffffff);
      w += len >> 2;
    }
  }

  // ---- both models ----

  private publish(): void {
    Atomics.store(this.hdr, H.HEAD, this.head);
    Atomics.store(this.hdr, H.TAIL, this.tail);
    Atomics.store(this.hdr, H.USED, this.used);
  }

  /** Empties the buffer (v4 reset). Only while its CPU is paused. */
  clear(): void {
    this.head = this.tail = this.used = 0;
    this.lastTs = 0;
    for (const k of [H.EVENTS_IN, H.BYTES_IN, H.STACKS_IN, H.OVERHEAD_IN]) Atomics.store(this.hdr, k, 0);
    this.publish();
  }

  /** Re-reads the header another thread published. */
  sync(): void {
    this.head = Atomics.load(this.hdr, H.HEAD);
    this.tail = Atomics.load(this.hdr, H.TAIL);
    this.used = Atomics.load(this.hdr, H.USED);
  }

  get eventsIn(): number {
    return Atomics.load(this.hdr, H.EVENTS_IN);
  }
  /** data bytes in the buffer, as the letter counts them (no ring-buffer headers, no padding) */
  get bytesIn(): number {
    return Atomics.load(this.hdr, H.BYTES_IN);
  }
  /** bytes in use that are not data: 'seed', the end-of-buffer pad; 'kernel', event headers, length words, page headers and page-end padding */
  get overheadIn(): number {
    return Atomics.load(this.hdr, H.OVERHEAD_IN);
  }
  get stacksIn(): number {
    return Atomics.load(this.hdr, H.STACKS_IN);
  }
  get eventsWritten(): number {
    return Atomics.load(this.hdr, H.EVENTS_WRITTEN);
  }
  get recordsEvicted(): number {
    return Atomics.load(this.hdr, H.RECORDS_EVICTED);
  }
  /** 'kernel': whole pages overwritten */
  get pagesEvicted(): number {
    return Atomics.load(this.hdr, H.PAGES_EVICTED);
  }
  /** 'kernel': pages holding data (call after sync() on a reader); 'seed': 0 */
  get pagesIn(): number {
    return this.model === 'kernel' ? this.pagesUsed : 0;
  }
  /** bytes available to records: 'seed', size; 'kernel', pages * 4080 */
  get capacity(): number {
    return this.model === 'kernel' ? this.pages * RB.PAGE_DATA : this.size;
  }

  /** Every record in the buffer, oldest first (call after sync()). */
  records(): RingRecord[] {
    const out: RingRecord[] = [];
    if (this.model === 'kernel') {
      const n = this.pagesUsed;
      const headPage = this.head / RB.PAGE;
      for (let k = 0; k < n; k++) this.forEachInPage((headPage + k) % this.pages, (off, type, bytes) => out.push(this.decode(off, type, bytes)));
      return out;
    }
    let at = this.head;
    let left = this.used;
    while (left > 0) {
      const off = at >> 2;
      const h = this.data[off];
      const bytes = h & 0xffffff;
      const type = h >>> 24;
      if (type !== REC.PAD) out.push(this.decode(off, type, bytes));
      at += bytes;
      if (at === this.size) at = 0;
      left -= bytes;
    }
    return out;
  }

  private decode(off: number, type: number, bytes: number): RingRecord {
    const d = this.data;
    return {
      type,
      bytes,
      pid: d[off + 1],
      a: d[off + 2],
      b: type === REC.EVENT || type === REC.COOKIE ? d[off + 3] : 0,
      words: type === REC.FULL ? new Uint32Array(d.slice(off + 3, off + 3 + 2 * d[off + 2]).buffer) : null,
      truthStack: this.truthStack ? this.truthStack[off] : -1,
      truthGeneration: this.truthGen ? this.truthGen[off] : -1,
      truthEvent: this.truthEvent && this.truthEvent[off] >= 0 ? this.truthEvent[off] >> 2 : -1,
      context: this.truthEvent && this.truthEvent[off] >= 0 ? this.truthEvent[off] & 3 : -1,
      ts: this.tsArr ? this.tsArr[off] : 0,
    };
  }
}
