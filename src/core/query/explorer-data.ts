import { zeroed } from '../base/zeroed.ts';
import { DumpRefs } from './dump-refs.ts';
import { defaultGranularity, functionTree, type FunctionTree, type Granularity } from '../capture/function-tree.ts';
import type { Capture } from '../capture/ingest.ts';
import { alignLedger } from '../capture/sim-truth.ts';
import type { Selection } from './api.ts';
import {
  eventColumns,
  generationsFitInt32,
  isOccurrence,
  lowerBound,
  NO_GEN,
  recordGenerations,
  SelectionFilter,
  sortedOrder,
  upperBound,
} from './selection.ts';
import type { StackTable } from '../capture/stack-table.ts';
import { cookieSlots, int32, type TraceColumns } from '../capture/trace-columns.ts';
import type { Ints } from '../capture/trace-columns-data.ts';
import { countOccurrences, type Occurrences } from '../capture/stack-occurrences.ts';

/** Names of the frames at one granularity, and each frame string's index into them. */
export interface FrameView {
  names: readonly string[];
  of: Int32Array;
}

/** A stack's occurrences in a selection (the capture layer's count): distinct stacks in first-seen (file) order. */
export type { Occurrences };

/**
 * What the explorer precomputes once per capture (typed arrays, one pass each): effective
 * generations of records and events, each event's record status, timestamp order of events
 * and records (null when the file order already is), function names of frames, and the
 * dumps' ref_counts by generation and stack.
 */
export class ExplorerData {
  readonly t: TraceColumns;
  readonly stacks: StackTable;
  /** the trace's event columns as typed arrays (capture/trace-columns.ts) */
  /** cpu and task as narrow as the capture stores them (an Int8Array for under 128 CPUs): 6 bytes an event less than Int32 */
  readonly ev: { ts: Float64Array; cpu: Ints; readonly pid: Int32Array; task: Ints; readonly name: Int32Array; record: Int32Array };
  readonly rec: { readonly ts: Float64Array; readonly cpu: Int32Array; kind: Uint8Array; readonly slot: Float64Array; stack: Int32Array; status: Uint8Array };
  /** the stack table's nodes (a copy: small next to the trace) */
  /** `depth` made when first read (one pass over every node: a table's export; a stack's depth alone is `depthOf`) */
  readonly node: { parent: Int32Array; frame: Int32Array; readonly depth: Int32Array };
  /** per record and per event: the generation (a u32) or NO_GEN; Int32Array when every generation is below 2^31 (generationsFitInt32) */
  readonly recGen: Float64Array | Int32Array;
  readonly evGen: Float64Array | Int32Array;
  readonly evStatus: Uint8Array;
  /** sorted position -> event index; null: identity */
  readonly evOrder: Int32Array | null;
  /** made with the records' times on the first query by a time range (recordSpan) */
  get recOrder(): Int32Array | null {
    if (this.recOrderMade === undefined) this.recOrderMade = sortedOrder(this.rec.ts);
    return this.recOrderMade;
  }
  private recOrderMade: Int32Array | null | undefined = undefined;
  /** frame string index -> function index into fnNames */
  readonly fnOfFrame: Int32Array;
  readonly fnNames: string[];
  /** the frames' granularity when a request names none (function-tree.ts) */
  readonly granularity: Granularity;
  /** whether records carry weights of their own (perf's period) */
  readonly hasWeights: boolean;
  /**
   * Per record: its weight (1 where it has none); a field's weights as Int32Array when every one
   * fits (weighted-view.ts). Made when first read: a capture without weights counts its records
   * without it (a column of ones per event and per record: 77 MB for a 1 GiB trace's 4.8M).
   */
  get recWeight(): Float64Array | Int32Array {
    return (this.recWeightMade ??= this.t.recWeight.raw());
  }
  private recWeightMade: Float64Array | Int32Array | null = null;
  /** the dumps' ref_count of each stack by generation (dump-refs.ts) */
  readonly refs: DumpRefs;
  /** dump formats by generation key */
  readonly dumpKinds = new Map<number, string[]>();

