import { useState } from 'react';
import type { GenerationDiffApart, GenerationDiffRowApart } from '../../core/query/generation-diff.ts';
import { useGenerationDiff } from '../../state/view/queries.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { fmtInt } from '../common/format.ts';
import { stackMenu } from '../menu/actions.ts';
import { useMenuStore } from '../menu/menu-store.ts';
import { useContextMenu } from '../menu/useContextMenu.ts';

type Gen = number | 'none';
const parse = (s: string): Gen => (s === 'none' ? 'none' : Number(s));
const SHOWN = 8;

/** Two generations side by side: stacks only in A, only in B, and count changes. */
export function GenerationDiffView({ gens }: { gens: Gen[] }) {
  const diff = useViewStore((v) => v.diff);
  const set = useViewStore((v) => v.set);
  // the worker answers with the rows of GenerationDiffApart (core/query/generation-diff.ts)
  const data = useGenerationDiff(diff).data as GenerationDiffApart | null;
  if (gens.length < 2) return null;
  const pair: [Gen, Gen] = diff ?? [gens[gens.length - 2], gens[gens.length - 1]];
  const pick = (i: 0 | 1) => (
    <select
      value={String(pair[i])}
      onChange={(e) => set({ diff: i === 0 ? [parse(e.target.value), pair[1]] : [pair[0], parse(e.target.value)] })}
      aria-label={i === 0 ? 'generation A' : 'generation B'}
    >
      {gens.map((g) => (
        <option key={String(g)} value={String(g)}>
          {String(g)}
        </option>
      ))}
    </select>
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
        <button
          type="button"
          onClick={() => set({ compare: `gen:${pair[0]},${pair[1]}` })}
          data-testid="diff-differential"
          title="A as before, B as after, in the differential view: top stacks with before, after and the change, the flame graph coloured by it (as Compare with… a baseline capture)"
        >
          As a differential
        </button>
      </div>
      {diff && data && (
        <div className="diff-cols">
          <DiffColumn kind="only-a" title={`only in ${String(data.a)}`} rows={data.onlyA} count={(r) => fmtInt(r.a)} />
          <DiffColumn kind="only-b" title={`only in ${String(data.b)}`} rows={data.onlyB} count={(r) => fmtInt(r.b)} />
          <DiffColumn kind="changed" title="changed" rows={data.changed} count={(r) => `${fmtInt(r.a)} → ${fmtInt(r.b)}`} />
        </div>
      )}
    </div>
  );
}

function DiffColumn({ kind, title, rows, count }: { kind: string; title: string; rows: GenerationDiffRowApart[]; count(r: GenerationDiffRowApart): string }) {
  const [all, setAll] = useState(false);
  const shown = all ? rows : rows.slice(0, SHOWN);
  return (
    <div className="diff-col" data-testid="diff-col" data-kind={kind} data-rows={rows.length}>
      <h3>
        {title} <span className="count">{fmtInt(rows.length)}</span>
      </h3>
      <ul className={all ? 'expanded' : ''}>
        {shown.map((r) => (
          <DiffRow key={r.stack} r={r} count={count(r)} />
        ))}
      </ul>
      {rows.length > SHOWN && (
        <button type="button" className="link" onClick={() => setAll(!all)} data-testid="diff-more" aria-expanded={all}>
          {all ? 'show fewer' : `show all ${fmtInt(rows.length)} (${fmtInt(rows.length - SHOWN)} more)`}
        </button>
      )}
    </div>
  );
}

/** The leaf, and where the leaf is not enough, the first frame that tells the stack apart from the others. */
function DiffRow({ r, count }: { r: GenerationDiffRowApart; count: string }) {
  const selected = useViewStore((v) => v.stack === r.stack);
  const selectStack = useViewStore((v) => v.selectStack);
  const menu = useContextMenu<HTMLLIElement>((x, y) =>
    useMenuStore.getState().show(x, y, r.leaf || '(no frames)', stackMenu({ stack: r.stack, hash: null, frame: r.leaf, frames: null }), r.stack),
  );
  const apart =
    r.apartAt === 0
      ? null
      : r.apart === null
        ? `the leaf end of a deeper stack (${fmtInt(r.depth)} frames)`
        : `${r.apartAt === 1 ? 'called from' : `${fmtInt(r.apartAt)} frames up:`} ${r.apart}`;
  return (
    <li
      onClick={() => selectStack(r.stack)}
      className={selected ? 'selected' : ''}
      title={`select this stack${apart ? `: ${r.leaf} ‹ … ‹ ${r.apart ?? ''}` : ''}`}
      data-testid="diff-row"
      data-stack={r.stack}
      {...menu}
      onKeyDown={undefined}
    >
      <span className="diff-label">
        <span className="mono ellipsis">{r.leaf || '(empty)'}</span>
        {apart && (
          <span className="mono ellipsis apart" data-testid="diff-apart">
            ‹ {apart}
          </span>
        )}
      </span>
      <span className="diff-count">{count}</span>
    </li>
  );
}
