import type { DiagnosticLog } from '../formats/diagnostics.ts';
import type { Symbolizer } from '../formats/symbolizer.ts';
import type { DumpColumns, ParsedDump } from '../formats/types.ts';
import { Growable } from '../base/growable.ts';
import { IpPool } from './ip-pool.ts';
import { DumpSlot, SlotMap, type SlotRows } from './slot-map.ts';
import type { StackTable } from './stack-table.ts';

export interface DumpSource {
  file: string;
  format: ParsedDump['format'];
  version: string;
  generation: number | null;
  records: number;
}

/** A generation's map as rebuilt from every dump of it (text and binary merged slot by slot). */
export interface GenerationDump {
  generation: number;
  slots: SlotMap;
  sources: number[];
}

/** A dump with no generation (bin v1, v7 text, dump JSON): kept apart, since none can be paired. */
export interface GenerationlessDump {
  source: number;
  slots: SlotMap;
}

/**
 * One slot across every generation-less dump: what a v7 id naming it resolves to. Dumps that
 * hold the same stack (one of them perhaps with raw addresses only) agree; dumps that hold
 * different stacks make the slot ambiguous.
 */
export interface GenerationlessSlot {
  /** the most readable reading of the slot's stack (the first one when ambiguous) */
  best: DumpSlot;
  /** every dump's reading of this slot, in load order */
  readings: DumpSlot[];
  ambiguous: boolean;
}

const isAddressFrame = (f: string) => f.startsWith('0x');

/**
 * Two readings of one stack: equal frame by frame, except where one side has only a raw address
 * (a binary dump without kallsyms) and the other a symbol. Without symbols the address cannot be
 * checked against the name, so this is "nothing contradicts it", not proof.
 */
export function sameStackModuloSymbols(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x !== y && isAddressFrame(x) === isAddressFrame(y)) return false;
  }
  return true;
}

/** `a` with each raw address replaced by `b`'s symbol at that depth (the two agree, see above). */
function mergeReadings(a: string[], b: readonly string[]): string[] {
  let out: string[] | null = null;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i] && isAddressFrame(a[i])) (out ??= a.slice())[i] = b[i];
  }
  return out ?? a;
}

/** How this dump's reading of a slot (`a`) differs from another dump's (`b`), for a diagnostic. */
function difference(a: readonly string[], b: readonly string[]): string {
  if (a.length !== b.length) return `depth ${a.length} here, ${b.length} there`;
  let i = 0;
  while (i < a.length && (a[i] === b[i] || isAddressFrame(a[i]) !== isAddressFrame(b[i]))) i++;
  const clip = (s: string) => (s.length > 60 ? s.slice(0, 57) + '...' : s);
  return `frame ${i} of ${a.length}: ${clip(a[i])} here, ${clip(b[i])} there`;
}

interface Disagreement {
  count: number;
  /** slots this dump shares with earlier generation-less dumps */
  shared: number;
  /** the first slot that disagrees, where it is, which dump it disagrees with and how */
  slot: number;
  where: number;
  other: number;
  detail: string;
}

/** The dump being added, for its records. */
interface Adding {
  source: number;
  unit: 'line' | 'offset';
  diagnostics: DiagnosticLog;
  disagree: Disagreement;
  /** its generation-less slots, once it has one */
  own: GenerationlessDump | null;
  /** the generation its last record went to */
  gen: GenerationDump | null;
  /** the generation this dump made (none had it before), and the largest slot it put there or in `own` */
  fresh: GenerationDump | null;
  freshMax: number;
  ownMax: number;
}

export class DumpIndex implements SlotRows {
  /** bumped when a kept row's stack or ref_count changes (SlotMap.columns is made again) */
  version = 0;
  readonly sources: DumpSource[] = [];
  readonly byGeneration = new Map<number, GenerationDump>();
  readonly generationless: GenerationlessDump[] = [];
  /** every slot any generation-less dump holds, merged across them (what a v7 id resolves to) */
  readonly generationlessSlots = new Map<number, GenerationlessSlot>();
  /**
   * Every slot kept, a row each, in load order (the order their stacks are interned in): the dump
   * it came from first, the largest ref_count read, its node (-1 until interned) and its frames:
   * ids [start, start + depth) of pool `pool`, or (pool -1) frame keys in `text`. `text` also
   * keeps a binary reading's keys once a merge has asked for them (its ids stay what is interned).
   */
  private readonly rowSource = new Growable(Int32Array);
  private readonly rowRef = new Growable(Float64Array);
  private readonly rowNode = new Growable(Int32Array);
  private readonly rowPool = new Growable(Int32Array);
  private readonly rowStart = new Growable(Int32Array);
  private readonly rowDepth = new Growable(Int32Array);
  private readonly text = new Map<number, string[]>();

