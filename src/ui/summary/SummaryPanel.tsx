import { useLoadStore } from '../../state/load/load-store.ts';
import { filterLines } from '../../core/capture/filter-lines.ts';
import { useSelectionSummary } from '../../state/view/queries.ts';
import { isFiltered, useSelection, useViewStore } from '../../state/view/view-store.ts';
import { Digits } from '../common/Digits.tsx';
import { fmtInt, fmtTs, genLabel } from '../common/format.ts';

/**
 * The capture in numbers; each the same as the command line's JSON for the same files. With a
 * filter (range, generation, CPUs) the same cells count the selection instead, and say so.
 */
export function SummaryPanel() {
  const whole = useLoadStore((st) => st.summary);
  const filterOf = useLoadStore((st) => st.filterOf);
  const selection = useSelection();
  const filtered = isFiltered(selection);
  const sel = useSelectionSummary(filtered ? selection : null);
  const set = useViewStore((v) => v.set);
  if (!whole) return null;
  // while the selection's numbers are on their way the cells say so rather than show the whole capture's
  const s = filtered ? sel.data : whole;
  const cells: [string, string, 'events' | 'cookies' | 'resolved' | 'unresolved' | 'fullStacks' | 'uniqueStacks', string][] = [
    ['summary-events', 'events', 'events', 'event lines, not counting stack records'],
    ['summary-cookies', 'cookies', 'cookies', '<stack_id …> records'],
    ['summary-resolved', 'resolved', 'resolved', 'cookies with a stack (resolved or unverified)'],
    ['summary-unresolved', 'unresolved', 'unresolved', 'cookies without a stack: no dump, slot missing, ambiguous'],
    ['summary-full-stacks', 'full stacks', 'fullStacks', 'stacks written in full (fallbacks)'],
    [
      'summary-unique-stacks',
      'unique stacks',
      'uniqueStacks',
      filtered ? 'distinct stacks among the selection’s records' : 'distinct stacks over every source',
    ],
  ];
  return (
    <section
      className="panel summary"
      aria-label="summary"
      data-scope={filtered ? 'selection' : 'capture'}
      data-testid="summary"
      data-pending={filtered && (sel.pending || !sel.data) ? 'true' : 'false'}
    >
      <div className="summary-scope">
        {filtered ? (
          <>
            <b>Selection</b>
            {selection.generation !== null && <span className="chip">{genLabel(selection.generation)}</span>}
            {selection.range && (
              <span className="chip">
                {fmtTs(selection.range[0])} – {fmtTs(selection.range[1])} s
              </span>
            )}
            {selection.cpus && <span className="chip">CPU {selection.cpus.map(fmtInt).join(', ')}</span>}
            <button type="button" className="link" onClick={() => set({ range: null, generation: null, cpus: null })} data-testid="clear-selection">
              show the whole capture
            </button>
          </>
        ) : (
          <>
            <b>{filterOf ? 'Filtered capture' : 'Whole capture'}</b>
            {filterLines(filterOf).map((f, i) => (
              <span key={i} className="filter-chip">
                {i > 0 && <span className="quiet">or</span>}
                <code className="chip mono" title="the event filter every pane answers for">
                  {f}
                </code>
              </span>
            ))}
            <span className="quiet">generations {generationsLabel(whole.generations, whole.generationsCut ?? 0)}</span>
          </>
        )}
      </div>
      <div className="cells">
        {cells.map(([id, label, k, title]) => (
          <div className="cell" key={id} title={title}>
            <div className="value" data-testid={id}>
              {s ? <Digits value={s[k]} /> : '…'}
            </div>
            <div className="label">{label}</div>
          </div>
        ))}
      </div>
      {/* v4/v7 ids their event's own fields contradict (not counted as resolved): for tests and tools */}
      <span hidden data-testid="summary-contradicted">
        {s?.status?.contradicted ?? 0}
      </span>
      <span hidden data-testid="summary-generations">
        {whole.generations.join(', ') || 'none'}
      </span>
    </section>
  );
}

/** The capture's generations in a line: all of a few; of many the first and last, and how many in all (the list itself is capped, `generationsCut` more were left out of it). */
function generationsLabel(gens: readonly number[], cut: number): string {
  if (gens.length === 0) return 'none';
  const long = gens.length > 12;
  const shown = long ? [...gens.slice(0, 10).map(fmtInt), '…', ...gens.slice(-2).map(fmtInt)] : gens.map(fmtInt);
  return shown.join(', ') + (long || cut > 0 ? ` (${fmtInt(gens.length + cut)} in all)` : '');
}
