import type { GenerationDiffRow } from '../../core/model/query-types.ts';
import { useGenerationDiff } from '../../state/queries.ts';
import { useViewStore } from '../../state/view-store.ts';
import { fmtInt } from '../common/format.ts';

type Gen = number | 'none';
const parse = (s: string): Gen => (s === 'none' ? 'none' : Number(s));
const SHOWN = 8;

/** Two generations side by side: stacks only in A, only in B, and count changes. */
export function GenerationDiffView({ gens }: { gens: Gen[] }) {
  const diff = useViewStore((v) => v.diff);
  const set = useViewStore((v) => v.set);
  const selectStack = useViewStore((v) => v.selectStack);
  const { data } = useGenerationDiff(diff);
  if (gens.length < 2) return null;
  const pair: [Gen, Gen] = diff ?? [gens[gens.length - 2], gens[gens.length - 1]];
  const pick = (i: 0 | 1) => (
    <select value={String(pair[i])} onChange={(e) => set({ diff: i === 0 ? [parse(e.target.value), pair[1]] : [pair[0], parse(e.target.value)] })} aria-label={i === 0 ? 'generation A' : 'generation B'}>
      {gens.map((g) => (
        <option key={String(g)} value={String(g)}>
          {String(g)}
        </option>
      ))}
    </select>
  );
  const list = (title: string, rows: GenerationDiffRow[], fmt: (r: GenerationDiffRow) => string) => (
    <div className="diff-col">
      <h3>
        {title} <span className="count">{rows.length}</span>
      </h3>
      <ul>
        {rows.slice(0, SHOWN).map((r) => (
          <li key={r.stack} onClick={() => selectStack(r.stack)} title="select this stack">
            <span className="mono">{r.leaf || '(empty)'}</span> <span className="quiet">{fmt(r)}</span>
          </li>
        ))}
        {rows.length > SHOWN && <li className="quiet">… {rows.length - SHOWN} more</li>}
      </ul>
    </div>
  );
  return (
    <div className="diff" data-testid="generation-diff">
      <div className="diff-head">
        <b>Diff</b> A {pick(0)} B {pick(1)}
        {!diff && (
          <button type="button" onClick={() => set({ diff: pair })} data-testid="diff-run">
            Compare
          </button>
        )}
        {diff && (
          <button type="button" onClick={() => set({ diff: null })}>
            Close
          </button>
        )}
      </div>
      {diff && data && (
        <div className="diff-cols">
          {list('only in A', data.onlyA, (r) => fmtInt(r.a))}
          {list('only in B', data.onlyB, (r) => fmtInt(r.b))}
          {list('changed', data.changed, (r) => `${fmtInt(r.a)} → ${fmtInt(r.b)}`)}
        </div>
      )}
    </div>
  );
}
