import type { DiagnosticLog } from '../formats/diagnostics.ts';
import type { Symbolizer } from '../formats/kallsyms.ts';
import type { ParsedDump } from '../formats/types.ts';
import { IpPool } from './ip-pool.ts';
import type { StackTable } from './stack-table.ts';

/**
 * One slot of one dump. Its stack is interned only when first asked for (normally at
 * `DumpIndex.seal`, once every dump is in), so a reading replaced by a better one of the same
 * stack (a raw-address binary record by its symbolized text twin) never enters the stack
 * table and never counts as a distinct stack. A binary record's frames stay ids into the
 * frame table's frames (integers) until some merge reads them as strings or the stack is interned.
 */
export class DumpSlot {
  private node = -1;

  constructor(
    private readonly table: StackTable,
    /** frame keys, leaf first; null with a pool: the frames are ids [start, start + n) of it */
    private pending: string[] | null,
    private pool: IpPool | null,
    private readonly start: number,
    private readonly n: number,
    public refCount: number,
    /** index into DumpIndex.sources of the dump this slot came from first */
    readonly source: number,
  ) {}

  /** Frames not interned yet (what interning may add as nodes at most). */
  get pendingDepth(): number {
    if (this.node >= 0) return 0;
    return this.pending ? this.pending.length : this.n;
  }

  /** the stack's node in the stack table */
  get stack(): number {
    if (this.node < 0) {
      const p = this.pool;
      this.node = p && this.pending === null ? p.intern(this.start, this.n) : this.table.intern(this.pending!);
      this.pending = null;
      this.pool = null;
    }
    return this.node;
  }

  /** frame keys, leaf first */
  get frames(): string[] {
    if (this.pending === null && this.pool !== null) this.pending = this.pool.keys(this.start, this.n);
    return this.pending ?? this.table.framesOf(this.node);
  }

  /** Another reading of the same stack, with more frames named. */
  setFrames(frames: string[]): void {
    this.pending = frames;
    this.pool = null;
    this.node = -1;
  }
}

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
  slots: Map<number, DumpSlot>;
  sources: number[];
}

/** A dump with no generation (bin v1, v7 text, dump JSON): kept apart, since none can be paired. */
export interface GenerationlessDump {
  source: number;
  slots: Map<number, DumpSlot>;
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

export class DumpIndex {
  readonly sources: DumpSource[] = [];
  readonly byGeneration = new Map<number, GenerationDump>();
  readonly generationless: GenerationlessDump[] = [];
  /** every slot any generation-less dump holds, merged across them (what a v7 id resolves to) */
  readonly generationlessSlots = new Map<number, GenerationlessSlot>();
  /** every slot kept, in load order: the order their stacks are interned in */
  private readonly kept: DumpSlot[] = [];

  /** binary records' frames, per symbolizer (null: read without symbols, as addresses) */
  private readonly pools = new Map<Symbolizer | null, IpPool>();

  constructor(private readonly stacks: StackTable) {}

