import type { GenerationInfo } from '../../core/model/query-types.ts';
import { useLoadStore } from '../../state/load-store.ts';
import { useViewStore } from '../../state/view-store.ts';
import { fmtDuration, fmtInt, fmtPct, fmtTs, genLabel } from '../common/format.ts';
import { GenerationDiffView } from './GenerationDiff.tsx';

const key = (g: number | 'none' | null) => (g === null ? 'all' : String(g));
const parse = (s: string): number | 'none' | null => (s === 'all' ? null : s === 'none' ? 'none' : Number(s));

/** Every generation of the trace and the dumps; choosing one filters every pane. */
export function GenerationSwitcher() {
  const overview = useLoadStore((s) => s.overview);
  const generation = useViewStore((v) => v.generation);
  const set = useViewStore((v) => v.set);
  if (!overview) return null;
  const gens = overview.generations;
  const chosen = gens.find((g) => g.generation === generation);
  const span = chosen && chosen.firstTs < chosen.lastTs ? ([chosen.firstTs, chosen.lastTs] as [number, number]) : null;
  return (
    <section className="panel pane gens-pane" aria-label="generations">
      <div className="pane-head">
        <h2>Generations</h2>
        <select
          data-testid="generation-select"
          value={key(generation)}
          onChange={(e) => set({ generation: parse(e.target.value) })}
          aria-label="generation filter"
        >
          <option value="all">all generations</option>
          {gens.map((g) => (
            <option key={key(g.generation)} value={key(g.generation)}>
              {genLabel(g.generation)}
            </option>
          ))}
        </select>
        {span && (
          <button type="button" onClick={() => set({ window: span })} title="zoom the timeline to this generation's span">
            Zoom timeline to it
          </button>
        )}
      </div>
      <div className="table-scroll short">
        <table className="grid">
          <thead>
            <tr>
              <th>gen</th>
              <th>span</th>
              <th title="stack records: cookies and full stacks">records</th>
              <th>dump</th>
              <th title="share of its cookies that resolved against its dump">coverage</th>
            </tr>
          </thead>
          <tbody>
            {gens.map((g) => (
              <GenRow key={key(g.generation)} g={g} chosen={generation === g.generation} onChoose={() => set({ generation: generation === g.generation ? null : g.generation })} />
            ))}
          </tbody>
        </table>
      </div>
      <GenerationDiffView gens={gens.map((g) => g.generation)} />
    </section>
  );
}

function GenRow({ g, chosen, onChoose }: { g: GenerationInfo; chosen: boolean; onChoose(): void }) {
  const span = g.firstTs <= g.lastTs;
  const low = Number.isFinite(g.coverage) && g.coverage < 0.95;
  return (
    <tr className={chosen ? 'selected' : ''} onClick={onChoose} data-testid="generation-row" aria-selected={chosen}>
      <td>{g.generation === 'none' ? 'none' : g.generation}</td>
      <td title={span ? `${fmtTs(g.firstTs)} – ${fmtTs(g.lastTs)}` : 'no stack records'}>{span ? `${fmtTs(g.firstTs)} +${fmtDuration(g.lastTs - g.firstTs)}` : '–'}</td>
      <td className="num">{fmtInt(g.records)}</td>
      <td className={g.dumpKinds.length ? '' : 'warn'}>{g.dumpKinds.length ? `${g.dumpKinds.map((k) => k.replace('stack_map_', '')).join(' + ')} · ${fmtInt(g.dumpSlots)} slots` : 'no dump'}</td>
      <td className={low ? 'num warn' : 'num'}>
        <span className="meter">
          <span style={{ width: `${Number.isFinite(g.coverage) ? 100 * g.coverage : 0}%` }} />
        </span>
        {fmtPct(g.coverage)}
      </td>
    </tr>
  );
}
