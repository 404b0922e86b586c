import { writeStackMapBin } from '../formats/stack-map-write.ts';
import { C } from './map-layout.ts';
import type { SharedStackMap } from './shared-map.ts';
import { concatBytes } from '../base/bytes.ts';

/**
 * Reading the map as the kernel exports it.
 *
 * Binary (`stack_map_bin`): at open, the set of published slots is recorded (the kernel's
 * bitmap) and `nr_stacks` is set to its size; records are then streamed a page per pass, each
 * pass under the stack_map lock (v7's rwsem, read side; v8's mutex) reading the live elements. A pass that must resume iteration
 * after a reset started since the open fails with ESTALE; bytes already produced by a pass are
 * still handed out, and a reader that has produced everything reaches EOF as usual.
 *
 * v4 copied the whole map into a private buffer at open, so its binary reads never fail: a reset
 * after the open leaves the copy as it was.
 *
 * Every reader counts as a file open on the map (C.READERS) from open to EOF or error, so v8's
 * `free` waits for it.
 *
 * Text (`stack_map`): no check. Each pass (under the lock) prints the next published slots in
 * ascending order with the generation current at that pass, so a read spanning a reset splices
 * records of two generations.
 */

export const ESTALE = 'ESTALE' as const;

export interface DumpRecord {
  slot: number;
  /** v8 text: the generation printed on the record; null otherwise */
  generation: number | null;
  refCount: number;
  ips: BigUint64Array;
}

export interface MapDump {
  format: 'bin' | 'text';
  /** bin v2 header / v8 text: a generation; v1 bin and v7 text: null */
  generation: number | null;
  records: DumpRecord[];
  /** the map generations its records came from (the simulation's truth, also for v4/v7 text; more than one: spliced across a reset) */
  generationsSeen: number[];
  /** bin: the bytes as read */
  bytes?: Uint8Array;
  /** a reset ran while the dump was read (it waited for the reset, or spans it): its records may be of the new, near-empty map */
  duringReset?: boolean;
  /** read while the map was not allocated (v8 after `free`): `stackmap not initialized` */
  uninitialized?: boolean;
}

export class BinDumpReader {
  private readonly slots: number[] = [];
  private readonly seq: number;
  readonly generation: number;
  private cursor = 0;
  private pending: Uint8Array;
  private readonly version: 1 | 2;
  /** v4: the records copied at open */
  private readonly copy: { slot: number; refCount: number; ips: BigUint64Array }[] | null;
  private open = true;
  /** a reset was running when the file was opened (the open waited for it) */
  readonly openedDuringReset: boolean;

  /** open(): records the populated slots and the reset sequence (v4: copies the records) */
  constructor(
    private readonly map: SharedStackMap,
    private readonly pageBytes = 4096,
  ) {
    this.version = map.params.mode === 'v8' ? 2 : 1;
    this.openedDuringReset = Atomics.load(map.i32, C.RESET_BUSY) !== 0;
    map.openReader();
    map.lockRead();
    try {
      this.seq = Atomics.load(map.i32, C.RESET_SEQ);
      this.generation = map.generation;
      for (let s = 0; s < map.slots; s++) if (map.published(s) >= 0) this.slots.push(s);
      this.copy =
        map.params.mode === 'v4'
          ? this.slots.map((slot) => {
              const elt = map.published(slot);
              return { slot, refCount: map.elementRef(elt), ips: map.elementIps(elt) };
            })
          : null;
    } finally {
      map.unlockRead();
    }
    this.pending = writeStackMapBin({ version: this.version, generation: this.version === 2 ? this.generation : null, littleEndian: true, records: [] });
    new DataView(this.pending.buffer).setUint32(8, this.slots.length, true);
  }

  get nrStacks(): number {
    return this.slots.length;
  }

  /** close(): the file is released (also at EOF and on ESTALE) */
  close(): void {
    if (!this.open) return;
    this.open = false;
    this.map.closeReader();
  }

  /** a reset started since the open */
  get resetSinceOpen(): boolean {
    return Atomics.load(this.map.i32, C.RESET_SEQ) !== this.seq;
  }

