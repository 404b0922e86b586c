import { useEffect, useMemo, useRef, useState } from 'react';
import { filterLines } from '../../core/capture/filter-lines.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { EVENT_FILTER_SYNC } from '../../state/view/event-filter.ts';
import { useEventFields } from '../../state/view/numeric-fields.ts';
import { useEventNames } from '../../state/view/queries.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { fmtInt } from '../common/format.ts';
import { complete, type FieldChoice } from './complete.ts';

void EVENT_FILTER_SYNC;

/** the rows shown for an applied filter: a line each, at least one */
const rowsOf = (applied: string) => {
  const lines = filterLines(applied);
  return lines.length > 0 ? lines : [''];
};

/**
 * The event filter every pane answers for, in trace-cmd report's -F syntax
 * (`kmem_cache_alloc: bytes_alloc > 512 && common_pid == 1234`): typed here, applied on Enter
 * (a history entry: Back undoes it), completed with the capture's event names and, after
 * `EVENT:`, that event's fields (numbers and text) for each term. Several filters, a row each
 * ("or"), are ORed as several -F are, and are a `filter=` each in the URL. A filter that does
 * not parse says where, under its row, and the panes keep showing what they showed.
 */
export function FilterBar() {
  const applied = useViewStore((v) => v.eventFilter);
  const error = useViewStore((v) => v.eventFilterError);
  const set = useViewStore((v) => v.set);
  const filterOf = useLoadStore((s) => s.filterOf);
  const shown = useLoadStore((s) => s.summary?.events ?? 0);
  const all = useLoadStore((s) => s.unfiltered?.events ?? 0);
  const [rows, setRows] = useState(() => rowsOf(applied));
  const [focused, setFocused] = useState(false);
  // the last row's field, focused when "+ or" adds it
  const last = useRef<HTMLInputElement | null>(null);
  const focusAdded = useRef(false);
  useEffect(() => setRows(rowsOf(applied)), [applied]);
  useEffect(() => {
    if (!focusAdded.current) return;
    focusAdded.current = false;
    last.current?.focus();
  }, [rows.length]);
  const names = useEventNames(focused || applied !== '');
  const eventFields = useEventFields(focused);
  const fieldsOf = useMemo(() => new Map<string, FieldChoice[]>(eventFields.map((e) => [e.event, e.fields])), [eventFields]);
  const text = filterLines(rows.join('\n')).join('\n');
  const pending = applied !== filterOf && !error;
  // the error of the filter applied, with the text of the one of its lines that failed
  const bad = error && error.text === applied ? { ...error, text: filterLines(applied)[error.line] ?? applied } : null;
  const badRow = bad ? rows.findIndex((r) => r.trim() === bad.text) : -1;
  const setRow = (i: number, value: string) => setRows(rows.map((r, k) => (k === i ? value : r)));
  return (
    <section className="panel filter-bar" aria-label="event filter">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          set({ eventFilter: text });
        }}
      >
        <label className="filter-label" htmlFor="event-filter">
          filter
        </label>
        <div className="filter-rows">
          {rows.map((row, i) => (
            <FilterRow
              key={i}
              index={i}
              value={row}
              bad={i === badRow ? bad : null}
              suggestions={focused ? complete(row, names.data ?? [], fieldsOf) : []}
              onChange={(v) => setRow(i, v)}
              onFocus={() => setFocused(true)}
              onEscape={() => setRows(rowsOf(applied))}
              onRemove={rows.length > 1 ? () => setRows(rows.filter((_, k) => k !== i)) : null}
              inputRef={i === rows.length - 1 ? last : null}
            />
          ))}
        </div>
        <button
          type="button"
          onClick={() => {
            focusAdded.current = true;
            setRows([...rows, '']);
          }}
          title="another filter: an event passes if any filter takes it (as several -F)"
          data-testid="event-filter-add"
        >
          + or
        </button>
        <button type="submit" disabled={text === applied}>
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
      {bad && badRow < 0 && <FilterError error={bad} />}
    </section>
  );
}

interface RowProps {
  index: number;
  value: string;
  bad: { column: number; message: string; text: string } | null;
  suggestions: { value: string; label: string }[];
  onChange(value: string): void;
  onFocus(): void;
  onEscape(): void;
  onRemove: (() => void) | null;
  inputRef: React.RefObject<HTMLInputElement | null> | null;
}

/** One filter: its field, completed as typed, its error under it. */
function FilterRow({ index, value, bad, suggestions, onChange, onFocus, onEscape, onRemove, inputRef }: RowProps) {
  const id = index === 0 ? 'event-filter' : `event-filter-${index}`;
  return (
    <div className="filter-row" data-testid="event-filter-row" data-line={index}>
      <div className="filter-field">
        {index > 0 && <span className="quiet filter-or">or</span>}
        <input
          id={id}
          ref={inputRef ?? undefined}
          className={bad ? 'search invalid mono' : 'search mono'}
          list={`${id}-complete`}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          onFocus={onFocus}
          onKeyDown={(e) => e.key === 'Escape' && (onEscape(), e.currentTarget.blur())}
          placeholder={
            index === 0 ? 'events, as trace-cmd report -F: kmem_cache_alloc: bytes_alloc > 512 && common_pid == 1234' : 'another filter: EVENTS: FIELD OP VALUE'
          }
          aria-label={index === 0 ? undefined : `filter ${index + 1}`}
          aria-invalid={bad ? true : undefined}
          aria-describedby={bad ? `${id}-error` : undefined}
          spellCheck={false}
          data-testid={index === 0 ? 'event-filter' : 'event-filter-line'}
        />
        <datalist id={`${id}-complete`}>
          {suggestions.map((s) => (
            <option key={s.value} value={s.value} label={s.label} />
          ))}
        </datalist>
        {onRemove && (
          <button type="button" className="filter-remove" onClick={onRemove} aria-label={`remove filter ${index + 1}`} data-testid="event-filter-remove">
            ×
          </button>
        )}
      </div>
      {bad && <FilterError error={bad} id={`${id}-error`} />}
    </div>
  );
}

/** A filter's error: the filter, a caret under its column, and the reason. */
function FilterError({ error, id }: { error: { column: number; message: string; text: string }; id?: string }) {
  return (
    <p className="field-error mono" id={id} role="alert" data-testid="event-filter-error" data-column={error.column}>
      {error.column > 0 && (
        <>
          <span className="caret-line">{error.text}</span>
          <br />
          <span className="caret-line">{' '.repeat(Math.max(0, error.column - 1))}^</span>
          <br />
        </>
      )}
      {error.message}
    </p>
  );
}