  /** binary records' frames, per symbolizer (null: read without symbols, as addresses) */
  private pools: IpPool[] = [];
  private readonly poolOf = new Map<Symbolizer | null, number>();

  constructor(
    private readonly stacks: StackTable,
    /** IpPool's `hashLimitForTests` */
    private readonly opts: { hashLimitForTests?: number } = {},
  ) {}

  /** The pool binary records are read into, symbolized by `symbolizer` (or as addresses without one). */
  private poolFor(symbolizer: Symbolizer | null): number {
    let p = this.poolOf.get(symbolizer);
    if (p === undefined) {
      p = this.pools.length;
      this.pools.push(new IpPool(this.stacks, symbolizer, this.opts));
      this.poolOf.set(symbolizer, p);
    }
    return p;
  }

  /** A new row: a slot kept (its frames as in `addRecord`); its index. */
  private keep(source: number, refCount: number, frames: string[] | null, pool: number, start: number, n: number): number {
    const row = this.rowSource.length;
    this.rowSource.push(source);
    this.rowRef.push(refCount);
    this.rowNode.push(-1);
    this.rowPool.push(frames === null ? pool : -1);
    this.rowStart.push(start);
    this.rowDepth.push(frames === null ? n : frames.length);
    if (frames !== null) this.text.set(row, frames);
    return row;
  }

  /** Every record of a binary dump's columns as new rows (`keep` for each, at once); the first row's index. */
  private keepColumns(source: number, cols: DumpColumns, pool: number, blockStart: number[]): number {
    const first = this.rowSource.length;
    const n = cols.count;
    const start = new Int32Array(n);
    for (let r = 0; r < n; r++) start[r] = blockStart[cols.block[r]] + cols.start[r];
    this.rowSource.append(new Int32Array(n).fill(source), 0, n);
    this.rowRef.append(cols.refCount, 0, n);
    this.rowNode.append(new Int32Array(n).fill(-1), 0, n);
    this.rowPool.append(new Int32Array(n).fill(pool), 0, n);
    this.rowStart.append(start, 0, n);
    this.rowDepth.append(cols.depth, 0, n);
    return first;
  }

  /** Row `row`'s stack node, interned now if it was not yet. */
  stackOfRow(row: number): number {
    const node = this.rowNode.get(row);
    if (node >= 0) return node;
    const p = this.rowPool.get(row);
    const made = p >= 0 ? this.pools[p].intern(this.rowStart.get(row), this.rowDepth.get(row)) : this.stacks.intern(this.text.get(row)!);
    this.rowNode.set(row, made);
    this.text.delete(row);
    return made;
  }