  /** read(): up to maxBytes, null at EOF, ESTALE when a reset happened before this pass */
  read(maxBytes = 1 << 16): Uint8Array | null | typeof ESTALE {
    if (this.pending.length === 0) {
      if (this.cursor >= this.slots.length) {
        this.close();
        return null;
      }
      if (this.copy) {
        // v4: the private copy made at open
        const recs: { slot: number; refCount: number; ips: BigUint64Array }[] = [];
        let bytes = 16;
        while (this.cursor < this.copy.length && bytes < this.pageBytes) {
          const r = this.copy[this.cursor++];
          recs.push(r);
          bytes += 16 + 8 * r.ips.length;
        }
        this.pending = writeStackMapBin({ version: this.version, generation: null, littleEndian: true, records: recs }).subarray(16);
        return this.read(maxBytes);
      }
      const m = this.map;
      m.lockRead();
      try {
        if (Atomics.load(m.i32, C.RESET_SEQ) !== this.seq) {
          this.close();
          return ESTALE;
        }
        const recs: { slot: number; refCount: number; ips: BigUint64Array }[] = [];
        let bytes = 16; // writeStackMapBin's header, dropped below
        while (this.cursor < this.slots.length && bytes < this.pageBytes) {
          const slot = this.slots[this.cursor++];
          const elt = m.published(slot);
          const ips = m.elementIps(elt);
          recs.push({ slot, refCount: m.elementRef(elt), ips });
          bytes += 16 + 8 * ips.length;
        }
        this.pending = writeStackMapBin({ version: this.version, generation: null, littleEndian: true, records: recs }).subarray(16);
      } finally {
        m.unlockRead();
      }
    }
    const out = this.pending.subarray(0, maxBytes);
    this.pending = this.pending.subarray(out.length);
    return out;
  }
}

/** Reads a whole binary dump; ESTALE if a reset lands part-way (`between` runs between reads, for tests). */
export function readBinDump(map: SharedStackMap, between?: (pass: number) => void, readBytes = 4096): Uint8Array | typeof ESTALE {
  const r = new BinDumpReader(map, readBytes);
  const parts: Uint8Array[] = [];
  try {
    for (let pass = 0; ; pass++) {
      between?.(pass);
      const c = r.read(readBytes);
      if (c === ESTALE) return ESTALE;
      if (c === null) break;
      parts.push(c.slice());
    }
  } finally {
    r.close();
  }
  return concatBytes(parts);
}

/** Decodes a native little-endian stack_map_bin (as BinDumpReader writes it). */
export function decodeBinDump(bytes: Uint8Array): MapDump {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = dv.getUint32(4, true);
  const nr = dv.getUint32(8, true);
  const generation = version >= 2 ? dv.getUint32(12, true) : null;
  const records: DumpRecord[] = [];
  let off = 16;
  for (let i = 0; i < nr; i++) {
    const slot = dv.getUint32(off, true);
    const depth = dv.getUint32(off + 4, true);
    const refCount = dv.getUint32(off + 8, true);
    off += 16;
    const ips = new BigUint64Array(depth);
    for (let j = 0; j < depth; j++, off += 8) ips[j] = dv.getBigUint64(off, true);
    records.push({ slot, generation, refCount, ips });
  }
  return { format: 'bin', generation, records, generationsSeen: generation === null ? [] : [generation] };
}

/** The text export, `recordsPerPass` records per pass; `between` runs before each pass with the slot it resumes at (tests, races). */
export function readTextDump(map: SharedStackMap, recordsPerPass = 64, between?: (pass: number, slot: number) => void): MapDump {
  const v8 = map.params.mode === 'v8';
  const records: DumpRecord[] = [];
  const gens = new Set<number>();
  const duringReset = Atomics.load(map.i32, C.RESET_BUSY) !== 0;
  const seq0 = Atomics.load(map.i32, C.RESET_SEQ);
  if (!map.allocated) return { format: 'text', generation: null, records, generationsSeen: [], uninitialized: true };
  map.openReader();
  let slot = 0;
  try {
    for (let pass = 0; slot < map.slots; pass++) {
      between?.(pass, slot);
      map.lockRead();
      try {
        const gen = map.generation;
        let n = 0;
        for (; slot < map.slots && n < recordsPerPass; slot++) {
          const elt = map.published(slot);
          if (elt < 0) continue;
          records.push({ slot, generation: v8 ? gen : null, refCount: map.elementRef(elt), ips: map.elementIps(elt) });
          gens.add(gen);
          n++;
        }
      } finally {
        map.unlockRead();
      }
    }
  } finally {
    map.closeReader();
  }
  const seen = [...gens].sort((a, b) => a - b);
  const spans = Atomics.load(map.i32, C.RESET_SEQ) !== seq0;
  return {
    format: 'text',
    generation: v8 && seen.length ? seen[0] : null,
    records,
    generationsSeen: seen,
    ...((duringReset || spans) && { duringReset: true }),
  };
}