  /** The pool binary records are read into, symbolized by `symbolizer` (or as addresses without one). */
  private poolFor(symbolizer: Symbolizer | null): IpPool {
    let pool = this.pools.get(symbolizer);
    if (!pool) this.pools.set(symbolizer, (pool = new IpPool(this.stacks, symbolizer)));
    return pool;
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
    const at: Adding = { source, unit, diagnostics, disagree, own: null, gen: null, fresh: null, freshMax: -1, ownMax: -1 };
    if (cols) {
      // a binary dump, read as columns: every record's ips become ids in one pass over the halves
      pool.reserve(cols.ips);
      this.stacks.frames.reserve(cols.ips);
      for (let r = 0; r < cols.count; r++) {
        const start = pool.addRecord(cols, r);
        this.addRecord(at, cols.slot[r], dump.generation, cols.refCount[r], cols.where[r], null, pool, start, cols.depth[r]);
      }
    } else {
      for (const rec of dump.records) {
        if (rec.frames || !rec.ips) this.addRecord(at, rec.slot, rec.generation, rec.refCount, rec.where, rec.frames ?? [], null, 0, 0);
        else this.addRecord(at, rec.slot, rec.generation, rec.refCount, rec.where, null, pool, pool.add(rec.ips), rec.ips.length);
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

  /** One record of the dump being added (`at`): frame keys, or ids [start, start + n) of `pool`. */
  private addRecord(
    at: Adding,
    slotNo: number,
    generation: number | null,
    refCount: number,
    where: number,
    frames: string[] | null,
    pool: IpPool | null,
    start: number,
    n: number,
  ): void {
    const source = at.source;
    if (generation === null) {
      let own = at.own;
      if (!own) {
        own = at.own = { source, slots: new Map() };
        this.generationless.push(own);
      }
      // own is this dump's alone: a slot above every one it holds is not there (a dump's slots ascend)
      if (slotNo <= at.ownMax && own.slots.has(slotNo)) {
        report(at.diagnostics, at.unit, where, `slot ${slotNo} appears twice in one dump; the first is kept`);
        return;
      }
      if (slotNo > at.ownMax) at.ownMax = slotNo;
      const slot = this.keep(new DumpSlot(this.stacks, frames, pool, start, n, refCount, source));
      own.slots.set(slotNo, slot);
      this.addGenerationless(slotNo, slot, where, at.disagree);
      return;
    }
    let gen = at.gen;
    if (gen === null || gen.generation !== generation) {
      gen = this.byGeneration.get(generation) ?? null;
      if (!gen) {
        gen = { generation, slots: new Map(), sources: [] };
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
    const prev = above ? undefined : gen.slots.get(slotNo);
    if (!prev) {
      gen.slots.set(slotNo, this.keep(new DumpSlot(this.stacks, frames, pool, start, n, refCount, source)));
      if (above) at.freshMax = slotNo;
      return;
    }
    this.merge(gen, slotNo, prev, frames ?? pool!.keys(start, n), refCount, source, at.diagnostics, at.unit, where);
  }

  private keep(slot: DumpSlot): DumpSlot {
    this.kept.push(slot);
    return slot;
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
    prev: DumpSlot,
    frames: string[],
    refCount: number,
    source: number,
    diagnostics: DiagnosticLog,
    unit: 'line' | 'offset',
    where: number,
  ): void {
    if (prev.source === source) {
      report(diagnostics, unit, where, `generation ${gen.generation} slot ${slotNo} appears twice in one dump; the first is kept`);
      return;
    }
    // ref_count is not a payload snapshot: a later read may count more; keep the larger
    prev.refCount = Math.max(prev.refCount, refCount);
    const a = prev.frames;
    if (sameStackModuloSymbols(a, frames)) {
      // one side only lacks symbols: same stack, keep the readable one
      const merged = mergeReadings(a, frames);
      if (merged !== a) prev.setFrames(merged);
      return;
    }
    const other = this.sources[prev.source].file;
    report(diagnostics, unit, where, `generation ${gen.generation} slot ${slotNo} disagrees with ${other} (${difference(frames, a)}); ${other} is kept`);
  }

  /** Interns every kept slot's stack, in load order. Call once every dump is added. */
  seal(): void {
    // at most one node per frame not interned yet: room for them at once, not by doubling
    let extra = 0;
    for (const s of this.kept) extra += s.pendingDepth;
    this.stacks.reserve(extra);
    for (const s of this.kept) void s.stack;
  }

  /** Every generation number any dump holds, sorted. */
  generations(): number[] {
    return [...this.byGeneration.keys()].sort((x, y) => x - y);
  }
}

function report(d: DiagnosticLog, unit: 'line' | 'offset', where: number, message: string): void {
  if (unit === 'line') d.atLine(where, message);
  else d.atOffset(where, message);
}
