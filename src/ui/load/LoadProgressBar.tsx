import { useLoadStore } from '../../state/load/load-store.ts';
import { describeRejected } from '../../state/load/load-offer.ts';
import { faultText } from '../../state/load/load-worker.ts';
import type { LoadProgress } from '../../core/capture/load.ts';
import { fmtBytes } from '../common/format.ts';
import './load.css';
import { SAMPLE_NOTE } from '../../core/formats/seed-notes.ts';

/** The share of the load done in percent, or null when it is unknown (a compressed file whose decompressed size is not known). */
function loadPercent(p: LoadProgress | null): number | null {
  if (!p) return 0;
  if (p.phase === 'inflating' && p.inflatedTotal === null) return null;
  return p.totalBytes > 0 ? (100 * p.bytesRead) / p.totalBytes : 0;
}

/** What the line says of the running load, after "Opening a new capture · ". */
function progressText(p: LoadProgress | null, pct: number | null, first: string): string {
  const rate = `${(p?.mbPerSecond ?? 0).toFixed(1)} MB/s`;
  if (!p || p.phase === 'reading') {
    return `${(pct ?? 0).toFixed(0)}% · ${fmtBytes(p?.bytesRead ?? 0)} of ${fmtBytes(p?.totalBytes ?? 0)} · ${rate} · ${p?.file ?? first}`;
  }
  if (p.phase === 'indexing') return `indexing · every byte of ${fmtBytes(p.totalBytes)} read; resolving stacks and building the tables`;
  if (p.inflatedTotal !== null) {
    return `${(pct ?? 0).toFixed(0)}% · inflating ${p.file}: ${fmtBytes(p.inflatedBytes)} of ${fmtBytes(p.inflatedTotal)} · ${rate}`;
  }
  return `inflating ${p.file}: ${fmtBytes(p.inflatedBytes)} so far (its decompressed size is unknown) · ${fmtBytes(p.bytesRead)} of ${fmtBytes(p.totalBytes)} read · ${rate}`;
}

/**
 * Bytes read, percent and MB/s while the worker reads (decompressed bytes while it inflates, or
 * "inflating" when their total is unknown; "indexing" once every byte is read), with Cancel; the
 * outcome once it is done. While a load runs over an open capture, this line sits on top of the
 * capture's panes, which stay (dimmed) until the new one is ready, and come back as they were on
 * cancel or failure. Below it, the last worker fault (`worker-fault`) and the kept capture's notice.
 */
export function LoadProgressBar() {
  const {
    status,
    activity,
    mode,
    loading,
    progress,
    files,
    elapsedMs,
    source,
    cancel,
    error,
    rejected,
    rejectedDiagnostics,
    notice,
    fault,
    dismissFault,
    dropped,
    forget,
    keepStored,
  } = useLoadStore();
  const pct = loadPercent(progress);
  const open = status === 'done';
  const unchanged = open ? ' The capture shown is unchanged.' : '';
  return (
    <section
      className="load"
      data-testid="load-progress"
      data-status={activity}
      data-mode={mode}
      data-phase={activity === 'loading' ? (progress?.phase ?? 'reading') : undefined}
      data-over-capture={open && activity === 'loading' ? 'true' : undefined}
      data-bytes-total={progress?.totalBytes}
      data-dropped={dropped}
    >
      <div className="load-line">
        {activity === 'loading' ? (
          <>
            {pct === null ? <progress max={100} /> : <progress max={100} value={pct} />}
            <span>
              {open ? (mode === 'add' ? 'Adding to this capture · ' : 'Opening a new capture · ') : ''}
              {!progress && fault?.reopen === 'reopening'
                ? `waiting for the new ingest worker to reopen the capture shown · ${loading[0]}`
                : progressText(progress, pct, loading[0])}
            </span>
            <button type="button" onClick={cancel} data-testid="load-cancel">
              Cancel
            </button>
          </>
        ) : activity === 'cancelled' ? (
          <span>
            Load cancelled{progress && pct !== null ? ` at ${pct.toFixed(0)}%` : ''} ({loading.join(', ')}).
            {unchanged || ' Drop files anywhere, or open the sample.'}
          </span>
        ) : activity === 'error' && open ? (
          <span className="warn">
            Load failed ({loading.join(', ')}): {error}.{unchanged}
          </span>
        ) : activity === 'rejected' && rejected ? (
          <span className="warn" data-testid="load-rejected">
            Nothing in {describeRejected(rejected, rejectedDiagnostics)} could be read.{unchanged}
          </span>
        ) : open ? (
          <span>
            {source === 'sample' ? 'Sample capture' : `${files.length} file${files.length === 1 ? '' : 's'}`}: {files.join(', ')}
            {source === 'sample' && (
              <span className="quiet" data-testid="sample-note" title={SAMPLE_NOTE}>
                {' '}
                (simulated v8, with the proposed follow-up series&apos; stack_map_bin version 2)
              </span>
            )}
            {activity === 'done' ? ` · ${mode === 'add' ? 'added' : 'read'} in ${Math.round(elapsedMs ?? 0)} ms` : ''}
            {activity === 'done' && progress ? ` · ${fmtBytes(progress.totalBytes)}` : ''}
          </span>
        ) : (
          <span>Drop files anywhere, or open some.</span>
        )}
      </div>
      {fault && (
        <div className="load-notice warn" data-testid="worker-fault" data-fault={fault.kind} data-reopen={fault.reopen}>
          <span>{faultText(fault)}</span>{' '}
          <button type="button" onClick={dismissFault} aria-label="Dismiss">
            ×
          </button>
        </div>
      )}
      {notice && (
        <div className="load-notice warn" data-testid="load-notice" data-choice={notice.choice ? 'true' : undefined}>
          <span>{notice.text}</span>
          {notice.choice && (
            <>
              {' '}
              <button type="button" data-testid="kept-forget" title="delete the kept files from this browser" onClick={() => void forget()}>
                Forget it
              </button>{' '}
              <button type="button" data-testid="kept-keep" title="leave the kept files in this browser: the next visit tries them again" onClick={keepStored}>
                Keep it
              </button>
            </>
          )}
        </div>
      )}
    </section>
  );
}
