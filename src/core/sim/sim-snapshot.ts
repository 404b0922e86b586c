import { ELT_WORDS } from './map-layout.ts';
import type { MapView } from './map-view.ts';

/** The map as it was when a generation ended (taken inside reset, with no insert in flight) or at the end. */
export interface GenerationSnapshot {
  generation: number;
  entries: number;
  published: number;
  distinct: number;
  /** published slots holding a stack another published slot of the generation also holds */
  duplicates: number;
  gravestones: number;
}

/** A plain copy of the map's keys, values and used elements: what a snapshot is computed from. */
export interface MapCopy {
  generation: number;
  entries: number;
  keys: Uint32Array;
  vals: Int32Array;
  /** the first `entries` elements */
  elts: Uint32Array;
}

/**
 * Copies the map's slots and used elements (call with no insert in flight: inside reset, or at
 * the end). Only memory copies, so a reset's bypass window is not widened by the host looking:
 * the snapshot itself is computed afterwards from the copy (`snapshotOf`).
 */
export function captureMap(m: MapView): MapCopy {
  const entries = m.entries;
  return {
    generation: m.generation,
    entries,
    keys: m.u32.slice(m.keysAt, m.keysAt + m.slots),
    vals: m.i32.slice(m.valsAt, m.valsAt + m.slots),
    elts: m.u32.slice(m.eltsAt, m.eltsAt + entries * ELT_WORDS),
  };
}

/** Duplicates and gravestones of a copied generation: copies of one stack share a key, so only elements under the same key are compared. */
export function snapshotOf(c: MapCopy): GenerationSnapshot {
  const byKey = new Map<number, number[]>();
  let published = 0;
  let gravestones = 0;
  let duplicates = 0;
  const same = (a: number, b: number) => {
    const pa = a * ELT_WORDS;
    const pb = b * ELT_WORDS;
    const nr = c.elts[pa];
    if (c.elts[pb] !== nr) return false;
    for (let i = 0; i < 2 * nr; i++) if (c.elts[pa + 2 + i] !== c.elts[pb + 2 + i]) return false;
    return true;
  };
  for (let s = 0; s < c.keys.length; s++) {
    const e = c.vals[s] - 1;
    if (e < 0) {
      if (c.keys[s] !== 0) gravestones++;
      continue;
    }
    published++;
    const key = c.keys[s];
    const list = byKey.get(key);
    if (!list) byKey.set(key, [e]);
    else if (list.some((o) => same(o, e))) duplicates++;
    else list.push(e);
  }
  return { generation: c.generation, entries: c.entries, published, distinct: published - duplicates, duplicates, gravestones };
}

/** The map's state for one generation (with no insert in flight). */
export const snapshotMap = (m: MapView): GenerationSnapshot => snapshotOf(captureMap(m));