  constructor(readonly capture: Capture) {
    this.t = capture.trace;
    this.stacks = capture.stacks;
    const t = this.t;
    // the capture stores small integers narrow and derives evRecord and the records' times and
    // CPUs from their events (trace-columns.ts): here they are full-width arrays, made once
    // what few queries read (the tables, an event's details, a grouping) is made when first read:
    // 10M events hold 28 bytes an event less (a pid, a name, a slot, a record's time and CPU at full width)
    let pid: Int32Array | undefined;
    let name: Int32Array | undefined;
    let slot: Float64Array | undefined;
    let recCpu: Int32Array | undefined;
    let recTs: Float64Array | undefined;
    this.ev = {
      ts: t.evTs.raw(),
      cpu: t.evCpu.raw(),
      get pid() {
        return (pid ??= int32(t.evPid.raw()));
      },
      task: t.evTask.raw(),
      get name() {
        return (name ??= int32(t.evName.raw()));
      },
      record: t.evRecord.raw(),
    };
    this.rec = {
      // a range's records, the tables, a stack's times (the load reads them through eachRecordTime)
      get ts() {
        return (recTs ??= t.recTs.raw());
      },
      // a selection by CPU, the tables
      get cpu() {
        return (recCpu ??= t.recCpu.raw());
      },
      kind: t.recKind.raw(),
      // u32 slots, -1 where a record has none (cookieSlots)
      get slot() {
        return (slot ??= cookieSlots(t.recKind.raw(), t.recSlot.raw()));
      },
      stack: t.recStack.raw(),
      status: t.recStatus.raw(),
    };
    const cols = this.stacks.columns();
    const stacks = this.stacks;
    let depth: Int32Array | null = null;
    this.node = {
      parent: cols.parent,
      frame: cols.frame,
      // filled by the first query that reads depths of every node (a table's export)
      get depth() {
        return (depth ??= stacks.depths());
      },
    };
    // a generation in force does not carry from one trace file into the next (segments.ts)
    const rawGen = t.recGen.raw();
    const make: new (n: number) => Float64Array | Int32Array = generationsFitInt32(this.rec.kind, rawGen) ? Int32Array : Float64Array;
    this.recGen = recordGenerations(
      { kind: this.rec.kind, gen: rawGen },
      t.fileStarts.map((f) => f.records),
      make,
    );
    const ev = eventColumns(
      this.ev.record,
      this.rec.status,
      this.recGen,
      t.fileStarts.map((f) => f.events),
      make,
    );
    this.evGen = ev.gen;
    this.evStatus = ev.status;
    this.evOrder = sortedOrder(this.ev.ts);

    // each frame's function needs no tree (the frame table knows it); the function tree is made
    // when something asks for paths by function (`functions`)
    // a view: a capture's frame table is a snapshot, whose frames and their functions never change
    this.fnOfFrame = this.stacks.frames.functionIds();
    this.fnNames = this.stacks.frames.functionNames();
    this.granularity = defaultGranularity(capture.files);
    this.hasWeights = t.hasWeights;

    const d = capture.dumps;
    this.refs = new DumpRefs(d);
    for (const gd of d.byGeneration.values()) this.dumpKinds.set(gd.generation, [...new Set(gd.sources.map((i) => d.sources[i].format))].sort());
    for (const gl of d.generationless) {
      const kinds = new Set(this.dumpKinds.get(NO_GEN) ?? []);
      kinds.add(d.sources[gl.source].format);
      this.dumpKinds.set(NO_GEN, [...kinds].sort());
    }
  }

  /** a simulated run's ledger.json, lined up with the records (sim-truth.ts): each record's ledger record, -1 for none; null without a ledger that lines up */
  private ledgerIdx: Int32Array | null | undefined = undefined;
  get ledgerIndex(): Int32Array | null {
    if (this.ledgerIdx === undefined) this.ledgerIdx = this.capture.ledger ? alignLedger(this.capture).index : null;
    return this.ledgerIdx;
  }

  get eventCount(): number {
    return this.t.eventCount;
  }
  get recordCount(): number {
    return this.t.recordCount;
  }
  /** event index at sorted position p */
  evAt(p: number): number {
    return this.evOrder ? this.evOrder[p] : p;
  }
  recAt(p: number): number {
    return this.recOrder ? this.recOrder[p] : p;
  }
  /** sorted positions [p0, p1) of events with lo <= ts <= hi */
  eventSpan(lo: number, hi: number): [number, number] {
    const n = this.t.eventCount;
    const ts = this.ev.ts;
    const o = this.evOrder;
    const key = o ? (p: number) => ts[o[p]] : (p: number) => ts[p];
    return [lo === -Infinity ? 0 : lowerBound(n, key, lo), hi === Infinity ? n : upperBound(n, key, hi)];
  }
  recordSpan(lo: number, hi: number): [number, number] {
    const n = this.t.recordCount;
    const ts = this.rec.ts;
    const o = this.recOrder;
    const key = o ? (p: number) => ts[o[p]] : (p: number) => ts[p];
    return [lo === -Infinity ? 0 : lowerBound(n, key, lo), hi === Infinity ? n : upperBound(n, key, hi)];
  }

