import { TRAMPOLINE } from '../formats/frames.ts';
import { Located, type Symbolizer } from '../formats/kallsyms.ts';
import type { DumpColumns } from '../formats/types.ts';
import type { FrameTable } from './frame-table.ts';
import type { StackTable } from './stack-table.ts';

/** A record's ips as 32-bit halves: which half comes first in a BigUint64Array's words. */
const LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * What binary records' frames are read into: every record's frame ids (of the stack table's
 * frame table) in one pool, since a typed array per record would be 262,144 small buffers for
 * the GC to track. Each ip is located in the symbol file on its own (Symbolizer.locate) and
 * becomes a frame of integers, (function, offset) or the address: no string per ip, no cache of
 * ips. Frames enter the frame table here; stacks enter the stack table only at `seal`.
 */
export class IpPool {
  ids = new Int32Array(1 << 16);
  length = 0;
  /** one record's located symbols and offsets */
  private sym = new Int32Array(256);
  private off = new Int32Array(256);
  /** each symbol's function in the frame table, -1 until a frame names it */
  private fnOfSym: Int32Array;
  private trampoline = -1;
  private readonly frames: FrameTable;
  constructor(
    private readonly table: StackTable,
    private readonly symbolizer: Symbolizer | null,
  ) {
    this.frames = table.frames;
    this.fnOfSym = new Int32Array(symbolizer ? symbolizer.names.length : 0).fill(-1);
  }

  /** Room for `n` more ids. */
  reserve(n: number): void {
    const start = this.length;
    if (start + n > this.ids.length) {
      const next = new Int32Array(Math.max(2 * this.ids.length, start + n));
      next.set(this.ids.subarray(0, start));
      this.ids = next;
    }
  }

  /** Appends the frames of the `n` ips `hi[from + i]:lo[from + i]`; returns where they start. */
  addHalves(hi: Uint32Array, lo: Uint32Array, from: number, n: number): number {
    const start = this.length;
    this.reserve(n);
    if (this.sym.length < n) {
      this.sym = new Int32Array(n);
      this.off = new Int32Array(n);
    }
    const sym = this.sym;
    const off = this.off;
    const ids = this.ids;
    const frames = this.frames;
    const symbolizer = this.symbolizer;
    if (symbolizer) symbolizer.locate(hi, lo, from, n, sym, off, 0);
    else for (let i = 0; i < n; i++) sym[i] = hi[from + i] === 0 && lo[from + i] === 0x7fffffff ? Located.Trampoline : Located.Raw;
    const fnOfSym = this.fnOfSym;
    for (let i = 0; i < n; i++) {
      const s = sym[i];
      let id: number;
      if (s >= 0) {
        let fn = fnOfSym[s];
        if (fn < 0) fn = fnOfSym[s] = frames.functions.intern(symbolizer!.names[s]);
        id = frames.site(fn, off[i]);
      } else if (s === Located.Miss || s === Located.Raw) id = frames.address(hi[from + i], lo[from + i]);
      else if (s === Located.Trampoline) id = this.trampoline >= 0 ? this.trampoline : (this.trampoline = frames.intern(TRAMPOLINE));
      else id = frames.intern(symbolizer!.resolve(hi[from + i], lo[from + i]));
      ids[start + i] = id;
    }
    this.length = start + n;
    return start;
  }

  /** Appends the frames of `ips`; returns where they start. */
  add(ips: BigUint64Array): number {
    const w = new Uint32Array(ips.buffer, ips.byteOffset, 2 * ips.length);
    const n = ips.length;
    const hi = new Uint32Array(n);
    const lo = new Uint32Array(n);
    const l = LITTLE ? 0 : 1;
    for (let i = 0; i < n; i++) {
      hi[i] = w[2 * i + 1 - l];
      lo[i] = w[2 * i + l];
    }
    return this.addHalves(hi, lo, 0, n);
  }

  /** Appends the frames of record `r` of a binary dump's columns; returns where they start. */
  addRecord(c: DumpColumns, r: number): number {
    const b = c.block[r];
    return this.addHalves(c.ipHi[b], c.ipLo[b], c.start[r], c.depth[r]);
  }

  keys(start: number, n: number): string[] {
    const out: string[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = this.frames.name(this.ids[start + i]);
    return out;
  }

  /** Interns the stack of frames [start, start + n) into the stack table. */
  intern(start: number, n: number): number {
    return this.table.internFrameIds(this.ids, start, start + n);
  }
}
