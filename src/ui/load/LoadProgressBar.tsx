import { describeRejected, useLoadStore } from '../../state/load-store.ts';
import { fmtBytes } from '../common/format.ts';
import './load.css';

/**
 * Bytes read, percent and MB/s while the worker reads, with Cancel; the outcome once it is done.
 * While a load runs over an open capture, this line sits on top of the capture's panes, which
 * stay (dimmed) until the new one is ready, and come back as they were on cancel or failure.
 */
export function LoadProgressBar() {
  const { status, activity, mode, loading, progress, files, elapsedMs, source, cancel, error, rejected, notice } = useLoadStore();
  const pct = progress && progress.totalBytes > 0 ? (100 * progress.bytesRead) / progress.totalBytes : 0;
  const open = status === 'done';
  const unchanged = open ? ' The capture shown is unchanged.' : '';
  return (
    <section
      className="load"
      data-testid="load-progress"
      data-status={activity}
      data-mode={mode}
      data-over-capture={open && activity === 'loading' ? 'true' : undefined}
      data-bytes-total={progress?.totalBytes}
    >
      <div className="load-line">
        {activity === 'loading' ? (
          <>
            <progress max={100} value={pct} />
            <span>
              {open ? (mode === 'add' ? 'Adding to this capture · ' : 'Opening a new capture · ') : ''}
              {pct.toFixed(0)}% · {fmtBytes(progress?.bytesRead ?? 0)} of {fmtBytes(progress?.totalBytes ?? 0)} · {(progress?.mbPerSecond ?? 0).toFixed(1)} MB/s ·{' '}
              {progress?.file ?? loading[0]}
            </span>
            <button type="button" onClick={cancel} data-testid="load-cancel">
              Cancel
            </button>
          </>
        ) : activity === 'cancelled' ? (
          <span>
            Load cancelled{progress ? ` at ${pct.toFixed(0)}%` : ''} ({loading.join(', ')}).{unchanged || ' Drop files anywhere, or open the sample.'}
          </span>
        ) : activity === 'error' && open ? (
          <span className="warn">
            Load failed ({loading.join(', ')}): {error}.{unchanged}
          </span>
        ) : activity === 'rejected' && rejected ? (
          <span className="warn" data-testid="load-rejected">
            Nothing in {describeRejected(rejected)} could be read.{unchanged}
          </span>
        ) : open ? (
          <span>
            {source === 'sample' ? 'Sample capture' : `${files.length} file${files.length === 1 ? '' : 's'}`}: {files.join(', ')}
            {activity === 'done' ? ` · ${mode === 'add' ? 'added' : 'read'} in ${Math.round(elapsedMs ?? 0)} ms` : ''}
            {activity === 'done' && progress ? ` · ${fmtBytes(progress.totalBytes)}` : ''}
          </span>
        ) : (
          <span>Drop files anywhere, or open some.</span>
        )}
      </div>
      {notice && (
        <div className="load-notice warn" data-testid="load-notice">
          {notice}
        </div>
      )}
    </section>
  );
}
