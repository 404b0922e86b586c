/**
 * The ring buffer's record kinds and sizes: as the v8 cover letter counts them (the seed's
 * sizes), and as the kernel's ring buffer stores them (event headers, pages). `Ring` (ring.ts)
 * writes and reads them.
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

/** The kernel ring buffer's constants (64-bit). */
export const RB = {
  /** PAGE_SIZE */
  PAGE: 4096,
  /** BUF_PAGE_HDR_SIZE: u64 time_stamp + local_t commit */
  PAGE_HEADER: 16,
  /** BUF_PAGE_SIZE: bytes for events in a page */
  PAGE_DATA: 4096 - 16,
  /** RB_EVNT_HDR_SIZE: type_len:5 + time_delta:27 */
  EVENT_HEADER: 4,
  /** RB_MAX_SMALL_DATA: larger data has type_len 0 and its length in array[0] */
  MAX_SMALL_DATA: 112,
  /** RB_ALIGNMENT */
  ALIGN: 4,
  /** the largest time_delta the header holds */
  MAX_DELTA: (1 << 27) - 1,
} as const;

/** What a record with `data` bytes of data takes in the kernel's ring buffer (rb_calculate_event_length). */
export function kernelRecordBytes(data: number): number {
  let len = Math.ceil(data / RB.ALIGN) * RB.ALIGN;
  if (len > RB.MAX_SMALL_DATA) len += 4;
  len += RB.EVENT_HEADER;
  if (len === 12) len += RB.ALIGN; // the time-extend confusion case
  return len;
}

/** Pages the kernel allocates for a per-CPU buffer of `size` bytes (ring_buffer_resize). */
export function kernelPages(size: number): number {
  return Math.max(2, Math.ceil(size / RB.PAGE_DATA));
}

/** The context a record is written in: the CPU's own path, an IRQ, an NMI, an NMI inside an IRQ (cpu-loop.ts interrupt). */
export const CTX = { PROCESS: 0, IRQ: 1, NMI: 2, NMI_IN_IRQ: 3 } as const;

/** An event's sequence number and context as one ring truth word (seq < 2^29: 536M events a CPU). */
export const packEvent = (seq: number, context: number): number => (seq << 2) | context;

export interface RingRecord {
  type: number;
  /** data bytes (the seed's size; no ring-buffer header) */
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
  /** the event the record belongs to: its sequence number (`a`) on its CPU (an event's own; a stack record's, the event it was written for); -1 unknown */
  truthEvent: number;
  /** the context it was written in (CTX): the CPU's own path, or an interrupt nested in one of its inserts; -1 unknown */
  context: number;
  /** seconds */
  ts: number;
}