  /**
   * Where a scan of the selection's records runs: sorted positions [p0, p1) through `order`
   * (null: the position is the record index). With a range, only the records in it, in
   * timestamp order; without, every record in file order. `check`: whether each record must
   * still pass recordIn (false for ALL). Callers write the loop, so hot loops stay monomorphic:
   *
   *   for (let p = s.p0; p < s.p1; p++) { const r = s.order === null ? p : s.order[p]; if (s.check && !d.recordIn(f, r)) continue; ... }
   */
  recordScan(f: SelectionFilter): { p0: number; p1: number; order: Int32Array | null; check: boolean } {
    // every record: their count, not the length of their time column (made only for a range: 38 MB at 4.8M records)
    if (!f.hasRange) return { p0: 0, p1: this.t.recordCount, order: null, check: !f.all };
    const [p0, p1] = this.recordSpan(f.lo, f.hi);
    return { p0, p1, order: this.recOrder, check: true };
  }
  recordIn(f: SelectionFilter, r: number): boolean {
    return f.test(this.rec.ts[r], this.rec.cpu[r], this.recGen[r]);
  }
  eventScan(f: SelectionFilter): { p0: number; p1: number; order: Int32Array | null; check: boolean } {
    if (!f.hasRange) return { p0: 0, p1: this.ev.ts.length, order: null, check: !f.all };
    const [p0, p1] = this.eventSpan(f.lo, f.hi);
    return { p0, p1, order: this.evOrder, check: true };
  }
  eventIn(f: SelectionFilter, e: number): boolean {
    return f.test(this.ev.ts[e], this.ev.cpu[e], this.evGen[e]);
  }

  /** Calls fn for every record of the selection (in timestamp order when a range is set, else file order). */
  eachRecord(sel: Selection | SelectionFilter, fn: (r: number) => void): void {
    const f = sel instanceof SelectionFilter ? sel : new SelectionFilter(sel);
    const { p0, p1, order, check } = this.recordScan(f);
    for (let p = p0; p < p1; p++) {
      const r = order === null ? p : order[p];
      if (check && !this.recordIn(f, r)) continue;
      fn(r);
    }
  }

  /** Calls fn for every event of the selection (in timestamp order when a range is set, else file order). */
  eachEvent(sel: Selection | SelectionFilter, fn: (e: number) => void): void {
    const f = sel instanceof SelectionFilter ? sel : new SelectionFilter(sel);
    const { p0, p1, order, check } = this.eventScan(f);
    for (let p = p0; p < p1; p++) {
      const e = order === null ? p : order[p];
      if (check && !this.eventIn(f, e)) continue;
      fn(e);
    }
  }

  /**
   * Occurrences of each stack among the selection's records: resolved and unverified cookies
   * and full kernel stacks (the records that stand for a known stack).
   */
  occurrences(sel: Selection | SelectionFilter): Occurrences {
    const f = sel instanceof SelectionFilter ? sel : new SelectionFilter(sel);
    // the panes ask for one selection in turn (the top stacks, then the flame graph: 50-100 ms
    // each over 524,288 records citing every stack of a 262,144-stack dump): the last answer is
    // kept, for these record weights (a weighted view shares this object's fields but not its
    // weights). Its arrays are read, never written, by every caller.
    const last = this.lastOccurrences;
    const weights = this.hasWeights ? this.recWeight : null;
    if (last !== null && last.key === f.key && last.weights === weights) return last.occ;
    const occ = this.countOccurrences(f, weights);
    this.lastOccurrences = { key: f.key, weights, occ };
    return occ;
  }
  private lastOccurrences: { key: string; weights: Float64Array | Int32Array | null; occ: Occurrences } | null = null;