  rowsAsColumns(rows: Int32Array, stack: Int32Array, refCount: Float64Array): void {
    let nodes = this.rowNode.raw();
    const refs = this.rowRef.raw();
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      const node = nodes[row];
      if (node >= 0) stack[i] = node;
      else {
        stack[i] = this.stackOfRow(row);
        // interning wrote the column, perhaps into a new buffer
        nodes = this.rowNode.raw();
      }
      refCount[i] = refs[row];
    }
  }

  refCountOfRow(row: number): number {
    return this.rowRef.get(row);
  }

  sourceOfRow(row: number): number {
    return this.rowSource.get(row);
  }

  /** Row `row`'s frame keys, leaf first. */
  framesOfRow(row: number): string[] {
    const node = this.rowNode.get(row);
    if (node >= 0) return this.stacks.framesOf(node);
    let t = this.text.get(row);
    if (t === undefined) {
      t = this.pools[this.rowPool.get(row)].keys(this.rowStart.get(row), this.rowDepth.get(row));
      this.text.set(row, t);
    }
    return t;
  }

  /** Another reading of row `row`'s stack (interned from these keys, when it is). */
  setFramesOfRow(row: number, frames: string[]): void {
    this.version++;
    this.text.set(row, frames);
    this.rowPool.set(row, -1);
    this.rowDepth.set(row, frames.length);
    this.rowNode.set(row, -1);
  }

  /** Every slot's stack node, row by row (sealed first: each row's stack interned), each slot of every dump once: a view of the index's column. */
  slotStacks(): Int32Array {
    this.seal();
    return this.rowNode.raw();
  }

  /**
   * Adds a dump's slots. Raw ips (binary dumps, dump JSON without symbols) are symbolized by
   * `symbolizer` (ingest passes the one over the capture's kallsyms), else kept as address keys.
   */
  add(dump: ParsedDump, diagnostics: DiagnosticLog, symbolizer: Symbolizer | null = null): void {
    const source = this.sources.length;
    const cols = dump.columns;
    this.sources.push({
      file: dump.file,
      format: dump.format,
      version: dump.version,
      generation: dump.generation,
      records: cols ? cols.count : dump.records.length,
    });
    const unit: 'line' | 'offset' = dump.format === 'stack_map_bin' ? 'offset' : 'line';
    /** this dump's generation-less slots that an earlier dump holds a different stack in */
    const disagree: Disagreement = { count: 0, shared: 0, slot: -1, other: -1, where: 0, detail: '' };
    const pool = this.poolFor(symbolizer);
    const ips = this.pools[pool];
    const at: Adding = { source, unit, diagnostics, disagree, own: null, gen: null, fresh: null, freshMax: -1, ownMax: -1 };
    if (cols) {
      // a binary dump, read as columns: every record's ips become ids in two passes over the halves
      this.stacks.frames.reserve(cols.ips);
      const base = ips.addColumns(cols);
      const blockStart: number[] = [];
      for (let b = 0, s = base; b < cols.ipHi.length; s += cols.ipHi[b++].length) blockStart.push(s);
      const generation = dump.generation;
      if (generation !== null && cols.count > 0 && !this.byGeneration.has(generation) && ascending(cols.slot, cols.count)) {
        // a generation no dump had, its slots ascending: every record a new slot, none to merge and
        // none repeated, so the records are kept as they are, as columns (a call per record and
        // six pushes cost 23-50 ms of a 262,144-record dump)
        const slots = new SlotMap(this);
        this.byGeneration.set(generation, { generation, slots, sources: [source] });
        slots.addRun(cols.slot.subarray(0, cols.count), this.keepColumns(source, cols, pool, blockStart));
      } else {
        for (let r = 0; r < cols.count; r++) {
          this.addRecord(at, cols.slot[r], generation, cols.refCount[r], cols.where[r], null, pool, blockStart[cols.block[r]] + cols.start[r], cols.depth[r]);
        }
      }
    } else {
      for (const rec of dump.records) {
        if (rec.frames || !rec.ips) this.addRecord(at, rec.slot, rec.generation, rec.refCount, rec.where, rec.frames ?? [], -1, 0, 0);
        else this.addRecord(at, rec.slot, rec.generation, rec.refCount, rec.where, null, pool, ips.add(rec.ips), rec.ips.length);
      }
    }
    if (disagree.count > 0) {
      const d = disagree;
      const other = this.sources[d.other].file;
      report(
        diagnostics,
        unit,
        d.where,
        `slots that hold other stacks than in earlier dumps: ${d.count} of the ${d.shared} this dump shares with them ` +
          `(the first, slot ${d.slot}, against ${other}: ${d.detail}). v7 ids naming them are ambiguous and left unresolved; ` +
          'the dumps were probably read on either side of a reset',
      );
    }
  }

  /** One record of the dump being added (`at`): frame keys, or ids [start, start + n) of pool `pool`. */
  private addRecord(
    at: Adding,
    slotNo: number,
    generation: number | null,
    refCount: number,
    where: number,
    frames: string[] | null,
    pool: number,
    start: number,
    n: number,
  ): void {
    const source = at.source;
    if (generation === null) {
      let own = at.own;
      if (!own) {
        own = at.own = { source, slots: new SlotMap(this) };
        this.generationless.push(own);
      }
      // own is this dump's alone: a slot above every one it holds is not there (a dump's slots ascend)
      if (slotNo <= at.ownMax && own.slots.has(slotNo)) {
        report(at.diagnostics, at.unit, where, `slot ${slotNo} appears twice in one dump; the first is kept`);
        return;
      }
      if (slotNo > at.ownMax) at.ownMax = slotNo;
      const row = this.keep(source, refCount, frames, pool, start, n);
      own.slots.add(slotNo, row);
      this.addGenerationless(slotNo, new DumpSlot(this, row), where, at.disagree);
      return;
    }
    let gen = at.gen;
    if (gen === null || gen.generation !== generation) {
      gen = this.byGeneration.get(generation) ?? null;
      if (!gen) {
        gen = { generation, slots: new SlotMap(this), sources: [] };
        this.byGeneration.set(generation, gen);
        at.fresh = gen;
        at.freshMax = -1;
      }
      const srcs = gen.sources;
      if (!srcs.includes(source)) srcs.push(source);
      at.gen = gen;
    }
    // in a generation this dump made, a slot above every one it put there is not there yet
    const above = gen === at.fresh && slotNo > at.freshMax;
    const prev = above ? -1 : gen.slots.rowOf(slotNo);
    if (prev < 0) {
      gen.slots.add(slotNo, this.keep(source, refCount, frames, pool, start, n));
      if (above) at.freshMax = slotNo;
      return;
    }
    this.merge(gen, slotNo, prev, frames ?? this.pools[pool].keys(start, n), refCount, source, at.diagnostics, at.unit, where);
  }

  /** The same raw-versus-symbolized rule as `merge`, across dumps that have no generation. */
  private addGenerationless(slotNo: number, slot: DumpSlot, where: number, disagree: Disagreement): void {
    const entry = this.generationlessSlots.get(slotNo);
    if (!entry) {
      this.generationlessSlots.set(slotNo, { best: slot, readings: [slot], ambiguous: false });
      return;
    }
    entry.readings.push(slot);
    disagree.shared++;
    const a = entry.best.frames;
    const b = slot.frames;
    if (a === b) return;
    if (sameStackModuloSymbols(a, b)) {
      if (entry.ambiguous) return;
      // one reading lacks symbols somewhere: one stack, read with every name either side has
      const merged = mergeReadings(a, b);
      for (const r of entry.readings) if (r.frames !== merged) r.setFrames(merged);
      return;
    }
    entry.ambiguous = true;
    if (disagree.count++ === 0) Object.assign(disagree, { slot: slotNo, where, other: entry.best.source, detail: difference(b, a) });
  }

  /** Two dumps of one generation hold the same slot: keep the symbolized stack, report a disagreement. */
  private merge(
    gen: GenerationDump,
    slotNo: number,
    prev: number,
    frames: string[],
    refCount: number,
    source: number,
    diagnostics: DiagnosticLog,
    unit: 'line' | 'offset',
    where: number,
  ): void {
    const prevSource = this.rowSource.get(prev);
    if (prevSource === source) {
      report(diagnostics, unit, where, `generation ${gen.generation} slot ${slotNo} appears twice in one dump; the first is kept`);
      return;
    }
    // ref_count is not a payload snapshot: a later read may count more; keep the larger
    const larger = Math.max(this.rowRef.get(prev), refCount);
    if (larger !== this.rowRef.get(prev)) {
      this.rowRef.set(prev, larger);
      this.version++;
    }
    const a = this.framesOfRow(prev);
    if (sameStackModuloSymbols(a, frames)) {
      // one side only lacks symbols: same stack, keep the readable one
      const merged = mergeReadings(a, frames);
      if (merged !== a) this.setFramesOfRow(prev, merged);
      return;
    }
    const other = this.sources[prevSource].file;
    report(diagnostics, unit, where, `generation ${gen.generation} slot ${slotNo} disagrees with ${other} (${difference(frames, a)}); ${other} is kept`);
  }

  /** Interns every kept slot's stack, in load order. Call once every dump is added. */
  seal(): void {
    // at most one node per frame not interned yet: room for them at once, not by doubling
    const nodes = this.rowNode.raw();
    const depth = this.rowDepth.raw();
    let extra = 0;
    let rows = 0;
    for (let r = 0; r < nodes.length; r++) {
      if (nodes[r] < 0) {
        extra += depth[r];
        rows++;
      }
    }
    this.stacks.reserve(extra, rows);
    for (let r = 0; r < nodes.length; r++) if (nodes[r] < 0) this.stackOfRow(r);
    // every reading is a node now: the ids and the pools' tables are not needed again
    this.pools = [];
    this.poolOf.clear();
  }

  /** Every generation number any dump holds, sorted. */
  generations(): number[] {
    return [...this.byGeneration.keys()].sort((x, y) => x - y);
  }
}

/** Whether `slots[0, n)` strictly ascend. */
function ascending(slots: Uint32Array, n: number): boolean {
  for (let r = 1; r < n; r++) if (slots[r] <= slots[r - 1]) return false;
  return true;
}

function report(d: DiagnosticLog, unit: 'line' | 'offset', where: number, message: string): void {
  if (unit === 'line') d.atLine(where, message);
  else d.atOffset(where, message);
}
