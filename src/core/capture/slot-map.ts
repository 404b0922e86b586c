// A dump's (or a generation's) slots by number: SlotMap, a slot number's row in the rows of an
// index (dumps.ts's DumpIndex), and DumpSlot, one row read as a slot.
import { Growable } from '../base/growable.ts';

/** The rows a SlotMap's entries name: each kept slot's stack, ref_count, source and frames (DumpIndex holds them). */
export interface SlotRows {
  /** the row's stack node, interned when first asked */
  stackOfRow(row: number): number;
  refCountOfRow(row: number): number;
  sourceOfRow(row: number): number;
  /** `stackOfRow` and `refCountOfRow` of each of `rows`, into `stack` and `refCount` (one call for a map's entries, not two each) */
  rowsAsColumns(rows: Int32Array, stack: Int32Array, refCount: Float64Array): void;
  /** frame keys, leaf first */
  framesOfRow(row: number): string[];
  /** another reading of the row's stack */
  setFramesOfRow(row: number, frames: string[]): void;
  /** changes each time a row's stack or ref_count may have changed (another reading, a larger count) */
  readonly version: number;
}

/**
 * One slot of one dump, as a view of the index's columns (made when asked: the index holds no
 * object and no Map entry per slot). Its stack is interned only when first asked for (normally
 * at `DumpIndex.seal`, once every dump is in), so a reading replaced by a better one of the same
 * stack (a raw-address binary record by its symbolized text twin) never enters the stack table
 * and never counts as a distinct stack. A binary record's frames stay ids into the frame table's
 * frames (integers) until some merge reads them as strings or the stack is interned.
 */
export class DumpSlot {
  constructor(
    private readonly index: SlotRows,
    /** the slot's row in the index's columns */
    readonly row: number,
  ) {}

  /** the stack's node in the stack table */
  get stack(): number {
    return this.index.stackOfRow(this.row);
  }

  /** the largest ref_count any dump read gave it */
  get refCount(): number {
    return this.index.refCountOfRow(this.row);
  }

  /** index into the index's sources of the dump this slot came from first */
  get source(): number {
    return this.index.sourceOfRow(this.row);
  }

  /** frame keys, leaf first (the same array until the reading changes or the stack is interned) */
  get frames(): string[] {
    return this.index.framesOfRow(this.row);
  }

  /** Another reading of the same stack, with more frames named. */
  setFrames(frames: string[]): void {
    this.index.setFramesOfRow(this.row, frames);
  }
}

/** Slot numbers a SlotMap looks up in an array (below this, and not far above its count); others in a Map. */
const DIRECT_SLOTS = 1 << 22;

/**
 * A dump's (or a generation's) slots by number, in the order they came: two columns (the slot
 * number, its row in the index) and an array from slot number to entry, since slot numbers are
 * dense (a Map only for numbers far above the count, which a file may give). Read as a
 * `ReadonlyMap` of DumpSlot views, or entry by entry (`slotAt`, `stackAt`, `refCountAt`) by code
 * that goes through every slot.
 */
export class SlotMap {
  private readonly numbers = new Growable(Float64Array, 256);
  private readonly rows = new Growable(Int32Array, 256);
  /** slot number -> entry + 1 (0: none) */
  private direct: Int32Array = new Int32Array(0);
  private far: Map<number, number> | null = null;

  constructor(private readonly index: SlotRows) {}

  get size(): number {
    return this.numbers.length;
  }

  /** The entry of slot `slot`, or -1. */
  private entryOf(slot: number): number {
    if (slot >= 0 && slot < this.direct.length) {
      const e = this.direct[slot];
      if (e > 0) return e - 1;
    }
    const f = this.far?.get(slot);
    return f === undefined ? -1 : f;
  }

  /** Slot `slot`'s row in the index, or -1. */
  rowOf(slot: number): number {
    const e = this.entryOf(slot);
    return e < 0 ? -1 : this.rows.get(e);
  }

