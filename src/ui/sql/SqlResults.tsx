import { RESULT_CAP, useSqlStore } from '../../state/sql/sql-store.ts';
import { saveText } from '../exports/save.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { isCut, type SqlCell, type SqlCutCell, type SqlResult } from '../../core/tables/sql-result.ts';
import { fmtInt } from '../common/format.ts';
import { copyText } from '../menu/menu-store.ts';

const HASH = /^[0-9a-f]{16}$/;

const show = (v: Exclude<SqlCell, SqlCutCell>, numeric: boolean): string => {
  if (v === null) return 'NULL';
  if (typeof v === 'number') return numeric && Number.isInteger(v) ? fmtInt(v) : String(v);
  return String(v);
};

/** A text cell too long to show: its first characters, its length, and the whole value copied or saved on asking. */
function CutCell({ v }: { v: SqlCutCell }) {
  const what = `the whole value (${fmtInt(v.chars)} characters)`;
  return (
    <td className="sql-cut-cell" data-testid="sql-cut" data-chars={v.chars} title={`${fmtInt(v.chars)} characters: the first ${fmtInt(v.cut.length)} shown`}>
      <span className="sql-cut">
        <span className="sql-cut-head">{v.cut}</span>
        <span className="quiet sql-cut-more">… ({fmtInt(v.chars)} chars)</span>
        <button type="button" className="link" data-testid="sql-cut-copy" title={`copy ${what}`} onClick={() => void copyText(v.whole(), what)}>
          copy
        </button>
        <button
          type="button"
          className="link"
          data-testid="sql-cut-save"
          title={`save ${what} as a text file`}
          onClick={() => saveText(v.whole(), 'sql-value.txt')}
        >
          save
        </button>
      </span>
    </td>
  );
}

/** A query's result: the first RESULT_CAP rows, the count of all; numbers right-aligned; long text cut; a stack_hash selects its stack. */
export function SqlResults({ result }: { result: SqlResult }) {
  const selected = useViewStore((v) => v.selectedStackHash);
  const hashCol = result.columns.map((c) => /stack_hash/i.test(c.name));
  const shown = result.rows.length;
  return (
    <div className="sql-results">
      <p className="quiet count-line" data-testid="sql-count" data-total={result.total} data-shown={shown}>
        {fmtInt(result.total)} row{result.total === 1 ? '' : 's'}
        {shown < result.total ? ` (the first ${fmtInt(RESULT_CAP)} shown)` : ''} ·{' '}
        {result.elapsedMs < 1000 ? `${Math.round(result.elapsedMs)} ms` : `${(result.elapsedMs / 1000).toFixed(1)} s`}
      </p>
      {result.columns.length > 0 && (
        <div className="table-scroll sql-scroll">
          <table className="grid sql-grid" data-testid="sql-results">
            <thead>
              <tr>
                {result.columns.map((c, j) => (
                  <th key={j} className={c.numeric ? 'num' : undefined} title={c.type}>
                    {c.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {result.rows.map((r, i) => {
                const rowHash = r.find((v, j) => hashCol[j] && typeof v === 'string' && HASH.test(v));
                return (
                  <tr key={i} data-testid="sql-row" className={rowHash !== undefined && rowHash === selected ? 'selected' : undefined}>
                    {r.map((v, j) =>
                      isCut(v) ? (
                        <CutCell key={j} v={v} />
                      ) : (
                        <td
                          key={j}
                          className={[result.columns[j].numeric ? 'num' : '', v === null ? 'sql-null' : ''].join(' ').trim() || undefined}
                          data-value={v === null ? undefined : String(v)}
                        >
                          {hashCol[j] && typeof v === 'string' && HASH.test(v) ? (
                            <button
                              type="button"
                              className="link mono"
                              data-testid="sql-stack-hash"
                              title="select this stack in every pane"
                              onClick={() => void useSqlStore.getState().selectStack(v)}
                            >
                              {v}
                            </button>
                          ) : (
                            show(v, result.columns[j].numeric)
                          )}
                        </td>
                      ),
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
