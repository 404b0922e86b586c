import { useEffect, useState } from 'react';
import { V7DocTable } from '../common/V7DocTable.tsx';
import { DEFAULT_BUFFER_KB, DEFAULT_MAX_FALLBACK_SHARE, type WhatIfResult, type WhatIfRow } from '../../core/whatif/whatif.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { useWhatIf } from '../../state/view/whatif-query.ts';
import { fmtBytes, fmtInt, fmtPct } from '../common/format.ts';
import { WhatIfPlot } from './WhatIfPlot.tsx';

/**
 * What-if: would the stack map help this capture, and at which bits? The capture's full stacks
 * replayed through the simulator's map at bits 10..18 (core/whatif/whatif.ts, in a worker of its
 * own, state/view/whatif-query.ts; the same figures as `cli whatif --json`). The buffer size is the
 * capture's own when its capture.txt recorded one, until the input asks for another.
 */
export function WhatIfPane() {
  const fullStacks = useLoadStore((s) => s.summary?.fullStacks ?? 0);
  const captureId = useLoadStore((s) => s.captureId);
  const recorded = useLoadStore((s) => s.summary?.files.find((f) => f.capture?.bufferKb != null)?.capture?.bufferKb ?? null);
  /** the size asked for in the input; null: the capture's own (or the default) */
  const [asked, setAsked] = useState<number | null>(null);
  useEffect(() => setAsked(null), [captureId]);
  const fallback = recorded ?? DEFAULT_BUFFER_KB;
  const bufferKb = asked ?? fallback;
  const [share, setShare] = useState(DEFAULT_MAX_FALLBACK_SHARE);
  const [mode, setMode] = useState<'v7' | 'v8'>('v8');
  const q = useWhatIf(fullStacks > 0 ? { bufferKb: bufferKb === fallback ? null : bufferKb, maxFallbackShare: share } : null);
  return (
    <section className="panel pane whatif-pane" data-testid="whatif" aria-label="what if the stack map were on">
      <div className="pane-head">
        <h2>What if: the stack map at each size</h2>
        {q.pending && (
          <span className="quiet" data-testid="whatif-progress" data-done={q.progress?.done ?? 0} data-total={q.progress?.total ?? 0}>
            {q.progress ? (
              <>
                replaying <progress max={q.progress.total} value={q.progress.done} style={{ width: 80, verticalAlign: 'middle' }} /> {q.progress.done} of{' '}
                {q.progress.total} steps
              </>
            ) : (
              'computing…'
            )}
          </span>
        )}
      </div>
      {fullStacks === 0 ? (
        <p className="quiet" data-testid="whatif-none">
          This capture has no full &lt;stack trace&gt; records, so there is nothing to replay through the map: record with options/stacktrace (the map off) to
          ask what the map would do.
        </p>
      ) : (
        <>
          <div style={{ display: 'flex', gap: 16, flexWrap: 'wrap', alignItems: 'center', margin: '4px 0 8px' }}>
            <label>
              buffer per CPU{' '}
              <input
                type="number"
                min={1}
                max={1 << 20}
                step={1}
                value={bufferKb}
                style={{ width: 80 }}
                data-testid="whatif-buffer-kb"
                onChange={(e) => {
                  const n = Number(e.target.value);
                  if (Number.isInteger(n) && n >= 1 && n <= 1 << 20) setAsked(n);
                }}
              />{' '}
              <span title="KiB: 1,024 bytes, as the kernel's buffer_size_kb counts">KiB</span>{' '}
              <span
                className="quiet"
                data-testid="whatif-buffer-source"
                data-source={bufferKb !== fallback ? 'option' : recorded !== null ? 'capture' : 'default'}
              >
                {bufferKb !== fallback ? '(asked)' : recorded !== null ? '(as the capture recorded it)' : '(default: the capture does not say)'}
              </span>
            </label>
            <label>
              max fallbacks{' '}
              <input
                type="number"
                min={0}
                max={100}
                step={0.1}
                value={+(share * 100).toFixed(3)}
                style={{ width: 64 }}
                data-testid="whatif-max-fallback"
                onChange={(e) => {
                  const n = Number(e.target.value);
                  if (n >= 0 && n <= 100) setShare(n / 100);
                }}
              />{' '}
              %
            </label>
            <span role="group" aria-label="rules">
              {(['v7', 'v8'] as const).map((m) => (
                <button key={m} type="button" aria-pressed={mode === m} onClick={() => setMode(m)} data-testid={`whatif-mode-${m}`}>
                  {m}
                </button>
              ))}
            </span>
          </div>
          {q.error && <p className="error">{q.error}</p>}
          {q.data && <WhatIfBody r={q.data} mode={mode} />}
        </>
      )}
    </section>
  );
}

