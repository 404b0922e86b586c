import type { Selection } from '../core/query/api.ts';

/** The selection flags as parseOptions (usage.ts) takes them. */
export const SELECTION_OPTIONS = { generation: { type: 'string' }, range: { type: 'string' }, cpus: { type: 'string' } } as const;

/**
 * `--generation G|none`, `--range T0,T1` (trace seconds) and `--cpus 0,2`: the page's selection
 * on the command line, from the values given (undefined: not given). Returns the selection (null
 * when no flag was given), or an error message.
 */
export function selectionOf(given: { generation?: string; range?: string; cpus?: string }): { selection: Selection | null } | { error: string } {
  const sel: Selection = { range: null, generation: null, cpus: null };
  const { generation: g, range: r, cpus: c } = given;
  if (g === undefined && r === undefined && c === undefined) return { selection: null };
  if (g !== undefined) {
    if (g === 'none') sel.generation = 'none';
    else if (/^\d{1,9}$/.test(g)) sel.generation = Number(g);
    else return { error: `--generation takes a number or 'none', not ${g}` };
  }
  if (r !== undefined) {
    const [t0, t1] = r.split(',').map(Number);
    if (!(Number.isFinite(t0) && Number.isFinite(t1) && t0 < t1)) return { error: `--range takes T0,T1 with T0 < T1, not ${r}` };
    sel.range = [t0, t1];
  }
  if (c !== undefined) {
    const cpus = c.split(',').map(Number);
    if (!cpus.every((x) => Number.isInteger(x) && x >= 0)) return { error: `--cpus takes CPU numbers like 0,2, not ${c}` };
    sel.cpus = cpus;
  }
  return { selection: sel };
}