  /** Adds slot `slot` (not in the map) at row `row`. */
  add(slot: number, row: number): void {
    const e = this.numbers.length;
    this.numbers.push(slot);
    this.rows.push(row);
    this.place(slot, e);
  }

  /** Adds the slots `slots` (none in the map, none twice) at rows `firstRow`, `firstRow + 1`, ...: `add` for a whole dump at once. */
  addRun(slots: Uint32Array, firstRow: number): void {
    const e0 = this.numbers.length;
    const n = slots.length;
    this.numbers.append(slots, 0, n);
    const rows = new Int32Array(n);
    for (let i = 0; i < n; i++) rows[i] = firstRow + i;
    this.rows.append(rows, 0, n);
    for (let i = 0; i < n; i++) this.place(slots[i], e0 + i);
  }

  /** Slot `slot` found at entry `e`: in the array when its number is dense enough, else in the Map. */
  private place(slot: number, e: number): void {
    if (Number.isInteger(slot) && slot >= 0 && slot < DIRECT_SLOTS && slot <= 4 * e + 1024) {
      if (slot >= this.direct.length) {
        const grown = new Int32Array(Math.min(DIRECT_SLOTS, Math.max(1024, 2 * this.direct.length, slot + 1)));
        grown.set(this.direct);
        this.direct = grown;
      }
      this.direct[slot] = e + 1;
    } else (this.far ??= new Map()).set(slot, e);
  }

  has(slot: number): boolean {
    return this.entryOf(slot) >= 0;
  }

  get(slot: number): DumpSlot | undefined {
    const r = this.rowOf(slot);
    return r < 0 ? undefined : new DumpSlot(this.index, r);
  }

  /** Entry `i`'s slot number, its row, its stack and ref_count, i in [0, size) (the order the slots came). */
  slotAt(i: number): number {
    return this.numbers.get(i);
  }
  rowAt(i: number): number {
    return this.rows.get(i);
  }
  stackAt(i: number): number {
    return this.index.stackOfRow(this.rows.get(i));
  }
  refCountAt(i: number): number {
    return this.index.refCountOfRow(this.rows.get(i));
  }

  /**
   * Every entry's slot number, stack and ref_count as columns, in the order the slots came: for
   * code that goes through every slot (a page of rows looking for its stacks' slots), where a
   * call per entry and per field was most of a pass over 262,144 slots.
   */
  columns(): { slot: Float64Array; stack: Int32Array; refCount: Float64Array } {
    // made once while neither the entries nor the index's rows change: a page of top stacks reads
    // them twice (its rows' slots, their ref_counts), each of 262,144 slots a gather from the index
    const c = this.cols;
    if (c !== null && c.size === this.size && c.version === this.index.version) return c.columns;
    const rows = this.rows.raw();
    const stack = new Int32Array(rows.length);
    const refCount = new Float64Array(rows.length);
    this.index.rowsAsColumns(rows, stack, refCount);
    const columns = { slot: this.numbers.raw(), stack, refCount };
    this.cols = { size: this.size, version: this.index.version, columns };
    return columns;
  }
  private cols: { size: number; version: number; columns: { slot: Float64Array; stack: Int32Array; refCount: Float64Array } } | null = null;

  *keys(): IterableIterator<number> {
    for (let i = 0; i < this.size; i++) yield this.numbers.get(i);
  }

  *values(): IterableIterator<DumpSlot> {
    for (let i = 0; i < this.size; i++) yield new DumpSlot(this.index, this.rows.get(i));
  }

  *entries(): IterableIterator<[number, DumpSlot]> {
    for (let i = 0; i < this.size; i++) yield [this.numbers.get(i), new DumpSlot(this.index, this.rows.get(i))];
  }

  [Symbol.iterator](): IterableIterator<[number, DumpSlot]> {
    return this.entries();
  }

  forEach(fn: (value: DumpSlot, key: number, map: SlotMap) => void): void {
    for (let i = 0; i < this.size; i++) fn(new DumpSlot(this.index, this.rows.get(i)), this.numbers.get(i), this);
  }
}
