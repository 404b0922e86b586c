import { useLoadStore } from '../../state/load-store.ts';

const fmtBytes = (n: number) =>
  n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} kB` : `${n} B`;

/** Bytes read, percent and MB/s while the worker reads; the outcome once it is done. */
export function LoadProgressBar() {
  const { status, progress, files, elapsedMs, source, cancel } = useLoadStore();
  const pct = progress && progress.totalBytes > 0 ? (100 * progress.bytesRead) / progress.totalBytes : 0;
  return (
    <section className="load" data-testid="load-progress" data-status={status}>
      {status === 'loading' ? (
        <>
          <progress max={100} value={pct} />
          <span>
            {pct.toFixed(0)}% · {fmtBytes(progress?.bytesRead ?? 0)} of {fmtBytes(progress?.totalBytes ?? 0)} ·{' '}
            {(progress?.mbPerSecond ?? 0).toFixed(1)} MB/s · {progress?.file ?? files[0]}
          </span>
          <button type="button" onClick={cancel}>
            Cancel
          </button>
        </>
      ) : status === 'done' ? (
        <span>
          {source === 'sample' ? 'Sample capture' : `${files.length} file${files.length === 1 ? '' : 's'}`}:{' '}
          {files.join(', ')} · read in {Math.round(elapsedMs ?? 0)} ms
          {progress ? ` · ${fmtBytes(progress.totalBytes)}` : ''}
        </span>
      ) : status === 'cancelled' ? (
        <span>Load cancelled. Drop files anywhere, or open the sample.</span>
      ) : (
        <span>Drop files anywhere, or open some.</span>
      )}
    </section>
  );
}
