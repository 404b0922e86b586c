/**
 * A per-CPU ring buffer of a fixed byte size that overwrites the oldest records, on a
 * SharedArrayBuffer (one per CPU). Only its CPU writes it; the host reads it once the CPU has
 * stopped (or, in v4, clears it while every CPU is paused), so record words are plain typed-array
 * accesses and only the header is published with Atomics.
 *
 * Record sizes are the ones the v8 cover letter counts (the ring buffer's own 4-byte event
 * header and page headers are not modelled):
 *   event      `eventBytes` (default 56: a kmem_cache_alloc record on a 64-bit 6.x kernel,
 *              trace_entry 8 + call_site 8 + ptr 8 + bytes_req 8 + bytes_alloc 8 + gfp_flags 8
 *              + node 4 + accounted 1, padded to 8)
 *   full stack 12 + 8 * depth (trace_entry 8 + size 4 + ips)
 *   v4/v7 id   12 (trace_entry 8 + id 4)
 *   v8 cookie  16 (trace_entry 8 + cookie 8)
 * Records do not wrap: at the end of the buffer a pad record fills the rest (not counted as data).
 *
 * Word 0 of a record: type << 24 | bytes. Then:
 *   event   pid, seq, aux (random bits for the printed payload)
 *   full    pid, nr, ips as (low, high) pairs
 *   id      pid, slot
 *   cookie  pid, slot, generation      (the cookie gen << 32 | slot, little-endian)
 * The truth (which stack a record stood for, and the map generation at the time) and the
 * timestamp live in side arrays indexed by the record's word offset, outside the counted bytes.
 */

export const REC = { EVENT: 1, FULL: 2, ID: 3, COOKIE: 4, PAD: 15 } as const;

export const RECORD_SIZE = {
  full: (depth: number) => 12 + 8 * depth,
  id: 12,
  cookie: 16,
} as const;

export const DEFAULT_EVENT_BYTES = 56;

/**
 * How record sizes are counted: 'seed' as the v8 cover letter counts them (no ring-buffer
 * headers, record-granular overwrite); 'kernel' adds the ring buffer's own event header and
 * overwrites a whole page at a time, as the kernel's ring buffer does.
 */
export type RingModel = 'seed' | 'kernel';

const H = {
  HEAD: 0,
  TAIL: 1,
  USED: 2,
  /** event records in the buffer */
  EVENTS_IN: 3,
  /** data bytes in the buffer (pads excluded) */
  BYTES_IN: 4,
  EVENTS_WRITTEN: 5,
  RECORDS_EVICTED: 6,
  /** stack records (full, id, cookie) in the buffer */
  STACKS_IN: 7,
} as const;
const HEADER_WORDS = 16;

export function ringBytes(size: number): number {
  // header, data, truth stack (i32), truth generation (i32), timestamp (f64)
  return HEADER_WORDS * 4 + size + size + size + 2 * size;
}

export function createRingBuffer(size: number): SharedArrayBuffer {
  if (size % 8 !== 0 || size < 1024) throw new RangeError('ring size must be a multiple of 8, at least 1024');
  return new SharedArrayBuffer(ringBytes(size));
}

export interface RingRecord {
  type: number;
  bytes: number;
  pid: number;
  /** event: seq; full: nr; id/cookie: slot */
  a: number;
  /** event: aux; cookie: generation */
  b: number;
  /** full stacks: the ips as words */
  words: Uint32Array | null;
  truthStack: number;
  truthGeneration: number;
  /** seconds */
  ts: number;
}

export class Ring {
  readonly size: number;
  private readonly hdr: Int32Array;
  readonly data: Int32Array;
  private readonly truthStack: Int32Array | null;
  private readonly truthGen: Int32Array | null;
  private readonly tsArr: Float64Array | null;
  // local copies of the header (single writer)
  private head = 0;
  private tail = 0;
  private used = 0;

