import { useSqlStore } from '../../state/sql/sql-store.ts';
import { useSelection } from '../../state/view/view-store.ts';
import { genLabel } from '../common/format.ts';
import { EXAMPLES } from './examples.ts';
import { SqlResults } from './SqlResults.tsx';
import { SqlSchema } from './SqlSchema.tsx';
import './sql.css';

/**
 * SQL over the capture (issue 13.2): DuckDB-WASM in its own worker, loaded only when "Open SQL"
 * is pressed, the tables handed over as Arrow from the ingest worker. Collapsed until then.
 */
export function SqlPane() {
  const status = useSqlStore((s) => s.status);
  const line = useSqlStore((s) => s.line);
  const openMs = useSqlStore((s) => s.openMs);
  return (
    <section className="panel pane sql-pane" data-testid="sql" data-status={status} aria-label="SQL over the capture">
      <div className="pane-head">
        <h2>SQL</h2>
        <span
          className={status === 'error' ? 'sql-status error-text' : 'quiet sql-status'}
          data-testid="sql-status"
          data-status={status}
          data-open-ms={openMs === null ? undefined : Math.round(openMs)}
          role="status"
        >
          {status === 'closed' ? 'DuckDB in this page, over the capture’s tables' : line}
          {status === 'ready' && openMs !== null ? ` · ready in ${(openMs / 1000).toFixed(1)} s` : ''}
        </span>
        {status === 'starting' && <Download />}
        {(status === 'starting' || status === 'tables') && <span className="sql-spinner" aria-hidden />}
      </div>
      {status === 'closed' || (status === 'error' && !useSqlStore.getState().engine) ? <Closed /> : <Open />}
    </section>
  );
}

function Download() {
  const d = useSqlStore((s) => s.download);
  return d && d.total > 0 ? <progress className="sql-progress" max={d.total} value={d.loaded} data-testid="sql-download" /> : null;
}

function Closed() {
  const status = useSqlStore((s) => s.status);
  return (
    <div className="sql-closed">
      <p className="quiet">
        Ask the capture anything in SQL: events, stack records, stacks, frames, dumps, stat, files and diagnostics as tables. DuckDB (about 34 MB of
        WebAssembly) is fetched from this page’s own server when you open it, and runs in its own worker; nothing leaves the page.
      </p>
      <button type="button" className="primary" data-testid="sql-open" onClick={() => void useSqlStore.getState().open()}>
        {status === 'error' ? 'Try again' : 'Open SQL'}
      </button>
    </div>
  );
}

function Open() {
  const s = useSqlStore();
  const ready = s.status === 'ready';
  return (
    <div className="sql-body" data-testid="sql-body" data-ran={s.ran ?? undefined} data-running={s.running}>
      <SqlSchema />
      <div className="sql-main">
        <div className="sql-examples" role="group" aria-label="example queries">
          <span className="quiet">Examples:</span>
          {EXAMPLES.map((e) => (
            <button key={e.id} type="button" data-testid={`sql-example-${e.id}`} disabled={!ready || s.running} onClick={() => void s.run(e.sql)}>
              {e.label}
            </button>
          ))}
        </div>
        <textarea
          className="sql-editor mono"
          data-testid="sql-editor"
          aria-label="SQL query"
          spellCheck={false}
          value={s.text}
          rows={Math.min(14, Math.max(4, s.text.split('\n').length + 1))}
          onChange={(e) => s.setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              void s.run();
            }
          }}
        />
        <div className="toolbar sql-toolbar">
          <button type="button" className="primary" data-testid="sql-run" disabled={!ready || s.running} onClick={() => void s.run()}>
            Run
          </button>
          <span className="quiet">
            <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
          </span>
          <button type="button" data-testid="sql-cancel" disabled={!s.running} onClick={() => void s.cancel()}>
            Cancel
          </button>
          {s.running && (
            <span className="quiet" data-testid="sql-running">
              running…
            </span>
          )}
          <label
            className="sql-follow"
            title="the selection and selection_records views follow the panes' selection, and a query over them runs again when it changes"
          >
            <input type="checkbox" data-testid="sql-follow" checked={s.follow} onChange={(e) => s.setFollow(e.target.checked)} /> follow the selection
          </label>
          <SelectionChip />
        </div>
        {s.notice && (
          <p className="quiet" data-testid="sql-notice">
            {s.notice}
          </p>
        )}
        {s.error && (
          <pre className="sql-error" data-testid="sql-error" role="alert">
            {s.error}
          </pre>
        )}
        {s.result && !s.error && <SqlResults result={s.result} />}
      </div>
    </div>
  );
}

/** what the `selection` views hold now */
function SelectionChip() {
  const held = useSqlStore((s) => s.viewSelection);
  const follow = useSqlStore((s) => s.follow);
  const now = useSelection();
  const sel = held ?? now;
  const parts = [
    sel.range ? `${sel.range[0].toFixed(6)}–${sel.range[1].toFixed(6)} s` : 'whole trace',
    genLabel(sel.generation),
    sel.cpus ? `CPU ${sel.cpus.join(', ')}` : 'all CPUs',
  ];
  const stale = !follow && JSON.stringify(held) !== JSON.stringify(now);
  return (
    <span className="chip sql-selection" data-testid="sql-selection" title="what the selection and selection_records views hold">
      selection: {parts.join(' · ')}
      {stale ? ' (not the panes’ selection)' : ''}
    </span>
  );
}
