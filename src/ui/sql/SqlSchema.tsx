import { TABLES } from '../../core/tables/schema.ts';
import { SELECTION_VIEWS, useSqlStore } from '../../state/sql/sql-store.ts';
import { fmtInt } from '../common/format.ts';

/** The tables and their columns (from core/tables/schema.ts), each column's prose as its tooltip; a click puts the name in the editor. */
export function SqlSchema() {
  const rows = useSqlStore((s) => s.rows);
  const insert = (name: string) => {
    const s = useSqlStore.getState();
    s.setText(s.text.endsWith(' ') || s.text.endsWith('\n') || s.text === '' ? s.text + name : `${s.text} ${name}`);
  };
  return (
    <aside className="sql-schema" data-testid="sql-tables" aria-label="tables and columns">
      {TABLES.map((t) => (
        <details key={t.name} data-testid="sql-table" data-table={t.name} open={t.name === 'events'}>
          <summary title={t.doc}>
            <span className="mono sql-table-name">{t.name}</span>
            <span className="quiet sql-rows" data-testid="sql-table-rows">
              {rows[t.name] === undefined ? '' : fmtInt(rows[t.name])}
            </span>
          </summary>
          <ul>
            {t.columns.map((c) => (
              <li key={c.name} title={c.doc} data-testid="sql-column" data-column={c.name}>
                <button type="button" className="link mono" onClick={() => insert(c.name)}>
                  {c.name}
                </button>
                <span className="quiet sql-type" title={c.nullable ? `${c.type}, may be NULL` : c.type}>
                  {c.type}
                  {c.nullable ? '?' : ''}
                </span>
              </li>
            ))}
          </ul>
        </details>
      ))}
      <div className="sql-views quiet">
        views:{' '}
        {SELECTION_VIEWS.map((v, i) => (
          <span key={v.view} title={`the rows of ${v.table} in the selection (range, generation, CPUs)`}>
            {i > 0 ? ', ' : ''}
            <button type="button" className="link mono" onClick={() => insert(v.view)}>
              {v.view}
            </button>
          </span>
        ))}
      </div>
    </aside>
  );
}