function WhatIfBody({ r, mode }: { r: WhatIfResult; mode: 'v7' | 'v8' }) {
  // v8 as posted has one size (its fixed 16,384); its bits rows are the proposed follow-up's, apart
  const rows = r.bits.filter((b) => b.mode === mode && (mode === 'v7' || b.v8Variant === 'posted'));
  const rec = r.recommendedByMode.find((m) => m.mode === mode && (mode === 'v7' || m.v8Variant === 'posted'));
  const proposed = mode === 'v8' ? r.bits.filter((b) => b.mode === 'v8' && b.v8Variant === 'bin') : [];
  const proposedRec = r.recommendedByMode.find((m) => m.mode === 'v8' && m.v8Variant === 'bin');
  const headline =
    rec?.bits == null ? 'No size fits.' : mode === 'v8' ? `Fits: v8 as posted, ${fmtInt(2 ** rec.bits)} stacks.` : `Recommended: bits ${rec.bits}.`;
  return (
    <>
      <p data-testid="whatif-recommendation" data-bits={rec?.bits ?? ''} data-variant={rec?.v8Variant ?? ''}>
        <strong>{headline}</strong> {rec?.why}
      </p>
      <p className="quiet" data-testid="whatif-basis">
        {fmtInt(r.records)} full stack records ({fmtInt(r.distinctStacks)} distinct) of {fmtInt(r.events)} events on {r.cpus} CPU{r.cpus === 1 ? '' : 's'}
        {r.deepRecords > 0 ? `, ${fmtInt(r.deepRecords)} deeper than 64 frames` : ''}. {r.notes.join('; ')}.
      </p>
      <div style={{ display: 'flex', gap: 16, flexWrap: 'wrap', alignItems: 'flex-start' }}>
        <Table rows={rows} best={rec?.bits ?? null} posted={mode === 'v8'} />
        {mode === 'v7' && <WhatIfPlot rows={rows} recommended={rec?.bits ?? null} />}
      </div>
      <V7DocFigures row={rows.find((b) => b.bits === rec?.bits) ?? rows[rows.length - 1]} />
      {proposed.length > 0 && (
        <details data-testid="whatif-proposed" style={{ marginTop: 8 }}>
          <summary>+ proposed binary v2 and bits (the v8 follow-up: a size per boot)</summary>
          <p data-testid="whatif-proposed-recommendation" data-bits={proposedRec?.bits ?? ''}>
            <strong>{proposedRec?.bits == null ? 'No size fits.' : `Recommended: bits ${proposedRec.bits}.`}</strong> {proposedRec?.why}
          </p>
          <div style={{ display: 'flex', gap: 16, flexWrap: 'wrap', alignItems: 'flex-start' }}>
            <Table rows={proposed} best={proposedRec?.bits ?? null} posted={false} />
            <WhatIfPlot rows={proposed} recommended={proposedRec?.bits ?? null} />
          </div>
        </details>
      )}
    </>
  );
}

/**
 * The v7 document's own figures (its Performance section) beside the shown row's: the recommended
 * size, else the largest. Labelled as the document's; they are its measurement, not this capture's.
 */