  /** A shared ring (sab from createRingBuffer), or a local accounting-only ring (sab = null). */
  constructor(
    sab: SharedArrayBuffer | null,
    size: number,
    readonly model: RingModel = 'seed',
  ) {
    this.size = size;
    if (sab) {
      this.hdr = new Int32Array(sab, 0, HEADER_WORDS);
      this.data = new Int32Array(sab, HEADER_WORDS * 4, size / 4);
      this.truthStack = new Int32Array(sab, HEADER_WORDS * 4 + size, size / 4);
      this.truthGen = new Int32Array(sab, HEADER_WORDS * 4 + 2 * size, size / 4);
      this.tsArr = new Float64Array(sab, HEADER_WORDS * 4 + 3 * size, size / 4);
    } else {
      this.hdr = new Int32Array(HEADER_WORDS);
      this.data = new Int32Array(size / 4);
      this.truthStack = this.truthGen = null;
      this.tsArr = null;
    }
    this.head = Atomics.load(this.hdr, H.HEAD);
    this.tail = Atomics.load(this.hdr, H.TAIL);
    this.used = Atomics.load(this.hdr, H.USED);
  }

  /** Reserves `bytes` (evicting the oldest records as needed); returns the record's word offset. */
  reserve(type: number, bytes: number, truthStack: number, truthGen: number, ts: number): number {
    if (this.tail + bytes > this.size) {
      const pad = this.size - this.tail;
      this.makeRoom(pad);
      this.data[this.tail >> 2] = (REC.PAD << 24) | pad;
      this.used += pad;
      this.tail = 0;
    }
    this.makeRoom(bytes);
    const off = this.tail >> 2;
    this.data[off] = (type << 24) | bytes;
    if (this.truthStack) {
      this.truthStack[off] = truthStack;
      this.truthGen![off] = truthGen;
      this.tsArr![off] = ts;
    }
    this.tail += bytes;
    if (this.tail === this.size) this.tail = 0;
    this.used += bytes;
    Atomics.add(this.hdr, H.BYTES_IN, bytes);
    if (type === REC.EVENT) {
      Atomics.add(this.hdr, H.EVENTS_IN, 1);
      Atomics.add(this.hdr, H.EVENTS_WRITTEN, 1);
    } else Atomics.add(this.hdr, H.STACKS_IN, 1);
    this.publish();
    return off;
  }

  private makeRoom(bytes: number): void {
    while (this.size - this.used < bytes) {
      const h = this.data[this.head >> 2];
      const len = h & 0xffffff;
      const type = h >>> 24;
      if (type !== REC.PAD) {
        Atomics.sub(this.hdr, H.BYTES_IN, len);
        if (type === REC.EVENT) Atomics.sub(this.hdr, H.EVENTS_IN, 1);
        else Atomics.sub(this.hdr, H.STACKS_IN, 1);
        Atomics.add(this.hdr, H.RECORDS_EVICTED, 1);
      }
      this.head += len;
      if (this.head === this.size) this.head = 0;
      this.used -= len;
    }
  }

  private publish(): void {
    Atomics.store(this.hdr, H.HEAD, this.head);
    Atomics.store(this.hdr, H.TAIL, this.tail);
    Atomics.store(this.hdr, H.USED, this.used);
  }

  /** Empties the buffer (v4 reset). Only while its CPU is paused. */
  clear(): void {
    this.head = this.tail = this.used = 0;
    for (const k of [H.EVENTS_IN, H.BYTES_IN, H.STACKS_IN]) Atomics.store(this.hdr, k, 0);
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
  get bytesIn(): number {
    return Atomics.load(this.hdr, H.BYTES_IN);
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

  /** Every record in the buffer, oldest first (call after sync()). */
  records(): RingRecord[] {
    const out: RingRecord[] = [];
    let at = this.head;
    let left = this.used;
    while (left > 0) {
      const off = at >> 2;
      const h = this.data[off];
      const bytes = h & 0xffffff;
      const type = h >>> 24;
      if (type !== REC.PAD) {
        const d = this.data;
        out.push({
          type,
          bytes,
          pid: d[off + 1],
          a: d[off + 2],
          b: type === REC.EVENT || type === REC.COOKIE ? d[off + 3] : 0,
          words: type === REC.FULL ? new Uint32Array(d.slice(off + 3, off + 3 + 2 * d[off + 2]).buffer) : null,
          truthStack: this.truthStack ? this.truthStack[off] : -1,
          truthGeneration: this.truthGen ? this.truthGen[off] : -1,
          ts: this.tsArr ? this.tsArr[off] : 0,
        });
      }
      at += bytes;
      if (at === this.size) at = 0;
      left -= bytes;
    }
    return out;
  }
}
