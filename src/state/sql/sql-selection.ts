import type { Selection } from '../../core/query/api.ts';

/** The SQL pane's views of the panes' selection (plain SQL text; sql-store.ts keeps them up to date in DuckDB). */

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;
/** a double as DuckDB reads it back exactly (a bare 1.5 would be a DECIMAL literal) */
const sqlDouble = (x: number) => `${sqlString(String(x))}::DOUBLE`;

/** The views that follow the selection: `selection` over `events`, `selection_records` over `records` (what top stacks counts). */
export const SELECTION_VIEWS = [
  { view: 'selection', table: 'events' },
  { view: 'selection_records', table: 'records' },
] as const;

/**
 * A view of `table`'s rows that the panes' selection keeps (selection.ts's rule): ts in
 * [t0, t1] inclusive, the generation (NULL for 'none'), the CPUs.
 */
export function selectionViewSql(sel: Selection, view = 'selection', table = 'events'): string {
  const where: string[] = [];
  if (sel.range) {
    const lo = Math.min(sel.range[0], sel.range[1]);
    const hi = Math.max(sel.range[0], sel.range[1]);
    where.push(`ts BETWEEN ${sqlDouble(lo)} AND ${sqlDouble(hi)}`);
  }
  // only integers can match (a generation or CPU of 1.5 keeps nothing, as in SelectionFilter)
  if (sel.generation === 'none') where.push('generation IS NULL');
  else if (sel.generation !== null) where.push(Number.isInteger(sel.generation) ? `generation = ${sel.generation}` : 'false');
  if (sel.cpus) {
    const cpus = sel.cpus.filter((c) => Number.isInteger(c));
    where.push(cpus.length ? `cpu IN (${cpus.join(', ')})` : 'false');
  }
  return `CREATE OR REPLACE VIEW ${view} AS SELECT * FROM ${table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
}