function V7DocFigures({ row }: { row: WhatIfRow | undefined }) {
  if (!row) return null;
  const size = row.v8Variant === 'posted' ? `v8 as posted, ${fmtInt(row.capacity)} stacks` : `${row.mode} at bits ${row.bits}`;
  return (
    <V7DocTable
      of={{ records: row.records, dedupRate: row.dedupRate, bytesWithMap: row.bytesWithMap, bytesWithoutMap: row.bytesWithoutMap }}
      id="whatif-v7-doc"
      side="this capture"
      beside={`this capture’s replay, ${size}`}
      style={{ width: 'auto', maxWidth: 900 }}
      data={{ 'data-bits': row.bits, 'data-mode': row.mode }}
    />
  );
}

/** what the dedup column is (WhatIfRow.dedupRate), as its header's tooltip */
const DEDUP_TITLE =
  'dedup rate: the share of the stack records that reused a stack the map already stored (the v7 document\'s "Dedup rate"): records less the stacks stored and the fallbacks, over records';

/** what the two gains are (core/whatif/whatif.ts: WhatIfRow.gain, steadyGain), as the headers' tooltips */
const GAIN_TITLE =
  'gain in this buffer: the events the per-CPU ring buffers of the size above still hold at the end of the capture with the map, divided by those they hold without it (summed over CPUs). 1.00× when the capture fits the buffer either way';
const WRAPPED_TITLE =
  'gain once wrapped: the ring-buffer bytes per event (the event and its stack record) without the map, divided by those with it. How many times the events a buffer of any size keeps once it has wrapped and overwrites its oldest records';

function Table({ rows, best, posted }: { rows: WhatIfRow[]; best: number | null; posted: boolean }) {
  return (
    <table className="grid" style={{ width: 'auto' }} data-testid="whatif-table">
      <thead>
        <tr>
          <th>{posted ? 'size' : 'bits'}</th>
          <th>stored</th>
          <th>fallbacks</th>
          <th>gravestones</th>
          <th title={DEDUP_TITLE}>dedup</th>
          <th>with map</th>
          <th>without</th>
          <th title={GAIN_TITLE}>gain</th>
          <th title={WRAPPED_TITLE}>wrapped</th>
          <th>map memory</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((b) => (
          <Row key={`${b.v8Variant ?? ''}${b.bits}`} b={b} best={b.bits === best} />
        ))}
      </tbody>
    </table>
  );
}

function Row({ b, best }: { b: WhatIfRow; best: boolean }) {
  return (
    <tr
      className={best ? 'selected' : undefined}
      data-testid="whatif-row"
      data-bits={b.bits}
      data-mode={b.mode}
      data-variant={b.v8Variant ?? ''}
      data-stored={b.stored}
      data-fallbacks={b.fallbacks}
      data-gravestones={b.gravestones}
      data-bytes-with-map={b.bytesWithMap}
      data-bytes-without-map={b.bytesWithoutMap}
      data-map-bytes={b.mapBytes}
      data-gain={b.gain}
    >
      <td>{b.v8Variant === 'posted' ? `${fmtInt(b.capacity)} (fixed, as posted)` : b.bits}</td>
      <td>{fmtInt(b.stored)}</td>
      <td>
        {fmtInt(b.fallbacks)} ({fmtPct(b.fallbackShare)})
      </td>
      <td>{fmtInt(b.gravestones)}</td>
      <td data-testid="whatif-dedup" data-reused={b.reused}>
        {fmtPct(b.dedupRate)}
      </td>
      <td>{fmtBytes(b.bytesWithMap)}</td>
      <td>{fmtBytes(b.bytesWithoutMap)}</td>
      <td>{b.gain.toFixed(2)}×</td>
      <td>{b.steadyGain.toFixed(2)}×</td>
      <td>{(b.mapBytes / 2 ** 20).toFixed(1)} MiB</td>
    </tr>
  );
}