  /** `weights`: each record's, null where every one weighs 1 */
  private countOccurrences(f: SelectionFilter, weights: Float64Array | Int32Array | null): Occurrences {
    // the index by node kept between calls (countOccurrences leaves it all 0): the selection's
    // stacks are few beside the table's nodes, and a fresh node-sized array per call is that much
    // memory to zero every time (35 MB at 8.9M nodes: a fill of -1 took 25-35 ms of a first
    // query); filled first only where the first scan's records would touch most of its pages
    const scan = this.recordScan(f);
    const at = (this.stackAt ??= zeroed(Int32Array, this.node.parent.length, scan.p1 - scan.p0));
    const { status, stack, kind } = this.rec;
    return countOccurrences(
      { status, stack, kind, weight: weights },
      { p0: scan.p0, p1: scan.p1, order: scan.order, keep: scan.check ? (r) => this.recordIn(f, r) : null },
      at,
    );
  }
  private stackAt: Int32Array | null = null;
  /** byFunction's index over the function-path nodes, between calls all 0 */
  private fnAt: Int32Array | null = null;

  /** The function tree of the capture's stacks (function-tree.ts). */
  get functions(): FunctionTree {
    return functionTree(this.stacks);
  }

  /** The granularity a request asks for, or the capture's default. */
  granularityOf(g: Granularity | undefined | null): Granularity {
    return g ?? this.granularity;
  }

  /**
   * Occurrences merged by function path ('function' granularity): stacks whose frames differ
   * only in their offsets become one, standing as its representative (the first seen of them in
   * the file); counts, weights and first records add up. `variants`: how many
   * call-site stacks of the selection each merged one holds.
   */
  byFunction(occ: Occurrences): Occurrences & { variants: Int32Array } {
    const ft = this.functions;
    const n = occ.stacks.length;
    // per function-path node its row + 1 (0: none), kept between calls and reset after each, as
    // occurrences' index; the rows in typed arrays of the most there can be (a fresh index filled
    // with -1 and seven growing lists took 160 ms a call at 262,144 stacks)
    const at = (this.fnAt ??= zeroed(Int32Array, ft.parent.length, n));
    const stacks = new Int32Array(n);
    const counts = new Float64Array(n);
    const first = new Int32Array(n);
    const weights = new Float64Array(n);
    const v7 = new Float64Array(n);
    const v8 = new Float64Array(n);
    const variants = new Int32Array(n);
    let m = 0;
    try {
      for (let i = 0; i < n; i++) {
        const fnNode = ft.ofNode[occ.stacks[i]];
        let k = at[fnNode] - 1;
        if (k < 0) {
          k = m++;
          at[fnNode] = m;
          stacks[k] = occ.stacks[i];
          first[k] = occ.first[i];
        } else if (occ.first[i] < first[k]) first[k] = occ.first[i];
        counts[k] += occ.counts[i];
        weights[k] += occ.weights[i];
        v7[k] += occ.v7[i];
        v8[k] += occ.v8[i];
        variants[k]++;
      }
    } finally {
      for (let k = 0; k < m; k++) at[ft.ofNode[stacks[k]]] = 0;
    }
    return {
      stacks: stacks.slice(0, m),
      counts: counts.slice(0, m),
      first: first.slice(0, m),
      weights: weights.slice(0, m),
      v7: v7.slice(0, m),
      v8: v8.slice(0, m),
      total: occ.total,
      variants: variants.slice(0, m),
    };
  }

  /** Frame names and frame -> name at a granularity: functions, or the frames themselves. */
  frameView(g: Granularity): FrameView {
    if (g === 'function') return { names: this.fnNames, of: this.fnOfFrame };
    if (!this.siteView) {
      const names = this.stacks.frames.strings;
      this.siteView = { names, of: Int32Array.from(names.keys()) };
    }
    return this.siteView;
  }
  private siteView: FrameView | null = null;

  /** Generation keys present among a selection's occurrences. */
  generationsOf(sel: Selection | SelectionFilter): Set<number> {
    const out = new Set<number>();
    this.eachRecord(sel, (r) => {
      if (isOccurrence(this.rec.status[r]) && this.rec.stack[r] >= 0) out.add(this.recGen[r]);
    });
    return out;
  }

  /** A stack's depth (the stack table's: a byte of its node, no column of every node made). */
  depthOf(stack: number): number {
    return this.stacks.depth(stack);
  }

  /** function index of every frame of a stack, leaf first (or, with a view, its name index) */
  functionsOf(stack: number, view?: FrameView): number[] {
    const of = view ? view.of : this.fnOfFrame;
    const out: number[] = [];
    for (let n = stack; n > 0; n = this.node.parent[n]) out.push(of[this.node.frame[n]]);
    return out;
  }
}
