import { useEffect, useMemo, useState } from 'react';
import { useLoadStore } from '../../state/load/load-store.ts';
import { EVENT_FILTER_SYNC } from '../../state/view/event-filter.ts';
import { useNumericFields } from '../../state/view/numeric-fields.ts';
import { useEventNames } from '../../state/view/queries.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { fmtInt } from '../common/format.ts';

void EVENT_FILTER_SYNC;

/**
 * The event filter every pane answers for, in trace-cmd report's -F syntax
 * (`kmem_cache_alloc: bytes_alloc > 512 && common_pid == 1234`): typed here, applied on Enter
 * (a history entry: Back undoes it), completed with the capture's event names and, after
 * `EVENT:`, its numeric fields. A filter that does not parse says where, under the field, and the
 * panes keep showing what they showed.
 */
export function FilterBar() {
  const applied = useViewStore((v) => v.eventFilter);
  const error = useViewStore((v) => v.eventFilterError);
  const set = useViewStore((v) => v.set);
  const filterOf = useLoadStore((s) => s.filterOf);
  const shown = useLoadStore((s) => s.summary?.events ?? 0);
  const all = useLoadStore((s) => s.unfiltered?.events ?? 0);
  const [text, setText] = useState(applied);
  const [focused, setFocused] = useState(false);
  useEffect(() => setText(applied), [applied]);
  const names = useEventNames(focused || applied !== '');
  const fields = useNumericFields(focused);
  const suggestions = useMemo(
    () =>
      complete(
        text,
        names.data ?? [],
        fields.map((f) => f.name),
      ),
    [text, names.data, fields],
  );
  const pending = applied !== filterOf && !error;
  const bad = error && error.text === applied ? error : null;
  return (
    <section className="panel filter-bar" aria-label="event filter">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          set({ eventFilter: text.trim() });
        }}
      >
        <label className="filter-label" htmlFor="event-filter">
          filter
        </label>
        <input
          id="event-filter"
          className={bad ? 'search invalid mono' : 'search mono'}
          list="event-filter-complete"
          value={text}
          onChange={(e) => setText(e.target.value)}
          onFocus={() => setFocused(true)}
          onKeyDown={(e) => e.key === 'Escape' && (setText(applied), e.currentTarget.blur())}
          placeholder="events, as trace-cmd report -F: kmem_cache_alloc: bytes_alloc > 512 && common_pid == 1234"
          aria-invalid={bad ? true : undefined}
          aria-describedby="event-filter-error"
          spellCheck={false}
          data-testid="event-filter"
        />
        <datalist id="event-filter-complete">
          {suggestions.map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
        <button type="submit" disabled={text.trim() === applied}>
          Apply
        </button>
        {applied && (
          <button type="button" onClick={() => set({ eventFilter: '' })} data-testid="event-filter-clear">
            Clear
          </button>
        )}
        <span className="quiet count-line" data-testid="event-filter-status" data-applied={filterOf} data-pending={pending ? 'true' : 'false'}>
          {pending ? 'filtering…' : filterOf ? `${fmtInt(shown)} of ${fmtInt(all)} events` : ''}
        </span>
      </form>
      {bad && (
        <p className="field-error mono" id="event-filter-error" role="alert" data-testid="event-filter-error" data-column={bad.column}>
          {bad.column > 0 && (
            <>
              <span className="caret-line">{bad.text}</span>
              <br />
              <span className="caret-line">{' '.repeat(Math.max(0, bad.column - 1))}^</span>
              <br />
            </>
          )}
          {bad.message}
        </p>
      )}
    </section>
  );
}

/** What to offer for the text typed so far: event names before a `:`, then `EVENT: FIELD` for each numeric field. */
function complete(text: string, events: readonly string[], fields: readonly string[]): string[] {
  const colon = text.indexOf(':');
  if (colon < 0) {
    const t = text.trim().toLowerCase();
    return events.filter((e) => e.toLowerCase().startsWith(t)).slice(0, 50);
  }
  const head = text.slice(0, colon + 1);
  const rest = text.slice(colon + 1).trimStart();
  if (/[=<>!&|]/.test(rest)) return [];
  return [...fields, 'COMM', 'common_pid', 'CPU', 'TGID']
    .filter((f) => f.toLowerCase().startsWith(rest.toLowerCase()))
    .slice(0, 50)
    .map((f) => `${head} ${f}`);
}
