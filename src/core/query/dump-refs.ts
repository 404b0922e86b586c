import type { DumpIndex } from '../capture/dumps.ts';
import { NO_GEN } from './selection.ts';
import { IntPositions } from '../base/int-positions.ts';

/**
 * The dumps' ref_count of each stack, by generation key (NO_GEN: generation-less dumps). The
 * index (a Map entry per slot: 25-32 ms of the load of a 262,144-slot dump) is made when a query
 * weighs every stack by ref_count; a table's rows, a few stacks, are counted in one pass over the
 * slots while there is none (`counts`).
 */
export class DumpRefs {
  private index: Map<number, Map<number, number>> | null = null;

  constructor(private readonly dumps: DumpIndex) {}

  /** Each dump slot's stack and ref_count with its generation key, in the index's order. */
  private each(fn: (g: number, stack: number, ref: number) => void): void {
    const d = this.dumps;
    for (const gd of d.byGeneration.values()) {
      const c = gd.slots.columns();
      for (let i = 0; i < c.stack.length; i++) fn(gd.generation, c.stack[i], c.refCount[i]);
    }
    // generation-less dumps: a slot read by several dumps of one map (a stack_map_bin and a
    // stack_map read together) counts once, at its highest reading; a slot whose dumps disagree
    // (read on either side of a reset) counts each distinct stack it held
    for (const slot of d.generationlessSlots.values()) {
      const best = new Map<number, number>();
      for (const r of slot.readings) best.set(r.stack, Math.max(best.get(r.stack) ?? 0, r.refCount));
      for (const [stack, ref] of best) fn(NO_GEN, stack, ref);
    }
  }

  /** generation key -> stack -> ref_count summed over the slots of its dumps (the index, made now if not yet) */
  byGeneration(): ReadonlyMap<number, ReadonlyMap<number, number>> {
    if (this.index) return this.index;
    const index = new Map<number, Map<number, number>>();
    this.each((g, stack, ref) => {
      let m = index.get(g);
      if (!m) index.set(g, (m = new Map()));
      m.set(stack, (m.get(stack) ?? 0) + ref);
    });
    return (this.index = index);
  }

  /** `count` of each of a few stacks (a table's rows): one pass over the slots while there is no index, no index made. */
  counts(stacks: readonly number[], gens: readonly number[] | null): (number | null)[] {
    if (this.index) return stacks.map((s) => this.count(s, gens));
    const at = new IntPositions(stacks);
    const sum = new Float64Array(stacks.length);
    const found = new Uint8Array(stacks.length);
    const keep = gens === null ? null : new Set(gens);
    this.each((g, stack, ref) => {
      const i = at.of(stack);
      if (i < 0 || (keep !== null && !keep.has(g))) return;
      sum[i] += ref;
      found[i] = 1;
    });
    return stacks.map((s) => {
      const i = at.of(s);
      return found[i] ? sum[i] : null;
    });
  }

  /** ref_count of a stack summed over the dumps of the given generation keys, each once (null: every dump); null when none holds it. */
  count(stack: number, gens: Iterable<number> | null): number | null {
    let sum = 0;
    let found = false;
    const index = this.byGeneration();
    for (const g of gens === null ? index.keys() : new Set(gens)) {
      const v = index.get(g)?.get(stack);
      if (v !== undefined) {
        sum += v;
        found = true;
      }
    }
    return found ? sum : null;
  }
}
