import { Fragment, type ReactNode } from 'react';
import type { ParsedStat } from '../../core/formats/types.ts';
import type { RingBufferStats } from '../../core/capture/ring-bytes.ts';
import { segmentWarnings } from '../../core/capture/segments.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { useSelectionSummary } from '../../state/view/queries.ts';
import { isFiltered, useSelection } from '../../state/view/view-store.ts';
import { STATUS_COLORS } from '../common/colors.ts';
import { fmtBytes, fmtInt, fmtPct } from '../common/format.ts';
import { V7DocTable } from '../common/V7DocTable.tsx';
import { Gauge } from './Gauge.tsx';
import { computedFields, kernelFields, KNOWN_STAT_KEYS } from './stat-fields.ts';

/** What the kernel says (stack_map_stat) beside what the trace shows, and what to do about it. */
export function StatDashboard() {
  const summary = useLoadStore((s) => s.summary);
  const stats = useLoadStore((s) => s.stats);
  const statusNames = useLoadStore((s) => s.overview?.statusNames ?? []);
  const capturedWarnings = useLoadStore((s) => s.warnings);
  const overview = useLoadStore((s) => s.overview);
  // under an event filter the capture shown is the filtered one (as the summary says)
  const filterOf = useLoadStore((s) => s.filterOf);
  const selection = useSelection();
  const filtered = isFiltered(selection);
  const sel = useSelectionSummary(filtered ? selection : null).data;
  if (!summary) return null;
  // the segments' warnings (segments.ts) beside the capture's
  const warnings = [...capturedWarnings, ...segmentWarnings(overview?.segments ?? [], overview?.overlaps ?? [])];
  const stat = stats.length ? stats[stats.length - 1] : null;
  // the trace's side follows the selection, like every other pane
  const scoped = filtered && sel ? sel : null;
  const rb = scoped ? scoped.ringBuffer : summary.derived.ringBuffer;
  const dedup = scoped ? scoped.dedupRate : summary.derived.dedupRate;
  const status = filtered && sel ? sel.status : summary.status;
  const colorOf = (name: string) => STATUS_COLORS[statusNames.indexOf(name)] ?? STATUS_COLORS[STATUS_COLORS.length - 1];
  const statusTotal = Object.values(status).reduce((a, b) => a + b, 0);
  return (
    <section className="panel pane stats-pane" data-testid="stat-dashboard" aria-label="stack map statistics">
      <div className="pane-head">
        <h2>Stack map</h2>
        {stat && (
          <span className="quiet">
            {stat.file} ({stat.version})
          </span>
        )}
      </div>
      {warnings.length > 0 && (
        <ul className="warnings" data-testid="warnings">
          {warnings.map((w) => (
            <li key={w.id} className={`warning ${w.level}`} data-id={w.id}>
              {w.message}
            </li>
          ))}
        </ul>
      )}
      <div className="stat-grid">
        <div>
          <h3>What the kernel counted (stack_map_stat)</h3>
          {stat ? <KernelSide stat={stat} /> : <p className="quiet">No stack_map_stat loaded: drop one to see the map's own counters.</p>}
        </div>
        <div>
          <h3>What the trace shows ({scoped ? 'selection' : filterOf ? 'filtered capture' : 'whole capture'})</h3>
          <TraceSide rb={rb} dedup={dedup} />
        </div>
      </div>
      {stat && <ComputedSide stat={stat} />}
      <h3>Resolution {filtered ? '(selection)' : ''}</h3>
      <div className="status-bar" role="img" aria-label="stack records by status">
        {Object.entries(status).map(([k, n]) =>
          n > 0 ? <span key={k} style={{ width: `${(100 * n) / (statusTotal || 1)}%`, background: colorOf(k) }} title={`${k}: ${n}`} /> : null,
        )}
      </div>
      <ul className="legend">
        {Object.entries(status).map(([k, n]) =>
          n > 0 ? (
            <li key={k}>
              <span className="swatch" style={{ background: colorOf(k) }} />
              {k} {fmtInt(n)} ({fmtPct(n / (statusTotal || 1))})
            </li>
          ) : null,
        )}
      </ul>
    </section>
  );
}

const times = (x: number) => `${x.toFixed(1)}×`;

/** what the retention gain is (ring-bytes.ts RingBufferStats.gain), as its tooltip */
const GAIN_TITLE =
  "how many times the events the same ring buffer keeps with the map: ring bytes per event (the event's own record, its size assumed, and its stack record) " +
  'without the map, divided by those with it. Events kept, as the cookie ABI mail counts retention ("drops from about 2.17x to about 2.0x"), not stack bytes';

/**
 * The trace's derived figures, each with what it rests on (derived.ts): the records counted, and
 * where a depth is not known, whether it was estimated (and from what) or is unknown (and why).
 * Numbers are the ones `summary --json` prints under derived.ringBuffer (or selection.ringBuffer).
 */
function TraceSide({ rb, dedup }: { rb: RingBufferStats; dedup: number }) {
  const r = rb.records;
  const cookies = r.v8Cookies + r.v7Ids;
  const recorded = [
    r.v8Cookies ? `${fmtInt(r.v8Cookies)} v8 cookies × 16 B` : null,
    r.v7Ids ? `${fmtInt(r.v7Ids)} v7 ids × 12 B` : null,
    r.fullStacks ? `${fmtInt(r.fullStacks)} full stacks × (12 + 8 × depth) B` : null,
  ].filter(Boolean);
  const unknown = rb.basis === 'unknown';
  const estimated = rb.basis === 'estimated' && <span className="quiet"> (estimated)</span>;
  return (
    <>
      <dl className="facts" style={{ gridTemplateColumns: 'minmax(6em, 11em) minmax(0, 1fr)' }}>
        <dt title="share of cookie records that reused a stack already in the map">dedup rate</dt>
        <dd>
          <span data-testid="stat-dedup">{fmtPct(dedup)}</span>
        </dd>
        {cookies > 0 && (
          <Note testid="stat-dedup-basis">
            1 − {fmtInt(r.distinctSlots)} distinct (generation, slot) / {fmtInt(cookies)} cookies
          </Note>
        )}
        <dt title="stack bytes as recorded: cookies or ids, and full stacks for fallbacks">stack bytes with the map</dt>
        <dd>
          <span data-testid="stat-with">{rb.basis === 'none' ? '–' : fmtBytes(rb.bytesWithMap)}</span>
        </dd>
        {recorded.length > 0 && <Note>{recorded.join(' + ')}</Note>}
        <dt title="the same records had each been a full stack (12 + 8 × depth bytes)">without the map</dt>
        <dd data-basis={rb.basis}>
          <span data-testid="stat-without">{unknown ? 'unknown' : Number.isFinite(rb.bytesWithoutMap) ? fmtBytes(rb.bytesWithoutMap) : '–'}</span>
          {estimated}
        </dd>
        <dt title={GAIN_TITLE}>retention gain</dt>
        <dd data-basis={rb.basis} title={GAIN_TITLE}>
          <span data-testid="stat-gain">{unknown ? 'unknown' : Number.isFinite(rb.gain) ? times(rb.gain) : '–'}</span>
          {estimated} <span className="quiet">the events kept</span>
        </dd>
        {rb.basis !== 'none' && (
          <Note testid="stat-gain-basis">
            {rb.events > 0 && !unknown
              ? `ring bytes per event without the map / with it: ${rb.bytesPerEventWithoutMap.toFixed(1)} B / ${rb.bytesPerEventWithMap.toFixed(1)} B, over ${fmtInt(rb.events)} events`
              : rb.events > 0
                ? `ring bytes per event with the map: ${rb.bytesPerEventWithMap.toFixed(1)} B, over ${fmtInt(rb.events)} events`
                : 'no events: the stack records alone'}
            {`; each event's own record taken as ${rb.eventBytes} B (assumed: the trace does not give it)`}
          </Note>
        )}
        <dt title="the stack records' bytes alone, without the map / with it: not events kept, so not the retention gain">stack bytes, without / with</dt>
        <dd data-basis={rb.basis}>
          <span data-testid="stat-stack-ratio">{unknown ? 'unknown' : Number.isFinite(rb.stackBytesRatio) ? times(rb.stackBytesRatio) : '–'}</span>
          {estimated}
        </dd>
        {rb.bounds && unknown && (
          <Note testid="stat-bounds">
            whatever their depth (1 to 64 frames, the map's limit): without the map between {fmtBytes(rb.bounds.bytesWithoutMap[0])} and{' '}
            {fmtBytes(rb.bounds.bytesWithoutMap[1])}, a gain between {times(rb.bounds.gain[0])} and {times(rb.bounds.gain[1])} (the events kept), the stack
            bytes alone between {times(rb.bounds.stackBytesRatio[0])} and {times(rb.bounds.stackBytesRatio[1])}
          </Note>
        )}
        <dt title="ring-buffer bytes per stack record, as the cookie ABI mail counts them">bytes per record</dt>
        <dd>v8 cookie 16, v7 id 12, full stack 12 + 8 × depth</dd>
      </dl>
      {rb.why && (
        <p className={`assumption${unknown ? ' warn' : ''}`} data-testid="stat-gain-why" data-basis={rb.basis} style={{ margin: '8px 0 0', fontSize: 12 }}>
          {unknown ? 'Unknown: ' : rb.basis === 'estimated' ? 'Estimated: ' : 'Exact: '}
          {rb.why}
        </p>
      )}
      {rb.basis !== 'none' && <V7DocBeside rb={rb} dedup={dedup} />}
    </>
  );
}

/**
 * The v7 document's own figures (its Performance section) beside the trace's: stack records
 * (cookies and full stacks), the dedup rate, and the savings for stack data (1 - bytes with the
 * map / without). Labelled as the document's: its measurement, not this capture's.
 */
function V7DocBeside({ rb, dedup }: { rb: RingBufferStats; dedup: number }) {
  const records = rb.records.v8Cookies + rb.records.v7Ids + rb.records.fullStacks;
  return (
    <V7DocTable
      of={{ records, dedupRate: dedup, bytesWithMap: rb.bytesWithMap, bytesWithoutMap: rb.bytesWithoutMap }}
      id="stat-v7-doc"
      side="the trace"
      beside="the trace’s"
      style={{ fontSize: 12 }}
    />
  );
}

/** What a figure rests on, in small type under its row, across both columns. */
function Note({ children, testid }: { children: ReactNode; testid?: string }) {
  return (
    <dd className="quiet" data-testid={testid} style={{ gridColumn: '1 / -1', margin: '-3px 0 2px', fontSize: 12 }}>
      {children}
    </dd>
  );
}

/** The kernel's fields exactly as stack_map_stat printed them, under its own names (stat-fields.ts). */
function KernelSide({ stat }: { stat: ParsedStat }) {
  if (stat.uninitialized) return <p className="quiet">stackmap not initialized (the map was never used or was freed).</p>;
  const unknown = stat.values.filter(([k]) => !KNOWN_STAT_KEYS.has(k));
  return (
    <div className="kernel-side" data-testid="stat-kernel" data-version={stat.version}>
      {stat.entries !== null && stat.capacity !== null && (
        <Gauge value={stat.entries} max={stat.capacity} label={`${fmtInt(stat.entries)} of ${fmtInt(stat.capacity)}`} />
      )}
      <dl className="facts">
        {kernelFields(stat).map((f) => (
          <Fragment key={f.key}>
            <dt data-testid="stat-kernel-key">{f.key}</dt>
            <dd className={f.warn ? 'warn' : ''} data-testid={f.key === 'success_rate' ? 'stat-success-rate' : `stat-kernel-${f.key.replace('_', '-')}`}>
              {f.value}
            </dd>
          </Fragment>
        ))}
        {unknown.map(([k, v]) => (
          <Fragment key={k}>
            <dt className="unknown" title="a key this explorer does not know; shown as read">
              {k}
            </dt>
            <dd>{v}</dd>
          </Fragment>
        ))}
      </dl>
    </div>
  );
}

/**
 * What this explorer computes from stack_map_stat where the kernel printed nothing (v8's success
 * share and table size, which the v8 cover letter dropped), outside the kernel's column and
 * labelled as the explorer's.
 */
function ComputedSide({ stat }: { stat: ParsedStat }) {
  const fields = computedFields(stat);
  if (fields.length === 0) return null;
  return (
    <div data-testid="stat-computed" style={{ marginTop: 8 }}>
      <h3>Computed by this explorer from stack_map_stat (not printed by the kernel)</h3>
      <dl className="facts">
        {fields.map((f) => (
          <Fragment key={f.id}>
            <dt title={f.how}>{f.label} (computed)</dt>
            <dd data-testid={`stat-computed-${f.id}`} title={f.how}>
              {f.value}
            </dd>
            <Note>{f.how}</Note>
          </Fragment>
        ))}
      </dl>
    </div>
  );
}
