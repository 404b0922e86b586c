import type { ExplorerData } from './explorer-data.ts';
import type { GenerationDiff, GenerationDiffRow } from './api.ts';

/** A diff row that also says where its stack differs from the others (GenerationDiffRow plus). */
export interface GenerationDiffRowApart extends GenerationDiffRow {
  /**
   * The first frame, from the leaf, that no other stack of the diff has at that point of the
   * same leaf-first path: with the leaf it tells this stack apart. Null when no frame does (the
   * stack is the leaf end of a longer one).
   */
  apart: string | null;
  /** its position from the leaf (0: the leaf itself is enough) */
  apartAt: number;
  depth: number;
}

export interface GenerationDiffApart extends GenerationDiff {
  onlyA: GenerationDiffRowApart[];
  onlyB: GenerationDiffRowApart[];
  changed: GenerationDiffRowApart[];
}

/**
 * Where each stack first differs from the others (leaf first): its frames sorted among all
 * of them, the first position past the longest prefix it shares with a neighbour.
 */
export function framesApart(frames: readonly (readonly string[])[]): { at: number; frame: string | null }[] {
  const order = frames.map((_, i) => i);
  const cmp = (a: readonly string[], b: readonly string[]) => {
    for (let k = 0; k < Math.min(a.length, b.length); k++) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
    return a.length - b.length;
  };
  order.sort((x, y) => cmp(frames[x], frames[y]));
  const lcp = (a: readonly string[], b: readonly string[]) => {
    let k = 0;
    while (k < a.length && k < b.length && a[k] === b[k]) k++;
    return k;
  };
  const out = frames.map(() => ({ at: 0, frame: null as string | null }));
  for (let p = 0; p < order.length; p++) {
    const f = frames[order[p]];
    const shared = Math.max(p > 0 ? lcp(f, frames[order[p - 1]]) : 0, p + 1 < order.length ? lcp(f, frames[order[p + 1]]) : 0);
    out[order[p]] = shared < f.length ? { at: shared, frame: f[shared] } : { at: f.length, frame: null };
  }
  return out;
}

/**
 * Stacks of generation a against b by their occurrences in the trace (resolved and unverified
 * cookies, full stacks, each in its effective generation): only in a (most frequent first), only
 * in b, and in both with different counts (largest change first); ties by stack order of first occurrence.
 */
export function generationDiff(d: ExplorerData, a: number | 'none', b: number | 'none'): GenerationDiffApart {
  const base = { range: null, cpus: null } as const;
  const oa = d.occurrences({ ...base, generation: a });
  const ob = d.occurrences({ ...base, generation: b });
  const rows = new Map<number, GenerationDiffRow & { order: number }>();
  const row = (s: number, order: number) => {
    let x = rows.get(s);
    if (!x) {
      x = { stack: s, leaf: s > 0 ? d.stacks.frames.name(d.node.frame[s]) : '', a: 0, b: 0, order };
      rows.set(s, x);
    }
    return x;
  };
  oa.stacks.forEach((s, i) => (row(s, i).a = oa.counts[i]));
  ob.stacks.forEach((s, i) => (row(s, oa.stacks.length + i).b = ob.counts[i]));
  const all = [...rows.values()];
  const onlyA = all.filter((r) => r.b === 0).sort((x, y) => y.a - x.a || x.order - y.order);
  const onlyB = all.filter((r) => r.a === 0).sort((x, y) => y.b - x.b || x.order - y.order);
  const changed = all.filter((r) => r.a > 0 && r.b > 0 && r.a !== r.b).sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a) || x.order - y.order);
  // told apart among the stacks the diff shows (the three lists)
  const shown = [...onlyA, ...onlyB, ...changed];
  const apart = new Map<number, { at: number; frame: string | null }>();
  framesApart(shown.map((r) => d.stacks.framesOf(r.stack))).forEach((x, i) => apart.set(shown[i].stack, x));
  const strip = ({ stack, leaf, a, b }: GenerationDiffRow): GenerationDiffRowApart => {
    const x = apart.get(stack)!;
    return { stack, leaf, a, b, apart: x.frame, apartAt: x.at, depth: d.depthOf(stack) };
  };
  return { a, b, onlyA: onlyA.map(strip), onlyB: onlyB.map(strip), changed: changed.map(strip) };
}
