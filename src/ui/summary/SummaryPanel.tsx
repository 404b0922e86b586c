import { useLoadStore } from '../../state/load-store.ts';

/** The capture in numbers; each the same as the command line's JSON for the same files. */
export function SummaryPanel() {
  const s = useLoadStore((st) => st.summary);
  if (!s) return null;
  const cells: [string, string, number, string][] = [
    ['summary-events', 'events', s.events, 'event lines, not counting stack records'],
    ['summary-cookies', 'cookies', s.cookies, '<stack_id …> records'],
    ['summary-resolved', 'resolved', s.resolved, 'cookies with a stack (resolved or unverified)'],
    ['summary-unresolved', 'unresolved', s.unresolved, 'cookies without a stack: no dump, slot missing, ambiguous'],
    ['summary-full-stacks', 'full stacks', s.fullStacks, 'stacks written in full (fallbacks)'],
    ['summary-unique-stacks', 'unique stacks', s.uniqueStacks, 'distinct stacks over every source'],
  ];
  const statuses = Object.entries(s.status).filter(([, n]) => n > 0);
  return (
    <section className="panel summary" aria-label="summary">
      <div className="cells">
        {cells.map(([id, label, value, title]) => (
          <div className="cell" key={id} title={title}>
            <div className="value" data-testid={id}>
              {value}
            </div>
            <div className="label">{label}</div>
          </div>
        ))}
      </div>
      <dl className="facts">
        <dt>generations</dt>
        <dd data-testid="summary-generations">{s.generations.join(', ') || 'none'}</dd>
        <dt>status</dt>
        <dd>{statuses.map(([k, n]) => `${k} ${n}`).join(' · ') || 'no stack records'}</dd>
        {s.stat && (
          <>
            <dt>stack_map_stat</dt>
            <dd>
              entries {s.stat.entries ?? '?'} of {s.stat.capacity ?? '?'} · successes {s.stat.successes ?? '?'} · drops/fallbacks{' '}
              {s.stat.drops ?? '?'}
              {s.stat.generation !== null ? ` · generation ${s.stat.generation}` : ''}
            </dd>
          </>
        )}
        {s.lost.markers > 0 && (
          <>
            <dt>lost</dt>
            <dd>
              {s.lost.markers} markers, {s.lost.events} events
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}
