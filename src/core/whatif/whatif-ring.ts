import { REC } from '../sim/ring.ts';

/**
 * The what-if's ring buffer: the simulator's seed ring (sim/ring.ts `Ring`, model 'seed') reduced
 * to what the what-if reads of it, the event records a full buffer keeps, for one thread. The same
 * records in the same place, evicted oldest first, a pad where a record would cross the end; no
 * header published with Atomics, no truth arrays. whatif-ring.test.ts holds it to `Ring`.
 */
export class CountRing {
  /** record tags (type << 24 | bytes) at their word offsets, as Ring's data */
  private readonly data: Int32Array;
  private head = 0;
  private tail = 0;
  private used = 0;
  /** event records in the buffer */
  eventsIn = 0;
  /** records larger than the whole buffer: never written (Ring would evict forever) */
  tooLarge = 0;

  constructor(readonly size: number) {
    if (size % 8 !== 0 || size < 1024) throw new RangeError('ring size must be a multiple of 8, at least 1024');
    this.data = new Int32Array(size / 4);
  }

  /** Writes a record of `bytes` (a multiple of 4), evicting the oldest as needed; one larger than the buffer is not written. */
  reserve(type: number, bytes: number): void {
    const size = this.size;
    if (bytes > size) {
      this.tooLarge++;
      return;
    }
    if (this.tail + bytes > size) {
      const pad = size - this.tail;
      this.makeRoom(pad);
      this.data[this.tail >> 2] = (REC.PAD << 24) | pad;
      this.used += pad;
      this.tail = 0;
    }
    this.makeRoom(bytes);
    this.data[this.tail >> 2] = (type << 24) | bytes;
    this.tail += bytes;
    if (this.tail === size) this.tail = 0;
    this.used += bytes;
    if (type === REC.EVENT) this.eventsIn++;
  }

  private makeRoom(bytes: number): void {
    const size = this.size;
    while (size - this.used < bytes) {
      const h = this.data[this.head >> 2];
      const len = h & 0xffffff;
      if (h >>> 24 === REC.EVENT) this.eventsIn--;
      this.head += len;
      if (this.head === size) this.head = 0;
      this.used -= len;
    }
  }
}
