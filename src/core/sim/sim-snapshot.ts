import type { SharedStackMap } from './shared-map.ts';

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

/**
 * The map's state for one generation (call with no insert in flight: inside reset, or at the
 * end). Kept cheap, since inserts bypass the map while a reset runs: copies of one stack share a
 * key, so only elements under the same key are compared.
 */
export function snapshotMap(m: SharedStackMap): GenerationSnapshot {
  const byKey = new Map<number, number[]>();
  let published = 0;
  let gravestones = 0;
  let duplicates = 0;
  for (let s = 0; s < m.slots; s++) {
    const e = m.published(s);
    if (e < 0) {
      if (m.key(s) !== 0) gravestones++;
      continue;
    }
    published++;
    const key = m.key(s);
    const same = byKey.get(key);
    if (!same) byKey.set(key, [e]);
    else if (same.some((o) => m.sameElement(o, e))) duplicates++;
    else same.push(e);
  }
  return { generation: m.generation, entries: m.entries, published, distinct: published - duplicates, duplicates, gravestones };
}
